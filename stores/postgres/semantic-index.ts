// The semantic channel on PostgreSQL: per-scope association indexes (core/retrieval/associations.ts)
// held in this process, built from the memories table the first time a scope is searched. Each
// index remembers its scope's change token (table scope_tokens, renewed by triggers on every
// statement that changes the scope's memories, from any connection, process or server); a search
// reads the tokens of its scopes in one query and rebuilds those that changed since. A memory this
// store inserts joins its scope's index in place when its write was the only change in between;
// any other change of this store's drops the scope's index at once (a forgotten memory does not
// wait in memory for the next search). Nothing is persisted: the index is derived data.
//
// A build reads the token and the scope's rows in one statement (one snapshot), then adds the rows
// a few thousand per turn of the event loop, so other requests of the server are not held up; two
// searches of a scope being built share the one build.
import { AssociationCache, MAX_INDEXED, SEMANTIC_SCOPE_CAP, warmScopes, type IndexDelta } from "../../core/retrieval/association-cache.js";
import { AssociationIndex, expandQuery, scoreExpanded } from "../../core/retrieval/associations.js";
import { asPgSystem, type PgDb } from "./pool.js";

/** memories added to an index per turn of the event loop while it is built */
const BUILD_CHUNK = 2_000;
/** newest memories read to find who wrote last, and each one's newest memories read for their scopes (warm-up) */
const WARM_SCAN = 20_000;

const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class PgSemanticIndexes {
  private readonly cache: AssociationCache;
  /** builds under way, by scope key */
  private readonly building = new Map<string, Promise<AssociationIndex>>();
  /**
   * per scope being built, counted up by each change this store makes meanwhile: a build that
   * began before the change is not kept (entries live only while their build runs)
   */
  private readonly generation = new Map<string, number>();

  /** `maxIndexed`: memories held in all loaded indexes at once (MAX_INDEXED unless a test says) */
  constructor(
    private readonly db: PgDb,
    maxIndexed = MAX_INDEXED,
  ) {
    this.cache = new AssociationCache(maxIndexed);
  }

  /** The best `limit` memories of these scopes for the query text by expanded association, best first. */
  async score(keys: string[], text: string, limit: number, user?: string): Promise<{ rowid: number; score: number }[]> {
    const ixs = await this.indexesFor(keys, user);
    return scoreExpanded(ixs, expandQuery(ixs, text), limit);
  }

  /** The indexes of these scope keys, current as of now: built or rebuilt as needed. */
  async indexesFor(keys: string[], user?: string): Promise<AssociationIndex[]> {
    const rows = await this.db.query<{ vis_key: string; token: number }>(`SELECT vis_key, token FROM scope_tokens WHERE vis_key = ANY($1::text[])`, [keys], user);
    const tokens = new Map(rows.map((r) => [r.vis_key, Number(r.token)]));
    const out = await Promise.all(keys.map((k) => this.cache.current(k, tokens.get(k) ?? null) ?? this.buildShared(k, user)));
    this.cache.evict(new Set(keys));
    return out;
  }

  private buildShared(key: string, user?: string): Promise<AssociationIndex> {
    let b = this.building.get(key);
    if (!b) {
      b = this.build(key, user).finally(() => {
        this.building.delete(key);
        this.generation.delete(key);
      });
      this.building.set(key, b);
    }
    return b;
  }

  private async build(key: string, user?: string): Promise<AssociationIndex> {
    const gen = this.generation.get(key) ?? 0;
    // the token row (rowid NULL) and the rows in one statement: one snapshot
    const rows = await this.db.query<{ rowid: number | null; content: string | null; thread: string | null; token: number | null }>(
      `SELECT NULL::bigint AS rowid, NULL::text AS content, NULL::text AS thread, (SELECT token FROM scope_tokens WHERE vis_key = $1) AS token
       UNION ALL
       (SELECT m.rowid, m.content,
          -- its first conversation; aggregated, not ORDER BY id LIMIT 1, which the planner may
          -- answer by walking the primary key of every source (3 s for 5k memories)
          (SELECT (array_agg(s.thread_id ORDER BY s.id))[1] FROM memory_sources s WHERE s.memory_rowid = m.rowid AND s.thread_id IS NOT NULL),
          NULL
        FROM memories m WHERE m.vis_key = $1 AND m.status IN ('active','pending') AND (m.flags = '' OR m.trust = 'user_confirmed')
        ORDER BY m.updated_at DESC LIMIT ${SEMANTIC_SCOPE_CAP})`,
      [key],
      user,
    );
    let token: number | null = null;
    const ix = new AssociationIndex();
    let n = 0;
    for (const r of rows) {
      if (r.rowid === null) {
        token = r.token === null ? null : Number(r.token);
        continue;
      }
      ix.add(Number(r.rowid), r.thread, r.content ?? "");
      if (++n % BUILD_CHUNK === 0) await yieldTurn();
    }
    // this store changed the scope meanwhile: the index may miss it, so it serves this search only
    if ((this.generation.get(key) ?? 0) === gen) this.cache.put(key, ix, token);
    return ix;
  }

  /**
   * Build the indexes of the scopes most likely searched next (those of the people who wrote last,
   * in the order of `warmScopes`), one after another; resolves with their keys. Reads every user's
   * rows, so it runs as system maintenance under row-level security.
   */
  warm(maxScopes: number, maxMemories: number): Promise<string[]> {
    return asPgSystem(async () => {
      const newest = await this.db.query<{ user_id: string }>(`SELECT user_id FROM memories ORDER BY rowid DESC LIMIT ${WARM_SCAN}`);
      const users: string[] = [];
      for (const r of newest) {
        if (!users.includes(r.user_id)) users.push(r.user_id);
        if (users.length >= maxScopes) break;
      }
      const keysOf = new Map<string, { key: string; level: string }[]>();
      for (const u of users) {
        const rows = await this.db.query<{ key: string; level: string }>(
          `SELECT vis_key AS key, level FROM memories WHERE user_id = $1 ORDER BY updated_at DESC LIMIT ${WARM_SCAN}`,
          [u],
        );
        keysOf.set(u, rows);
      }
      const candidates = [...new Set([...keysOf.values()].flat().map((r) => r.key))];
      const sizes = new Map(
        (
          await this.db.query<{ key: string; n: number }>(
            `SELECT vis_key AS key, count(*)::int AS n FROM memories WHERE vis_key = ANY($1::text[]) AND status IN ('active','pending') GROUP BY vis_key`,
            [candidates],
          )
        ).map((r) => [r.key, r.n]),
      );
      const keys = warmScopes(users, (u) => keysOf.get(u) ?? [], (k) => sizes.get(k) ?? 0, maxScopes, maxMemories);
      const built: string[] = [];
      for (const k of keys) {
        try {
          await this.indexesFor([k]);
          built.push(k);
        } catch {
          // left to the first search that needs it, which builds it again and reports the error
        }
      }
      return built;
    });
  }

  /** This store's write changed the scope's indexed memories by `delta` (see AssociationCache.updated). */
  updated(key: string, prev: number | null, next: number, delta: IndexDelta): void {
    this.bump(key);
    this.cache.updated(key, prev, next, delta);
  }

  /** Memories of these scopes left or changed: their indexes go now (rebuilt on next use). */
  changed(keys: Iterable<string>): void {
    for (const k of keys) {
      this.bump(k);
      this.cache.changed(k);
    }
  }

  private bump(key: string): void {
    if (this.building.has(key)) this.generation.set(key, (this.generation.get(key) ?? 0) + 1);
  }

  /** Every scope rebuilds on next use. */
  clear(): void {
    this.cache.clear();
    this.generation.clear();
  }

  /** Memories held in all loaded indexes (tests). */
  get held(): number {
    return this.cache.held;
  }

  /** How many scopes are held (tests). */
  get loaded(): number {
    return this.cache.loaded;
  }
}

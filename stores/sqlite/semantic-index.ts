// The semantic channel's per-scope association indexes (core/retrieval/associations.ts), built
// lazily from the memories table the first time a scope is searched and kept in memory. Each index
// remembers its scope's change token (table scope_tokens, renewed by every write transaction that
// changes the scope, from any connection or process); a search compares tokens and rebuilds a scope
// that changed since, so a write in one scope leaves the others' indexes alone. Each write of this
// store (insert, batch, correction, status change, expiry, forget) changes its scope's loaded index
// in place when nothing else changed the scope in between, and drops it otherwise; either way a
// forgotten memory does not wait in memory for the next search. Nothing is persisted: the index is
// derived data, one scope at a time.
// Flagged memories no person confirmed stay out, as they stay out of search results.
import type { Statement } from "better-sqlite3";
import { AssociationCache, MAX_INDEXED, SEMANTIC_SCOPE_CAP, warmScopes, type IndexDelta } from "../../core/retrieval/association-cache.js";
import { AssociationIndex, expandQuery, scoreExpanded } from "../../core/retrieval/associations.js";
import type { Db } from "./database.js";

/** newest memories read to find who wrote last, and each one's newest memories read for their scopes (warm-up) */
const WARM_SCAN = 20_000;

export class SemanticIndexes {
  private readonly cache: AssociationCache;
  private readonly tokenStmt: Statement;
  private readonly build: (key: string) => { ix: AssociationIndex; token: number | null };
  private readonly newestUsers: Statement;
  private readonly keysOfUser: Statement;
  private readonly sizeOf: Statement;
  /** scope indexes read from the table so far (each a full read of the scope) */
  private built = 0;

  /** `maxIndexed`: memories held in all loaded indexes at once (MAX_INDEXED unless a test says) */
  constructor(db: Db, maxIndexed = MAX_INDEXED) {
    this.cache = new AssociationCache(maxIndexed);
    // In the order of the scope's time index: by rowid, SQLite would read and sort the whole scope
    // first (0.8 s for a 420k-memory scope at 1M memories, against 30 ms).
    const load = db.prepare(`SELECT m.rowid AS rowid, m.content AS content,
        (SELECT s.thread_id FROM memory_sources s WHERE s.memory_rowid = m.rowid AND s.thread_id IS NOT NULL ORDER BY s.id LIMIT 1) AS thread
      FROM memories m WHERE m.vis_key = ? AND m.status IN ('active','pending') AND (m.flags = '' OR m.trust = 'user_confirmed')
      ORDER BY m.updated_at DESC LIMIT ${SEMANTIC_SCOPE_CAP}`);
    this.tokenStmt = db.prepare(`SELECT token FROM scope_tokens WHERE vis_key = ?`);
    this.newestUsers = db.prepare(`SELECT user_id FROM memories ORDER BY rowid DESC LIMIT ${WARM_SCAN}`).pluck();
    this.keysOfUser = db.prepare(`SELECT vis_key AS key, level FROM memories WHERE user_id = ? ORDER BY updated_at DESC LIMIT ${WARM_SCAN}`);
    this.sizeOf = db.prepare(`SELECT COUNT(*) FROM memories WHERE vis_key = ? AND status IN ('active','pending')`).pluck();
    // token and rows from one snapshot: a write between them would go unnoticed
    this.build = db.transaction((key: string) => {
      const token = this.token(key);
      const ix = new AssociationIndex();
      for (const r of load.all(key) as { rowid: number; content: string; thread: string | null }[]) ix.add(r.rowid, r.thread, r.content);
      return { ix, token };
    });
  }

  private token(key: string): number | null {
    return (this.tokenStmt.get(key) as { token: number } | undefined)?.token ?? null;
  }

  /** The indexes of these scope keys, current as of now: built or rebuilt as needed. */
  indexesFor(keys: string[]): AssociationIndex[] {
    const out = keys.map((k) => {
      const ix = this.cache.current(k, this.token(k));
      if (ix) return ix;
      const built = this.build(k);
      this.built++;
      this.cache.put(k, built.ix, built.token);
      return built.ix;
    });
    this.cache.evict(new Set(keys));
    return out;
  }

  /** Scope indexes read from the table so far: a rebuild reads the whole scope (tests, diagnostics). */
  get builds(): number {
    return this.built;
  }

  /** Memories held in all loaded indexes (tests). */
  get held(): number {
    return this.cache.held;
  }

  /**
   * The scopes most likely searched next: those of the people who wrote last (whoever wrote the
   * newest memories), in the order of `warmScopes` (core/retrieval/association-cache.ts). What a
   * warm-up builds before the first search asks.
   */
  recentScopes(maxScopes: number, maxMemories: number): string[] {
    const users: string[] = [];
    for (const u of this.newestUsers.iterate() as IterableIterator<string>) {
      if (!users.includes(u)) users.push(u);
      if (users.length >= maxScopes) break;
    }
    return warmScopes(
      users,
      (u) => this.keysOfUser.iterate(u) as IterableIterator<{ key: string; level: string }>,
      (key) => this.sizeOf.get(key) as number,
      maxScopes,
      maxMemories,
    );
  }

  /** This store's write changed the scope's indexed memories by `delta` (see AssociationCache.updated). */
  updated(key: string, prev: number | null, next: number, delta: IndexDelta): void {
    this.cache.updated(key, prev, next, delta);
  }

  /** Every scope rebuilds on next use. */
  clear(): void {
    this.cache.clear();
  }

  /** The best `limit` memories of these scopes for the query text by expanded association, best first. */
  score(keys: string[], text: string, limit: number): { rowid: number; score: number }[] {
    const ixs = this.indexesFor(keys);
    return scoreExpanded(ixs, expandQuery(ixs, text), limit);
  }

  /** How many scopes are held (tests). */
  get loaded(): number {
    return this.cache.loaded;
  }
}

// The semantic channel's per-scope association indexes (core/retrieval/associations.ts), built
// lazily from the memories table the first time a scope is searched and kept in memory. Each index
// remembers its scope's change token (table scope_tokens, renewed by every write transaction that
// changes the scope, from any connection or process); a search compares tokens and rebuilds a scope
// that changed since, so a write in one scope leaves the others' indexes alone. A memory inserted
// by this store joins its scope's index in place when nothing else changed the scope in between;
// the store also drops a scope as soon as it changes it (a forgotten memory does not wait in memory
// for the next search). Nothing is persisted: the index is derived data, one scope at a time.
// Flagged memories no person confirmed stay out, as they stay out of search results.
import type { Statement } from "better-sqlite3";
import { AssociationIndex, expandQuery, scoreExpanded } from "../../core/retrieval/associations.js";
import type { Db } from "./database.js";

/**
 * most recently written memories per scope that take part (bounds build time and memory on huge
 * scopes). In the order of the scope's time index: by rowid, SQLite would read and sort the whole
 * scope first (0.8 s for a 420k-memory scope at 1M memories, against 30 ms).
 */
export const SEMANTIC_SCOPE_CAP = 20_000;
/** scopes kept in memory at once (least recently used dropped first) */
const MAX_SCOPES = 64;
/**
 * memories held in all loaded indexes at once (least recently used scopes dropped first): an index
 * takes ~0.55 KB per memory, so at most ~110 MB, where 64 full scopes would take ~700 MB
 */
export const MAX_INDEXED = 200_000;
/** which scopes of a person a warm-up builds first: the broad ones every search of theirs reads */
const LEVEL_ORDER = ["user", "project", "session", "thread"];
/** newest memories read to find who wrote last, and each one's newest memories read for their scopes (warm-up) */
const WARM_SCAN = 20_000;

interface Loaded {
  ix: AssociationIndex;
  /** the scope's change token when the index was read (null: the scope was never written since tokens exist) */
  token: number | null;
}

export class SemanticIndexes {
  private readonly byKey = new Map<string, Loaded>();
  private readonly tokenStmt: Statement;
  private readonly build: (key: string) => Loaded;
  private readonly newestUsers: Statement;
  private readonly keysOfUser: Statement;
  private readonly sizeOf: Statement;

  /** `maxIndexed`: memories held in all loaded indexes at once (MAX_INDEXED unless a test says) */
  constructor(
    db: Db,
    private readonly maxIndexed = MAX_INDEXED,
  ) {
    const load = db.prepare(`SELECT m.rowid AS rowid, m.content AS content,
        (SELECT s.thread_id FROM memory_sources s WHERE s.memory_rowid = m.rowid AND s.thread_id IS NOT NULL ORDER BY s.id LIMIT 1) AS thread
      FROM memories m WHERE m.vis_key = ? AND m.status IN ('active','pending') AND (m.flags = '' OR m.trust = 'user_confirmed')
      ORDER BY m.updated_at DESC LIMIT ${SEMANTIC_SCOPE_CAP}`);
    this.tokenStmt = db.prepare(`SELECT token FROM scope_tokens WHERE vis_key = ?`);
    this.newestUsers = db.prepare(`SELECT user_id FROM memories ORDER BY rowid DESC LIMIT ${WARM_SCAN}`).pluck();
    this.keysOfUser = db.prepare(`SELECT vis_key AS key, level FROM memories WHERE user_id = ? ORDER BY updated_at DESC LIMIT ${WARM_SCAN}`);
    this.sizeOf = db.prepare(`SELECT COUNT(*) FROM memories WHERE vis_key = ? AND status IN ('active','pending')`).pluck();
    // token and rows from one snapshot: a write between them would go unnoticed
    this.build = db.transaction((key: string): Loaded => {
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
      let e = this.byKey.get(k);
      if (e && e.token === this.token(k)) {
        // most recently used last
        this.byKey.delete(k);
        this.byKey.set(k, e);
        return e.ix;
      }
      this.byKey.delete(k);
      e = this.build(k);
      this.byKey.set(k, e);
      return e.ix;
    });
    this.evict(new Set(keys));
    return out;
  }

  /** Least recently used scopes go while more than MAX_SCOPES scopes or `maxIndexed` memories are held; `keep` stays. */
  private evict(keep: Set<string>): void {
    let held = 0;
    for (const e of this.byKey.values()) held += e.ix.size;
    for (const [k, e] of this.byKey) {
      if (this.byKey.size <= MAX_SCOPES && held <= this.maxIndexed) break;
      if (keep.has(k)) continue;
      this.byKey.delete(k);
      held -= e.ix.size;
    }
  }

  /** Memories held in all loaded indexes (tests). */
  get held(): number {
    let n = 0;
    for (const e of this.byKey.values()) n += e.ix.size;
    return n;
  }

  /**
   * The scopes most likely searched next: those of the people who wrote last (whoever wrote the
   * newest memories). Of each person, the user-level scope first and then the project scopes,
   * since every search of theirs (or of a session in that project) reads them, then their session
   * and thread scopes; most recently written first within a level. At most `maxScopes` whose
   * indexes would hold at most `maxMemories` in all (a scope over the budget is passed over). What
   * a warm-up builds before the first search asks.
   */
  recentScopes(maxScopes: number, maxMemories: number): string[] {
    const users: string[] = [];
    for (const u of this.newestUsers.iterate() as IterableIterator<string>) {
      if (!users.includes(u)) users.push(u);
      if (users.length >= maxScopes) break;
    }
    const out: string[] = [];
    const seen = new Set<string>();
    let total = 0;
    for (const u of users) {
      const keys: { key: string; level: string }[] = [];
      for (const r of this.keysOfUser.iterate(u) as IterableIterator<{ key: string; level: string }>) {
        if (!seen.has(r.key)) keys.push(r);
        seen.add(r.key);
      }
      // stable: recency order stays within a level
      keys.sort((a, b) => LEVEL_ORDER.indexOf(a.level) - LEVEL_ORDER.indexOf(b.level));
      for (const { key } of keys) {
        const n = Math.min(SEMANTIC_SCOPE_CAP, this.sizeOf.get(key) as number);
        if (n === 0 || total + n > maxMemories) continue;
        total += n;
        out.push(key);
        // full: nothing more fits, however many small scopes are left to count
        if (out.length >= maxScopes || total >= maxMemories) return out;
      }
    }
    return out;
  }

  /**
   * This store inserted a memory and renewed its scope's token from `prev` to `next`: it joins the
   * loaded index if that was current just before (else the index is stale and goes).
   */
  added(key: string, rowid: number, thread: string | null, content: string, prev: number | null, next: number): void {
    const e = this.byKey.get(key);
    if (!e) return;
    if (e.token !== prev || e.ix.size >= SEMANTIC_SCOPE_CAP) {
      this.byKey.delete(key);
      return;
    }
    e.ix.add(rowid, thread, content);
    e.token = next;
  }

  /** Memories of a scope left or changed: drop its index now (it is rebuilt on next use). */
  changed(key: string): void {
    this.byKey.delete(key);
  }

  /** Every scope rebuilds on next use. */
  clear(): void {
    this.byKey.clear();
  }

  /** The best `limit` memories of these scopes for the query text by expanded association, best first. */
  score(keys: string[], text: string, limit: number): { rowid: number; score: number }[] {
    const ixs = this.indexesFor(keys);
    return scoreExpanded(ixs, expandQuery(ixs, text), limit);
  }

  /** How many scopes are held (tests). */
  get loaded(): number {
    return this.byKey.size;
  }
}

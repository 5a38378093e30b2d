// The semantic channel's per-scope association indexes (core/retrieval/associations.ts), built
// lazily from the memories table the first time a scope is searched and kept in memory. A new
// memory joins its scope's index; any other change to a scope (forget, status change, supersede,
// expiry, a new source) drops that scope's index, so it is rebuilt from what the table holds now
// and nothing of a forgotten memory survives. A write by another connection (PRAGMA data_version)
// drops them all (unless the owner follows writers itself: the semantic worker's connection would
// count the store's own writes as another's). Nothing is persisted: the index is derived data, one
// scope at a time. Flagged memories no person confirmed stay out, as they stay out of search results.
import type { Statement } from "better-sqlite3";
import { AssociationIndex, expandQuery, scoreExpanded } from "../../core/retrieval/associations.js";
import type { Db } from "./database.js";

/** newest memories per scope that take part (bounds build time and memory on huge scopes) */
export const SEMANTIC_SCOPE_CAP = 20_000;
/** scopes kept in memory at once (least recently used dropped first) */
const MAX_SCOPES = 64;

export class SemanticIndexes {
  private readonly byKey = new Map<string, AssociationIndex>();
  private readonly load: Statement;
  private readonly keyOf: Statement;
  private readonly versionStmt: Statement;
  private dataVersion: number;

  /** `followWriters`: drop every index when another connection commits (see the header) */
  constructor(
    db: Db,
    private readonly followWriters = true,
  ) {
    this.load = db.prepare(`SELECT m.rowid AS rowid, m.content AS content,
        (SELECT s.thread_id FROM memory_sources s WHERE s.memory_rowid = m.rowid AND s.thread_id IS NOT NULL ORDER BY s.id LIMIT 1) AS thread
      FROM memories m WHERE m.vis_key = ? AND m.status IN ('active','pending') AND (m.flags = '' OR m.trust = 'user_confirmed')
      ORDER BY m.rowid DESC LIMIT ${SEMANTIC_SCOPE_CAP}`);
    this.keyOf = db.prepare(`SELECT vis_key FROM memories WHERE rowid = ?`);
    // prepared once: db.pragma() would prepare it on every search
    this.versionStmt = db.prepare(`SELECT data_version AS v FROM pragma_data_version`);
    this.dataVersion = this.version();
  }

  private version(): number {
    return (this.versionStmt.get() as { v: number }).v;
  }

  /** The indexes of these scope keys, built as needed. */
  indexesFor(keys: string[]): AssociationIndex[] {
    if (this.followWriters) {
      const v = this.version();
      if (v !== this.dataVersion) {
        this.byKey.clear();
        this.dataVersion = v;
      }
    }
    return keys.map((k) => {
      let ix = this.byKey.get(k);
      if (ix) {
        // most recently used last
        this.byKey.delete(k);
        this.byKey.set(k, ix);
        return ix;
      }
      ix = new AssociationIndex();
      for (const r of this.load.all(k) as { rowid: number; content: string; thread: string | null }[]) ix.add(r.rowid, r.thread, r.content);
      this.byKey.set(k, ix);
      while (this.byKey.size > MAX_SCOPES) this.byKey.delete(this.byKey.keys().next().value!);
      return ix;
    });
  }

  /** A memory was inserted: it joins its scope's index if that is loaded. */
  added(key: string, rowid: number, thread: string | null, content: string): void {
    const ix = this.byKey.get(key);
    if (!ix) return;
    if (ix.size >= SEMANTIC_SCOPE_CAP) this.byKey.delete(key);
    else ix.add(rowid, thread, content);
  }

  /** Memories of a scope left or changed: rebuild it on next use. */
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

  /** A memory (by rowid) changed: rebuild its scope on next use. */
  changedRow(rowid: number): void {
    const r = this.keyOf.get(rowid) as { vis_key: string } | undefined;
    if (r) this.changed(r.vis_key);
  }

  /** How many scopes are held (tests). */
  get loaded(): number {
    return this.byKey.size;
  }
}

// Memory vectors in sqlite-vec: one vec0 table, rowid = memories.rowid, partitioned by the
// memory's owner and visibility key so a KNN query only ever reads the partitions the viewer may
// see (the scope predicate is inside the nearest-neighbour search, not a post-filter). Status,
// expiry, flags and the rest are filtered by the caller's join on `memories`: a vec0 metadata
// column for status doubled the KNN's time (text compared per scanned row), and superseded or
// expired versions are few next to current ones.
//
// sqlite-vec turns `vis_key IN (a, b, c)` on a partition key into one KNN per key (SQLite's
// IN-as-repeated-equality for virtual tables; vec0 handles partition keys with `=` only), so a
// query returns up to k rows per key, each key's k nearest: the global k nearest are the first k of
// that union ordered by distance. LIMIT cannot be combined with `k = ?` inside vec0, so the
// ordering and the cut happen here.
import * as sqliteVec from "sqlite-vec";
import type { Statement } from "better-sqlite3";
import { toBlob } from "../../core/embedding/vector.js";
import type { Db } from "./database.js";

export const VECTOR_TABLE = "memory_vec";
/** vec0's ceiling on k */
const MAX_K = 4096;
/**
 * Vectors per vec0 chunk. Every partition (visibility key) allocates whole chunks, and most keys
 * (sessions, threads) hold a handful of memories: vec0's default of 1024 made a 10k-memory store's
 * vectors 7× their raw size (bench/vector-scale.ts); much smaller chunks cost time per chunk read.
 */
const CHUNK_SIZE = 128;

const loaded = new WeakSet<Db>();

/** Loads sqlite-vec into this connection once; the error says what is missing. */
export function loadSqliteVec(db: Db): void {
  if (loaded.has(db)) return;
  try {
    sqliteVec.load(db);
  } catch (e) {
    throw new Error(
      `sqlite-vec could not be loaded (${(e as Error).message}); the vector channel needs the sqlite-vec package and its platform binary (sqlite-vec-<os>-<arch>)`,
      { cause: e },
    );
  }
  loaded.add(db);
}

export function vectorTableExists(db: Db): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_master WHERE name = ?`).get(VECTOR_TABLE) !== undefined;
}

export interface VectorMeta {
  embedderId: string;
  dimensions: number;
}

export interface VectorNeighbour {
  rowid: number;
  /** cosine distance 1 − cos, 0 = same direction */
  distance: number;
}

/** Which partitions a KNN may read: a list of visibility keys, or every key of one owner. */
export type VectorScope = { keys: string[] } | { user: string };

export class SqliteVectorIndex {
  private st: Record<string, Statement> | null = null;
  private readonly cache = new Map<string, Statement>();

  /** Opens the index over an existing table, or returns null when no vectors were ever stored. */
  static existing(db: Db): SqliteVectorIndex | null {
    if (!vectorTableExists(db)) return null;
    loadSqliteVec(db);
    return new SqliteVectorIndex(db);
  }

  /**
   * Opens the index for this embedder, creating the table; vectors of another embedder id or
   * dimension are dropped (they are not comparable) and must be rebuilt by a reindex.
   */
  static forEmbedder(db: Db, meta: VectorMeta, now: number): { index: SqliteVectorIndex; reset: boolean } {
    loadSqliteVec(db);
    if (!Number.isInteger(meta.dimensions) || meta.dimensions <= 0) throw new Error(`vector dimension must be a positive integer (got ${meta.dimensions})`);
    const ready = (): boolean => {
      const cur = readMeta(db);
      return cur !== null && cur.embedderId === meta.embedderId && cur.dimensions === meta.dimensions && vectorTableExists(db);
    };
    // The table is usually there already: then no write lock, so a store opens while another
    // process holds it past the busy timeout (a server started during a reindex of a large store
    // refused to start, and an embedder that loaded later left the channel off for good).
    if (ready()) return { index: new SqliteVectorIndex(db), reset: false };
    let reset = false;
    db.transaction(() => {
      const cur = readMeta(db);
      // checked again under the write lock: another process may have set it up meanwhile
      if (!ready()) {
        reset = cur !== null || vectorTableExists(db);
        db.exec(`DROP TABLE IF EXISTS ${VECTOR_TABLE}`);
        // Both keys partition the index (a key belongs to one user, so the shards are the same):
        // a thread's view reads its few keys, an owner's view of many keys reads the owner's shards.
        db.exec(`CREATE VIRTUAL TABLE ${VECTOR_TABLE} USING vec0(
          user_id text partition key,
          vis_key text partition key,
          embedding float[${meta.dimensions}] distance_metric=l2,
          chunk_size=${CHUNK_SIZE}
        )`);
        db.prepare(
          `INSERT INTO memory_vector_meta (id, embedder_id, dimensions, created_at) VALUES (1, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET embedder_id = excluded.embedder_id, dimensions = excluded.dimensions, created_at = excluded.created_at`,
        ).run(meta.embedderId, meta.dimensions, now);
      }
    }).immediate();
    return { index: new SqliteVectorIndex(db), reset };
  }

  /** the table's dimension, read once: a change of embedder builds a new index object */
  private readonly dims: number | null;

  private constructor(private readonly db: Db) {
    this.dims = readMeta(db)?.dimensions ?? null;
  }

  meta(): VectorMeta | null {
    return readMeta(this.db);
  }

  private stmts(): Record<string, Statement> {
    if (this.st) return this.st;
    const p = (sql: string) => this.db.prepare(sql);
    this.st = {
      del: p(`DELETE FROM ${VECTOR_TABLE} WHERE rowid = ?`),
      put: p(`INSERT INTO ${VECTOR_TABLE} (rowid, user_id, vis_key, embedding) VALUES (?, ?, ?, ?)`),
      has: p(`SELECT rowid FROM ${VECTOR_TABLE} WHERE rowid = ?`),
      count: p(`SELECT count(*) AS n FROM ${VECTOR_TABLE}`),
      missing: p(`SELECT m.rowid, m.content, m.vis_key, m.user_id FROM memories m
        WHERE m.status <> 'deleted' AND m.content <> '' AND m.rowid > ?
          AND NOT EXISTS (SELECT 1 FROM ${VECTOR_TABLE}_rowids r WHERE r.rowid = m.rowid)
        ORDER BY m.rowid LIMIT ?`),
      missingCount: p(`SELECT count(*) AS n FROM memories m WHERE m.status <> 'deleted' AND m.content <> ''
        AND NOT EXISTS (SELECT 1 FROM ${VECTOR_TABLE}_rowids r WHERE r.rowid = m.rowid)`),
    };
    return this.st;
  }

  /**
   * Stores (or replaces) a memory's vector, which must be unit length (every Embedder's are): the
   * index ranks by L2, the same order as cosine for unit vectors and faster in sqlite-vec.
   * Call inside the transaction that writes the memory.
   */
  put(rowid: number, visKey: string, userId: string, vector: Float32Array): void {
    if (this.dims !== null && vector.length !== this.dims) {
      throw new Error(`vector has ${vector.length} dimensions, the index holds ${this.dims}`);
    }
    const s = this.stmts();
    // vec0 has no upsert
    s.del!.run(BigInt(rowid));
    s.put!.run(BigInt(rowid), userId, visKey, toBlob(vector));
  }

  remove(rowid: number): void {
    this.stmts().del!.run(BigInt(rowid));
  }

  has(rowid: number): boolean {
    return this.stmts().has!.get(BigInt(rowid)) !== undefined;
  }

  count(): number {
    return (this.stmts().count!.get() as { n: number }).n;
  }

  /** Live memories with no vector yet (after the embedder was switched on, changed or failed), in rowid order. */
  missing(afterRowid: number, limit: number): { rowid: number; content: string; vis_key: string; user_id: string }[] {
    return this.stmts().missing!.all(afterRowid, limit) as { rowid: number; content: string; vis_key: string; user_id: string }[];
  }

  /** Deletes vectors whose memory was forgotten (by a process that did not know the table). */
  removeForgotten(): number {
    const rows = this.db
      .prepare(`SELECT r.rowid FROM ${VECTOR_TABLE}_rowids r JOIN memories m ON m.rowid = r.rowid WHERE m.status = 'deleted'`)
      .all() as { rowid: number | bigint }[];
    for (const r of rows) this.remove(Number(r.rowid));
    return rows.length;
  }

  missingCount(): number {
    return (this.stmts().missingCount!.get() as { n: number }).n;
  }

  /** The k nearest vectors inside `scope`, nearest first (unit-length query). */
  knn(query: Float32Array, scope: VectorScope, k: number): VectorNeighbour[] {
    const kk = Math.min(MAX_K, Math.max(1, Math.floor(k)));
    const params: unknown[] = [toBlob(query), kk];
    let scopeSql: string;
    if ("keys" in scope) {
      if (scope.keys.length === 0) return [];
      scopeSql = `vis_key IN (${scope.keys.map(() => "?").join(",")})`;
      params.push(...scope.keys);
    } else {
      scopeSql = `user_id = ?`;
      params.push(scope.user);
    }
    const sql = `SELECT rowid, distance FROM ${VECTOR_TABLE} WHERE embedding MATCH ? AND k = ? AND ${scopeSql} ORDER BY distance`;
    let st = this.cache.get(sql);
    if (!st) {
      if (this.cache.size > 64) this.cache.clear();
      st = this.db.prepare(sql);
      this.cache.set(sql, st);
    }
    const rows = st.all(...params) as { rowid: number | bigint; distance: number }[];
    // unit vectors: |a − b|² = 2 − 2·cos(a, b), so the cosine distance is |a − b|² / 2
    return rows.slice(0, kk).map((r) => ({ rowid: Number(r.rowid), distance: (r.distance * r.distance) / 2 }));
  }
}

function readMeta(db: Db): VectorMeta | null {
  const row = db.prepare(`SELECT embedder_id, dimensions FROM memory_vector_meta WHERE id = 1`).get() as
    | { embedder_id: string; dimensions: number }
    | undefined;
  return row ? { embedderId: row.embedder_id, dimensions: row.dimensions } : null;
}

// The vector channel of SqliteMemoryStore: embeds a memory before its write transaction, writes
// its vector in the same transaction as the record, removes it with the forget, and answers KNN
// queries inside the viewer's visibility keys (status and the other filters are the store's join). Embedding failures never block or lose a write: the
// memory is stored without a vector and `memory reindex --vectors` fills the gap later.
import type { Logger } from "pino";
import type { Embedder } from "../../core/embedding/embedder.js";
import { visibilityKey } from "../../core/memory/scope.js";
import type { NewMemory } from "../../core/memory/record.js";
import type { Db } from "./database.js";
import { SqliteVectorIndex, type VectorNeighbour, type VectorScope } from "./vector-index.js";

export interface VectorChannelOptions {
  /** the embedder, or a promise of one (a local model loads asynchronously) */
  embedder: Embedder | Promise<Embedder>;
  /** RRF weight relative to the word channel */
  weight?: number;
  /** cosine similarity below which a neighbour is dropped */
  minSimilarity?: number;
  logger?: Logger;
  /** when the vector table's metadata row is written */
  now?: () => number;
}

interface Ready {
  embedder: Embedder;
  index: SqliteVectorIndex;
}

export class VectorChannel {
  readonly weight: number;
  /** the index that forgets delete from; replaced once the embedder is ready */
  private index: SqliteVectorIndex | null;
  private ready: Ready | null = null;
  private readonly pending: Promise<Ready | null> | null;
  /** the last embedding or loading failure, for `memory reindex` and status output */
  lastError: string | null = null;

  /**
   * Maintenance only (no embedder configured): when vectors were stored before, forgets still
   * remove them. Null when there is no vector table.
   */
  static maintenance(db: Db): VectorChannel | null {
    const index = SqliteVectorIndex.existing(db);
    return index ? new VectorChannel(db, null, index) : null;
  }

  static withEmbedder(db: Db, opts: VectorChannelOptions): VectorChannel {
    return new VectorChannel(db, opts, SqliteVectorIndex.existing(db));
  }

  private constructor(
    private readonly db: Db,
    private readonly opts: VectorChannelOptions | null,
    index: SqliteVectorIndex | null,
  ) {
    this.index = index;
    this.weight = opts?.weight ?? 1;
    if (!opts) {
      this.pending = null;
    } else if (opts.embedder instanceof Promise) {
      this.pending = opts.embedder.then(
        (e) => {
          try {
            return this.attach(e);
          } catch (err) {
            // e.g. sqlite-vec missing, or the store was closed before the model finished loading
            this.fail("vector index unavailable", err);
            return null;
          }
        },
        (e: unknown) => {
          this.fail("embedder unavailable", e);
          return null;
        },
      );
    } else {
      this.pending = Promise.resolve(this.attach(opts.embedder));
    }
  }

  private attach(embedder: Embedder): Ready {
    const now = this.opts?.now ?? Date.now;
    const { index, reset } = SqliteVectorIndex.forEmbedder(this.db, { embedderId: embedder.id, dimensions: embedder.dimensions }, now());
    if (reset) this.opts?.logger?.warn({ embedder: embedder.id }, "vector index emptied: embedder or dimension changed; run memory reindex --vectors");
    this.index = index;
    this.ready = { embedder, index };
    return this.ready;
  }

  private fail(what: string, e: unknown): void {
    this.lastError = `${what}: ${e instanceof Error ? e.message : String(e)}`;
    this.opts?.logger?.warn({ err: e }, `vector channel: ${what}`);
  }

  /** Resolves once the embedder is loaded; null when there is none or it failed to load. */
  async whenReady(): Promise<Ready | null> {
    return this.ready ?? (this.pending ? await this.pending : null);
  }

  get embedderId(): string | null {
    return this.ready?.embedder.id ?? null;
  }

  /** Vectors for texts about to be written; null entries where embedding failed (written later by reindex). */
  async vectorsFor(texts: string[]): Promise<(Float32Array | null)[]> {
    const r = await this.whenReady();
    if (!r || texts.length === 0) return texts.map(() => null);
    try {
      return await r.embedder.embed(texts);
    } catch (e) {
      this.fail("embedding failed, memory stored without a vector", e);
      return texts.map(() => null);
    }
  }

  // ---- inside the store's write transactions (synchronous) ------------------------------------

  onInsert(rowid: number, rec: NewMemory, vector: Float32Array | null | undefined): void {
    if (!vector || !this.ready) return;
    this.ready.index.put(rowid, visibilityKey(rec.scope), rec.scope.user, vector);
  }

  onForget(rowid: number): void {
    this.index?.remove(rowid);
  }

  // ---- reads ----------------------------------------------------------------------------------

  /** KNN of the query text inside `scope`; empty when there is no embedder or it failed. */
  async nearest(text: string, scope: VectorScope, k: number): Promise<VectorNeighbour[]> {
    const r = await this.whenReady();
    if (!r || text.trim() === "") return [];
    let q: Float32Array | undefined;
    try {
      [q] = await r.embedder.embed([text]);
    } catch (e) {
      this.fail("query embedding failed, vector channel skipped", e);
      return [];
    }
    if (!q) return [];
    const maxDistance = 1 - (this.opts?.minSimilarity ?? -1);
    return r.index.knn(q, scope, k).filter((n) => n.distance <= maxDistance);
  }

  /**
   * Embeds every live memory that has no vector (after the embedder was switched on or changed,
   * or an embedding failed), `batch` at a time; each batch is its own transaction.
   */
  async backfill(batch: number, onProgress?: (done: number, total: number) => void): Promise<{ embedded: number; total: number }> {
    const r = await this.whenReady();
    if (!r) throw new Error(`no embedder is available${this.lastError ? ` (${this.lastError})` : ""}; set "embedder" in config.json`);
    const total = r.index.missingCount();
    let done = 0;
    let after = 0;
    onProgress?.(0, total);
    for (;;) {
      const rows = r.index.missing(after, batch);
      if (rows.length === 0) break;
      const vecs = await r.embedder.embed(rows.map((x) => x.content));
      this.db.transaction(() => {
        rows.forEach((row, i) => {
          // the row may have been forgotten while the batch was embedding
          const cur = this.db.prepare(`SELECT status FROM memories WHERE rowid = ?`).get(row.rowid) as { status: string } | undefined;
          if (!cur || cur.status === "deleted") return;
          r.index.put(row.rowid, row.vis_key, row.user_id, vecs[i]!);
        });
      }).immediate();
      done += rows.length;
      after = rows.at(-1)!.rowid;
      onProgress?.(done, total);
    }
    return { embedded: done, total };
  }

  count(): number {
    return this.index?.count() ?? 0;
  }

  has(rowid: number): boolean {
    return this.index?.has(rowid) ?? false;
  }
}

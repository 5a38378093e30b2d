// The vector channel of SqliteMemoryStore: embeds a memory before its write transaction, writes
// its vector in the same transaction as the record, removes it with the forget, and answers KNN
// queries inside the viewer's visibility keys (status and the other filters are the store's join).
// Embedding failures never block or lose a write: the memory is stored without a vector and
// `memory reindex --vectors` fills the gap later. Another process may switch the embedder (and so
// the table) under this one: vectors are written and read only while the table's metadata names
// this process's embedder, and a forget removes a vector whenever the table exists.
import type { Logger } from "pino";
import type { Embedder } from "../../core/embedding/embedder.js";
import { EmbedderGuard, isUsable, type EmbedderGuardOptions } from "../../core/embedding/guard.js";
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
  /** backoff and query deadline (core/embedding/guard.ts); defaults suit a server */
  guard?: Omit<EmbedderGuardOptions, "onFailure">;
}

interface Ready {
  embedder: Embedder;
  guard: EmbedderGuard;
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
   * remove them. Null when there is no vector table (see forgetVector for one made later).
   */
  static maintenance(db: Db): VectorChannel | null {
    const index = SqliteVectorIndex.existing(db);
    return index ? new VectorChannel(db, null, index) : null;
  }

  /**
   * For a store that had no vector table when it opened: another process (`memory reindex
   * --vectors` with an embedder configured) may have made one since, holding this memory's vector.
   */
  static forgetVector(db: Db, rowid: number): void {
    SqliteVectorIndex.existing(db)?.remove(rowid);
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
    const guard = new EmbedderGuard(embedder, { ...this.opts?.guard, onFailure: (what, e) => this.fail(what, e) });
    this.ready = { embedder, guard, index };
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
    return r.guard.forWrite(texts);
  }

  /** Whether the table still holds this process's vector space (another process may have switched it). */
  private sameSpace(r: Ready): boolean {
    const m = r.index.meta();
    if (m && m.embedderId === r.embedder.id && m.dimensions === r.embedder.dimensions) return true;
    this.lastError = `the vector table now holds ${m ? `${m.embedderId} vectors` : "no vectors"} (changed by another process), this process embeds with ${r.embedder.id}: restart it with the same embedder config`;
    return false;
  }

  // ---- inside the store's write transactions (synchronous) ------------------------------------

  onInsert(rowid: number, rec: NewMemory, vector: Float32Array | null | undefined): void {
    const r = this.ready;
    if (!isUsable(vector) || !r || !this.sameSpace(r)) return;
    try {
      // a savepoint: a vector that cannot be stored must not take the memory's write with it
      this.db.transaction(() => r.index.put(rowid, visibilityKey(rec.scope), rec.scope.user, vector))();
    } catch (e) {
      this.fail("vector not stored, memory stored without one", e);
    }
  }

  onForget(rowid: number): void {
    // the table may have been made by another process after this one opened
    this.index ??= SqliteVectorIndex.existing(this.db);
    this.index?.remove(rowid);
  }

  // ---- reads ----------------------------------------------------------------------------------

  /** KNN of the query text inside `scope`; empty when there is no embedder or it failed. */
  async nearest(text: string, scope: VectorScope, k: number): Promise<VectorNeighbour[]> {
    const r = await this.whenReady();
    if (!r || text.trim() === "") return [];
    const q = await r.guard.forQuery(text);
    if (!q || !this.sameSpace(r)) return [];
    const maxDistance = 1 - (this.opts?.minSimilarity ?? -1);
    try {
      return r.index.knn(q, scope, k).filter((n) => n.distance <= maxDistance);
    } catch (e) {
      this.fail("vector search failed, vector channel skipped", e);
      return [];
    }
  }

  /**
   * Embeds every live memory that has no vector (after the embedder was switched on or changed,
   * or an embedding failed), `batch` at a time; each batch is its own transaction. Texts the
   * embedder refuses are skipped (counted, with the first reason); an unreachable embedder stops it.
   * Vectors left behind by forgets in a process that did not know the table are removed first.
   */
  async backfill(
    batch: number,
    onProgress?: (done: number, total: number) => void,
  ): Promise<{ embedded: number; total: number; skipped?: number; reason?: string }> {
    const r = await this.whenReady();
    if (!r) throw new Error(`no embedder is available${this.lastError ? ` (${this.lastError})` : ""}; set "embedder" in config.json`);
    this.db.transaction(() => r.index.removeForgotten()).immediate();
    const total = r.index.missingCount();
    let done = 0;
    let embedded = 0;
    let skipped = 0;
    let reason: string | null = null;
    let after = 0;
    onProgress?.(0, total);
    for (;;) {
      const rows = r.index.missing(after, batch);
      if (rows.length === 0) break;
      const got = await r.guard.forBackfill(rows.map((x) => x.content));
      reason ??= got.refused;
      this.db.transaction(() => {
        if (!this.sameSpace(r)) throw new Error(this.lastError ?? "the vector table changed");
        rows.forEach((row, i) => {
          const v = got.vectors[i];
          if (!v) return void skipped++;
          // the row may have been forgotten while the batch was embedding
          const cur = this.db.prepare(`SELECT status FROM memories WHERE rowid = ?`).get(row.rowid) as { status: string } | undefined;
          if (!cur || cur.status === "deleted") return;
          r.index.put(row.rowid, row.vis_key, row.user_id, v);
          embedded++;
        });
      }).immediate();
      done += rows.length;
      after = rows.at(-1)!.rowid;
      onProgress?.(done, total);
    }
    return skipped ? { embedded, total, skipped, reason: reason ?? "no usable vector (nothing to embed)" } : { embedded, total };
  }

  count(): number {
    return this.index?.count() ?? 0;
  }

  has(rowid: number): boolean {
    return this.index?.has(rowid) ?? false;
  }
}

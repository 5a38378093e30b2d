// How a store asks its embedder for vectors without letting the embedder slow down or break
// memory: an unreachable endpoint is skipped for a while (writes store no vector at once, searches
// skip the vector channel), a search waits a short deadline for its query vector, and one text the
// endpoint refuses (too long for the model, say) costs only that text its vector, not the batch's.
import { EmbedderError, type Embedder } from "./embedder.js";
import { norm } from "./vector.js";

export interface EmbedderGuardOptions {
  /** monotonic milliseconds; performance.now by default */
  now?: () => number;
  /** first pause after the embedder was unreachable; doubles on each failure up to backoffMaxMs */
  backoffMinMs?: number;
  backoffMaxMs?: number;
  /** how long a search waits for its query vector before it runs without the vector channel */
  queryTimeoutMs?: number;
  /** told about every failure (for the log and lastError) */
  onFailure?: (what: string, e: unknown) => void;
}

export const QUERY_TIMEOUT_MS = 2_000;
const BACKOFF_MIN_MS = 5_000;
const BACKOFF_MAX_MS = 300_000;

/** The endpoint or model could not be reached at all: asking again per text would only wait longer. */
export function isUnavailable(e: unknown): boolean {
  return e instanceof EmbedderError && e.code === "unavailable";
}

/** A vector that points nowhere (all zeros) matches nothing and must not be stored or queried. */
export function isUsable(v: Float32Array | null | undefined): v is Float32Array {
  return !!v && norm(v) > 0;
}

export class EmbedderGuard {
  private downUntil = 0;
  private backoff = 0;
  private readonly now: () => number;

  constructor(
    readonly embedder: Embedder,
    private readonly opts: EmbedderGuardOptions = {},
  ) {
    this.now = opts.now ?? (() => performance.now());
  }

  /** While true, writes and searches do not ask the embedder (it was unreachable a moment ago). */
  get resting(): boolean {
    return this.now() < this.downUntil;
  }

  /** Vectors for texts about to be written: null where a text got none (reindex fills those later). */
  async forWrite(texts: string[]): Promise<(Float32Array | null)[]> {
    if (texts.length === 0 || this.resting) return texts.map(() => null);
    try {
      return (await this.split(texts)).map((v) => (isUsable(v) ? v : null));
    } catch (e) {
      // only an unreachable embedder gets here (split keeps the other failures per text)
      this.opts.onFailure?.("embedding failed, memory stored without a vector", e);
      return texts.map(() => null);
    }
  }

  /**
   * For a backfill: vectors where the embedder gave one, null for the texts it refused (with the
   * first reason). An unreachable embedder throws, so the backfill stops and can be run again.
   */
  async forBackfill(texts: string[]): Promise<{ vectors: (Float32Array | null)[]; refused: string | null }> {
    let refused: string | null = null;
    const vectors = await this.split(texts, (e) => (refused ??= e instanceof Error ? e.message : String(e)));
    return { vectors: vectors.map((v) => (isUsable(v) ? v : null)), refused };
  }

  /** The query vector, or null (no usable vector, the embedder resting, failing or slower than the deadline). */
  async forQuery(text: string): Promise<Float32Array | null> {
    if (this.resting) return null;
    const ms = this.opts.queryTimeoutMs ?? QUERY_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new EmbedderError("unavailable", `${this.embedder.id}: no query vector within ${ms} ms`)), ms);
    });
    const asked = this.embedder.embed([text]);
    asked.catch(() => undefined); // a late failure after the deadline is nobody's to handle
    try {
      const [v] = await Promise.race([asked, late]);
      this.recovered();
      return isUsable(v) ? v : null;
    } catch (e) {
      if (isUnavailable(e)) this.rest();
      this.opts.onFailure?.("query embedding failed, vector channel skipped", e);
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Embeds `texts`; when the embedder refuses the batch for a reason other than being unreachable,
   * halves it until the refused texts stand alone (about 2·log2 n extra calls for one bad text).
   */
  private async split(texts: string[], onRefused?: (e: unknown) => void): Promise<(Float32Array | null)[]> {
    try {
      const out = await this.embedder.embed(texts);
      this.recovered();
      return out;
    } catch (e) {
      if (isUnavailable(e)) {
        this.rest();
        throw e;
      }
      if (texts.length === 1) {
        this.opts.onFailure?.("embedding refused, memory stored without a vector", e);
        onRefused?.(e);
        return [null];
      }
      const mid = Math.ceil(texts.length / 2);
      return [...(await this.split(texts.slice(0, mid), onRefused)), ...(await this.split(texts.slice(mid), onRefused))];
    }
  }

  private rest(): void {
    const min = this.opts.backoffMinMs ?? BACKOFF_MIN_MS;
    this.backoff = Math.min(this.opts.backoffMaxMs ?? BACKOFF_MAX_MS, this.backoff ? this.backoff * 2 : min);
    this.downUntil = this.now() + this.backoff;
  }

  private recovered(): void {
    this.backoff = 0;
    this.downUntil = 0;
  }
}

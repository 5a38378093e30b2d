// Adapter: an OpenAI-compatible embeddings endpoint (OpenAI, vLLM, llama.cpp, Ollama, TEI…).
// POST {baseUrl}/embeddings with up to `batchSize` inputs per request; the key is read from the
// environment at call time, never from config.
import { z } from "zod";
import { checkVectors, EmbedderError, type Embedder } from "../../core/embedding/embedder.js";
import { l2Normalize } from "../../core/embedding/vector.js";

export interface OpenAiEmbedderOptions {
  /** e.g. https://api.openai.com/v1 (the path up to /embeddings) */
  baseUrl: string;
  model: string;
  /** what the model returns; checked on every answer */
  dimensions: number;
  /** also send `dimensions` in the request (models that can shorten their vectors) */
  requestDimensions?: boolean;
  /** environment variable with the API key; no Authorization header when it is unset */
  apiKeyEnv?: string;
  env?: NodeJS.ProcessEnv;
  batchSize?: number;
  timeoutMs?: number;
  /**
   * waits before each retry of an overloaded or unreachable-behind-a-proxy answer (HTTP 429, 502,
   * 503, 504); its length is the number of retries. Default [250, 1000].
   */
  retryDelaysMs?: readonly number[];
  /** upper bound on a server's Retry-After wait (default 5000 ms) */
  maxRetryAfterMs?: number;
  fetch?: typeof fetch;
}

const EmbeddingResponse = z.looseObject({
  data: z.array(z.looseObject({ index: z.number().int().min(0).optional(), embedding: z.array(z.number()) })),
});

const EXCERPT_CHARS = 300;
/** the endpoint (or a proxy before it) is overloaded or down: worth a retry, then "unavailable" */
const TRANSIENT = new Set([429, 502, 503, 504]);
const DEFAULT_RETRY_DELAYS_MS = [250, 1000];
const DEFAULT_MAX_RETRY_AFTER_MS = 5000;

/** Retry-After in seconds (or an HTTP date), as a wait in ms; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs)) return secs >= 0 ? secs * 1000 : undefined;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class OpenAiEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private readonly url: string;
  private readonly batchSize: number;
  private readonly timeoutMs: number;
  private readonly retryDelaysMs: readonly number[];
  private readonly maxRetryAfterMs: number;

  constructor(private readonly opts: OpenAiEmbedderOptions) {
    if (!Number.isInteger(opts.dimensions) || opts.dimensions <= 0) {
      throw new EmbedderError("invalid", `embedder.openai.dimensions must be a positive integer (got ${opts.dimensions})`);
    }
    this.url = `${opts.baseUrl.replace(/\/+$/, "")}/embeddings`;
    this.dimensions = opts.dimensions;
    this.batchSize = Math.max(1, opts.batchSize ?? 64);
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.retryDelaysMs = opts.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    this.maxRetryAfterMs = opts.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    this.id = `openai:${opts.model}:${opts.dimensions}`;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) out.push(...(await this.request(texts.slice(i, i + this.batchSize))));
    return checkVectors(this.id, this.dimensions, texts, out);
  }

  private async request(batch: string[]): Promise<Float32Array[]> {
    // Endpoints refuse empty strings; a space embeds as "nothing in particular".
    const body: Record<string, unknown> = {
      model: this.opts.model,
      input: batch.map((t) => (t.trim() === "" ? " " : t)),
      encoding_format: "float",
    };
    if (this.opts.requestDimensions) body.dimensions = this.dimensions;
    const headers: Record<string, string> = { "content-type": "application/json" };
    const keyEnv = this.opts.apiKeyEnv ?? "OPENAI_API_KEY";
    const key = (this.opts.env ?? process.env)[keyEnv]?.trim();
    if (key) {
      // fetch refuses such a value with an error quoting it, key and all, into logs and reindex output
      if (/[^\x20-\x7e]/.test(key)) {
        throw new EmbedderError("unavailable", `the API key in $${keyEnv} holds a line break or a non-ASCII character, which no HTTP header can carry; set ${keyEnv} to the key alone`);
      }
      headers.authorization = `Bearer ${key}`;
    }
    const payload = JSON.stringify(body);
    let res: Response;
    let text: string;
    for (let attempt = 0; ; attempt++) {
      const signal = AbortSignal.timeout(this.timeoutMs);
      try {
        res = await (this.opts.fetch ?? fetch)(this.url, { method: "POST", headers, body: payload, signal });
        text = await res.text();
      } catch (e) {
        if (signal.aborted) throw new EmbedderError("unavailable", `${this.url}: no answer within ${this.timeoutMs} ms (embedder.timeoutMs)`, { cause: e });
        const why = e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e);
        throw new EmbedderError("unavailable", `${this.url}: ${why}`, { cause: e });
      }
      if (res.ok) break;
      // Any other status is about this request (a too-long input: OpenAI's 400, llama.cpp's 500):
      // a retry would fail the same way.
      if (!TRANSIENT.has(res.status)) throw new EmbedderError("upstream", `${this.url} answered HTTP ${res.status}: ${excerpt(text)}`);
      if (attempt >= this.retryDelaysMs.length) {
        const tries = attempt + 1;
        throw new EmbedderError("unavailable", `${this.url} answered HTTP ${res.status} (${tries} ${tries === 1 ? "try" : "tries"}): ${excerpt(text)}`);
      }
      const asked = retryAfterMs(res.headers.get("retry-after"));
      await sleep(asked === undefined ? this.retryDelaysMs[attempt]! : Math.min(asked, this.maxRetryAfterMs));
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new EmbedderError("upstream", `${this.url} answered non-JSON: ${excerpt(text)}`);
    }
    const parsed = EmbeddingResponse.safeParse(json);
    if (!parsed.success) throw new EmbedderError("upstream", `${this.url} answered without data[].embedding: ${excerpt(text)}`);
    const data = parsed.data.data;
    if (data.length !== batch.length) {
      throw new EmbedderError("upstream", `${this.url} returned ${data.length} embeddings for ${batch.length} inputs`);
    }
    // `index` says which input each embedding belongs to; without it, answer order is input order.
    const out: Float32Array[] = new Array(batch.length);
    data.forEach((d, i) => {
      const at = d.index ?? i;
      if (at >= batch.length || out[at]) throw new EmbedderError("upstream", `${this.url} returned embedding index ${at} twice or out of range`);
      if (d.embedding.length !== this.dimensions) {
        throw new EmbedderError(
          "upstream",
          `${this.url}: model ${this.opts.model} returned ${d.embedding.length} dimensions, config says ${this.dimensions} (embedder.openai.dimensions)`,
        );
      }
      out[at] = l2Normalize(Float32Array.from(d.embedding));
    });
    return out;
  }
}

function excerpt(s: string): string {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat || "(empty body)";
}

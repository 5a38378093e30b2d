// Adapter: a local sentence-embedding model folder run by onnxruntime-node (an optional
// dependency, CPU only). The folder holds model.onnx and a WordPiece tokenizer (tokenizer.json or
// vocab.txt). A model whose output is per token ([batch, tokens, dims]) is mean-pooled over the
// attention mask; one that already pools ([batch, dims]) is used as is; both are L2-normalised.
import { createHash } from "node:crypto";
import { createReadStream, existsSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { EmbedderError, checkVectors, type Embedder } from "../../core/embedding/embedder.js";
import { l2Normalize, meanPool } from "../../core/embedding/vector.js";
import { encode, vocabFromText, vocabFromTokenizerJson, type WordPieceVocab } from "../../core/embedding/wordpiece.js";

// The few onnxruntime-node shapes used here, declared locally so the build does not need the
// optional package.
interface OrtTensor {
  readonly type: string;
  readonly dims: readonly number[];
  readonly data: ArrayLike<number> | ArrayLike<bigint>;
}
interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
  release(): Promise<void>;
}
interface Ort {
  InferenceSession: { create(path: string, opts?: Record<string, unknown>): Promise<OrtSession> };
  Tensor: new (type: "int64", data: BigInt64Array, dims: number[]) => OrtTensor;
}

export interface OnnxEmbedderOptions {
  /** the model folder: model.onnx (or onnx/model.onnx) and tokenizer.json or vocab.txt */
  dir: string;
  /** tokens per text, [CLS] and [SEP] included; longer texts are cut */
  maxTokens?: number;
  batchSize?: number;
  /** CPU threads for one inference (0 = onnxruntime's default) */
  threads?: number;
}

const MODULE = "onnxruntime-node";
/** output names that hold per-token or pooled sentence vectors, in order of preference */
const PREFERRED_OUTPUTS = ["sentence_embedding", "last_hidden_state", "token_embeddings"];

/** Loads onnxruntime-node, or says clearly why it cannot. */
export async function loadOrt(moduleName: string = MODULE): Promise<Ort> {
  try {
    const m = (await import(moduleName)) as Ort & { default?: Ort };
    const ort = m.InferenceSession ? m : m.default;
    if (!ort?.InferenceSession) throw new Error("the module has no InferenceSession");
    return ort;
  } catch (e) {
    throw new EmbedderError(
      "unavailable",
      `the ONNX embedder needs the optional package onnxruntime-node, which could not be loaded (${(e as Error).message}). ` +
        `Install it with \`npm install onnxruntime-node --save-optional\` (its CPU binding ships in the package; the GPU download is not needed), ` +
        `or set embedder.kind to "hashing" or "openai".`,
      { cause: e },
    );
  }
}

function findModel(dir: string): string {
  for (const p of ["model.onnx", join("onnx", "model.onnx")]) if (existsSync(join(dir, p))) return join(dir, p);
  throw new EmbedderError("invalid", `${dir}: no model.onnx (looked for model.onnx and onnx/model.onnx); embedder.onnx.dir must name the model folder`);
}

function readVocab(dir: string): WordPieceVocab {
  const tj = join(dir, "tokenizer.json");
  const vt = join(dir, "vocab.txt");
  if (existsSync(tj)) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(tj, "utf8"));
    } catch (e) {
      throw new EmbedderError("invalid", `${tj} is not valid JSON: ${(e as Error).message}`);
    }
    try {
      return vocabFromTokenizerJson(json);
    } catch (e) {
      // a non-WordPiece tokenizer.json next to a vocab.txt: the vocab.txt still works
      if (!existsSync(vt)) throw new EmbedderError("invalid", `${tj}: ${(e as Error).message}`);
    }
  }
  if (existsSync(vt)) {
    // BERT's uncased models lower-case; the folder's tokenizer_config.json says when not.
    let lowercase = true;
    const cfg = join(dir, "tokenizer_config.json");
    if (existsSync(cfg)) {
      try {
        const c = JSON.parse(readFileSync(cfg, "utf8")) as { do_lower_case?: boolean };
        if (typeof c.do_lower_case === "boolean") lowercase = c.do_lower_case;
      } catch {
        // an unreadable config leaves the default
      }
    }
    return vocabFromText(readFileSync(vt, "utf8"), { lowercase });
  }
  throw new EmbedderError("invalid", `${dir}: no tokenizer (tokenizer.json with a WordPiece model, or vocab.txt)`);
}

async function fileDigest(path: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest("hex").slice(0, 16);
}

/** IEEE 754 half-precision bits → number (subnormals, infinities and NaN included). */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/**
 * An output tensor's values as numbers. float16 comes back as a Uint16Array of raw half bits
 * where the runtime has no Float16Array; read as integers they would make every vector nearly
 * the same, so they are decoded. Any other non-float type would be as wrong: refuse it.
 */
function outputValues(t: OrtTensor, name: string): ArrayLike<number> {
  if (t.type === "float32" || t.type === "float64") return t.data as ArrayLike<number>;
  if (t.type === "float16") {
    if (!(t.data instanceof Uint16Array)) return t.data as ArrayLike<number>; // a real Float16Array
    const bits = t.data;
    const out = new Float32Array(bits.length);
    for (let i = 0; i < bits.length; i++) out[i] = halfToFloat(bits[i]!);
    return out;
  }
  throw new EmbedderError("invalid", `onnx output ${name} has element type ${t.type}; expected float32, float16 or float64`);
}

export class OnnxEmbedder implements Embedder {
  private constructor(
    readonly id: string,
    readonly dimensions: number,
    private readonly ort: Ort,
    private readonly session: OrtSession,
    private readonly vocab: WordPieceVocab,
    private readonly output: string,
    private readonly maxTokens: number,
    private readonly batchSize: number,
  ) {}

  /** Opens the folder, checks the model runs and learns its dimension from one probe text. */
  static async load(opts: OnnxEmbedderOptions): Promise<OnnxEmbedder> {
    const dir = resolve(opts.dir);
    if (!existsSync(dir)) throw new EmbedderError("invalid", `${dir} does not exist; embedder.onnx.dir must name a model folder`);
    const modelPath = findModel(dir);
    const vocab = readVocab(dir);
    const ort = await loadOrt();
    let session: OrtSession;
    try {
      session = await ort.InferenceSession.create(modelPath, {
        executionProviders: ["cpu"],
        ...(opts.threads ? { intraOpNumThreads: opts.threads } : {}),
      });
    } catch (e) {
      throw new EmbedderError("invalid", `${modelPath}: onnxruntime could not load the model: ${(e as Error).message}`, { cause: e });
    }
    if (!session.inputNames.includes("input_ids")) {
      await session.release();
      throw new EmbedderError("invalid", `${modelPath}: the model has no input_ids input (inputs: ${session.inputNames.join(", ")})`);
    }
    const output = PREFERRED_OUTPUTS.find((o) => session.outputNames.includes(o)) ?? session.outputNames[0]!;
    const maxTokens = Math.max(2, opts.maxTokens ?? 256);
    const batchSize = Math.max(1, opts.batchSize ?? 16);
    const probe = new OnnxEmbedder("probe", 0, ort, session, vocab, output, maxTokens, batchSize);
    let v: Float32Array | undefined;
    try {
      [v] = await probe.run(["dimension probe"]);
    } catch (e) {
      await session.release(); // a model that cannot embed is not kept open
      throw e;
    }
    const dims = v!.length;
    const id = `onnx:${basename(dir)}:${await fileDigest(modelPath)}:${dims}`;
    return new OnnxEmbedder(id, dims, ort, session, vocab, output, maxTokens, batchSize);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) out.push(...(await this.run(texts.slice(i, i + this.batchSize))));
    return checkVectors(this.id, this.dimensions, texts, out);
  }

  private async run(texts: string[]): Promise<Float32Array[]> {
    const enc = texts.map((t) => encode(t, this.vocab, this.maxTokens));
    const len = Math.max(...enc.map((e) => e.inputIds.length));
    const pad = this.vocab.ids.get(this.vocab.pad) ?? 0;
    const flat = (pick: (e: (typeof enc)[number]) => number[], fill: number) => {
      const a = new BigInt64Array(texts.length * len);
      enc.forEach((e, b) => {
        const xs = pick(e);
        for (let t = 0; t < len; t++) a[b * len + t] = BigInt(t < xs.length ? xs[t]! : fill);
      });
      return new this.ort.Tensor("int64", a, [texts.length, len]);
    };
    const feeds: Record<string, OrtTensor> = { input_ids: flat((e) => e.inputIds, pad) };
    if (this.session.inputNames.includes("attention_mask")) feeds.attention_mask = flat((e) => e.attentionMask, 0);
    if (this.session.inputNames.includes("token_type_ids")) feeds.token_type_ids = flat((e) => e.tokenTypeIds, 0);
    let result: Record<string, OrtTensor>;
    try {
      result = await this.session.run(feeds);
    } catch (e) {
      throw new EmbedderError("upstream", `onnx model run failed: ${(e as Error).message}`, { cause: e });
    }
    const t = result[this.output];
    if (!t) throw new EmbedderError("upstream", `onnx model returned no ${this.output} output`);
    const data = outputValues(t, this.output);
    if (t.dims.length === 3 && t.dims[0] === texts.length) {
      const [, seq, dims] = t.dims as [number, number, number];
      return enc.map((e, b) => {
        const mask = Array.from({ length: seq }, (_, i) => (i < e.attentionMask.length ? 1 : 0));
        const hidden = Array.prototype.slice.call(data, b * seq * dims, (b + 1) * seq * dims) as number[];
        return l2Normalize(meanPool(hidden, mask, dims));
      });
    }
    if (t.dims.length === 2 && t.dims[0] === texts.length) {
      const dims = t.dims[1]!;
      return texts.map((_, b) => l2Normalize(Float32Array.from(Array.prototype.slice.call(data, b * dims, (b + 1) * dims) as number[])));
    }
    throw new EmbedderError("upstream", `onnx output ${this.output} has shape [${t.dims.join(", ")}]; expected [batch, tokens, dims] or [batch, dims]`);
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

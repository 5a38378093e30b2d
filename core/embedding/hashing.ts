// Deterministic feature-hashing embedder: content words and their character n-grams, each hashed
// to a signed bucket (the sign hash keeps collisions from only ever adding up). No model, no I/O,
// identical vectors on every machine, so tests and offline use share one vector space.
import { cjkBigrams, contentWords, words } from "../retrieval/analyze.js";
import { EmbedderError, type Embedder } from "./embedder.js";
import { l2Normalize } from "./vector.js";

export interface HashingOptions {
  dimensions: number;
  /** character n-gram lengths taken from each word (with boundary marks) */
  ngrams?: number[];
  /** weight of one n-gram relative to one whole word */
  ngramWeight?: number;
}

const DEFAULT_NGRAMS = [3, 4];
const DEFAULT_NGRAM_WEIGHT = 0.35;

/** FNV-1a, 32 bit, over UTF-16 code units, with a seed mixed into the offset basis. */
export function fnv1a(s: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export class HashingEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private readonly ngrams: number[];
  private readonly ngramWeight: number;

  constructor(opts: HashingOptions) {
    if (!Number.isInteger(opts.dimensions) || opts.dimensions < 8) {
      throw new EmbedderError("invalid", `hashing embedder: dimensions must be an integer ≥ 8 (got ${opts.dimensions})`);
    }
    this.dimensions = opts.dimensions;
    this.ngrams = opts.ngrams ?? DEFAULT_NGRAMS;
    this.ngramWeight = opts.ngramWeight ?? DEFAULT_NGRAM_WEIGHT;
    this.id = `hashing-v1:${this.dimensions}:${this.ngrams.join("-")}:${this.ngramWeight}`;
  }

  embedOne(text: string): Float32Array {
    const v = new Float32Array(this.dimensions);
    let ws = contentWords(text);
    // A text of stop words only still has a direction.
    if (ws.length === 0) ws = words(text);
    const tf = new Map<string, number>();
    for (const w of [...ws, ...cjkBigrams(text)]) tf.set(w, (tf.get(w) ?? 0) + 1);
    for (const [w, n] of tf) {
      // Sub-linear term frequency: a word said five times is not five times the topic.
      const wt = 1 + Math.log(n);
      this.add(v, `w:${w}`, wt);
      const marked = `<${w}>`;
      for (const g of this.ngrams) {
        for (let i = 0; i + g <= marked.length; i++) this.add(v, `g:${marked.slice(i, i + g)}`, wt * this.ngramWeight);
      }
    }
    return l2Normalize(v);
  }

  private add(v: Float32Array, feature: string, weight: number): void {
    const h = fnv1a(feature);
    const sign = fnv1a(feature, 0x9e3779b9) & 1 ? 1 : -1;
    const i = h % this.dimensions;
    v[i] = v[i]! + sign * weight;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }
}

// The Embedder seam: text in, one unit-length vector per text out. Adapters (an OpenAI-compatible
// endpoint, a local ONNX model) live in stores/embedding/; the hashing embedder here needs no I/O.

export interface Embedder {
  /** stable identity of the vector space (kind + model + dimensions): vectors of two ids never mix */
  readonly id: string;
  readonly dimensions: number;
  /** one L2-normalised vector per input text, in input order */
  embed(texts: string[]): Promise<Float32Array[]>;
}

export type EmbedderErrorCode = "unavailable" | "upstream" | "invalid";

/** Why an embedder could not produce vectors; the message names what to change. */
export class EmbedderError extends Error {
  constructor(
    readonly code: EmbedderErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "EmbedderError";
  }
}

/** Checks an adapter's answer: right count, right dimension, finite numbers. */
export function checkVectors(id: string, dimensions: number, texts: string[], out: Float32Array[]): Float32Array[] {
  if (out.length !== texts.length) {
    throw new EmbedderError("upstream", `${id}: ${texts.length} texts in, ${out.length} vectors out`);
  }
  out.forEach((v, i) => {
    if (v.length !== dimensions) {
      throw new EmbedderError("upstream", `${id}: vector ${i} has ${v.length} dimensions, expected ${dimensions}`);
    }
    for (const x of v) if (!Number.isFinite(x)) throw new EmbedderError("upstream", `${id}: vector ${i} holds a non-finite value`);
  });
  return out;
}

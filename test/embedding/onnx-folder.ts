// A model folder for the ONNX embedder: a tiny Gather model (onnx-model.ts) and a WordPiece vocab.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tinyEmbeddingModel } from "./onnx-model.js";

export const TINY_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "sat", "on", "mat", "dog", "##s", "run", ".", "photo", "##graph", "##y"];

export function writeTinyOnnxFolder(dir: string, dims: number, outputType?: "float16" | "float64" | "int32"): string {
  writeFileSync(join(dir, "model.onnx"), tinyEmbeddingModel(TINY_VOCAB.length, dims, { withMask: true, outputType }).bytes);
  writeFileSync(join(dir, "vocab.txt"), `${TINY_VOCAB.join("\n")}\n`);
  return dir;
}

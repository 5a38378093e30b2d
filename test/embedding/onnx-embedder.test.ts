// The local ONNX model path with a real onnxruntime-node session over tiny models built in the
// test (test/embedding/onnx-model.ts): tokenisation, padding-aware mean pooling, pooled outputs,
// tokenizer.json, and clear errors for broken folders.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EmbedderError } from "../../core/embedding/embedder.js";
import { cosine, l2Normalize } from "../../core/embedding/vector.js";
import { encode, vocabFromText } from "../../core/embedding/wordpiece.js";
import { halfToFloat, loadOrt, OnnxEmbedder } from "../../stores/embedding/onnx-embedder.js";
import { tempDir } from "../helpers/tmp.js";
import { TINY_VOCAB, writeTinyOnnxFolder } from "./onnx-folder.js";
import { tinyEmbeddingModel, type TinyModel } from "./onnx-model.js";

const VOCAB = TINY_VOCAB;

function folder(model: TinyModel, tokenizer: "vocab" | "json" = "vocab"): string {
  const dir = tempDir("onnx-");
  writeFileSync(join(dir, "model.onnx"), model.bytes);
  if (tokenizer === "vocab") writeFileSync(join(dir, "vocab.txt"), `${VOCAB.join("\n")}\n`);
  else {
    writeFileSync(
      join(dir, "tokenizer.json"),
      JSON.stringify({
        normalizer: { type: "BertNormalizer", lowercase: true },
        model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", vocab: Object.fromEntries(VOCAB.map((t, i) => [t, i])) },
      }),
    );
  }
  return dir;
}

/** What the model + mean pooling must give: the normalised mean of the table rows of the ids. */
function expected(model: TinyModel, ids: number[]): Float32Array {
  const v = new Float32Array(model.dims);
  for (const id of ids) for (let j = 0; j < model.dims; j++) v[j] = v[j]! + model.table[id * model.dims + j]! / ids.length;
  return l2Normalize(v);
}

function close(a: Float32Array, b: Float32Array): void {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < a.length; i++) expect(a[i]!).toBeCloseTo(b[i]!, 5);
}

describe("ONNX embedder (onnxruntime-node, CPU)", () => {
  it("onnxruntime-node loads on this machine with its CPU backend", async () => {
    const ort = (await loadOrt()) as unknown as { listSupportedBackends?: () => { name: string }[] };
    expect(ort.listSupportedBackends?.().map((b) => b.name)).toContain("cpu");
  });

  it("embeds per-token output by mask-aware mean pooling, batch padding included", async () => {
    const model = tinyEmbeddingModel(VOCAB.length, 8, { withMask: true });
    const e = await OnnxEmbedder.load({ dir: folder(model), batchSize: 8 });
    try {
      expect(e.dimensions).toBe(8);
      expect(e.id).toMatch(/^onnx:onnx-[^:]+:[0-9a-f]{16}:8$/);
      const texts = ["The cat sat.", "dogs run on the mat", "photography"];
      const out = await e.embed(texts);
      const vocab = vocabFromText(VOCAB.join("\n"));
      // [CLS] the cat sat . [SEP] → ids 2 4 5 6 12 3
      expect(encode(texts[0]!, vocab, 64).inputIds).toEqual([2, 4, 5, 6, 12, 3]);
      expect(encode(texts[2]!, vocab, 64).inputIds).toEqual([2, 13, 14, 15, 3]);
      texts.forEach((t, i) => close(out[i]!, expected(model, encode(t, vocab, 64).inputIds)));
      // one at a time (no padding) gives the same vectors as the padded batch
      for (const [i, t] of texts.entries()) close((await e.embed([t]))[0]!, out[i]!);
      // deterministic
      close((await e.embed(texts))[1]!, out[1]!);
    } finally {
      await e.close();
    }
  });

  it("uses a pooled [batch, dims] output as is (Gather → ReduceMean model)", async () => {
    const model = tinyEmbeddingModel(VOCAB.length, 6, { pooled: true });
    const e = await OnnxEmbedder.load({ dir: folder(model, "json") });
    try {
      expect(e.dimensions).toBe(6);
      const vocab = vocabFromText(VOCAB.join("\n"));
      const [v] = await e.embed(["THE DOG"]); // lower-cased by the BertNormalizer
      close(v!, expected(model, encode("the dog", vocab, 64).inputIds));
    } finally {
      await e.close();
    }
  });

  it("cuts long texts at maxTokens", async () => {
    const model = tinyEmbeddingModel(VOCAB.length, 4, { withMask: true });
    const e = await OnnxEmbedder.load({ dir: folder(model), maxTokens: 4 });
    try {
      const [v] = await e.embed(["the cat sat on the mat"]);
      close(v!, expected(model, [2, 4, 5, 3]));
    } finally {
      await e.close();
    }
  });

  it("decodes a float16 output (model_fp16.onnx exports) to the float32 model's vectors; float64 works; int32 is refused", async () => {
    const texts = ["the cat sat on the mat", "dogs run", "photography", "the dog sat"];
    const load = async (t?: "float16" | "float64") => OnnxEmbedder.load({ dir: writeTinyOnnxFolder(tempDir("onnx-"), 16, t) });
    const [f32, f16, f64] = [await load(), await load("float16"), await load("float64")];
    try {
      const [a, b, c] = [await f32.embed(texts), await f16.embed(texts), await f64.embed(texts)];
      texts.forEach((_, i) => {
        expect(cosine(a[i]!, b[i]!)).toBeGreaterThan(0.99);
        close(a[i]!, c[i]!);
      });
      // raw half bits read as integers made every text nearly the same vector
      expect(cosine(b[0]!, b[2]!)).toBeCloseTo(cosine(a[0]!, a[2]!), 2);
    } finally {
      await Promise.all([f32.close(), f16.close(), f64.close()]);
    }
    const err = await OnnxEmbedder.load({ dir: writeTinyOnnxFolder(tempDir("onnx-"), 16, "int32") }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbedderError);
    expect((err as EmbedderError).code).toBe("invalid");
    expect((err as Error).message).toMatch(/last_hidden_state has element type int32/);
  });

  it("half → float: normal, subnormal, largest, infinities, NaN", () => {
    expect(halfToFloat(0x3c00)).toBe(1);
    expect(halfToFloat(0xc000)).toBe(-2);
    expect(halfToFloat(0x3555)).toBeCloseTo(1 / 3, 3);
    expect(halfToFloat(0x0001)).toBe(2 ** -24);
    expect(halfToFloat(0x7bff)).toBe(65504);
    expect(halfToFloat(0x8000)).toBe(-0);
    expect(halfToFloat(0x7c00)).toBe(Number.POSITIVE_INFINITY);
    expect(halfToFloat(0xfc00)).toBe(Number.NEGATIVE_INFINITY);
    expect(halfToFloat(0x7e00)).toBeNaN();
  });

  it("says clearly what is wrong with a folder", async () => {
    const model = tinyEmbeddingModel(VOCAB.length, 4);
    await expect(OnnxEmbedder.load({ dir: join(tempDir(), "nope") })).rejects.toThrow(/does not exist; embedder.onnx.dir/);
    const noModel = tempDir();
    await expect(OnnxEmbedder.load({ dir: noModel })).rejects.toThrow(/no model.onnx/);
    const noTok = tempDir();
    writeFileSync(join(noTok, "model.onnx"), model.bytes);
    await expect(OnnxEmbedder.load({ dir: noTok })).rejects.toThrow(/no tokenizer/);
    const bpe = tempDir();
    writeFileSync(join(bpe, "model.onnx"), model.bytes);
    writeFileSync(join(bpe, "tokenizer.json"), JSON.stringify({ model: { type: "BPE", vocab: {} } }));
    await expect(OnnxEmbedder.load({ dir: bpe })).rejects.toThrow(/only a WordPiece model is supported \(found BPE\)/);
    const broken = folder({ ...model, bytes: Buffer.from("not a model") });
    const err = await OnnxEmbedder.load({ dir: broken }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbedderError);
    expect((err as Error).message).toMatch(/onnxruntime could not load the model/);
    const nested = tempDir();
    mkdirSync(join(nested, "onnx"));
    writeFileSync(join(nested, "onnx", "model.onnx"), model.bytes);
    writeFileSync(join(nested, "vocab.txt"), VOCAB.join("\n"));
    const e = await OnnxEmbedder.load({ dir: nested });
    expect(e.dimensions).toBe(4);
    await e.close();
  });

  it("says how to install onnxruntime-node when the package cannot load", async () => {
    const err = await loadOrt("onnxruntime-node-that-is-not-installed").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbedderError);
    expect((err as EmbedderError).code).toBe("unavailable");
    expect((err as Error).message).toMatch(/optional package onnxruntime-node.*npm install onnxruntime-node --save-optional/s);
  });
});

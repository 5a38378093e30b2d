// Pure parts: the hashing embedder (deterministic, similarity that means something), vector math,
// the WordPiece tokenizer and the config section.
import { describe, expect, it } from "vitest";
import { defaultConfig, MemoryConfig } from "../../core/config.js";
import { checkVectors } from "../../core/embedding/embedder.js";
import { fnv1a, HashingEmbedder } from "../../core/embedding/hashing.js";
import { cosine, dot, l2Normalize, meanPool, norm } from "../../core/embedding/vector.js";
import { basicTokens, encode, vocabFromText, vocabFromTokenizerJson, wordPieces } from "../../core/embedding/wordpiece.js";
import { embedderFromConfig } from "../../stores/embedding/from-config.js";

describe("hashing embedder", () => {
  const e = new HashingEmbedder({ dimensions: 256 });

  it("is deterministic across instances and calls, with pinned values", async () => {
    const a = await e.embed(["Alice prefers dark roast coffee", "x"]);
    const b = await new HashingEmbedder({ dimensions: 256 }).embed(["Alice prefers dark roast coffee", "x"]);
    expect(Array.from(a[0]!)).toEqual(Array.from(b[0]!));
    // pinned: a change of hash, features or weights changes the vector space (and must change the id)
    expect(fnv1a("w:coffee")).toBe(fnv1a("w:coffee"));
    expect(fnv1a("")).toBe(0x811c9dc5);
    expect(fnv1a("a")).toBe(0xe40c292c);
    expect(e.id).toBe("hashing-v1:256:3-4:0.35");
    expect(norm(a[0]!)).toBeCloseTo(1, 6);
  });

  it("puts related texts closer than unrelated ones", () => {
    const q = e.embedOne("photographs of the mountains");
    const near = e.embedOne("mountain photography trip");
    const far = e.embedOne("quarterly tax filing deadline");
    expect(cosine(q, near)).toBeGreaterThan(0.2);
    expect(cosine(q, near)).toBeGreaterThan(cosine(q, far) + 0.2);
    // stop words only still gives a direction
    expect(norm(e.embedOne("what is it"))).toBeCloseTo(1, 6);
    expect(norm(e.embedOne(""))).toBe(0);
    // CJK text gets features from its bigrams
    expect(cosine(e.embedOne("東京の天気"), e.embedOne("東京の天気予報"))).toBeGreaterThan(0.5);
  });

  it("refuses a tiny dimension", () => {
    expect(() => new HashingEmbedder({ dimensions: 4 })).toThrow(/dimensions must be an integer ≥ 8/);
  });
});

describe("vector math", () => {
  it("normalises, pools with a mask and checks adapter answers", () => {
    expect(Array.from(l2Normalize(new Float32Array([3, 4])))).toEqual([0.6000000238418579, 0.800000011920929]);
    expect(Array.from(l2Normalize(new Float32Array([0, 0])))).toEqual([0, 0]);
    expect(dot(new Float32Array([1, 2]), new Float32Array([3, 4]))).toBe(11);
    expect(() => dot(new Float32Array(2), new Float32Array(3))).toThrow(/lengths 2 and 3/);
    // tokens [1,1], [3,3], [100,100] with the last one padding
    expect(Array.from(meanPool([1, 1, 3, 3, 100, 100], [1, 1, 0], 2))).toEqual([2, 2]);
    expect(Array.from(meanPool([1, 1, 3, 3], [1n, 0n], 2))).toEqual([1, 1]);
    expect(() => checkVectors("x", 2, ["a"], [])).toThrow(/1 texts in, 0 vectors out/);
    expect(() => checkVectors("x", 2, ["a"], [new Float32Array(3)])).toThrow(/3 dimensions, expected 2/);
    expect(() => checkVectors("x", 2, ["a"], [new Float32Array([NaN, 1])])).toThrow(/non-finite/);
  });
});

describe("WordPiece", () => {
  const vocab = vocabFromText(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "hello", ",", "world", "!", "cafe", "東", "京"].join("\n"));

  it("splits like BERT: punctuation, accents, CJK characters, greedy sub-words", () => {
    expect(basicTokens("Héllo,  World!", vocab)).toEqual(["hello", ",", "world", "!"]);
    expect(basicTokens("東京 café", vocab)).toEqual(["東", "京", "cafe"]);
    expect(wordPieces("unaffable", vocab)).toEqual(["un", "##aff", "##able"]);
    expect(wordPieces("unknownword", vocab)).toEqual(["[UNK]"]);
    expect(encode("Hello, world! unaffable", vocab, 64).inputIds).toEqual([2, 7, 8, 9, 10, 4, 5, 6, 3]);
    expect(encode("Hello, world! unaffable", vocab, 4).inputIds).toEqual([2, 7, 8, 3]);
  });

  describe("character classes as BERT's basic tokenizer", () => {
    const words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "information", "foo", "bar", "foobar", "25°c", "5€", "©", "$", "+", "|", "~", "-", "°", "𪜀", "𫠠", "丽", "ab"];
    const v = vocabFromText(words.join("\n"));
    const ids = (text: string) => encode(text, v, 64).inputIds.slice(1, -1).map((i) => words[i]);

    it("drops every C* character (format, private use, unassigned, surrogates, controls) but \\t \\n \\r", () => {
      expect(ids("infor\u00admation")).toEqual(["information"]); // soft hyphen (Cf)
      expect(ids("foo\u200bbar")).toEqual(["foobar"]); // zero-width space (Cf)
      expect(ids("\ufefffoo\u2060bar")).toEqual(["foobar"]); // BOM, word joiner (Cf)
      expect(ids("foo\ue000bar")).toEqual(["foobar"]); // private use (Co)
      expect(ids("foo\u0378bar")).toEqual(["foobar"]); // unassigned (Cn)
      expect(ids("foo\ud800bar")).toEqual(["foobar"]); // lone surrogate (Cs)
      expect(ids("foo\u0000\ufffd\u0007\u000cbar")).toEqual(["foobar"]); // NUL, U+FFFD, BEL, form feed (Cc)
      expect(ids("foo\tbar\nfoo\rbar")).toEqual(["foo", "bar", "foo", "bar"]);
      expect(ids("foo\u00a0bar\u3000foo\u2028bar")).toEqual(["foo", "bar", "foo", "bar"]); // Zs, Zl
    });

    it("punctuation is ASCII punctuation and P*, not other symbols", () => {
      expect(ids("25°C")).toEqual(["25°c"]);
      expect(ids("5€")).toEqual(["5€"]);
      expect(ids("foo©")).toEqual(["[UNK]"]); // So is part of the word
      expect(ids("foo$bar+foo|bar~ab")).toEqual(["foo", "$", "bar", "+", "foo", "|", "bar", "~", "ab"]);
      expect(ids("foo\u2010bar")).toEqual(["foo", "[UNK]", "bar"]); // U+2010 hyphen is Pd: split off, not in vocab
    });

    it("CJK ideographs are words of their own, extensions C–F and the compatibility supplement included", () => {
      expect(ids("ab𪜀ab")).toEqual(["ab", "𪜀", "ab"]); // U+2A700 (ext C)
      expect(ids("ab𫠠ab")).toEqual(["ab", "𫠠", "ab"]); // U+2B820 (ext E)
      expect(ids("ab\u{2f800}ab")).toEqual(["ab", "丽", "ab"]); // U+2F800, NFD → U+4E3D
      // (the blocks' last code points are unassigned, so dropped as Cn like BERT does)
      expect(basicTokens("x\u{2b740}\u{2ce93}\u{2fa1d}y", { lowercase: false, stripAccents: false })).toEqual(["x", "\u{2b740}", "\u{2ce93}", "\u{2fa1d}", "y"]);
    });
  });

  it("reads tokenizer.json and refuses what it cannot tokenize", () => {
    const v = vocabFromTokenizerJson({
      normalizer: { type: "BertNormalizer", lowercase: false },
      model: { type: "WordPiece", vocab: { "[UNK]": 0, "[CLS]": 1, "[SEP]": 2, Hello: 3 } },
    });
    expect(v.lowercase).toBe(false);
    expect(encode("Hello hello", v, 16).inputIds).toEqual([1, 3, 0, 2]);
    expect(() => vocabFromTokenizerJson({ model: { type: "Unigram", vocab: [] } })).toThrow(/only a WordPiece model is supported \(found Unigram\)/);
    expect(() => vocabFromText("a\nb")).toThrow(/no \[UNK\] token/);
  });
});

describe("embedder config", () => {
  it("is off by default and validates each kind's section", () => {
    expect(defaultConfig().embedder).toMatchObject({ kind: "none", weight: 1, hashing: { dimensions: 384 } });
    expect(embedderFromConfig(defaultConfig().embedder)).toBeNull();
    const bad = MemoryConfig.safeParse({ embedder: { kind: "openai" } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toMatch(/embedder.kind "openai" needs an embedder.openai section/);
    const onnx = MemoryConfig.safeParse({ embedder: { kind: "onnx" } });
    expect(onnx.error?.issues[0]?.message).toMatch(/embedder.kind "onnx" needs an embedder.onnx section \(dir\)/);
    const h = embedderFromConfig(defaultConfig({ embedder: { kind: "hashing", hashing: { dimensions: 32 } } }).embedder);
    expect((h as HashingEmbedder).dimensions).toBe(32);
  });
});

import { describe, expect, it } from "vitest";
import { findInvisible } from "../../core/safety/invisible.js";
import { mapSpan, normalizeForScan } from "../../core/safety/normalize.js";
import { scanWindows } from "../../core/safety/window.js";
import { charClassCount, shannonEntropy } from "../../core/safety/entropy.js";

describe("normalizeForScan", () => {
  it("folds full-width, mathematical and look-alike letters", () => {
    expect(normalizeForScan("ｉｇｎｏｒｅ 𝐚𝐥𝐥 рrеvіоus").text).toBe("ignore all previous");
  });

  it("drops invisible characters and soft hyphens", () => {
    expect(normalizeForScan("ig\u200Bno\u00ADre\u2060 me\uFEFF").text).toBe("ignore me");
  });

  it("collapses whitespace, keeping a line break as one newline", () => {
    expect(normalizeForScan("a  \t b\n\n  c\u00A0d").text).toBe("a b\nc d");
  });

  it("can keep the text unfolded and uncollapsed", () => {
    const n = normalizeForScan("ｘ  y\u200Bz", 0, undefined, { fold: false, collapseWhitespace: false });
    expect(n.text).toBe("ｘ  yz");
  });

  it("composes a base letter with its combining mark", () => {
    expect(normalizeForScan("cafe\u0301").text).toBe("café");
  });

  it("maps spans back to the original text", () => {
    const original = "x ｉｇ\u200Bｎ  ore y";
    const n = normalizeForScan(original);
    const from = n.text.indexOf("ign");
    const { index, length } = mapSpan(n, from, from + "ign ore".length);
    expect(original.slice(index, index + length)).toBe("ｉｇ\u200Bｎ  ore");
  });

  it("offsets a window by its start", () => {
    const n = normalizeForScan("abcdef", 2, 5);
    expect(n.text).toBe("cde");
    expect(mapSpan(n, 0, 3)).toEqual({ index: 2, length: 3 });
  });
});

describe("findInvisible", () => {
  it("reports one finding per run", () => {
    expect(findInvisible("a\u200B\u200B\u200Bb")).toEqual([{ kind: "zero_width", index: 1, length: 3 }]);
  });

  it("allows emoji ZWJ sequences and subdivision flags", () => {
    expect(findInvisible("👨\u200D👩\u200D👧 🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}")).toEqual([]);
  });

  it("still reports tag characters that do not form a flag", () => {
    const smuggled = `hi${String.fromCodePoint(0xe0069, 0xe0067)}`;
    expect(findInvisible(smuggled)).toEqual([{ kind: "unicode_tag", index: 2, length: 4 }]);
  });

  it("allows joiners inside non-Latin words and direction marks in RTL text", () => {
    expect(findInvisible("می‌خواهم")).toEqual([]);
    expect(findInvisible("שלום \u200Fעולם")).toEqual([]);
  });

  it("reports a joiner inside a Latin word and a direction mark in Latin text", () => {
    expect(findInvisible("pass\u200Cword")).toEqual([{ kind: "zero_width", index: 4, length: 1 }]);
    expect(findInvisible("abc \u200F def")).toEqual([{ kind: "bidi_control", index: 4, length: 1 }]);
  });

  it("allows a leading byte-order mark but not one inside the text", () => {
    expect(findInvisible("\uFEFFhello")).toEqual([]);
    expect(findInvisible("he\uFEFFllo")).toEqual([{ kind: "zero_width", index: 2, length: 1 }]);
  });

  it("allows one variation selector but reports a run of them", () => {
    expect(findInvisible("❤\uFE0F")).toEqual([]);
    expect(findInvisible("😀\u{E0100}\u{E0101}")).toEqual([{ kind: "variation_selector_run", index: 2, length: 4 }]);
  });

  it("always reports bidi overrides", () => {
    expect(findInvisible("abc\u202Edef")).toEqual([{ kind: "bidi_control", index: 3, length: 1 }]);
  });
});

describe("scanWindows", () => {
  it("covers a short text whole", () => {
    expect(scanWindows("abc")).toEqual([{ start: 0, end: 3 }]);
  });

  it("covers the head and the tail of a long text", () => {
    const text = "x".repeat(100_000);
    expect(scanWindows(text)).toEqual([
      { start: 0, end: 65_536 },
      { start: 100_000 - 4_096, end: 100_000 },
    ]);
  });

  it("never overlaps the windows", () => {
    const text = "x".repeat(66_000);
    expect(scanWindows(text)).toEqual([
      { start: 0, end: 65_536 },
      { start: 65_536, end: 66_000 },
    ]);
  });

  it("does not split a surrogate pair", () => {
    const text = "x".repeat(9) + "😀" + "x".repeat(20);
    expect(scanWindows(text, 10, 5)[0]).toEqual({ start: 0, end: 11 });
  });
});

describe("entropy helpers", () => {
  it("measures bits per character", () => {
    expect(shannonEntropy("aaaa")).toBe(0);
    expect(shannonEntropy("abcd")).toBe(2);
  });

  it("counts character classes", () => {
    expect(charClassCount("abc")).toBe(1);
    expect(charClassCount("aB3!")).toBe(4);
  });
});

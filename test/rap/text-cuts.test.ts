// Excerpts and previews cut on character boundaries: half an emoji in a tool result made the
// daemon refuse the whole callback.
import { describe, expect, it } from "vitest";
import { clip, headOf, sliceOf, wellFormed } from "../../core/text.js";
import { snippet } from "../../core/sessions/search.js";
import { indexable } from "../../core/sessions/indexer.js";

const lone = /\p{Cs}/u;

describe("text cuts", () => {
  it("never split a surrogate pair", () => {
    const s = "ab😀cd";
    expect(headOf(s, 3)).toBe("ab");
    expect(headOf(s, 4)).toBe("ab😀");
    expect(sliceOf(s, 3)).toBe("cd");
    expect(sliceOf(s, 2, 3)).toBe("");
    expect(clip(s, 4)).toBe("ab…");
    expect(clip(s, 6)).toBe(s);
    expect(wellFormed(`x${s.slice(0, 3)}`)).toBe("xab\uFFFD");
    expect(wellFormed(s)).toBe(s);
  });

  it("session snippets and indexed tool results keep emoji whole wherever the cut falls", () => {
    for (let pad = 0; pad < 4; pad++) {
      const text = `${"x".repeat(pad)}${"😀".repeat(200)} deploy ${"🎉".repeat(200)}`;
      const cut = snippet(text, "deploy");
      expect(cut).toContain("deploy");
      expect(cut).not.toMatch(lone);
      const result = indexable({ kind: "tool_result", result: { id: "c1", content: [{ type: "text", text: `${"x".repeat(pad)}${"😀".repeat(1500)}` }] } } as never, 0, "m");
      expect(result.role).toBe("tool");
      expect(result.text.length).toBeLessThanOrEqual(2001);
      expect(result.text).not.toMatch(lone);
      const call = indexable({ kind: "tool_call", call: { id: "c1", function: { name: "memory_remember", arguments: { content: `${"x".repeat(pad)}${"😀".repeat(600)}` } } } } as never, 1, "n");
      expect(call.text).toMatch(/^memory_remember \{"content":"x*(😀)+…$/u);
      expect(call.text).not.toMatch(lone);
    }
  });
});

// What the session index keeps of a conversation message (core/sessions/indexer.ts indexable):
// text every engine can store, so one odd message cannot stop a conversation's indexing.
import { describe, expect, it } from "vitest";
import { indexable } from "../../core/sessions/indexer.js";
import { snippet } from "../../core/sessions/search.js";
import type { InfinityMessage } from "../../stores/traits.js";

describe("indexable", () => {
  it("keeps a message's text with any NUL (which PostgreSQL text refuses) as a space", () => {
    const m = { kind: "user", content: { type: "text", text: "dump:\u0000\u0000 PNG header, then the kafka offsets" } } as InfinityMessage;
    const row = indexable(m, 3, "m-3");
    expect(row).toEqual({ ord: 3, messageId: "m-3", role: "user", text: "dump:   PNG header, then the kafka offsets" });
    expect(row.text).not.toContain("\u0000");
  });
});

describe("snippet", () => {
  it("centres on the query word even when lower-casing the text before it changes its length ('İ')", () => {
    const text = `${"İİ ".repeat(150)}then the kafka offsets were reset by the nightly job`;
    const out = snippet(text, "kafka offsets");
    expect(out).toContain("kafka offsets were reset");
    // and any case of the word
    expect(snippet(`${"x".repeat(400)} The KAFKA brokers`, "kafka")).toContain("KAFKA brokers");
  });
});

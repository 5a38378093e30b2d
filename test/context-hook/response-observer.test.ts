// What the provider proxy keeps of a streamed answer for the trace (and from there the learning
// loop's rubric prompt): an excerpt cut at a character boundary, stored in the real trace table.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FINAL_TEXT_CHARS, ResponseObserver } from "../../context-hook/provider-proxy/response-observer.js";
import { traceEventOf } from "../../context-hook/provider-proxy/trace.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteTraceStore } from "../../stores/sqlite/trace-store.js";
import { tempDir } from "../helpers/tmp.js";

describe("response observer excerpts", () => {
  it("never keeps half of an emoji when the final text or an error is cut", async () => {
    const o = new ResponseObserver("invoke");
    o.observe('"InvokeStarted"');
    // the cap falls between the two UTF-16 units of 🚀
    o.observe(JSON.stringify({ Chunk: { Message: `${"a".repeat(FINAL_TEXT_CHARS - 1)}🚀 launched` } }));
    o.observe(JSON.stringify({ Chunk: { Error: `${"e".repeat(499)}🔥 provider hiccup` } }));
    o.observe('"StreamEnd"');
    expect(o.finalTextTruncated).toBe(true);
    expect(o.finalText).toBe("a".repeat(FINAL_TEXT_CHARS - 1));
    expect(o.errors).toEqual(["e".repeat(499)]);

    const db = openDatabase(join(tempDir(), "m.db"));
    const traces = new SqliteTraceStore(db);
    const call = { threadId: "t-1", rootId: "t-1", modelId: "m", history: [], prefix: { status: "off" as const, itemIds: [], tokens: 0 } };
    expect(await traces.record(traceEventOf(call, o, 1000))).toBe(true);
    const raw = db.prepare(`SELECT body FROM trace_events`).pluck().get() as string;
    // a lone surrogate is written as this escape, which serde_json refuses in a provider request
    expect(raw).not.toMatch(/\\ud[89a-f][0-9a-f]{2}/i);
    const [event] = await traces.listByThread("t-1");
    expect(JSON.stringify(event!.body)).not.toMatch(/\p{Cs}/u);
    db.close();
  });
});

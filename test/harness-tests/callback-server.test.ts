// The runtime's callback listener (§1.5): status codes and texts, any path, serde's strictness,
// enqueue-before-reply, the dedup ids and the conversion of each callback into agent input.
import { describe, expect, it } from "vitest";
import { convertCallback, prepareCallback, startCallbackServer } from "../harness/callback-server.js";
import type { RapCallback } from "../../toolsets/rap/wire.js";
import { postCallback } from "./rap-fixture.js";

async function listener() {
  const got: RapCallback[] = [];
  const cb = await startCallbackServer(async (c) => {
    // slow on purpose: the reply must still come after the handler
    await new Promise((r) => setTimeout(r, 30));
    got.push(c);
  });
  return { cb, got };
}

const result = { type: "tool_result", group_id: "g", id: "call" };

describe("callback listener", () => {
  it("answers 405 to non-POST and accepts POSTs on any path after enqueueing", async () => {
    const { cb, got } = await listener();
    const get = await fetch(`${cb.url}/whatever`);
    expect([get.status, await get.text()]).toEqual([405, "POST only"]);
    const res = await fetch(`${cb.url}/some/deep/path?x=1`, { method: "POST", body: JSON.stringify({ ...result, text: "t" }) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBeNull();
    expect(await res.text()).toBe("OK");
    // the handler finished before the reply went out
    expect(got).toHaveLength(1);
    await cb.close();
  });

  it.each([
    ["invalid JSON", "{not json"],
    ["an unknown type", JSON.stringify({ type: "audio_result", group_id: "g", id: "i" })],
    ["an unknown content item type", JSON.stringify({ ...result, content: [{ type: "audio", data: "x" }] })],
    ["media_type instead of mediaType", JSON.stringify({ ...result, content: [{ type: "image", data: "x", media_type: "image/png" }] })],
    ["an unknown display_as segment", JSON.stringify({ ...result, text: "t", display_as: [{ type: "markdown", content: "x" }] })],
    ["a duplicate key", '{"type":"tool_result","group_id":"g","id":"a","id":"b"}'],
    ["a UTF-8 BOM", `\uFEFF${JSON.stringify(result)}`],
    ["a numeric id", JSON.stringify({ ...result, id: 7 })],
    ["a float default", '{"type":"user_choice","group_id":"g","id":"c","prompt":"p","choices":["a"],"default":2.0,"response_url":"u"}'],
    ["associative null", JSON.stringify({ type: "subscription_event", group_id: "g", tool_call_id: "t", text: "x", associative: null })],
    ["a view update without content", JSON.stringify({ type: "view_update", group_id: "g", view_type: "diff" })],
    // serde_json reads strings as UTF-8, so a surrogate escape must be one half of a pair
    ["a lone leading surrogate escape", '{"type":"tool_result","group_id":"g","id":"c","text":"cut \\ud83d"}'],
    ["a lone trailing surrogate escape", '{"type":"tool_result","group_id":"g","id":"c","text":"\\ude00 cut"}'],
    ["a surrogate escape in a key", '{"type":"tool_result","group_id":"g","id":"c","text":"t","x\\ud800":1}'],
    // serde_json's recursion limit: 128 nested arrays or objects, counting the callback itself
    ["content nested 128 deep", `{"type":"view_update","group_id":"g","view_type":"v","content":${"[".repeat(127)}${"]".repeat(127)}}`],
    ["a number out of f64 range", '{"type":"view_update","group_id":"g","view_type":"v","content":{"n":1e400}}'],
  ])("rejects %s with 400 Bad request", async (_what, body) => {
    const { cb, got } = await listener();
    const res = await postCallback(cb.url, body);
    expect(res.status).toBe(400);
    expect(res.text.startsWith("Bad request: ")).toBe(true);
    expect(got).toHaveLength(0);
    await cb.close();
  });

  it("ignores unknown fields and accepts a null view content", async () => {
    const { cb, got } = await listener();
    expect((await postCallback(cb.url, { ...result, text: "t", needs_migration: true, extra: { a: 1 } })).status).toBe(200);
    expect((await postCallback(cb.url, { type: "view_update", group_id: "g", view_type: "v", content: null })).status).toBe(200);
    // what serde_json does take: a surrogate pair escape, 127 levels, a float that underflows to 0
    expect((await postCallback(cb.url, '{"type":"tool_result","group_id":"g","id":"c2","text":"\\ud83d\\ude00"}')).status).toBe(200);
    const deep = `{"type":"view_update","group_id":"g","view_type":"v","content":${"[".repeat(126)}${"]".repeat(126)}}`;
    expect((await postCallback(cb.url, deep)).status).toBe(200);
    expect((await postCallback(cb.url, '{"type":"view_update","group_id":"g","view_type":"v","content":{"n":1e-400}}')).status).toBe(200);
    expect(got.map((c) => c.type)).toEqual(["tool_result", "view_update", "tool_result", "view_update", "view_update"]);
    expect((got[2] as { text: string }).text).toBe("😀");
    await cb.close();
  });
});

describe("callback conversion", () => {
  it("assigns the daemon's dedup ids; subscription events get a fresh one each time", () => {
    const ids = (cb: Record<string, unknown>) => {
      const d = prepareCallback(cb as RapCallback);
      return d.kind === "input" ? d.dedupId : null;
    };
    expect(ids({ ...result, text: "t" })).toBe("rap-tool-result-call");
    expect(ids({ type: "oauth", group_id: "g", id: "auth", auth_url: "https://x" })).toBe("rap-oauth-auth");
    expect(ids({ type: "user_choice", group_id: "g", id: "choice", prompt: "p", choices: ["a"], default: 0, response_url: "u" })).toBe("rap-user-choice-choice");
    const ev = { type: "subscription_event", group_id: "g", tool_call_id: "t", text: "x", associative: false };
    const a = ids(ev);
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids(ev)).not.toBe(a);
    expect(prepareCallback({ type: "view_update", group_id: "g", view_type: "v", content: {} }).kind).toBe("view_update");
  });

  it("builds tool-result content: non-empty content wins, then text, then empty text", () => {
    const content = (cb: Record<string, unknown>) => (convertCallback(cb as RapCallback)!.content as { content: unknown }).content;
    expect(content({ ...result, text: "t", content: [{ type: "image", data: "AAA", mediaType: "image/png" }] })).toEqual([{ type: "image", data: { type: "base64", value: "AAA" }, media_type: "png" }]);
    expect(content({ ...result, text: "t", content: [] })).toEqual([{ type: "text", text: "t" }]);
    expect(content(result)).toEqual([{ type: "text", text: "" }]);
    // an unrecognised MIME type is kept as an image without media_type
    expect(content({ ...result, content: [{ type: "image", data: "A", mediaType: "image/x-odd" }] })).toEqual([{ type: "image", data: { type: "base64", value: "A" } }]);
  });

  it("converts events, OAuth and choices into the runtime's input shapes", () => {
    expect(convertCallback({ type: "subscription_event", group_id: "g", tool_call_id: "t", text: "x", associative: true, final: true } as RapCallback)).toEqual({
      content: { type: "toolresult", id: "t", content: [{ type: "text", text: "x" }] },
      group_id: "g",
      metadata: null,
      synthetic: { type: "subscription_event", tool_call_id: "t", associative: true, final: true },
      display_as: null,
      subscription: false,
    });
    expect(convertCallback({ ...result, text: "t", subscription: true, call_id: "p" } as RapCallback)).toMatchObject({
      content: { type: "toolresult", id: "call", call_id: "p", content: [{ type: "text", text: "t" }] },
      subscription: true,
    });
    expect(convertCallback({ type: "oauth", group_id: "g", id: "a", auth_url: "u" } as RapCallback)!.content).toEqual({ type: "oauth_required", id: "a", call_id: null, auth_url: "u" });
  });
});

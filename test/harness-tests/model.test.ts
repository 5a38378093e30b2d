// The scripted model and how the runtime streams it (§4.1): retried stream ends, fatal stream
// errors, display strings from displayScript, the passive sleep tool, and the transcript.
import { describe, expect, it } from "vitest";
import { evalDisplayScript } from "../harness/display-script.js";
import { echoTool, postCallback, startTestRapServer } from "./rap-fixture.js";
import { lastText, startHarness, writeRapJson } from "./setup.js";

describe("model rounds", () => {
  it("retries a dropped stream from committed history, discarding the partial turn", async () => {
    const { inf, cwd } = await startHarness();
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "hi");
    const r1 = await inf.model.nextRequest();
    r1.sendText("half an ans");
    r1.dropStream();
    const r2 = await inf.model.nextRequest();
    expect(r2.request).toEqual(r1.request);
    expect(inf.agentEvents(s)).toContainEqual({ type: "Info", text: "Stream error (unexpected end), retrying..." });
    r2.sendText("a whole answer").finish();
    await inf.waitIdle(s);
    expect((await inf.history(s)).at(-1)).toEqual({ kind: "assistant", content: { text: "a whole answer" } });
  });

  it("ends the step on a fatal stream error, keeping the visible text", async () => {
    const { inf, cwd } = await startHarness();
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "hi");
    const r1 = await inf.model.nextRequest();
    r1.sendText("partial").sendError("ProviderError: quota exhausted");
    await inf.waitIdle(s);
    expect(inf.agentEvents(s)).toContainEqual({ type: "Info", text: "Error: ProviderError: quota exhausted" });
    expect((await inf.history(s)).map((m) => m.kind)).toEqual(["user", "assistant"]);
    expect(inf.model.queued).toBe(0);
  });

  it("coalesces text chunks and stores the display string of a tool call", async () => {
    const server = await startTestRapServer({ tools: [echoTool] });
    const { inf, cwd } = await startHarness();
    writeRapJson(cwd, [{ type: "toolset_server", server_url: server.url }]);
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "go");
    (await inf.model.nextRequest()).sendText("Let me ").sendText("check.").sendToolCall("e1", "echo", { text: "hi" }).finish();
    await server.nextInvocation();
    expect((await inf.history(s)).slice(1)).toEqual([
      { kind: "assistant", content: { text: "Let me check." } },
      { kind: "tool_call", call: { id: "e1", call_id: null, function: { name: "echo", arguments: { text: "hi" } }, signature: null, additional_params: null }, display_as: "Echo hi" },
    ]);
    expect(inf.agentEvents(s)).toContainEqual({ type: "ToolCall", name: "echo", args: { text: "hi" }, display_as: "Echo hi" });
    await postCallback(inf.callbackUrl, { type: "tool_result", group_id: s, id: "e1", text: "hi", display_as: [{ type: "text", content: "echoed" }] });
    const r2 = await inf.model.nextRequest();
    expect(inf.agentEvents(s)).toContainEqual({ type: "ToolResult", segments: [{ type: "text", content: "echoed" }, { type: "text", content: "hi" }] });
    r2.sendText("done").finish();
    await inf.waitIdle(s);
    expect(inf.transcript({ label: (id) => (id === s ? "root" : id) })).toContain("[root] tool call echo {\"text\":\"hi\"}");
    await server.close();
  });

  it("evaluates simple display scripts and gives up on anything else", () => {
    expect(evalDisplayScript('"PR #" + args.number + " on " + args.owner', { number: 42, owner: "acme" })).toBe("PR #42 on acme");
    expect(evalDisplayScript('"Edit " + args.path', {})).toBeNull();
    expect(evalDisplayScript('let s = "x"; s', {})).toBeNull();
  });

  it("runs the passive sleep tool on a timer", async () => {
    const { inf, cwd } = await startHarness();
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "nap");
    (await inf.model.nextRequest()).sendToolCall("z", "sleep", { seconds: 0.05 }).finish();
    const r2 = await inf.model.nextRequest();
    expect(lastText(r2)).toBe("Slept for 0.05 seconds");
    r2.sendText("rested").finish();
  });

  it("shuts down with a round still open: the completion is cancelled and committed", async () => {
    const { inf, cwd } = await startHarness();
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "long task");
    const r = await inf.model.nextRequest();
    r.sendText("working on");
    await inf.waitForEvent((e) => e.type === "agent" && e.event.type === "TextChunk");
    await inf.shutdown();
    expect(r.cancelled).toBe(true);
    expect(inf.isLive()).toBe(false);
    expect((await inf.history(s)).map((m) => m.kind)).toEqual(["user", "assistant"]);
  });
});

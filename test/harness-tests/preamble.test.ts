// The system prompt and tool list the model is sent: the daemon's preamble layout, the
// promptPrefix seam (§4.4) and the per-thread ThreadConfigSource seam.
import { describe, expect, it } from "vitest";
import type { InfinityMessage } from "../../stores/infinity/messages.js";
import { buildPreamble, DEFAULT_PROMPT, daemonExtraSystemPrompt, rustDebugString, threadIdsOfPreamble } from "../harness/preamble.js";
import { echoTool, startTestRapServer } from "./rap-fixture.js";
import { lastText, spawnedChildId, startHarness, writeRapJson } from "./setup.js";

const BUILTINS = ["spawn_thread", "report_to_parent", "close_thread", "send_message_to_child", "cancel_subscription", "sleep_until_event_or_input", "sleep", "sleep_until"];

describe("preamble", () => {
  it("is default prompt + thread-id line + extra prompt with the cwd debug-quoted", async () => {
    const { inf, cwd } = await startHarness();
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "hello");
    const r = await inf.model.nextRequest();
    expect(r.request.preamble).toBe(
      `${DEFAULT_PROMPT}\n\nYour current thread ID is \`${s}\`. The root thread ID is \`${s}\`.\n\n` +
        `The user's current working directory is: "${cwd}"\n\n` +
        "Use the `set_title` tool to give the current thread a short, descriptive title. Set it once at the start when the user's intent becomes clear, and update it only when the overall scope of work changes significantly. Do not call it repeatedly for minor follow-ups within the same task.",
    );
    expect(threadIdsOfPreamble(r.request.preamble)).toEqual({ threadId: s, rootThreadId: s });
    expect(r.request.chat_history).toEqual([{ role: "user", content: [{ type: "text", text: "hello" }] }]);
    r.sendText("hi").finish();
  });

  it("puts a prefix and a blank line before the daemon's preamble, per step, with the thread's history", async () => {
    const seen: { threadId: string; history: InfinityMessage[]; contextWindow: number }[] = [];
    const { inf, cwd } = await startHarness({
      modelEntry: { context_window: 200_000 },
      promptPrefix: (threadId, history, budget) => {
        seen.push({ threadId, history: [...history], contextWindow: budget.contextWindow });
        return history.length > 1 ? `## Memory\n- turn ${history.length}` : null;
      },
    });
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "first");
    const r1 = await inf.model.nextRequest();
    const plain = buildPreamble({ defaultPrompt: DEFAULT_PROMPT, threadId: s, rootThreadId: s, extraSystemPrompt: daemonExtraSystemPrompt(cwd) });
    expect(r1.request.preamble).toBe(plain); // null prefix: unchanged
    r1.sendText("answer").finish();
    await inf.waitIdle(s);
    await inf.sendUserText(s, "second");
    const r2 = await inf.model.nextRequest();
    expect(r2.request.preamble).toBe(`## Memory\n- turn 3\n\n${plain}`);
    expect(seen.map((x) => x.history.map((m) => m.kind))).toEqual([["user"], ["user", "assistant", "user"]]);
    expect(seen[0]!.contextWindow).toBe(200_000);
    r2.sendText("ok").finish();
  });

  it("uses Rust debug quoting for the cwd", () => {
    expect(rustDebugString('/tmp/a "b"\\c\n\u0001é')).toBe('"/tmp/a \\"b\\"\\\\c\\n\\u{1}é"');
  });

  it("lists the session's RAP tools, then set_title, then the built-ins, parameters with sorted keys", async () => {
    const server = await startTestRapServer({ tools: [echoTool] });
    const { inf, cwd } = await startHarness();
    writeRapJson(cwd, [{ type: "toolset_server", server_url: server.url }]);
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "x");
    const r = await inf.model.nextRequest();
    expect(r.request.tools.map((t) => t.name)).toEqual(["echo", "set_title", ...BUILTINS]);
    expect(r.request.tools[0]).toEqual({ name: "echo", description: "Echo the text back.", parameters: echoTool.inputSchema });
    expect(Object.keys(r.request.tools.find((t) => t.name === "spawn_thread")!.parameters as object)).toEqual(["properties", "required", "type"]);
    r.sendText("k").finish();
    await server.close();
  });

  it("lets a ThreadConfigSource filter tools per thread (built-ins still appended)", async () => {
    const server = await startTestRapServer({ tools: [echoTool] });
    let root = "";
    const { inf, cwd } = await startHarness({
      threadConfig: (threadId, cfg) => (threadId === root ? cfg : { ...cfg, tools: cfg.tools.filter((t) => t.name !== "echo") }),
    });
    writeRapJson(cwd, [{ type: "toolset_server", server_url: server.url }]);
    root = await inf.createSession({ cwd });
    await inf.sendUserText(root, "spawn");
    const r1 = await inf.model.nextRequest();
    expect(r1.request.tools.map((t) => t.name)).toContain("echo");
    r1.sendToolCall("sp", "spawn_thread", { instructions: "work", child_of: [root] }).finish();
    const r2 = await inf.model.nextRequest({ threadId: root });
    const child = spawnedChildId(lastText(r2));
    r2.sendText("waiting").finish();
    const rc = await inf.model.nextRequest({ threadId: child });
    expect(rc.request.tools.map((t) => t.name)).toEqual(["set_title", ...BUILTINS]);
    // the filtered tool is unknown to the child: calling it yields the runtime's error
    rc.sendToolCall("e1", "echo", { text: "x" }).finish();
    const rc2 = await inf.model.nextRequest({ threadId: child });
    expect(lastText(rc2)).toBe("Error: tool 'echo' does not exist");
    expect(server.invocations).toHaveLength(0);
    rc2.sendText("fine").finish();
    await server.close();
  });
});

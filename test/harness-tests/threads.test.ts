// Thread tools (§7): spawn_thread (sync, child_of check, inheritance, seeds), report_to_parent,
// close_thread (root refused; /close_thread only after the store marks it closed),
// send_message_to_child, and auto-compaction (§3.4).
import { describe, expect, it } from "vitest";
import { highUsage, toolResultTexts } from "../harness/model.js";
import { echoTool, startTestRapServer } from "./rap-fixture.js";
import { lastText, spawnedChildId, startHarness, writeRapJson } from "./setup.js";

describe("thread tools", () => {
  it("spawn_thread: the child inherits the parent's history up to the spawn call, then its seed", async () => {
    const { inf, cwd } = await startHarness();
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "plan the work");
    const r1 = await inf.model.nextRequest();
    r1.sendText("I will delegate.").sendToolCall("tc-spawn", "spawn_thread", { instructions: "write the tests", child_of: [s] }).finish();

    // sync tool: the parent loops back in the same step with the spawn result
    const r2 = await inf.model.nextRequest({ threadId: s });
    const child = spawnedChildId(lastText(r2));
    expect(lastText(r2)).toBe(
      `Child thread is successfully spawned and has ID: ${child}. You will be notified automatically when the child has anything to report. Make sure that you **do not** do the task assigned to the child thread.`,
    );
    r2.sendText("waiting").finish();

    const rc = await inf.model.nextRequest({ threadId: child });
    expect(rc.request.preamble).toContain(`Your current thread ID is \`${child}\`. The root thread ID is \`${s}\`.`);
    const spawnCall = { id: "tc-spawn", call_id: null, function: { name: "spawn_thread", arguments: { child_of: [s], instructions: "write the tests" } }, signature: null, additional_params: null };
    expect(rc.request.chat_history).toEqual([
      { role: "user", content: [{ type: "text", text: "plan the work" }] },
      { role: "assistant", id: null, content: [{ text: "I will delegate." }] },
      { role: "assistant", id: null, content: [spawnCall] },
      {
        role: "user",
        content: [
          {
            type: "toolresult",
            id: "tc-spawn",
            content: [
              {
                type: "text",
                text: `You are now INSIDE the thread that you requested to create. Your thread ID is ${child}. Your next task is to exactly follow these instructions: write the tests\n. Start by repeating to yourself the instructions, ignoring thinking from the parent context. Make sure to not be confused by the parent context. If the parent was planning to spawn more threads, you should not.`,
              },
            ],
          },
        ],
      },
    ]);
    rc.sendText("done").finish();
    await inf.waitIdle(child);
    // the child's own store holds its seed and turn; the rest is the inherited prefix
    expect((await inf.history(child)).map((m) => m.kind)).toEqual(["tool_result", "assistant"]);
    expect(await inf.conversationStore.getAncestorChain(child)).toEqual([[s, 3]]);
    expect(await inf.childrenOf(s)).toEqual([child]);
  });

  it("spawn_thread rejects a child_of that is not the thread stack", async () => {
    const { inf, cwd } = await startHarness();
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "go");
    (await inf.model.nextRequest()).sendToolCall("sp", "spawn_thread", { instructions: "x", child_of: ["nope"] }).finish();
    const r2 = await inf.model.nextRequest();
    expect(lastText(r2)).toBe(
      `Error: child_of ["nope"] does not match the actual thread stack ["${s}"]. You may be confused and think you are in the parent thread, but you are not. You are in thread ${s}. Do NOT spawn threads — focus on your assigned task.`,
    );
    r2.sendText("ok").finish();
  });

  it("report_to_parent and close_thread reach the parent inline; /close_thread follows the close", async () => {
    const closedWhenNotified: boolean[] = [];
    const { inf, cwd } = await startHarness();
    const server = await startTestRapServer({
      tools: [echoTool],
      beforeReply: async (path, raw) => {
        if (path === "/close_thread") closedWhenNotified.push(await inf.conversationStore.isThreadClosed((JSON.parse(raw) as { thread_id: string }).thread_id));
      },
    });
    writeRapJson(cwd, [{ type: "toolset_server", server_url: server.url }]);
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "delegate");
    (await inf.model.nextRequest()).sendToolCall("sp", "spawn_thread", { instructions: "report twice", child_of: [s] }).finish();
    const r2 = await inf.model.nextRequest({ threadId: s });
    const child = spawnedChildId(lastText(r2));
    r2.sendToolCall("sl", "sleep_until_event_or_input", {}).finish();

    const c1 = await inf.model.nextRequest({ threadId: child });
    c1.sendToolCall("rp", "report_to_parent", { report: "halfway" }).finish();
    // the parent's passive sleep is interrupted by the report, injected inline
    const p3 = await inf.model.nextRequest({ threadId: s });
    const tail = p3.request.chat_history.slice(-3);
    expect(tail[0]).toEqual({ role: "user", content: [{ type: "toolresult", id: "sl", content: [{ type: "text", text: "Tool call interrupted by user" }] }] });
    const injected = tail[1]!.content[0] as { id: string; function: { name: string; arguments: unknown } };
    expect(injected.function).toEqual({ name: "receive_event__injected", arguments: { original_args: { child_of: [s], instructions: "report twice" }, original_tool_call_id: "sp", original_tool_name: "spawn_thread" } });
    expect(tail[2]).toEqual({ role: "user", content: [{ type: "toolresult", id: injected.id, content: [{ type: "text", text: "Report from child thread: halfway" }] }] });
    p3.sendText("noted").finish();
    const c2 = await inf.model.nextRequest({ threadId: child });
    expect(lastText(c2)).toBe("Report sent to parent thread.");

    // the root cannot be closed
    await inf.waitIdle(s);
    await inf.sendUserText(s, "close yourself");
    (await inf.model.nextRequest({ threadId: s })).sendToolCall("cr", "close_thread", { thread_id: s }).finish();
    expect(lastText(await inf.model.nextRequest({ threadId: s }))).toBe("Error: cannot close the root thread. Only child threads can be closed.");

    c2.sendToolCall("cl", "close_thread", { thread_id: child, report_to_parent: "all done" }).finish();
    await server.waitFor(() => server.closes[0]);
    expect(server.closes).toEqual([{ thread_id: child }]);
    expect(closedWhenNotified).toEqual([true]);
    expect(await inf.conversationStore.isThreadClosed(child)).toBe(true);
    // close_thread's own call never gets a result; the child driver idles out
    await inf.waitIdle(child);
    expect((await inf.history(child)).at(-1)?.kind).toBe("tool_call");
    await server.close();
  });

  it("send_message_to_child goes to a direct child only", async () => {
    const { inf, cwd } = await startHarness();
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "spawn");
    (await inf.model.nextRequest()).sendToolCall("sp", "spawn_thread", { instructions: "wait for messages", child_of: [s] }).finish();
    const r2 = await inf.model.nextRequest({ threadId: s });
    const child = spawnedChildId(lastText(r2));
    r2.sendText("spawned").finish();
    const c1 = await inf.model.nextRequest({ threadId: child });
    c1.sendToolCall("zz", "sleep_until_event_or_input", {}).finish();
    await inf.waitIdle(s);

    await inf.sendUserText(s, "tell the child");
    (await inf.model.nextRequest({ threadId: s })).sendToolCall("m1", "send_message_to_child", { thread_id: child, message: "use pnpm" }).finish();
    const p3 = await inf.model.nextRequest({ threadId: s });
    expect(lastText(p3)).toBe("Message sent to child thread.");
    // the child's passive sleep is interrupted and the message injected inline
    const c2 = await inf.model.nextRequest({ threadId: child });
    expect(toolResultTexts(c2.request).slice(-2)).toEqual(["Tool call interrupted by user", "Message from parent thread: use pnpm"]);
    c2.sendText("ok").finish();

    p3.sendToolCall("m2", "send_message_to_child", { thread_id: s, message: "to myself" }).finish();
    expect(lastText(await inf.model.nextRequest({ threadId: s }))).toBe("Error: Child thread not found or has no parent");
  });
});

describe("compaction", () => {
  it("triggers above 3/4 of the context window, summarizes in a child, and applies the summary", async () => {
    const { inf, cwd } = await startHarness({ modelEntry: { context_window: 100 } });
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "hello");
    const r1 = await inf.model.nextRequest();
    r1.sendText("hi there").finish({ usage: { input_tokens: 70, output_tokens: 5, total_tokens: 75, cached_input_tokens: 0 } });
    await inf.waitIdle(s);
    // exactly 3/4 does not trigger
    expect(inf.agentEvents(s).some((e) => e.type === "Info" && e.text.includes("Auto-compaction"))).toBe(false);

    await inf.sendUserText(s, "more");
    (await inf.model.nextRequest({ threadId: s })).sendText("sure").finish({ usage: highUsage(100) });
    const creq = await inf.model.nextRequest();
    const child = creq.threadId;
    expect(child).not.toBe(s);
    expect(await inf.conversationStore.isCompactionThread(child)).toBe(true);
    expect(lastText(creq)).toContain(`You are now INSIDE a compaction thread.`);
    expect(lastText(creq)).toContain(`Then call close_thread with your thread ID (${child}) and include the summary in report_to_parent.`);
    const calls = creq.request.chat_history.filter((m) => m.role === "assistant").map((m) => (m.content[0] as { function?: { name: string } }).function?.name);
    expect(calls).toContain("__harness_begin_compaction__");
    creq.sendToolCall("tc-close", "close_thread", { thread_id: child, report_to_parent: "the user greeted twice" }).finish();

    await inf.waitForEvent((e) => e.type === "agent" && e.threadId === s && e.event.type === "CompactionApplied");
    expect(await inf.conversationStore.loadLatestCompactionSummaryUpTo(s, null)).toEqual(["the user greeted twice", 4]);
    await inf.waitIdle(s);
    await inf.sendUserText(s, "after");
    const r3 = await inf.model.nextRequest({ threadId: s });
    expect(r3.request.chat_history).toEqual([
      { role: "assistant", id: null, content: [{ text: "[Compacted conversation summary]\nthe user greeted twice" }] },
      { role: "user", content: [{ type: "text", text: "after" }] },
    ]);
    r3.sendText("ok").finish();
  });

  it("can be triggered by the client on a thread without a context window", async () => {
    const { inf, cwd } = await startHarness();
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "hello");
    (await inf.model.nextRequest()).sendText("hi").finish();
    await inf.waitIdle(s);
    await inf.triggerCompaction(s);
    const creq = await inf.model.nextRequest();
    expect(creq.threadId).not.toBe(s);
    expect(await inf.conversationStore.getThreadParentInfo(creq.threadId)).toEqual([s, expect.any(String)]);
    creq.sendToolCall("c", "close_thread", { thread_id: creq.threadId, report_to_parent: "greetings" }).finish();
    await inf.waitForEvent((e) => e.type === "agent" && e.threadId === s && e.event.type === "CompactionApplied");
  });
});

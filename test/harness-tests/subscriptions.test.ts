// Subscriptions (§1.5, §6 item 7): a `subscription: true` result is tracked; associative events
// are injected inline; other events run in a child thread seeded with three messages; `final`
// untracks; events wait while an active call is pending; cancel_subscription notifies servers.
import { describe, expect, it } from "vitest";
import { MemoryConversationStore } from "../../stores/infinity/memory-store.js";
import { toolResultTexts } from "../harness/model.js";
import { echoTool, postCallback, startTestRapServer } from "./rap-fixture.js";
import { lastText, startHarness, writeRapJson } from "./setup.js";

const subscribeTool = { name: "watch", description: "Subscribe to changes.", inputSchema: { type: "object", properties: { path: { type: "string" } } } };

async function subscribed() {
  const server = await startTestRapServer({
    tools: [subscribeTool, echoTool],
    onInvoke: async (inv) => {
      if (inv.operation === "watch") {
        await postCallback(inv.callback_url, { type: "tool_result", group_id: inv.group_id, id: inv.id, text: `Subscribed. Subscription ID: ${inv.id}`, subscription: true });
      }
    },
  });
  const h = await startHarness();
  writeRapJson(h.cwd, [{ type: "toolset_server", server_url: server.url }]);
  const s = await h.inf.createSession({ cwd: h.cwd });
  await h.inf.sendUserText(s, "watch src");
  (await h.inf.model.nextRequest()).sendToolCall("sub-1", "watch", { path: "src" }).finish();
  const r2 = await h.inf.model.nextRequest();
  expect(lastText(r2)).toBe("Subscribed. Subscription ID: sub-1");
  r2.sendText("watching").finish();
  await h.inf.waitIdle(s);
  return { ...h, server, s };
}

const event = (s: string, text: string, extra: Record<string, unknown> = {}) => ({ type: "subscription_event", group_id: s, tool_call_id: "sub-1", text, ...extra });

describe("subscriptions", () => {
  it("tracks the subscription and injects associative events inline", async () => {
    const { inf, server, s } = await subscribed();
    expect(await inf.stateStore.getActiveSubscriptions(s)).toEqual(["sub-1"]);
    await postCallback(inf.callbackUrl, event(s, "src/a.ts changed", { associative: true }));
    const r = await inf.model.nextRequest({ threadId: s });
    const [callMsg, resultMsg] = r.request.chat_history.slice(-2);
    const injected = callMsg!.content[0] as { id: string; function: { name: string; arguments: unknown } };
    expect(injected.function).toEqual({ name: "receive_event__injected", arguments: { original_args: { path: "src" }, original_tool_call_id: "sub-1", original_tool_name: "watch" } });
    expect(resultMsg).toEqual({ role: "user", content: [{ type: "toolresult", id: injected.id, content: [{ type: "text", text: "src/a.ts changed" }] }] });
    expect(inf.agentEvents(s)).toContainEqual({ type: "SubscriptionEvent", name: 'watch({"path":"src"})', text: "src/a.ts changed" });
    // the model may not call the injected tool itself
    r.sendToolCall("bad", "receive_event__injected", {}).finish();
    expect(lastText(await inf.model.nextRequest({ threadId: s }))).toBe(
      "Error: you cannot directly invoke receive_event__injected, invocations will automatically be injected when events arrive.",
    );
    await server.close();
  });

  it("runs a non-associative event in a child thread seeded with spawn call, spawn result and event call", async () => {
    const { inf, server, s } = await subscribed();
    await postCallback(inf.callbackUrl, event(s, "src/b.ts changed"));
    const rc = await inf.model.nextRequest();
    const child = rc.threadId;
    expect(child).not.toBe(s);
    expect(await inf.conversationStore.isSubscriptionEventThread(child)).toBe(true);
    expect(await inf.conversationStore.getThreadParentInfo(child)).toEqual([s, "sub-1"]);
    const tail = rc.request.chat_history.slice(-4);
    const spawn = tail[0]!.content[0] as { id: string; function: unknown };
    expect(spawn.function).toEqual({ name: "spawn_thread", arguments: { instructions: "Spawning thread to process incoming event." } });
    expect(tail[1]).toEqual({
      role: "user",
      content: [
        {
          type: "toolresult",
          id: spawn.id,
          content: [
            {
              type: "text",
              text: `You are now INSIDE the thread for processing the single event above. Your thread ID is ${child}, the parent which is still subscribing is ${s}. Process the single subscription event above, report to the parent if appropriate, then close the thread after processing this event. Your outputs are NOT VISIBLE to the user, if you want to show them something, send a report to your parent.`,
            },
          ],
        },
      ],
    });
    const evCall = tail[2]!.content[0] as { id: string; function: { name: string } };
    expect(evCall.function.name).toBe("receive_event__injected");
    expect(tail[3]).toEqual({ role: "user", content: [{ type: "toolresult", id: evCall.id, content: [{ type: "text", text: "src/b.ts changed" }] }] });
    // the parent runs no completion for it
    expect(inf.model.queued).toBe(0);
    // the child's report reaches the parent with the subscription wording
    rc.sendToolCall("cl", "close_thread", { thread_id: child, report_to_parent: "b.ts looks fine" }).finish();
    const rp = await inf.model.nextRequest({ threadId: s });
    expect(toolResultTexts(rp.request).at(-1)).toBe(
      `An event from your subscription sub-1 was processed by a child thread ${child}. The subscription remains active. Report from the child:\nb.ts looks fine`,
    );
    // the notification follows the report (sequential, after the close)
    await server.waitFor(() => server.closes[0]);
    expect(server.closes).toEqual([{ thread_id: child }]);
    await server.close();
  });

  it("final events untrack; cancel_subscription notifies the servers", async () => {
    const { inf, server, s } = await subscribed();
    await postCallback(inf.callbackUrl, event(s, "last one", { associative: true, final: true }));
    const r = await inf.model.nextRequest({ threadId: s });
    expect(await inf.stateStore.getActiveSubscriptions(s)).toEqual([]);
    r.sendToolCall("cs", "cancel_subscription", { tool_call_id: "sub-1" }).finish();
    const r2 = await inf.model.nextRequest({ threadId: s });
    expect(lastText(r2)).toBe("Error: no active subscription found for tool call ID 'sub-1'");
    expect(server.cancels).toEqual([]);
    r2.sendText("ok").finish();
    await server.close();
  });

  it("cancel_subscription (sync) posts /cancel_tool_call and forgets the subscription", async () => {
    const { inf, server, s } = await subscribed();
    await inf.sendUserText(s, "stop watching");
    (await inf.model.nextRequest()).sendToolCall("cs", "cancel_subscription", { tool_call_id: "sub-1" }).finish();
    const r = await inf.model.nextRequest();
    expect(lastText(r)).toBe("Subscription 'sub-1' cancelled successfully.");
    expect(server.cancels).toEqual([{ thread_id: s, tool_call_id: "sub-1" }]);
    expect(await inf.stateStore.getActiveSubscriptions(s)).toEqual([]);
    r.sendText("stopped").finish();
    await server.close();
  });

  it("defers events while an active tool call is pending, then delivers them after its result", async () => {
    const { inf, server, s } = await subscribed();
    await inf.sendUserText(s, "echo please");
    (await inf.model.nextRequest()).sendToolCall("e1", "echo", { text: "x" }).finish();
    await server.nextInvocation((i) => i.id === "e1");
    await postCallback(inf.callbackUrl, event(s, "during the call", { associative: true }));
    await new Promise((r) => setTimeout(r, 50));
    // not interrupted: no round yet, the call is still the last entry
    expect(inf.model.queued).toBe(0);
    await postCallback(inf.callbackUrl, { type: "tool_result", group_id: s, id: "e1", text: "echoed" });
    const r = await inf.model.nextRequest({ threadId: s });
    expect(toolResultTexts(r.request).slice(-2)).toEqual(["echoed", "during the call"]);
    r.sendText("both").finish();
    await inf.waitIdle(s);
    const kinds = (await (inf.conversationStore as MemoryConversationStore).loadMessagesWithIds(s)).map(([m]) => m.kind);
    expect(kinds.slice(-3)).toEqual(["tool_result", "subscription_event", "assistant"]);
    await server.close();
  });
});

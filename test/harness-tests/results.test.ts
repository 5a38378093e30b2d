// How results and other callbacks come back (§1.5, §1.6): result matching and duplicates,
// interruption by user text (synthetic result, /cancel_tool_call, dismissed choice, late result
// dropped), user choices answered through response_url, OAuth, router admission.
import { describe, expect, it } from "vitest";
import { MemoryConversationStore } from "../../stores/infinity/memory-store.js";
import { toolResultTexts } from "../harness/model.js";
import { echoTool, postCallback, startTestRapServer } from "./rap-fixture.js";
import { lastText, startHarness, writeRapJson } from "./setup.js";

const slowTool = { name: "slow", description: "Takes a while.", inputSchema: { type: "object", properties: {} } };

async function setup(opts: Parameters<typeof startTestRapServer>[0] = { tools: [echoTool, slowTool] }) {
  const server = await startTestRapServer(opts);
  const h = await startHarness();
  writeRapJson(h.cwd, [{ type: "toolset_server", server_url: server.url }]);
  const s = await h.inf.createSession({ cwd: h.cwd });
  return { ...h, server, s };
}

describe("result matching", () => {
  it("accepts a result only for the pending call, once", async () => {
    const { inf, server, s } = await setup();
    await inf.sendUserText(s, "go");
    (await inf.model.nextRequest()).sendToolCall("t1", "echo", { text: "x" }).finish();
    await server.nextInvocation();
    // a result for another call is ignored, though the callback is accepted
    expect(await postCallback(inf.callbackUrl, { type: "tool_result", group_id: s, id: "other", text: "stray" })).toEqual({ status: 200, text: "OK" });
    await postCallback(inf.callbackUrl, { type: "tool_result", group_id: s, id: "t1", text: "real" });
    const r2 = await inf.model.nextRequest();
    expect(toolResultTexts(r2.request)).toEqual(["real"]);
    r2.sendText("done").finish();
    await inf.waitIdle(s);
    // a redelivery (same dedup id) and a second result for the same call are both dropped
    await postCallback(inf.callbackUrl, { type: "tool_result", group_id: s, id: "t1", text: "real" });
    await postCallback(inf.callbackUrl, { type: "tool_result", group_id: s, id: "t1", call_id: "x", text: "again" });
    await inf.waitIdle(s);
    expect(inf.model.queued).toBe(0);
    expect((await inf.history(s)).filter((m) => m.kind === "tool_result")).toHaveLength(1);
    await server.close();
  });
});

describe("interruption", () => {
  it("answers the pending call with 'Tool call interrupted by user', cancels it at the servers and drops the late result", async () => {
    const { inf, server, s } = await setup({
      tools: [slowTool],
      onInvoke: async (inv) => {
        await postCallback(inv.callback_url, {
          type: "user_choice",
          group_id: inv.group_id,
          id: inv.id,
          prompt: "Really?",
          choices: ["Yes", "No"],
          default: 1,
          response_url: `http://127.0.0.1:${server.port}/user_choice_response`,
        });
      },
    });
    await inf.sendUserText(s, "start");
    (await inf.model.nextRequest()).sendToolCall("slow-1", "slow", {}).finish();
    await inf.waitForEvent((e) => e.type === "agent" && e.event.type === "UserChoiceRequired");
    expect(await inf.pendingUserChoices(s)).toEqual([
      { id: "slow-1", prompt: "Really?", choices: ["Yes", "No"], default: 1, response_url: `http://127.0.0.1:${server.port}/user_choice_response` },
    ]);
    // user choices stay out of history
    expect((await inf.history(s)).map((m) => m.kind)).toEqual(["user", "tool_call"]);
    expect(await inf.answerUserChoice(s, "slow-1", 0)).toBe(200);
    expect(server.choiceAnswers).toEqual([{ id: "slow-1", selected: 0 }]);
    expect(server.requests.find((r) => r.path === "/user_choice_response")!.raw).toBe('{"id":"slow-1","selected":0}');
    expect(await inf.answerUserChoice(s, "no-such-choice", 0)).toBeNull();

    await inf.sendUserText(s, "never mind");
    const r2 = await inf.model.nextRequest();
    expect(r2.request.chat_history.slice(-2)).toEqual([
      { role: "user", content: [{ type: "toolresult", id: "slow-1", content: [{ type: "text", text: "Tool call interrupted by user" }] }] },
      { role: "user", content: [{ type: "text", text: "never mind" }] },
    ]);
    expect(server.cancels).toEqual([{ thread_id: s, tool_call_id: "slow-1" }]);
    expect(server.requests.find((r) => r.path === "/cancel_tool_call")!.raw).toBe(`{"thread_id":"${s}","tool_call_id":"slow-1"}`);
    expect(await inf.pendingUserChoices(s)).toEqual([]);
    expect(inf.agentEvents(s)).toContainEqual({ type: "UserChoiceDismissed", choice_id: "slow-1" });
    r2.sendText("ok").finish();
    await inf.waitIdle(s);
    const ids = (await (inf.conversationStore as MemoryConversationStore).loadMessagesWithIds(s)).map(([, id]) => id);
    expect(ids[2]).toBe("slow-1-interrupted");

    // the server's late result finds no pending call
    await postCallback(inf.callbackUrl, { type: "tool_result", group_id: s, id: "slow-1", text: "finally" });
    await inf.waitIdle(s);
    expect(inf.model.queued).toBe(0);
    expect(toolResultTexts(r2.request)).not.toContain("finally");
    expect((await inf.history(s)).filter((m) => m.kind === "tool_result")).toHaveLength(1);
    await server.close();
  });

  it("user text during a completion cancels the stream and arrives as <interrupt>", async () => {
    const { inf, s, server } = await setup();
    await inf.sendUserText(s, "first");
    const r1 = await inf.model.nextRequest();
    r1.sendText("partial answer");
    await inf.waitForEvent((e) => e.type === "agent" && e.event.type === "TextChunk");
    await inf.sendUserText(s, "stop, do this instead");
    const r2 = await inf.model.nextRequest();
    expect(r1.cancelled).toBe(true);
    expect(r2.request.chat_history.slice(-2)).toEqual([
      { role: "assistant", id: null, content: [{ text: "partial answer" }] },
      { role: "user", content: [{ type: "text", text: "<interrupt>stop, do this instead" }] },
    ]);
    expect(inf.agentEvents(s)).toContainEqual({ type: "UserInput", text: "stop, do this instead" });
    r2.sendText("ok").finish();
    await server.close();
  });
});

describe("other callbacks", () => {
  it("OAuth surfaces as an event, stays out of history, and leaves the call pending", async () => {
    const { inf, server, s } = await setup();
    await inf.sendUserText(s, "go");
    (await inf.model.nextRequest()).sendToolCall("t1", "echo", { text: "x" }).finish();
    await server.nextInvocation();
    await postCallback(inf.callbackUrl, { type: "oauth", group_id: s, id: "t1", auth_url: "https://auth.example.com/x" });
    await inf.waitForEvent((e) => e.type === "agent" && e.event.type === "OAuthRequired");
    expect((await inf.history(s)).at(-1)?.kind).toBe("tool_call");
    await postCallback(inf.callbackUrl, { type: "tool_result", group_id: s, id: "t1", text: "authorized" });
    expect(lastText(await inf.model.nextRequest())).toBe("authorized");
    await server.close();
  });

  it("view updates are stored as views, not history, even for unknown threads", async () => {
    const { inf, s, server } = await setup();
    expect((await postCallback(inf.callbackUrl, { type: "view_update", group_id: s, view_type: "diff", content: { lines: 3 } })).status).toBe(200);
    expect((await postCallback(inf.callbackUrl, { type: "view_update", group_id: "no-such-thread", view_type: "memory", content: {} })).status).toBe(200);
    expect(inf.viewsOf(s).get("diff")).toEqual({ lines: 3 });
    expect(inf.viewsOf("no-such-thread").get("memory")).toEqual({});
    expect(await inf.history(s)).toEqual([]);
    expect(inf.isLive(s)).toBe(false);
    await server.close();
  });
});

describe("router admission", () => {
  it("drops events for unknown and stopped threads; user text creates and revives", async () => {
    const { inf, s, server } = await setup();
    await postCallback(inf.callbackUrl, { type: "tool_result", group_id: "ghost", id: "t", text: "?" });
    await inf.waitForEvent((e) => e.type === "input_dropped" && e.threadId === "ghost" && e.reason === "unknown_thread");
    expect(await inf.conversationStore.threadExists("ghost")).toBe(false);

    await inf.sendUserText(s, "go");
    (await inf.model.nextRequest()).sendToolCall("t1", "echo", { text: "x" }).finish();
    await server.nextInvocation();
    await inf.shutdownSession(s);
    // a thread parked on its tool result keeps its driver, so the result still reaches it;
    // once it idles, later events are refused at the router
    await postCallback(inf.callbackUrl, { type: "tool_result", group_id: s, id: "t1", text: "result" });
    (await inf.model.nextRequest()).sendText("done").finish();
    await inf.waitIdle(s);
    await postCallback(inf.callbackUrl, { type: "subscription_event", group_id: s, tool_call_id: "t1", text: "late" });
    await inf.waitForEvent((e) => e.type === "input_dropped" && e.threadId === s && e.reason === "stopped_thread");
    expect(inf.model.queued).toBe(0);

    await inf.sendUserText(s, "I'm back");
    const r = await inf.model.nextRequest();
    expect(lastText(r)).toBe("I'm back");
    r.sendText("welcome back").finish();
    await server.close();
  });
});

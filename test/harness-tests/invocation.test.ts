// What a tool server receives from the runtime: invocation bytes (root and child thread), the
// error results for non-2xx acks and transport failures, one tool call per round, and the
// commit-before-dispatch ordering.
import { describe, expect, it } from "vitest";
import { toolResultTexts } from "../harness/model.js";
import { echoTool, postCallback, startTestRapServer } from "./rap-fixture.js";
import { lastText, spawnedChildId, startHarness, writeRapJson } from "./setup.js";

describe("invocations", () => {
  it("sends the daemon's exact bytes at the root and in a child thread", async () => {
    const server = await startTestRapServer({ tools: [echoTool] });
    const { inf, cwd } = await startHarness();
    writeRapJson(cwd, [{ type: "toolset_server", server_url: server.url }]);
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "echo something");

    const r1 = await inf.model.nextRequest();
    r1.sendToolCall("tooluse_9aZk", "echo", { text: "hi", b: { z: 1, a: 2 } }).finish();
    const root = await server.nextInvocation();
    // key order of the serde struct, call_id and thread_ancestors null, no user_id, sorted arguments
    expect(root.raw).toBe(
      `{"operation":"echo","arguments":{"b":{"a":2,"z":1},"text":"hi"},"id":"tooluse_9aZk","call_id":null,"callback_url":"${inf.callbackUrl}","group_id":"${s}","thread_ancestors":null}`,
    );
    expect(inf.callbackUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    expect((await postCallback(inf.callbackUrl, { type: "tool_result", group_id: s, id: "tooluse_9aZk", text: "hi back" })).status).toBe(200);
    const r2 = await inf.model.nextRequest({ threadId: s });
    expect(lastText(r2)).toBe("hi back");

    // spawn a child; its RAP calls carry thread_ancestors [root]
    r2.sendToolCall("tc-spawn", "spawn_thread", { instructions: "echo from the child", child_of: [s] }).finish();
    const r3 = await inf.model.nextRequest({ threadId: s });
    const child = spawnedChildId(lastText(r3));
    r3.sendText("waiting for the child").finish();
    const rc = await inf.model.nextRequest({ threadId: child });
    rc.sendToolCall("tooluse_Q2", "echo", { text: "from child" }).finish();
    const inChild = await server.nextInvocation((i) => i.id === "tooluse_Q2");
    expect(inChild.raw).toBe(
      `{"operation":"echo","arguments":{"text":"from child"},"id":"tooluse_Q2","call_id":null,"callback_url":"${inf.callbackUrl}","group_id":"${child}","thread_ancestors":["${s}"]}`,
    );
    await server.close();
  });

  it("puts user_id from the root metadata before thread_ancestors", async () => {
    const server = await startTestRapServer({ tools: [echoTool] });
    const { inf, cwd } = await startHarness();
    writeRapJson(cwd, [{ type: "toolset_server", server_url: server.url }]);
    const s = await inf.createSession({ cwd, userId: "user_42" });
    await inf.sendUserText(s, "go");
    (await inf.model.nextRequest()).sendToolCall("t1", "echo", { text: "x" }).finish();
    const got = await server.nextInvocation();
    expect(got.raw).toBe(
      `{"operation":"echo","arguments":{"text":"x"},"id":"t1","call_id":null,"callback_url":"${inf.callbackUrl}","group_id":"${s}","user_id":"user_42","thread_ancestors":null}`,
    );
    // an input carrying metadata replaces the root metadata before it is processed
    await inf.send({ content: { type: "text", text: "as someone else" }, group_id: s, metadata: { user_id: "user_7" } }, "m-1");
    (await inf.model.nextRequest()).sendToolCall("t2", "echo", { text: "y" }, { callId: "prov-2" }).finish();
    const second = await server.nextInvocation((i) => i.id === "t2");
    expect(second.raw).toContain(`"id":"t2","call_id":"prov-2",`);
    expect(second.inv.user_id).toBe("user_7");
    expect(await inf.stateStore.getMetadata(s)).toEqual({ user_id: "user_7" });
    await server.close();
  });

  it("turns a non-2xx ack into the daemon's error result", async () => {
    const server = await startTestRapServer({ tools: [echoTool], ackStatus: 503 });
    const { inf, cwd } = await startHarness();
    writeRapJson(cwd, [{ type: "toolset_server", server_url: server.url }]);
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "go");
    (await inf.model.nextRequest()).sendToolCall("t1", "echo", { text: "x" }).finish();
    const r2 = await inf.model.nextRequest();
    expect(lastText(r2)).toBe(
      `Error: RAP tool 'echo' failed: the server at ${server.url}/invoke responded with HTTP 503. No result will arrive for this call.`,
    );
    r2.sendText("ok").finish();
    await inf.waitIdle(s);
    // the error result is stored under the call id, so a late real result is a duplicate
    const hist = await inf.history(s);
    expect(hist.filter((m) => m.kind === "tool_result")).toHaveLength(1);
    await server.close();
  });

  it("turns a transport failure into 'Error: Tool call failed'", async () => {
    const server = await startTestRapServer({ tools: [echoTool] });
    const { inf, cwd } = await startHarness();
    writeRapJson(cwd, [{ type: "toolset_server", server_url: server.url }]);
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "first");
    const r1 = await inf.model.nextRequest();
    r1.sendText("hello").finish();
    await inf.waitIdle(s);
    await server.close(); // discovered while up, then gone: the POST is refused
    await inf.sendUserText(s, "now call it");
    (await inf.model.nextRequest()).sendToolCall("t1", "echo", { text: "x" }).finish();
    const r3 = await inf.model.nextRequest();
    expect(lastText(r3)).toBe("Error: Tool call failed");
    const info = inf.agentEvents(s).filter((e) => e.type === "Info").map((e) => (e as { text: string }).text);
    expect(info.some((t) => t.startsWith("Error: ") && t.includes("ECONNREFUSED"))).toBe(true);
  });

  it("executes only the first tool call of a round and commits it before dispatch", async () => {
    let storedAtAck: string[] = [];
    const { inf, cwd } = await startHarness();
    const server = await startTestRapServer({
      tools: [echoTool],
      beforeAck: async (inv) => {
        storedAtAck = (await inf.history(inv.group_id)).map((m) => m.kind);
      },
    });
    writeRapJson(cwd, [{ type: "toolset_server", server_url: server.url }]);
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "two calls");
    const r1 = await inf.model.nextRequest();
    r1.sendText("calling").sendToolCall("a", "echo", { text: "1" }).sendToolCall("b", "echo", { text: "2" }).sendText("trailing").finish();
    await server.nextInvocation();
    await inf.waitForEvent((e) => e.type === "invocation");
    // the call was in the store before the POST reached the server
    expect(storedAtAck).toEqual(["user", "assistant", "tool_call"]);
    expect(server.invocations.map((i) => i.inv.id)).toEqual(["a"]);
    expect((await inf.history(s)).map((m) => m.kind)).toEqual(["user", "assistant", "tool_call"]);
    await postCallback(inf.callbackUrl, { type: "tool_result", group_id: s, id: "a", text: "one" });
    const r2 = await inf.model.nextRequest();
    expect(toolResultTexts(r2.request)).toEqual(["one"]);
    expect(server.invocations).toHaveLength(1);
    await server.close();
  });
});

// The harness against the real memory command server (dist/cli/main.js, built by `npx tsc -p .`):
// discovery, a remember/search round trip, idle-out and reboot on a new port with the data
// kept, a call from a child thread, a user choice answered through the harness, and an
// interruption that cancels a call waiting on the person.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";
import type { Harness } from "./setup.js";
import { lastText, spawnedChildId, startHarness, writeRapJson } from "./setup.js";

const MEMORY_TOOLS = ["memory_remember", "memory_search", "memory_update", "memory_history", "memory_forget", "memory_list", "memory_review"];

async function memoryHarness(): Promise<Harness & { db: string }> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npx tsc -p .\` first`);
  const data = tempDir("harness-mem-");
  const db = join(data, "memory.db");
  const h = await startHarness({ serverEnv: { ...process.env, INFINITY_MEMORY_HOME: data, INFINITY_MEMORY_USER: "tester" } });
  writeRapJson(h.cwd, [{ type: "toolset_command", id: "memory", command: `"${process.execPath}" "${CLI}" serve --toolset memory --db "${db}"` }]);
  return { ...h, db };
}

describe("real memory command server", () => {
  it("remembers, idles out, reboots on a new port and still finds it, also from a child thread", async () => {
    const { inf, cwd } = await memoryHarness();
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "remember that the build uses cargo nextest");
    const r1 = await inf.model.nextRequest({ timeoutMs: 20_000 });
    // the manifest's tools in order, then set_title and the built-ins
    const [server] = await inf.serversOf(s);
    const manifest = (await (await fetch(`${server!.currentBaseUrl()}/.well-known/rap-toolset`)).json()) as { tools: { name: string }[] };
    const names = r1.request.tools.map((t) => t.name);
    expect(names.slice(0, manifest.tools.length + 2)).toEqual([...manifest.tools.map((t) => t.name), "set_title", "spawn_thread"]);
    expect(names).toEqual(expect.arrayContaining(MEMORY_TOOLS));
    r1.sendToolCall("tooluse_rem", "memory_remember", { content: "The build uses cargo nextest", kind: "project" }).finish();
    const r2 = await inf.model.nextRequest();
    expect(lastText(r2)).toMatch(/^Remembered as mem_\S+ \(project, project scope, trust model_inferred\)\./);
    r2.sendText("Noted.").finish();
    await inf.waitIdle(s);

    const firstUrl = server!.currentBaseUrl();
    await inf.idleSession(s);
    expect(inf.events).toContainEqual(expect.objectContaining({ type: "server_stopped", sessionId: s, cleanExit: true, baseUrl: firstUrl }));
    expect(server!.currentBaseUrl()).toBeNull();

    await inf.sendUserText(s, "how do we build?");
    (await inf.model.nextRequest()).sendToolCall("tooluse_s1", "memory_search", { query: "build nextest" }).finish();
    const r4 = await inf.model.nextRequest({ timeoutMs: 20_000 });
    expect(lastText(r4)).toContain("The build uses cargo nextest");
    expect(server!.currentBaseUrl()).not.toBe(firstUrl);
    expect(server!.boots).toBe(2);

    // a child thread searches too (its invocation carries thread_ancestors [root])
    r4.sendToolCall("tooluse_sp", "spawn_thread", { instructions: "look it up again", child_of: [s] }).finish();
    const r5 = await inf.model.nextRequest({ threadId: s });
    const child = spawnedChildId(lastText(r5));
    r5.sendText("waiting").finish();
    (await inf.model.nextRequest({ threadId: child })).sendToolCall("tooluse_c1", "memory_search", { query: "nextest" }).finish();
    const rc = await inf.model.nextRequest({ threadId: child });
    expect(lastText(rc)).toContain("The build uses cargo nextest");
    const inv = inf.events.find((e) => e.type === "invocation" && e.toolCallId === "tooluse_c1");
    expect(inv && inv.type === "invocation" && inv.body.endsWith(`"group_id":"${child}","thread_ancestors":["${s}"]}`)).toBe(true);
    rc.sendToolCall("tooluse_close", "close_thread", { thread_id: child }).finish();
    await inf.waitForEvent((e) => e.type === "notify" && e.path === "/close_thread" && e.body === `{"thread_id":"${child}"}` && e.status === 200);
  }, 60_000);

  it("asks the person through user_choice; an answer completes the call, an interruption cancels it", async () => {
    const { inf, cwd } = await memoryHarness();
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "remember two things");
    (await inf.model.nextRequest({ timeoutMs: 20_000 })).sendToolCall("r1", "memory_remember", { content: "Deploys happen on Fridays", kind: "project" }).finish();
    (await inf.model.nextRequest()).sendToolCall("r2", "memory_remember", { content: "The staging database runs postgres 16", kind: "project" }).finish();
    const r3 = await inf.model.nextRequest();

    // forget by query: the server asks the person first
    r3.sendToolCall("f1", "memory_forget", { query: "staging database postgres" }).finish();
    const asked = await inf.waitForEvent((e) => e.type === "agent" && e.threadId === s && e.event.type === "UserChoiceRequired", { timeoutMs: 20_000 });
    const choice = asked.type === "agent" && asked.event.type === "UserChoiceRequired" ? asked.event.choice : null;
    expect(choice?.id).toBe("f1");
    expect(choice?.choices.at(-1)).toBe("Cancel");
    expect(await inf.answerUserChoice(s, "f1", 0)).toBe(200);
    const r4 = await inf.model.nextRequest({ timeoutMs: 20_000 });
    expect(lastText(r4)).toMatch(/^Forgot \d+ memor(y|ies) matching "staging database postgres"/);
    // the result settled the question
    expect(await inf.pendingUserChoices(s)).toEqual([]);

    // ask again, then interrupt instead of answering
    r4.sendToolCall("f2", "memory_forget", { query: "deploys Fridays" }).finish();
    await inf.waitForEvent((e) => e.type === "agent" && e.event.type === "UserChoiceRequired" && e.event.choice.id === "f2", { timeoutMs: 20_000 });
    await inf.sendUserText(s, "stop, keep it");
    const r5 = await inf.model.nextRequest();
    expect(r5.request.chat_history.at(-2)).toEqual({ role: "user", content: [{ type: "toolresult", id: "f2", content: [{ type: "text", text: "Tool call interrupted by user" }] }] });
    await inf.waitForEvent((e) => e.type === "notify" && e.path === "/cancel_tool_call" && e.body === `{"thread_id":"${s}","tool_call_id":"f2"}` && e.status === 200);
    expect(await inf.pendingUserChoices(s)).toEqual([]);
    r5.sendToolCall("s1", "memory_search", { query: "Fridays" }).finish();
    const r6 = await inf.model.nextRequest({ timeoutMs: 20_000 });
    expect(lastText(r6)).toContain("Deploys happen on Fridays");
  }, 60_000);
});

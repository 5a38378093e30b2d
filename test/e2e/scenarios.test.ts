// End-to-end scenarios: the mock Infinity runtime drives real memory command servers (one per
// session, as the daemon does) over real HTTP, with threads persisted in a SQLite conversation
// store that the memory server also reads for session search.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openMemory } from "../../cli/context.js";
import { defaultConfig } from "../../core/config.js";
import { MemoryPrefixBuilder } from "../../core/retrieval/prefix.js";
import { loadTokenCounter } from "../../core/retrieval/tokens.js";
import { inProcessPromptPrefix } from "../../context-hook/in-process.js";
import { SessionsReader } from "../../stores/infinity-files/sessions.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteConversationStore } from "../../stores/sqlite/conversation-store.js";
import { SqliteStateStore } from "../../stores/sqlite/state-store.js";
import { CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";
import type { ModelRound } from "../harness/model.js";
import type { MockInfinityOptions } from "../harness/runtime.js";
import { lastText, spawnedChildId, startHarness, writeRapJson } from "../harness-tests/setup.js";

/**
 * Where the command servers keep memory: a SQLite file in the scenario's data home (default), or
 * what test/postgres/e2e.test.ts installs on globalThis before importing this file (a fresh
 * PostgreSQL database per scenario) — the same scenarios then run against PostgreSQL.
 */
export interface E2eDatabase {
  name: string;
  fresh: ((dataHome: string) => Promise<string>) | null;
  skip: string | null;
}
export const e2eDatabase: E2eDatabase = (globalThis as { __imemE2eDatabase?: E2eDatabase }).__imemE2eDatabase ?? { name: "sqlite", fresh: null, skip: null };

interface World {
  inf: Awaited<ReturnType<typeof startHarness>>["inf"];
  home: string;
  projectA: string;
  projectB: string;
  memDb: string;
  convDb: string;
  dataHome: string;
}

/** A runtime whose threads live in SQLite, and memory command servers configured per project. */
async function world(extra: Partial<MockInfinityOptions> = {}, opts: { brokenServer?: boolean } = {}): Promise<World> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run the build first`);
  const dataHome = tempDir("e2e-data-");
  const memDb = e2eDatabase.fresh ? await e2eDatabase.fresh(dataHome) : join(dataHome, "memory.db");
  const convDb = join(dataHome, "conversations.db");
  const db = openDatabase(convDb);
  const h = await startHarness({
    conversationStore: new SqliteConversationStore(db),
    stateStore: new SqliteStateStore(db),
    serverEnv: { ...process.env, INFINITY_MEMORY_HOME: dataHome, INFINITY_MEMORY_USER: "local-user" },
    ...extra,
  });
  const projectB = tempDir("e2e-projB-");
  const command = opts.brokenServer
    ? `"${process.execPath}" "${CLI}" serve --toolset memory --db /etc/hostname/memory.db`
    : `"${process.execPath}" "${CLI}" serve --toolset memory --db "${memDb}" --sessions-from "sqlite:${convDb}"`;
  for (const p of [h.cwd, projectB]) writeRapJson(p, [{ type: "toolset_command", id: "memory", command }]);
  return { inf: h.inf, home: h.home, projectA: h.cwd, projectB, memDb, convDb, dataHome };
}

/** One model round that calls a tool; returns the next round (which carries the tool result). */
async function callTool(w: World, thread: string, id: string, name: string, args: unknown, round?: ModelRound): Promise<ModelRound> {
  const r = round ?? (await w.inf.model.nextRequest({ threadId: thread, timeoutMs: 20_000 }));
  r.sendToolCall(id, name, args).finish();
  return w.inf.model.nextRequest({ threadId: thread, timeoutMs: 20_000 });
}

async function endTurn(w: World, thread: string, r: ModelRound, text = "Done."): Promise<void> {
  r.sendText(text).finish();
  await w.inf.waitIdle(thread);
}

describe.skipIf(e2eDatabase.skip !== null)(`end-to-end through the mock runtime and real command servers (${e2eDatabase.name})${e2eDatabase.skip ? ` [skipped: ${e2eDatabase.skip}]` : ""}`, () => {
  it("1+2+7: a preference from session A is found in session B with its source; forgotten, session C finds it nowhere; session search finds A's words", async () => {
    const w = await world();
    const a = await w.inf.createSession({ cwd: w.projectA, userId: "u1" });
    await w.inf.sendUserText(a, "I always want answers in British English, please remember that.");
    let r = await callTool(w, a, "tu-a1", "memory_remember", { content: "User wants answers in British English", kind: "preference", user_stated: true });
    expect(lastText(r)).toMatch(/^Remembered as (mem_\w+) \(preference, user scope, trust user_stated\)\./);
    const memId = /mem_\w+/.exec(lastText(r))![0];
    await endTurn(w, a, r);

    const b = await w.inf.createSession({ cwd: w.projectA, userId: "u1" });
    await w.inf.sendUserText(b, "Which spelling conventions do I prefer?");
    r = await callTool(w, b, "tu-b1", "memory_search", { query: "spelling English answers" });
    expect(lastText(r)).toContain(memId);
    expect(lastText(r)).toContain("User wants answers in British English");
    expect(lastText(r)).toContain(`from model thread ${a.slice(0, 8)}…${a.slice(-4)} call tu-a1`);

    // 7: session search finds what the user said in session A, with its thread and message
    r = await callTool(w, b, "tu-b2", "session_search", { query: "British English please", window: 0 }, r);
    const found = lastText(r);
    expect(found).toContain(`session ${a} · thread ${a} · message #0`);
    expect(found).toContain("I always want answers in British English");

    // 2: forget it in session B
    r = await callTool(w, b, "tu-b3", "memory_forget", { id: memId }, r);
    expect(lastText(r)).toMatch(/^Forgot mem_/);
    await endTurn(w, b, r);

    const c = await w.inf.createSession({ cwd: w.projectA, userId: "u1" });
    await w.inf.sendUserText(c, "Do you know my spelling preference?");
    r = await callTool(w, c, "tu-c1", "memory_search", { query: "British English answers", include_history: true });
    expect(lastText(r)).toMatch(/^No memories match/);
    r = await callTool(w, c, "tu-c2", "session_search", { query: "British English" }, r);
    // What the user said and what was stored are gone from the index, including a session_search
    // result in B that quoted them; the model's own query words in B may still match.
    expect(lastText(r)).not.toContain("I always want answers in British English");
    expect(lastText(r)).not.toContain("User wants answers in British English");
    expect(lastText(r)).not.toContain(memId);
    await endTurn(w, c, r);
  }, 90_000);

  it("3: users and projects never see each other's memories; a child sees its ancestors' thread notes, a sibling does not", async () => {
    const w = await world();
    const s1 = await w.inf.createSession({ cwd: w.projectA, userId: "u1" });
    await w.inf.sendUserText(s1, "note things");
    let r = await callTool(w, s1, "i1", "memory_remember", { content: "Project A builds with bazel", kind: "project" });
    r = await callTool(w, s1, "i2", "memory_remember", { content: "My cat is named Pixel" }, r);
    await endTurn(w, s1, r);

    const s2 = await w.inf.createSession({ cwd: w.projectA, userId: "u2" });
    await w.inf.sendUserText(s2, "what do you know?");
    r = await callTool(w, s2, "i3", "memory_search", { query: "bazel builds cat Pixel" });
    expect(lastText(r)).toMatch(/^No memories match/);
    await endTurn(w, s2, r);

    const s3 = await w.inf.createSession({ cwd: w.projectB, userId: "u1" });
    await w.inf.sendUserText(s3, "what do you know?");
    r = await callTool(w, s3, "i4", "memory_search", { query: "bazel builds cat Pixel" });
    // same user, other project: the user-scope memory follows, the project one does not
    expect(lastText(r)).toContain("My cat is named Pixel");
    expect(lastText(r)).not.toContain("Project A builds with bazel");
    await endTurn(w, s3, r);

    // thread tree: root → c1 (writes a thread note) → c1's child sees it; root's other child does not
    const root = await w.inf.createSession({ cwd: w.projectA, userId: "u1" });
    await w.inf.sendUserText(root, "split the work");
    r = await callTool(w, root, "sp1", "spawn_thread", { instructions: "investigate", child_of: [root] });
    const c1 = spawnedChildId(lastText(r));
    r = await callTool(w, root, "sp2", "spawn_thread", { instructions: "other work", child_of: [root] }, r);
    const c2 = spawnedChildId(lastText(r));
    r.sendText("waiting").finish();
    let rc = await callTool(w, c1, "t1", "memory_remember", { content: "Scratch: the flaky test is test_login_retry", scope: "thread" });
    rc = await callTool(w, c1, "sp3", "spawn_thread", { instructions: "dig deeper", child_of: [root, c1] }, rc);
    const c1a = spawnedChildId(lastText(rc));
    rc.sendText("waiting").finish();
    const rg = await callTool(w, c1a, "t2", "memory_search", { query: "flaky test login" });
    expect(lastText(rg)).toContain("test_login_retry");
    rg.sendText("ok").finish();
    const rs = await callTool(w, c2, "t3", "memory_search", { query: "flaky test login" });
    expect(lastText(rs)).toMatch(/^No memories match/);
    rs.sendText("ok").finish();
  }, 90_000);

  it("5+4: an interrupted slow call is cancelled and its late result dropped; an idle-out mid-session loses nothing", async () => {
    const w = await world();
    const s = await w.inf.createSession({ cwd: w.projectA, userId: "u1" });
    await w.inf.sendUserText(s, "remember the deploy day");
    let r = await callTool(w, s, "d1", "memory_remember", { content: "Deploys happen on Thursdays", kind: "project" });

    // 5. A slow call: forget by query waits for the person. The user interrupts instead.
    r.sendToolCall("d3", "memory_forget", { query: "deploys Thursdays" }).finish();
    await w.inf.waitForEvent((e) => e.type === "agent" && e.event.type === "UserChoiceRequired" && e.event.choice.id === "d3", { timeoutMs: 20_000 });
    await w.inf.sendUserText(s, "no wait, keep it");
    const r2 = await w.inf.model.nextRequest({ threadId: s, timeoutMs: 20_000 });
    expect(r2.request.chat_history.at(-2)).toEqual({ role: "user", content: [{ type: "toolresult", id: "d3", content: [{ type: "text", text: "Tool call interrupted by user" }] }] });
    await w.inf.waitForEvent((e) => e.type === "notify" && e.path === "/cancel_tool_call" && e.body === `{"thread_id":"${s}","tool_call_id":"d3"}` && e.status === 200);
    // The server dropped the call: answering the stale question changes nothing and no late result
    // reaches the thread.
    await w.inf.answerUserChoice(s, "d3", 0).catch(() => 0);
    r = await callTool(w, s, "d4", "memory_search", { query: "deploys Thursdays" }, r2);
    expect(lastText(r)).toContain("Deploys happen on Thursdays");
    expect(r.request.chat_history.filter((m) => JSON.stringify(m).includes('"id":"d3"'))).toHaveLength(2);
    await endTurn(w, s, r);

    // 4. The session idles out (SIGINT), then the next call reboots the server on a new port.
    const [server] = await w.inf.serversOf(s);
    const before = server!.currentBaseUrl();
    await w.inf.idleSession(s);
    expect(w.inf.events).toContainEqual(expect.objectContaining({ type: "server_stopped", sessionId: s, cleanExit: true }));
    await w.inf.sendUserText(s, "when do we deploy?");
    r = await callTool(w, s, "d5", "memory_search", { query: "deploy day" });
    expect(lastText(r)).toContain("Deploys happen on Thursdays");
    expect(server!.currentBaseUrl()).not.toBe(before);
    r = await callTool(w, s, "d6", "memory_remember", { content: "Release notes go out on Fridays", kind: "project" }, r);
    expect(lastText(r)).toMatch(/^Remembered as mem_/);
    await endTurn(w, s, r);
  }, 90_000);

  it("6: the memory toolset disabled for one thread answers with the error there; its sibling works", async () => {
    const w = await world();
    const root = await w.inf.createSession({ cwd: w.projectA, userId: "u1" });
    await w.inf.sendUserText(root, "fan out");
    let r = await callTool(w, root, "f1", "spawn_thread", { instructions: "one", child_of: [root] });
    const c1 = spawnedChildId(lastText(r));
    r = await callTool(w, root, "f2", "spawn_thread", { instructions: "two", child_of: [root] }, r);
    const c2 = spawnedChildId(lastText(r));
    r.sendText("waiting").finish();
    const off = runCli(["toolset", "disable", "--toolset", "memory", "--thread", c1, "--db", w.memDb], { INFINITY_MEMORY_HOME: w.dataHome });
    expect(off.status).toBe(0);
    const r1 = await callTool(w, c1, "x1", "memory_list", {});
    expect(lastText(r1)).toBe("Error: the memory toolset is disabled for this thread");
    r1.sendText("ok").finish();
    const r2 = await callTool(w, c2, "x2", "memory_list", {});
    expect(lastText(r2)).toBe("No memories yet.");
    r2.sendText("ok").finish();
  }, 90_000);

  it("8: a server down at discovery leaves its tools absent for that session", async () => {
    const w = await world({}, { brokenServer: true });
    const s = await w.inf.createSession({ cwd: w.projectA, userId: "u1" });
    await w.inf.sendUserText(s, "hello");
    const r = await w.inf.model.nextRequest({ threadId: s, timeoutMs: 20_000 });
    const names = r.request.tools.map((t) => t.name);
    expect(names).not.toContain("memory_search");
    expect(names).toContain("spawn_thread");
    await endTurn(w, s, r);
  }, 60_000);
});

// (SQLite only: the in-process builder opens the database file itself)
describe.skipIf(e2eDatabase.fresh !== null || e2eDatabase.skip !== null)("context hook through the runtime's prompt-prefix seam", () => {
  it("session B's first model request already carries A's preference; an unrelated session and another user get none", async () => {
    const dataHome = tempDir("e2e-hook-");
    const memDb = join(dataHome, "memory.db");
    mkdirSync(dataHome, { recursive: true });
    // The builder reads the same database file the command servers write.
    const mem = openMemory({ dbPath: memDb, config: defaultConfig({ localUser: "local-user" }), env: {} });
    const builder = new MemoryPrefixBuilder({
      service: mem.service,
      toggles: mem.toggles,
      edgesOf: (id) => mem.store.edgesOf(id),
      tokens: await loadTokenCounter("o200k_base"),
      config: mem.config,
    });
    const convDb = openDatabase(join(dataHome, "conversations.db"));
    const conversation = new SqliteConversationStore(convDb);
    const state = new SqliteStateStore(convDb);
    let sessions: SessionsReader | null = null;
    const h = await startHarness({
      conversationStore: conversation,
      stateStore: state,
      serverEnv: { ...process.env, INFINITY_MEMORY_HOME: dataHome, INFINITY_MEMORY_USER: "local-user" },
      promptPrefix: inProcessPromptPrefix({ builder, conversation, state, cwdOf: (root) => sessions?.cwdOf(root) ?? null, localUser: "local-user" }),
    });
    sessions = new SessionsReader(h.home);
    writeRapJson(h.cwd, [{ type: "toolset_command", id: "memory", command: `"${process.execPath}" "${CLI}" serve --toolset memory --db "${memDb}"` }]);
    const w: World = { inf: h.inf, home: h.home, projectA: h.cwd, projectB: h.cwd, memDb, convDb: "", dataHome };
    try {
      const a = await w.inf.createSession({ cwd: w.projectA, userId: "u1" });
      await w.inf.sendUserText(a, "For Python code I prefer type hints everywhere and black formatting.");
      const r = await callTool(w, a, "p1", "memory_remember", { content: "User prefers Python code with type hints and black formatting", kind: "preference", user_stated: true });
      await endTurn(w, a, r);

      const b = await w.inf.createSession({ cwd: w.projectA, userId: "u1" });
      await w.inf.sendUserText(b, "Write a small Python function that parses ISO dates.");
      const first = await w.inf.model.nextRequest({ threadId: b, timeoutMs: 20_000 });
      expect(first.request.preamble.startsWith("<recalled-memory>\n")).toBe(true);
      expect(first.request.preamble).toContain("User prefers Python code with type hints and black formatting");
      expect(first.request.preamble).toMatch(/<\/recalled-memory>\n\n/);
      // no tool call was needed: the history is just the user's message
      expect(first.request.chat_history).toHaveLength(1);
      await endTurn(w, b, first);

      const unrelated = await w.inf.createSession({ cwd: w.projectA, userId: "u1" });
      await w.inf.sendUserText(unrelated, "What is the tallest mountain in Africa?");
      const ru = await w.inf.model.nextRequest({ threadId: unrelated, timeoutMs: 20_000 });
      expect(ru.request.preamble).not.toContain("recalled-memory");
      await endTurn(w, unrelated, ru);

      const other = await w.inf.createSession({ cwd: w.projectA, userId: "u2" });
      await w.inf.sendUserText(other, "Write a small Python function that parses ISO dates.");
      const ro = await w.inf.model.nextRequest({ threadId: other, timeoutMs: 20_000 });
      expect(ro.request.preamble).not.toContain("type hints");
      await endTurn(w, other, ro);
    } finally {
      mem.close();
    }
  }, 90_000);
});

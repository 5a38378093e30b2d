// Session search over the daemon's own files and over an Infinity-shaped SQLite store:
// incremental and idempotent indexing, per-user scope, windows, read mode, and the forget cascade.
import { describe, expect, it } from "vitest";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { makeSessionSearch, openSources } from "../../cli/sessions.js";
import { SessionIndexer } from "../../core/sessions/indexer.js";
import { SqliteConversationStore } from "../../stores/sqlite/conversation-store.js";
import { SqliteSessionIndex } from "../../stores/sqlite/session-index.js";
import { SqliteStateStore } from "../../stores/sqlite/state-store.js";
import { openTestMemory, req } from "../helpers/memory.js";
import { pauseFirstLoad } from "../helpers/paused-reader.js";
import { tempDir } from "../helpers/tmp.js";

const HOME = resolve("test/fixtures/infinity-home");
const LEGACY = resolve("test/fixtures/infinity-home-legacy");
const ALICE_SESSION = "5b0e9d4c-2f6a-4c1e-9a7b-3d8f1e2c4a60";
const LOCAL_SESSION = "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35";

/** A thread file's text with one more user turn, as the daemon writes it. */
function withTurn(text: string, said: string, id: string): string {
  const thread = JSON.parse(text) as { messages: unknown[] };
  thread.messages.push([{ kind: "user", content: { type: "text", text: said } }, id]);
  return JSON.stringify(thread, null, 2);
}

describe("session search over the daemon's files", () => {
  it("finds a phrase with session, thread, message index and id, and a window around it", async () => {
    const m = openTestMemory(tempDir());
    const src = openSources([`infinity-home:${HOME}`, `infinity-home:${LEGACY}`], m.db, m.dbPath);
    const s = makeSessionSearch(m.db, src.sources, m.clock, "local");
    const hits = await s.search("alice", { query: "wind speed mph imperial", limit: 5, window: 1 });
    expect(hits.length).toBeGreaterThan(0);
    const top = hits[0]!;
    expect(top.hit).toMatchObject({ rootThreadId: ALICE_SESSION, threadId: ALICE_SESSION, role: "user", messageId: "f1e2d3c4-b5a6-4978-8a6b-5c4d3e2f1a0b" });
    expect(top.snippet).toContain("wind speed in mph");
    expect(top.window.map((w) => w.ord)).toEqual([top.hit.ord - 1, top.hit.ord, top.hit.ord + 1]);

    // tool calls and tool results are searchable too
    const tool = await s.search("alice", { query: "read_file src/cli.ts", limit: 5, window: 0 });
    expect(tool.some((h) => h.hit.role === "tool_call")).toBe(true);

    // read mode: a window around a known message
    const read = await s.read("alice", { threadId: ALICE_SESSION, ord: 0, window: 2 });
    expect(read.hit.text).toContain("Add a --units flag");
    expect(read.window.map((w) => w.ord)).toEqual([0, 1, 2]);

    // scope: bob's legacy session and the local user's session are not alice's
    expect(await s.search("alice", { query: "staging logs deploy", limit: 5, window: 0 })).toEqual([]);
    expect((await s.search("local", { query: "staging logs deploy", limit: 5, window: 0 }))[0]?.hit.rootThreadId).toBe("0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35");
    await expect(s.read("bob", { threadId: ALICE_SESSION, ord: 0, window: 0 })).rejects.toMatchObject({ code: "not_found" });
    const bob = await s.search("bob", { query: "the", limit: 50, window: 0 }).catch(() => []);
    expect(bob.every((h) => h.hit.rootThreadId !== ALICE_SESSION)).toBe(true);
    src.close();
    m.close();
  });

  it("a thread file caught half-written is left out of that run, the rest indexed and searched; the next run indexes it", async () => {
    const dir = tempDir();
    const home = join(dir, "home");
    cpSync(HOME, home, { recursive: true });
    const file = join(home, "threads", "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35.json");
    const whole = readFileSync(file, "utf8");
    // the daemon rewrites thread files in place: a read can see the first half of one
    writeFileSync(file, whole.slice(0, Math.floor(whole.length / 2)));
    const m = openTestMemory(dir);
    const src = openSources([`infinity-home:${home}`], m.db, m.dbPath);
    const s = makeSessionSearch(m.db, src.sources, m.clock, "local");
    const told: string[] = [];
    s.onSkipped = (location, skipped) => told.push(...skipped.map((t) => `${location} ${t.threadId} ${t.reason}`));
    // before, the one unreadable file failed every search (and the session purge of every forget)
    expect((await s.search("alice", { query: "wind speed mph imperial", limit: 1, window: 0 }))[0]?.hit.rootThreadId).toBe(ALICE_SESSION);
    expect(await s.search("local", { query: "staging logs deploy", limit: 5, window: 0 })).toEqual([]);
    expect(told).toEqual([expect.stringMatching(new RegExp(`^${home} 0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35 ${file}: `))]);
    writeFileSync(file, whole);
    m.clock.advance(5000);
    expect((await s.search("local", { query: "staging logs deploy", limit: 5, window: 0 }))[0]?.hit.rootThreadId).toBe("0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35");
    expect(told).toHaveLength(1);
    src.close();
    m.close();
  });

  it("a thread caught mid-rewrite after it was indexed is reported unread, not served from its last good copy", async () => {
    const dir = tempDir();
    const home = join(dir, "home");
    cpSync(HOME, home, { recursive: true });
    const file = join(home, "threads", `${LOCAL_SESSION}.json`);
    const m = openTestMemory(dir);
    const src = openSources([`infinity-home:${home}`], m.db, m.dbPath);
    const s = makeSessionSearch(m.db, src.sources, m.clock, "local");
    expect((await s.refresh(true))[0]!.skipped).toEqual([]);
    // the daemon appends a turn by rewriting the file in place: a read sees it half written
    const whole = withTurn(readFileSync(file, "utf8"), "The vault combination is Quorvandel", "b1c2d3e4-0000-4000-8000-00000000aa01");
    writeFileSync(file, whole.slice(0, Math.floor(whole.length * 0.7)));
    // a forget's refresh retries until nothing is skipped: a stale copy looked whole and stopped it
    expect((await s.refresh(true))[0]!.skipped.map((t) => t.threadId)).toEqual([LOCAL_SESSION]);
    writeFileSync(file, whole);
    expect((await s.refresh(true))[0]!.skipped).toEqual([]);
    expect((await s.search("local", { query: "vault combination Quorvandel", limit: 1, window: 0 }))[0]?.hit.text).toContain("Quorvandel");
    src.close();
    m.close();
  });

  it("a forced refresh asked while a run is under way reads the sources again once that run ends", async () => {
    const dir = tempDir();
    const home = join(dir, "home");
    cpSync(HOME, home, { recursive: true });
    const file = join(home, "threads", `${LOCAL_SESSION}.json`);
    const m = openTestMemory(dir);
    const src = openSources([`infinity-home:${home}`], m.db, m.dbPath);
    // the first run pauses after it read the thread, as a slow run over many threads would
    const { reader, loaded: readIt, release } = pauseFirstLoad(src.sources[0]!.reader);
    const s = makeSessionSearch(m.db, [{ ...src.sources[0]!, reader }], m.clock, "local");
    const first = s.refresh(true);
    await readIt;
    writeFileSync(file, withTurn(readFileSync(file, "utf8"), "The vault combination is Quorvandel", "b1c2d3e4-0000-4000-8000-00000000aa02"));
    const forced = s.refresh(true);
    release();
    await first;
    await forced;
    // no clock advance: the search itself does not index again, so the forced run must have
    expect((await s.search("local", { query: "vault combination Quorvandel", limit: 1, window: 0 }))[0]?.hit.text).toContain("Quorvandel");
    src.close();
    m.close();
  });

  it("re-indexing is idempotent and picks up only what is new", async () => {
    const dir = tempDir();
    const home = join(dir, "home");
    cpSync(HOME, home, { recursive: true });
    const m = openTestMemory(dir);
    const index = new SqliteSessionIndex(m.db);
    const indexer = new SessionIndexer(index, m.clock, "local");
    const src = openSources([`infinity-home:${home}`], m.db, m.dbPath);
    const first = await indexer.run(src.sources[0]!);
    expect(first.messagesAdded).toBeGreaterThan(10);
    const counts = await index.counts();
    const again = await indexer.run(src.sources[0]!);
    expect(again).toMatchObject({ messagesAdded: 0, threadsChanged: 0, reset: 0 });
    expect(await index.counts()).toEqual(counts);
    src.close();
    m.close();
  });
});

describe("session search over the harness's SQLite store", () => {
  it("indexes incrementally and follows new messages", async () => {
    const m = openTestMemory(tempDir());
    const conv = new SqliteConversationStore(m.db);
    const state = new SqliteStateStore(m.db);
    await conv.ensureRootThread("root-x");
    await state.setMetadata("root-x", { user_id: "carol" });
    await conv.appendMessages("root-x", [
      [{ kind: "user", content: { type: "text", text: "Our Kafka retention is seven days on the events topic" } }, "m1"],
      [{ kind: "assistant", content: { text: "Noted: seven days retention." } }, "m2"],
    ]);
    const src = openSources([`sqlite:${m.dbPath}`], m.db, m.dbPath);
    const s = makeSessionSearch(m.db, src.sources, m.clock, "local");
    expect((await s.search("carol", { query: "kafka retention", limit: 3, window: 0 }))[0]?.hit).toMatchObject({ threadId: "root-x", ord: 0, messageId: "m1" });
    await conv.appendMessages("root-x", [[{ kind: "user", content: { type: "text", text: "Schema registry runs on port 8081" } }, "m3"]]);
    m.clock.advance(5000);
    expect((await s.search("carol", { query: "schema registry port", limit: 3, window: 0 }))[0]?.hit).toMatchObject({ ord: 2, messageId: "m3" });
    expect(await s.search("dave", { query: "kafka", limit: 3, window: 0 })).toEqual([]);
    src.close();
    m.close();
  });

  it("forgetting a memory removes the messages that said it, for good", async () => {
    const m = openTestMemory(tempDir());
    const conv = new SqliteConversationStore(m.db);
    const state = new SqliteStateStore(m.db);
    await conv.ensureRootThread("root-y");
    await state.setMetadata("root-y", { user_id: "alice" });
    const fact = "Alice's locker combination hint is the wombat poster";
    await conv.appendMessages("root-y", [
      [{ kind: "user", content: { type: "text", text: `Remember this: ${fact}.` } }, "u1"],
      [{ kind: "tool_call", call: { id: "tc1", call_id: null, function: { name: "memory_remember", arguments: { content: fact } }, signature: null, additional_params: null } }, "c1"],
      [{ kind: "user", content: { type: "text", text: "Unrelated: lunch at noon" } }, "u2"],
    ]);
    const src = openSources([`sqlite:${m.dbPath}`], m.db, m.dbPath);
    const s = makeSessionSearch(m.db, src.sources, m.clock, "local");
    expect((await s.search("alice", { query: "wombat poster", limit: 5, window: 0 })).length).toBe(2);
    const r = await m.service.remember(req({ user: "alice" }), { content: fact }, { actor: "model", threadId: "root-y", toolCallId: "tc1" });
    await m.service.forget({ thread: req({ user: "alice" }) }, [r.record.id], { actor: "user", threadId: null, toolCallId: null });
    expect(await s.search("alice", { query: "wombat poster", limit: 5, window: 0 })).toEqual([]);
    // A later re-index does not bring them back; the unrelated message stays.
    m.clock.advance(5000);
    await s.refresh(true);
    expect(await s.search("alice", { query: "wombat poster locker", limit: 5, window: 0 })).toEqual([]);
    expect((await s.search("alice", { query: "lunch noon", limit: 5, window: 0 })).length).toBe(1);
    const raw = m.db.prepare(`SELECT count(*) AS n FROM session_messages WHERE text LIKE '%wombat%'`).get() as { n: number };
    expect(raw.n).toBe(0);
    src.close();
    m.close();
  });

  it("forgetting what a child thread remembered removes the user's turn in the parent that asked for it", async () => {
    const m = openTestMemory(tempDir());
    const conv = new SqliteConversationStore(m.db);
    const state = new SqliteStateStore(m.db);
    await conv.ensureRootThread("root-z");
    await state.setMetadata("root-z", { user_id: "alice" });
    const call = (id: string, name: string, args: Record<string, unknown>) => ({ kind: "tool_call" as const, call: { id, call_id: null, function: { name, arguments: args }, signature: null, additional_params: null } });
    await conv.appendMessages("root-z", [
      [{ kind: "user", content: { type: "text", text: "Our staging box answers on port 8443 behind the jump host; keep that in mind and clean up the deploy script" } }, "u1"],
      [call("sp1", "spawn_thread", { instructions: "clean up the deploy script", child_of: ["root-z"] }), "c1"],
    ]);
    const child = await conv.spawnThread("root-z", "sp1", false);
    await conv.appendMessages("root-z", [[{ kind: "user", content: { type: "text", text: "Also, the standup moved to ten" } }, "u2"]]);
    const fact = "Staging listens on port 8443 behind the jump host";
    await conv.appendMessages(child, [[call("tc9", "memory_remember", { content: fact }), "k1"]]);
    const src = openSources([`sqlite:${m.dbPath}`], m.db, m.dbPath);
    const s = makeSessionSearch(m.db, src.sources, m.clock, "local");
    expect((await s.search("alice", { query: "staging 8443 jump", limit: 5, window: 0 })).length).toBe(2);
    const r = await m.service.remember(req({ user: "alice", session: "root-z", thread: child }), { content: fact }, { actor: "model", threadId: child, toolCallId: "tc9" });
    await m.service.forget({ thread: req({ user: "alice" }) }, [r.record.id], { actor: "user", threadId: null, toolCallId: null });
    // the parent's turn said it in other words; it goes with the child's call, the later turn stays
    expect(await s.search("alice", { query: "staging 8443 jump", limit: 5, window: 0 })).toEqual([]);
    expect((await s.search("alice", { query: "standup ten", limit: 5, window: 0 })).map((h) => h.hit.messageId)).toEqual(["u2"]);
    m.clock.advance(5000);
    await s.refresh(true);
    expect(await s.search("alice", { query: "staging 8443", limit: 5, window: 0 })).toEqual([]);
    src.close();
    m.close();
  });
});

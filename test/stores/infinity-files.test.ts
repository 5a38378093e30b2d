// The read-only adapter over the daemon's ~/.infinity layout, against fixture homes in the
// current and the older thread-file format.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { COMPACTION_SUMMARY_HEADER } from "../../stores/infinity/history.js";
import { ThreadState } from "../../stores/infinity/messages.js";
import { openInfinityHome } from "../../stores/infinity-files/home.js";
import { SessionsReader } from "../../stores/infinity-files/sessions.js";
import { ThreadMeta, ThreadSnapshot } from "../../stores/infinity-files/thread-file.js";
import { texts, user } from "./builders.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));
const HOME = join(FIXTURES, "infinity-home");
const LEGACY = join(FIXTURES, "infinity-home-legacy");

const ROOT = "5b0e9d4c-2f6a-4c1e-9a7b-3d8f1e2c4a60";
const CHILD = "8e3f2a71-6c4d-4b9e-a015-7f2d9c3b1e84";
const COMPACTION = "c41f7b2e-93d5-4a8c-b6e1-0d2f5a7c9e13";
const STOPPED = "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35";
const L_ROOT = "2a4c6e80-1b3d-4f57-9a2c-4e6f8a0b2c4d";
const L_CHILD = "7d9f1b35-8c2e-4a46-b9d1-3f5a7c9e1b2d";

const temps: string[] = [];
function copyHome(src: string): string {
  const dir = mkdtempSync(join(tmpdir(), "imem-home-"));
  temps.push(dir);
  cpSync(src, dir, { recursive: true });
  return dir;
}
afterEach(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("infinity-files: current format", () => {
  const { conversation: c, state: s, sessions } = openInfinityHome(HOME);

  it("lists every thread and reads the tree from .meta.json", async () => {
    expect(await c.listThreads()).toEqual([STOPPED, ROOT, CHILD, COMPACTION].sort());
    expect(await c.threadExists(CHILD)).toBe(true);
    expect(await c.threadExists("11111111-2222-4333-8444-555555555555")).toBe(false);
    expect(await c.threadInfo(CHILD)).toEqual({
      parent_thread_id: ROOT,
      root_thread_id: ROOT,
      spawn_message_order: 5,
      spawn_tool_call_id: "toolu_01Spawn",
      closed: true,
      is_subscription_event: false,
      is_compaction: false,
    });
    expect(await c.getThreadParentInfo(CHILD)).toEqual([ROOT, "toolu_01Spawn"]);
    expect(await c.getAncestorChain(CHILD)).toEqual([[ROOT, 5]]);
    expect(await c.getRootThreadId(COMPACTION)).toBe(ROOT);
    expect(await c.isCompactionThread(COMPACTION)).toBe(true);
    expect(await c.isThreadClosed(ROOT)).toBe(false);
    expect(await c.isThreadClosed(CHILD)).toBe(true);
    expect(await c.getThreadSpawnOrder(COMPACTION)).toBe(10);
    const meta = await c.threadMeta(ROOT);
    expect(meta?.title).toBe("Add --units flag to weather CLI");
    expect(meta?.children).toEqual([CHILD, COMPACTION]);
    expect(meta?.selected_model).toEqual({ provider_id: "anthropic", model_id: "claude-sonnet-4-5" });
  });

  it("reads history with ids, tool calls, results and subscription events", async () => {
    expect(await c.historyFormat(ROOT)).toBe("current");
    expect(await c.messageCount(ROOT)).toBe(12);
    const entries = await c.loadMessagesWithIds(ROOT);
    expect(entries.map(([m]) => m.kind)).toEqual([
      "user", "tool_call", "tool_result", "assistant", "tool_call", "tool_result",
      "tool_call", "tool_result", "subscription_event", "assistant", "user", "assistant",
    ]);
    expect(entries[0]![1]).toBe("a7d3c2b1-4e5f-4a6b-9c8d-1e2f3a4b5c6d");
    expect(entries[2]![1]).toBe("toolu_01ReadCli-sync-result-0");
    const event = entries[8]![0];
    expect(event.kind === "subscription_event" && event.child_thread_id).toBe(CHILD);
    expect(texts(await c.loadHistoryUpTo(ROOT, 1, 2))).toEqual(['read_file {"path":"src/cli.ts"}']);
  });

  it("assembles histories with the root's compaction summary where it applies", async () => {
    const [rootHistory, leaf, prefix] = await c.loadHistoryWithAncestors(ROOT);
    expect(rootHistory).toHaveLength(3);
    expect(texts(rootHistory)[0]!.startsWith(`${COMPACTION_SUMMARY_HEADER}User asked for a --units flag`)).toBe(true);
    expect(texts(rootHistory).slice(1)).toEqual([
      "Also show wind speed in mph when imperial is selected.",
      "Wind speed now follows --units: km/h for metric, mph for imperial.",
    ]);
    expect([leaf, prefix]).toEqual([10, 0]);

    // the child inherited 5 messages; the summary covers 10, so it does not apply
    const [childHistory, childLeaf, childPrefix] = await c.loadHistoryWithAncestors(CHILD);
    expect(childHistory).toHaveLength(14);
    expect(childHistory.slice(0, 5)).toEqual(await c.loadHistoryUpTo(ROOT, 0, 5));
    expect([childLeaf, childPrefix]).toEqual([null, 5]);

    // the compaction thread spawned exactly at the summary's cutoff
    const [compHistory, , compPrefix] = await c.loadHistoryWithAncestors(COMPACTION);
    expect(compHistory.map((m) => m.kind)).toEqual(["assistant", "tool_call", "tool_result", "tool_call"]);
    expect(compPrefix).toBe(1);
  });

  it("reads state, metadata under the root key, views and sessions", async () => {
    const [messageIds, toolCalls] = await s.getProcessedIds(ROOT);
    expect(messageIds.size).toBe(12);
    expect(toolCalls.has("toolu_01Spawn")).toBe(true);
    expect(await s.getMetadata(ROOT)).toEqual({ user_id: "alice" });
    expect(await s.getMetadata(CHILD)).toBeNull();
    expect(await s.getActiveSubscriptions(ROOT)).toEqual(["toolu_01WatchCi"]);
    expect(await s.getPendingUserChoices(ROOT)).toEqual([
      {
        id: "toolu_01Publish",
        prompt: "Publish weather-cli 1.4.0 to npm?",
        choices: ["Publish", "Cancel"],
        default: 1,
        response_url: "http://127.0.0.1:43121/user_choice_response/toolu_01Publish",
      },
    ]);
    expect(await s.getPendingUserChoices(COMPACTION)).toEqual([]);
    expect(await c.views(ROOT)).toEqual({
      todo: { items: [{ text: "Add --units flag", done: true }, { text: "Wind speed in mph", done: true }] },
    });
    expect(await c.views(CHILD)).toEqual({});
    expect(sessions.cwdOf(ROOT)).toBe("/home/alice/src/weather-cli");
    expect(await s.isThreadStopped(CHILD)).toBe(false);
    expect(await s.isThreadStopped(STOPPED)).toBe(true);
  });

  it("every file round-trips byte for byte through its schema", () => {
    const threads = join(HOME, "threads");
    const checked: string[] = [];
    for (const name of readdirSync(threads)) {
      const text = readFileSync(join(threads, name), "utf8");
      const schema = name.endsWith(".meta.json") ? ThreadMeta : name.endsWith(".views.json") ? null : ThreadSnapshot;
      if (!schema) continue;
      expect(JSON.stringify(schema.parse(JSON.parse(text)), null, 2), name).toBe(text);
      checked.push(name);
    }
    for (const name of readdirSync(join(HOME, "state"))) {
      const text = readFileSync(join(HOME, "state", name), "utf8");
      expect(JSON.stringify(ThreadState.parse(JSON.parse(text)), null, 2), name).toBe(text);
      checked.push(name);
    }
    expect(checked).toHaveLength(10);
  });

  it("refuses every write with read_only", async () => {
    const writes: Array<() => Promise<unknown>> = [
      () => c.ensureRootThread(ROOT),
      () => c.appendMessages(ROOT, [[user("x"), "x"]]),
      () => c.spawnThread(ROOT, "tc", false),
      () => c.closeThread(ROOT),
      () => c.markThreadAsCompaction(ROOT),
      () => c.saveCompactionSummary(ROOT, "s", 1),
      () => s.addProcessedMessageIds(ROOT, ["m"]),
      () => s.addProcessedToolCalls(ROOT, ["t"]),
      () => s.setMetadata(ROOT, {}),
      () => s.addActiveSubscription(ROOT, "t"),
      () => s.removeActiveSubscription(ROOT, "t"),
      () => s.addPendingUserChoice(ROOT, { id: "c", prompt: "p", choices: [], default: 0, response_url: "u" }),
      () => s.removePendingUserChoice(ROOT, "c"),
    ];
    for (const w of writes) await expect(w()).rejects.toMatchObject({ name: "InfinityStoreError", code: "read_only" });
    expect(await c.messageCount(ROOT)).toBe(12);
  });

  it("refuses ids that would leave the threads directory", async () => {
    for (const bad of ["../sessions", "a/b", "", ".hidden", "x\\y"]) {
      await expect(c.loadHistoryUpTo(bad)).rejects.toMatchObject({ code: "invalid_id" });
    }
    await expect(s.getMetadata("../../etc/passwd")).rejects.toMatchObject({ code: "invalid_id" });
  });
});

describe("infinity-files: older format", () => {
  const { conversation: c, state: s, sessions } = openInfinityHome(LEGACY);

  it("takes the tree from the thread_info embedded in {id}.json", async () => {
    expect(await c.listThreads()).toEqual([L_ROOT, L_CHILD]);
    expect(await c.threadInfo(L_CHILD)).toEqual({
      parent_thread_id: L_ROOT,
      root_thread_id: L_ROOT,
      spawn_message_order: 5,
      spawn_tool_call_id: "call_Lg2",
      closed: true,
      is_subscription_event: false,
      is_compaction: false,
    });
    expect((await c.threadMeta(L_ROOT))?.title).toBe("CI cargo build failure");
    expect(await c.getAncestorChain(L_CHILD)).toEqual([[L_ROOT, 5]]);
  });

  it("converts rig messages the way the daemon does, with display_as and stable ids", async () => {
    expect(await c.historyFormat(L_ROOT)).toBe("legacy");
    const root = await c.loadMessagesWithIds(L_ROOT);
    expect(root.map(([m]) => m.kind)).toEqual(["user", "tool_call", "tool_result", "assistant", "tool_call", "tool_result", "assistant"]);
    expect(root[1]).toEqual([
      { kind: "tool_call", call: { id: "call_Lg1", call_id: null, function: { name: "read_file", arguments: { path: ".github/workflows/ci.yml" } } } },
      "call_Lg1-call",
    ]);
    expect(root[2]![0]).toEqual({
      kind: "tool_result",
      result: { id: "call_Lg1", content: [{ type: "text", text: "runs-on: ubuntu-20.04\nsteps:\n  - uses: dtolnay/rust-toolchain@1.70\n" }] },
      display_segments: [{ type: "text", content: "Read .github/workflows/ci.yml" }],
    });
    // a result without a display_as entry gets no display_segments key at all
    expect("display_segments" in root[5]![0]).toBe(false);

    const child = await c.loadMessagesWithIds(L_CHILD);
    expect(child.map(([, id]) => id)).toEqual(["call_Lg2", "legacy-1", "legacy-2", "legacy-3"]);
    expect(child[2]![0]).toMatchObject({ kind: "tool_result", display_segments: [{ type: "text", content: "$ cargo msrv list" }] });
    expect(texts(child.map(([m]) => m))[1]).toBe('execute_command {"command":"cargo msrv list"}');
    // ids are stable across reads
    expect((await c.loadMessagesWithIds(L_CHILD)).map(([, id]) => id)).toEqual(["call_Lg2", "legacy-1", "legacy-2", "legacy-3"]);
  });

  it("applies the root's summary to itself and to the child that inherited past it", async () => {
    const [rootHistory, leaf, prefix] = await c.loadHistoryWithAncestors(L_ROOT);
    expect(texts(rootHistory)[0]).toBe(`${COMPACTION_SUMMARY_HEADER}CI fails because it pins Rust 1.70 while dependencies need 1.74+.`);
    expect(rootHistory).toHaveLength(4);
    expect([leaf, prefix]).toEqual([4, 0]);
    const [childHistory, childLeaf, childPrefix] = await c.loadHistoryWithAncestors(L_CHILD);
    expect(childHistory.map((m) => m.kind)).toEqual(["assistant", "tool_call", "tool_result", "tool_call", "tool_result", "tool_call"]);
    expect([childLeaf, childPrefix]).toEqual([null, 2]);
  });

  it("reads a sparse state file with defaults, and the session's cwd", async () => {
    expect(await s.getMetadata(L_ROOT)).toEqual({ user_id: "bob" });
    expect(await s.getProcessedIds(L_ROOT)).toEqual([new Set(["4b3a2918-7c6d-4e5f-a4b3-c2d1e0f9a8b7"]), new Set()]);
    expect(await s.getActiveSubscriptions(L_ROOT)).toEqual([]);
    expect(await s.getProcessedIds(L_CHILD)).toEqual([new Set(), new Set()]);
    expect(sessions.cwdOf(L_ROOT)).toBe("/home/bob/work/telemetry-agent");
    expect(await s.isThreadStopped(L_CHILD)).toBe(false);
  });
});

describe("infinity-files: live files", () => {
  it("re-reads a file when the daemon rewrites it", async () => {
    const home = copyHome(HOME);
    const { conversation: c } = openInfinityHome(home);
    expect(await c.messageCount(ROOT)).toBe(12);
    const path = join(home, "threads", `${ROOT}.json`);
    const snap = JSON.parse(readFileSync(path, "utf8")) as { messages: unknown[] };
    snap.messages.push([user("one more"), "extra-1"]);
    writeFileSync(path, JSON.stringify(snap, null, 2));
    expect(await c.messageCount(ROOT)).toBe(13);
    expect((await c.loadMessagesWithIds(ROOT, 12))[0]).toEqual([user("one more"), "extra-1"]);
  });

  it("serves the last good copy while a rewrite is half done, and reports corruption otherwise", async () => {
    const home = copyHome(HOME);
    const path = join(home, "threads", `${CHILD}.json`);
    const full = readFileSync(path, "utf8");
    const { conversation: c } = openInfinityHome(home);
    expect(await c.messageCount(CHILD)).toBe(9);
    writeFileSync(path, full.slice(0, 200));
    expect(await c.messageCount(CHILD)).toBe(9);
    const cold = openInfinityHome(home).conversation;
    await expect(cold.messageCount(CHILD)).rejects.toMatchObject({ code: "corrupt" });
    writeFileSync(path, full);
    expect(await cold.messageCount(CHILD)).toBe(9);
  });

  it("falls back to embedded thread_info when .meta.json is unreadable, and sees deletions", async () => {
    const home = copyHome(LEGACY);
    const { conversation: c } = openInfinityHome(home);
    writeFileSync(join(home, "threads", `${L_CHILD}.meta.json`), "{not json");
    expect((await c.threadInfo(L_CHILD))?.parent_thread_id).toBe(L_ROOT);
    rmSync(join(home, "threads", `${L_CHILD}.json`));
    rmSync(join(home, "threads", `${L_CHILD}.meta.json`));
    expect(await c.threadExists(L_CHILD)).toBe(false);
    expect(await c.messageCount(L_CHILD)).toBe(0);
  });

  it("hidden files in threads/ (macOS '._x.json' copies) are not threads", async () => {
    const home = copyHome(HOME);
    const { conversation: c } = openInfinityHome(home);
    const before = await c.listThreads();
    writeFileSync(join(home, "threads", `._${ROOT}.json`), "\u0000\u0005\u0016\u0007Mac OS X");
    writeFileSync(join(home, "threads", ".partial.meta.json"), "{}");
    expect(await c.listThreads()).toEqual(before);
  });

  it("an empty home has no threads, state or sessions", async () => {
    const home = mkdtempSync(join(tmpdir(), "imem-empty-"));
    temps.push(home);
    const { conversation: c, state: s, sessions } = openInfinityHome(home);
    expect(await c.listThreads()).toEqual([]);
    expect(await c.loadHistoryWithAncestors("x")).toEqual([[], null, 0]);
    expect(await s.getPendingUserChoices("x")).toEqual([]);
    expect(sessions.sessions()).toEqual({});
  });
});

describe("sessions.json", () => {
  it("reads the older list form without a cwd", () => {
    const home = mkdtempSync(join(tmpdir(), "imem-sess-"));
    temps.push(home);
    writeFileSync(join(home, "sessions.json"), JSON.stringify({ sessions: [{ thread_id: "old-1" }] }));
    const r = new SessionsReader(home);
    expect(r.sessions()).toEqual({ "old-1": { cwd: null, shut_down: false, idle: false, archived: false } });
    expect(r.cwdOf("old-1")).toBeNull();
  });

  it("gives a session's cwd with symbolic links resolved, as the command server's own cwd reads", () => {
    const home = mkdtempSync(join(tmpdir(), "imem-sess-"));
    temps.push(home);
    mkdirSync(join(home, "real", "proj"), { recursive: true });
    symlinkSync(join(home, "real"), join(home, "linked"));
    writeFileSync(join(home, "sessions.json"), JSON.stringify({ sessions: { a: { cwd: join(home, "linked", "proj") }, gone: { cwd: "/no/such/dir/" } } }));
    const r = new SessionsReader(home);
    expect(r.cwdOf("a")).toBe(realpathSync(join(home, "real", "proj")));
    // a directory that no longer exists stays as recorded (made absolute, trailing slash dropped)
    expect(r.cwdOf("gone")).toBe("/no/such/dir");
  });

  it("follows changes and keeps the last good copy through a partial write", () => {
    const home = mkdtempSync(join(tmpdir(), "imem-sess-"));
    temps.push(home);
    mkdirSync(home, { recursive: true });
    const file = join(home, "sessions.json");
    writeFileSync(file, JSON.stringify({ sessions: { s1: { cwd: "/a" } } }));
    const r = new SessionsReader(home);
    expect(r.cwdOf("s1")).toBe("/a");
    writeFileSync(file, JSON.stringify({ sessions: { s1: { cwd: "/b", shut_down: true } } }));
    expect(r.cwdOf("s1")).toBe("/b");
    expect(r.isShutDown("s1")).toBe(true);
    writeFileSync(file, '{"sessions": {"s1": {"cw');
    expect(r.cwdOf("s1")).toBe("/b");
    rmSync(file);
    expect(r.cwdOf("s1")).toBeNull();
  });
});

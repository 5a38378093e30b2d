// Session indexing over the daemon's files: a refresh reads only the threads whose history file
// changed since it was indexed. Every search refresh (after a 2 s pause) used to read and parse
// every thread file of the home again: with more threads than the file cache holds, that was the
// user's whole conversation history, for a search that found nothing new to index.
import { cpSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { makeSessionSearch, openSources } from "../../cli/sessions.js";
import { openTestMemory } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const HOME = resolve("test/fixtures/infinity-home");
const LOCAL_SESSION = "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35";
const ALICE_SESSION = "5b0e9d4c-2f6a-4c1e-9a7b-3d8f1e2c4a60";

describe("session index refresh", () => {
  it("does not read a thread whose history file is unchanged, and reads one that grew", async () => {
    const dir = tempDir();
    const home = join(dir, "home");
    cpSync(HOME, home, { recursive: true });
    // more threads than the parsed-file cache holds (256 files), as a home fills up over months
    for (let t = 0; t < 300; t++) {
      const id = `00000000-0000-4000-8000-${t.toString(16).padStart(12, "0")}`;
      const said = [{ kind: "user", content: { type: "text", text: `question ${t} about the build` } }, `u-${t}`];
      writeFileSync(join(home, "threads", `${id}.json`), JSON.stringify({ messages: [said], compaction_summaries: [] }, null, 2));
      writeFileSync(
        join(home, "threads", `${id}.meta.json`),
        JSON.stringify({ parent_thread_id: null, root_thread_id: id, spawn_message_order: null, spawn_tool_call_id: null, closed: false, is_subscription_event: false, is_compaction: false }),
      );
    }
    const file = join(home, "threads", `${LOCAL_SESSION}.json`);
    const stamp = new Date("2026-11-01T12:00:00Z");
    utimesSync(file, stamp, stamp);
    const m = openTestMemory(dir);
    const src = openSources([`infinity-home:${home}`], m.db, m.dbPath);
    const s = makeSessionSearch(m.db, src.sources, m.clock, "local");
    const first = (await s.refresh(true))[0]!;
    expect(first.skipped).toEqual([]);
    expect(first.threadsChanged).toBe(first.threads);

    // Same bytes on disk as far as stat can tell (size and mtime), other content: a thread that was
    // read again would now fail to parse and be reported as skipped.
    const whole = readFileSync(file, "utf8");
    writeFileSync(file, "x".repeat(Buffer.byteLength(whole)));
    utimesSync(file, stamp, stamp);
    const again = (await s.refresh(true))[0]!;
    expect(again.skipped).toEqual([]);
    expect([again.threadsChanged, again.messagesAdded]).toEqual([0, 0]);
    expect((await s.search("local", { query: "staging logs deploy", limit: 1, window: 0 }))[0]?.hit.rootThreadId).toBe(LOCAL_SESSION);

    // A thread the daemon appended to is read and its new message indexed.
    const alice = join(home, "threads", `${ALICE_SESSION}.json`);
    const thread = JSON.parse(readFileSync(alice, "utf8")) as { messages: unknown[] };
    thread.messages.push([{ kind: "user", content: { type: "text", text: "Rotate the Zephyrine signing key on Monday" } }, "c0ffee00-0000-4000-8000-000000000001"]);
    writeFileSync(alice, JSON.stringify(thread, null, 2));
    const grown = (await s.refresh(true))[0]!;
    expect([grown.threadsChanged, grown.messagesAdded]).toEqual([1, 1]);
    expect((await s.search("alice", { query: "Zephyrine signing key", limit: 1, window: 0 }))[0]?.hit.text).toContain("Zephyrine");
    src.close();
    m.close();
  });

  it("does not read an unchanged thread without a meta file (an older daemon's) to learn its session's owner", async () => {
    const dir = tempDir();
    const home = join(dir, "home");
    cpSync(HOME, home, { recursive: true });
    // no .meta.json: the thread's place in its tree is inside its history file
    const ids = Array.from({ length: 300 }, (_, t) => `00000000-0000-4000-8000-${t.toString(16).padStart(12, "0")}`);
    for (const [t, id] of ids.entries()) {
      const said = [{ kind: "user", content: { type: "text", text: `question ${t} about the build` } }, `u-${t}`];
      writeFileSync(join(home, "threads", `${id}.json`), JSON.stringify({ messages: [said], compaction_summaries: [] }, null, 2));
    }
    const file = join(home, "threads", `${ids[0]}.json`);
    const stamp = new Date("2026-11-01T12:00:00Z");
    utimesSync(file, stamp, stamp);
    const m = openTestMemory(dir);
    const src = openSources([`infinity-home:${home}`], m.db, m.dbPath);
    const s = makeSessionSearch(m.db, src.sources, m.clock, "local");
    expect((await s.refresh(true))[0]!.skipped).toEqual([]);

    // same size and mtime, other content: read again, it would fail to parse and be skipped
    writeFileSync(file, "x".repeat(Buffer.byteLength(readFileSync(file, "utf8"))));
    utimesSync(file, stamp, stamp);
    const again = (await s.refresh(true))[0]!;
    expect(again.skipped).toEqual([]);
    expect(again.threadsChanged).toBe(0);
    src.close();
    m.close();
  });
});

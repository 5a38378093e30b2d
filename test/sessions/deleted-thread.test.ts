// A conversation deleted from the daemon's home leaves the session index at the next refresh:
// session_search must not keep serving what the person threw away.
import { cpSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { makeSessionSearch, openSources } from "../../cli/sessions.js";
import { openTestMemory } from "../helpers/memory.js";
import { pauseFirstLoad } from "../helpers/paused-reader.js";
import { copiedHome } from "../helpers/session-home.js";
import { tempDir } from "../helpers/tmp.js";

const HOME = resolve("test/fixtures/infinity-home");
const LOCAL_SESSION = "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35";
const ALICE_SESSION = "5b0e9d4c-2f6a-4c1e-9a7b-3d8f1e2c4a60";

describe("deleted conversations", () => {
  it("a thread whose files were deleted is taken out of the index; the others stay", async () => {
    const { home, m, src, s } = copiedHome();
    expect((await s.search("local", { query: "staging logs deploy", limit: 5, window: 0 }))[0]?.hit.rootThreadId).toBe(LOCAL_SESSION);

    // the person deletes that session from the daemon's home
    for (const f of [`${LOCAL_SESSION}.json`, `${LOCAL_SESSION}.meta.json`]) rmSync(join(home, "threads", f));
    m.clock.advance(5000);
    expect(await s.search("local", { query: "staging logs deploy", limit: 5, window: 0 })).toEqual([]);
    await expect(s.read("local", { threadId: LOCAL_SESSION, ord: 0, window: 0 })).rejects.toMatchObject({ code: "not_found" });
    const again = (await s.refresh(true))[0]!;
    expect(again).toMatchObject({ removed: 0, skipped: [] });
    // alice's session, still there, is still found
    expect((await s.search("alice", { query: "wind speed mph imperial", limit: 1, window: 0 }))[0]?.hit.rootThreadId).toBe(ALICE_SESSION);
    src.close();
    m.close();
  });

  it("a thread another server indexed while this run was under way is not taken for deleted", async () => {
    const dir = tempDir();
    const home = join(dir, "home");
    cpSync(HOME, home, { recursive: true });
    const m = openTestMemory(dir);
    // this run pauses after its first read, as a run over many threads takes a while
    const first = openSources([`infinity-home:${home}`], m.db, m.dbPath);
    const { reader, loaded: readIt, release } = pauseFirstLoad(first.sources[0]!.reader);
    const slow = makeSessionSearch(m.db, [{ ...first.sources[0]!, reader }], m.clock, "local");
    const running = slow.refresh(true);
    await readIt;
    // meanwhile the daemon starts a session and another server (one per session) indexes it
    const fresh = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";
    writeFileSync(join(home, "threads", `${fresh}.json`), JSON.stringify({ messages: [[{ kind: "user", content: { type: "text", text: "Order the Quillfeather lamps" } }, "u-fresh"]], compaction_summaries: [] }));
    writeFileSync(
      join(home, "threads", `${fresh}.meta.json`),
      JSON.stringify({ parent_thread_id: null, root_thread_id: fresh, spawn_message_order: null, spawn_tool_call_id: null, closed: false, is_subscription_event: false, is_compaction: false }),
    );
    const other = openSources([`infinity-home:${home}`], m.db, m.dbPath);
    const s2 = makeSessionSearch(m.db, other.sources, m.clock, "local");
    expect((await s2.refresh(true))[0]!.threadsChanged).toBeGreaterThan(0);
    release();
    expect((await running)[0]!.removed).toBe(0);
    expect((await s2.search("local", { query: "Quillfeather lamps", limit: 1, window: 0 }))[0]?.hit.threadId).toBe(fresh);
    first.close();
    other.close();
    m.close();
  });
});

// Messages the learning worker of an older version left out as kinds it did not know are learned
// from once a version that reads them runs: the episodes holding them are learned again, without a
// second copy of an episode or of a candidate proposed before; a version that reads no more than the
// one before does not read them again. Before, the thread's cursor had moved past them and they were
// never learned from. The daemon's files on disk, the learning tables in a SQLite file; the older
// version is the file reader with some messages hidden (as a version before their form was added).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSources } from "../../cli/sessions.js";
import { copiedHome } from "../helpers/session-home.js";
import { olderReader } from "../helpers/paused-reader.js";
import { openTestMemory } from "../helpers/memory.js";
import { learnerOver, msg } from "./world.js";

const SESSION = "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35";



describe("messages an older learning worker left out as unknown kinds", () => {
  it("are learned from after the upgrade, once, and not read again by the same version", async () => {
    const { dir, home, m, src } = copiedHome();
    const messages = [
      [msg.user("Run the tests."), "m0"],
      [msg.user("Also, I prefer tabs."), "m1"],
      [msg.call("c1", "shell", { cmd: "npm test" }), "m2"],
      [msg.result("c1", "Tests  4 passed (4)"), "m3"],
      [msg.text("All 4 pass."), "m4"],
      [msg.user("I prefer answers in French."), "m5"],
      [msg.text("D'accord."), "m6"],
      [msg.user("Now run the linter. I prefer short answers."), "m7"],
      [msg.text("Lint is clean."), "m8"],
    ];
    writeFileSync(join(home, "threads", `${SESSION}.json`), JSON.stringify({ messages, compaction_summaries: [] }, null, 2));
    const pending = (mm: ReturnType<typeof openTestMemory>) =>
      (mm.db.prepare(`SELECT content FROM memories WHERE status = 'pending' ORDER BY content`).all() as { content: string }[]).map((r) => r.content);
    const episodes = (mm: ReturnType<typeof openTestMemory>) =>
      mm.db.prepare(`SELECT start_ord, candidates_done FROM learning_episodes WHERE thread_id = ? ORDER BY start_ord`).all(SESSION);

    // the older version: m1 and m5 are of a form it does not read
    const older = learnerOver(m, olderReader(src.sources[0]!.reader, new Set(["m1", "m5"])));
    await older.worker.drain();
    expect(pending(m)).toEqual(["User prefers short answers."]);
    const before = episodes(m);
    expect(await older.store.skipped("conversation", SESSION)).toEqual({ from: 1, format: "an-older-format" });
    // a restart of the same version: nothing is read again
    expect(await learnerOver(m, olderReader(src.sources[0]!.reader, new Set(["m1", "m5"]))).worker.drain()).toMatchObject({ discovered: 0, processed: 0 });
    src.close();
    m.close();

    // the upgrade: a new process over the same database and the same files
    const m2 = openTestMemory(dir);
    const src2 = openSources([`infinity-home:${home}`], m2.db, m2.dbPath);
    const upgraded = learnerOver(m2, src2.sources[0]!.reader);
    expect(await upgraded.worker.drain()).toMatchObject({ discovered: 1, processed: 1, failed: 0 });
    expect(pending(m2)).toEqual(["User prefers short answers.", "User prefers tabs.", "User prefers answers in French."].sort());
    const after = episodes(m2);
    expect(after.length).toBeGreaterThanOrEqual(before.length);
    expect(new Set(after.map((e) => (e as { start_ord: number }).start_ord)).size).toBe(after.length);
    expect(await upgraded.store.skipped("conversation", SESSION)).toBeNull();
    // and again (a restart of the new version): nothing more
    expect(await learnerOver(m2, src2.sources[0]!.reader).worker.drain()).toMatchObject({ discovered: 0, processed: 0 });
    expect(m2.db.prepare(`SELECT count(*) AS n FROM learning_candidates`).get()).toEqual({ n: 3 });
    src2.close();
    m2.close();
  });
});

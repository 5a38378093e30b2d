// Messages the learning worker of an older version left out as kinds it did not know are learned
// from once a version that reads them runs: the episodes holding them are learned again, without a
// second copy of an episode or of a candidate proposed before; a version that reads no more than the
// one before does not read them again. Before, the thread's cursor had moved past them and they were
// never learned from. The daemon's files on disk, the learning tables in a SQLite file; the older
// version is the file reader with some messages hidden (as a version before their form was added).
import { describe, expect, it } from "vitest";
import type { openTestMemory } from "../helpers/memory.js";
import { msg, pendingContents as pending, SESSION, threadOnDisk } from "./world.js";

describe("messages an older learning worker left out as unknown kinds", () => {
  it("are learned from after the upgrade, once, and not read again by the same version", async () => {
    const { m, olderLearner, upgrade } = threadOnDisk([
      [msg.user("Run the tests."), "m0"],
      [msg.user("Also, I prefer tabs."), "m1"],
      [msg.call("c1", "shell", { cmd: "npm test" }), "m2"],
      [msg.result("c1", "Tests  4 passed (4)"), "m3"],
      [msg.text("All 4 pass."), "m4"],
      [msg.user("I prefer answers in French."), "m5"],
      [msg.text("D'accord."), "m6"],
      [msg.user("Now run the linter. I prefer short answers."), "m7"],
      [msg.text("Lint is clean."), "m8"],
    ]);
    const episodes = (mm: ReturnType<typeof openTestMemory>) =>
      mm.db.prepare(`SELECT start_ord, candidates_done FROM learning_episodes WHERE thread_id = ? ORDER BY start_ord`).all(SESSION);

    // the older version: m1 and m5 are of a form it does not read
    const older = olderLearner(["m1", "m5"]);
    await older.worker.drain();
    expect(pending(m)).toEqual(["User prefers short answers."]);
    const before = episodes(m);
    expect(await older.store.skipped("conversation", SESSION)).toEqual({ from: 1, format: "an-older-format" });
    // a restart of the same version: nothing is read again
    expect(await olderLearner(["m1", "m5"]).worker.drain()).toMatchObject({ discovered: 0, processed: 0 });

    // the upgrade: a new process over the same database and the same files
    const up = upgrade();
    const m2 = up.m;
    const upgraded = up.learner();
    expect(await upgraded.worker.drain()).toMatchObject({ discovered: 1, processed: 1, failed: 0 });
    expect(pending(m2)).toEqual(["User prefers short answers.", "User prefers tabs.", "User prefers answers in French."].sort());
    const after = episodes(m2);
    expect(after.length).toBeGreaterThanOrEqual(before.length);
    expect(new Set(after.map((e) => (e as { start_ord: number }).start_ord)).size).toBe(after.length);
    expect(await upgraded.store.skipped("conversation", SESSION)).toBeNull();
    // and again (a restart of the new version): nothing more
    expect(await up.learner().worker.drain()).toMatchObject({ discovered: 0, processed: 0 });
    expect(m2.db.prepare(`SELECT count(*) AS n FROM learning_candidates`).get()).toEqual({ n: 3 });
    up.close();
  });
});

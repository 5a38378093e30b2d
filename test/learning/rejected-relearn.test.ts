// A candidate a person rejected is not proposed again when an upgrade re-learns its thread. The
// reject purged the candidate's text, and the re-learn compared what it found with the texts of the
// episode's earlier candidates (none left) and its stored episodes (the message left out before now
// opens a new one): "User prefers tabs." came back as a pending memory. Now a reject (or a forget)
// of a learned candidate leaves a fingerprint of it (a hash, no text) per scope, and the worker does
// not propose that text there again. The daemon's files on disk, a SQLite file; the older version
// is the file reader with one message hidden (as a version before its form was added).
import { describe, expect, it } from "vitest";
import { holding } from "../helpers/holding.js";
import { msg, pendingContents as pending, SESSION, TABS_AFTER_LAYOUT, threadOnDisk } from "./world.js";

describe("a learned candidate a person rejected", () => {
  it("is not proposed again when an upgrade re-learns its thread, and what is kept of it holds no text", async () => {
    const { m, olderLearner, upgrade } = threadOnDisk([
      [msg.user("Run the tests."), "m0"],
      [msg.call("c1", "shell", { cmd: "npm test" }), "m1"],
      [msg.result("c1", "Tests  4 passed (4)"), "m2"],
      [msg.text("All 4 pass."), "m3"],
      [msg.user("Here is the new layout."), "m4"],
      [msg.user("I prefer tabs. I prefer short answers."), "m5"],
      [msg.text("Noted."), "m6"],
    ]);

    // the older version: m4 is of a form it does not read
    await olderLearner(["m4"]).worker.drain();
    expect(pending(m)).toEqual(["User prefers short answers.", "User prefers tabs."]);
    const tabs = m.db.prepare(`SELECT id FROM memories WHERE content = 'User prefers tabs.'`).pluck().get() as string;
    expect(await m.service.reject({ owner: "alice" }, [tabs], { actor: "user", threadId: null, toolCallId: null })).toEqual([tabs]);
    expect(pending(m)).toEqual(["User prefers short answers."]);

    // the upgrade: a new process over the same database and the same files
    const up = upgrade();
    const m2 = up.m;
    try {
      expect(await up.learner().worker.drain()).toMatchObject({ processed: 1, failed: 0 });
      // (the episode m4 opens now was learned: the pending one it repeats gained a source)
      expect(m2.db.prepare(`SELECT count(*) FROM learning_episodes WHERE thread_id = ? AND start_ord = 4 AND candidates_done = 1`).pluck().get(SESSION)).toBe(1);
      expect(pending(m2)).toEqual(["User prefers short answers."]);
      expect(holding(m2.db, "prefers tabs")).toEqual([]);
    } finally {
      up.close();
    }
  });

  it("nor is a memory the loop only added its evidence to, once a person forgot it", async () => {
    const { m, olderLearner, upgrade } = threadOnDisk(TABS_AFTER_LAYOUT);
    // the model had remembered it itself; the older version's candidate became its evidence
    const own = await m.service.remember({ user: "alice", project: "/work/proj-a", session: "s0", thread: "s0", ancestors: [] }, { content: "User prefers tabs." }, { actor: "model", threadId: "s0", toolCallId: "tc-1" });
    await olderLearner(["m2"]).worker.drain();
    expect(m.db.prepare(`SELECT memory_id, disposition FROM learning_candidates`).all()).toEqual([{ memory_id: own.record.id, disposition: "merged" }]);
    expect(pending(m)).toEqual([]);
    expect(await m.service.forget({ owner: "alice" }, [own.record.id], { actor: "user", threadId: null, toolCallId: null })).toEqual([own.record.id]);

    const up = upgrade();
    const m2 = up.m;
    try {
      expect(await up.learner().worker.drain()).toMatchObject({ processed: 1, failed: 0 });
      expect(m2.db.prepare(`SELECT count(*) FROM learning_episodes WHERE thread_id = ? AND start_ord = 2 AND candidates_done = 1`).pluck().get(SESSION)).toBe(1);
      expect(pending(m2)).toEqual([]);
      expect(holding(m2.db, "prefers tabs")).toEqual([]);
    } finally {
      up.close();
    }
  });
});

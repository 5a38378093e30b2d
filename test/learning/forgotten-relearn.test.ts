// A forget blanks the episodes built from the messages a memory was made from, and reading the
// thread again must not rebuild them. An upgrade that re-learns the thread can cut it differently
// (a message it now reads opens an episode earlier), and the new episode held the forgotten user
// turn again. Now the messages a forgotten episode was built from are read as empty, as those a
// forget purged from the session index are. The daemon's files on disk, a SQLite file; the older
// version is the file reader with one message hidden (as a version before its form was added).
import { describe, expect, it } from "vitest";
import { holding } from "../helpers/holding.js";
import { msg, SESSION, threadOnDisk } from "./world.js";

describe("a forgotten candidate's user turn, when an upgrade re-learns its thread", () => {
  it("is in no episode the re-learn builds, while the rest of the thread is learned", async () => {
    const { m, olderLearner, upgrade } = threadOnDisk([
      [msg.user("Run the tests."), "m0"],
      [msg.text("All 4 pass."), "m1"],
      [msg.user("Here is the new layout."), "m2"],
      [msg.user("I prefer the Quokkatheme colour scheme."), "m3"],
      [msg.call("c1", "shell", { cmd: "npm run lint" }), "m4"],
      [msg.result("c1", "0 problems"), "m5"],
      [msg.text("Lint is clean."), "m6"],
    ]);
    await olderLearner(["m2"]).worker.drain();
    const id = m.db.prepare(`SELECT id FROM memories WHERE content LIKE '%Quokkatheme%'`).pluck().get() as string;
    expect(await m.service.forget({ owner: "alice" }, [id], { actor: "user", threadId: null, toolCallId: null })).toEqual([id]);
    expect(holding(m.db, "Quokkatheme")).toEqual([]);

    const up = upgrade();
    const m2 = up.m;
    try {
      expect(await up.learner().worker.drain()).toMatchObject({ processed: 1, failed: 0 });
      expect(holding(m2.db, "Quokkatheme")).toEqual([]);
      // the episode m2 opens now is learned from what is not forgotten: the rest of the forgotten
      // episode's messages (its step, its answer) are empty, and it ended as before
      const ep = m2.db.prepare(`SELECT id, state, task, final_excerpt, candidates_done FROM learning_episodes WHERE thread_id = ? AND start_ord = 2`).get(SESSION) as { id: string };
      expect(ep).toMatchObject({ state: "done", task: "Here is the new layout.", final_excerpt: "", candidates_done: 1 });
      expect(m2.db.prepare(`SELECT tool, args_shape, excerpt FROM learning_steps WHERE episode_id = ?`).all(ep.id)).toEqual([{ tool: "shell", args_shape: "null", excerpt: "" }]);
    } finally {
      up.close();
    }
  });
});

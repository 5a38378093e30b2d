// A thread the learning worker dropped after its retries (a version that could not read it) is tried
// again without waiting for a new message: at once by a version whose reader has another message
// format (an upgrade), and by the same version only after a back-off that grows with each drop, so a
// file broken for good is not read at every pass. Before, its cursor had moved past its messages
// and nothing but a new message ever queued it again. The daemon's files on disk, the learning
// tables in a SQLite file; the older version is the file reader failing on that thread.
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../core/config.js";
import { InfinityStoreError } from "../../stores/infinity/errors.js";
import type { ConversationReader } from "../../stores/traits.js";
import type { openTestMemory } from "../helpers/memory.js";
import { learnerOver, msg, SESSION, threadOnDisk } from "./world.js";

/** the reader as a version that fails on the thread (as one that read strictly failed on a kind it did not know) */
function olderReader(inner: ConversationReader): ConversationReader {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "messageFormat") return () => "an-older-format";
      if (prop === "loadMessagesTolerant") {
        return async (thread: string, ...rest: [number?, number?]) => {
          if (thread === SESSION) throw new InfinityStoreError("corrupt", "unknown message kind \"hologram\"");
          return target.loadMessagesTolerant!(thread, ...rest);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

const config = defaultConfig({ localUser: "alice", learning: { worker: { intervalMs: 1000, maxAttempts: 2 } } });

describe("a thread an older learning worker dropped after its retries", () => {
  it("is tried again after a growing back-off by the same version, and at once after an upgrade", async () => {
    const { m, reader, upgrade } = threadOnDisk([
      [msg.user("Run the tests. I prefer tabs."), "m0"],
      [msg.call("c1", "shell", { cmd: "npm test" }), "m1"],
      [msg.result("c1", "Tests  4 passed (4)"), "m2"],
      [msg.text("All 4 pass."), "m3"],
    ]);
    const attempts = (mm: ReturnType<typeof openTestMemory>) =>
      (mm.db.prepare(`SELECT kind FROM learning_events WHERE thread_id = ? AND kind IN ('thread_failed', 'thread_dropped') ORDER BY id`).all(SESSION) as { kind: string }[]).map((e) => e.kind);

    const older = learnerOver(m, olderReader(reader), { config });
    await older.worker.runOnce();
    m.clock.advance(1_000);
    await older.worker.runOnce();
    expect(attempts(m)).toEqual(["thread_failed", "thread_dropped"]);
    // the same version: not read again at every pass
    for (let i = 0; i < 5; i++) {
      m.clock.advance(1_000);
      await older.worker.runOnce();
    }
    expect(attempts(m)).toHaveLength(2);
    // past the back-off it is tried again (and dropped again, to wait longer)
    m.clock.advance(5_000);
    await older.worker.runOnce();
    m.clock.advance(1_000);
    await older.worker.runOnce();
    expect(attempts(m)).toEqual(["thread_failed", "thread_dropped", "thread_failed", "thread_dropped"]);
    m.clock.advance(10_000);
    await older.worker.runOnce();
    expect(attempts(m)).toHaveLength(4);
    expect(m.db.prepare(`SELECT count(*) AS n FROM learning_episodes WHERE thread_id = ?`).get(SESSION)).toEqual({ n: 0 });

    // the upgrade: a new process over the same database and the same files, no new message
    const up = upgrade();
    const m2 = up.m;
    const upgraded = up.learner({ config });
    await upgraded.worker.drain();
    expect(m2.db.prepare(`SELECT task, candidates_done FROM learning_episodes WHERE thread_id = ?`).all(SESSION)).toEqual([{ task: "Run the tests. I prefer tabs.", candidates_done: 1 }]);
    expect(m2.db.prepare(`SELECT content FROM memories WHERE status = 'pending'`).all()).toEqual([{ content: "User prefers tabs." }]);
    expect(await upgraded.store.droppedThreads()).toEqual([]);
    // learned: not queued again
    m2.clock.advance(86_400_000);
    expect(await upgraded.worker.drain()).toMatchObject({ discovered: 0, processed: 0 });
    up.close();
  });
});

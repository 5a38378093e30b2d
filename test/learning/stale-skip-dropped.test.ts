// A thread an older version read around unknown message kinds is re-learnt by a version that reads
// them. When that re-learn fails until the thread is dropped, the drop's back-off holds as for any
// other thread. Before, discovery queued it again at the next pass because its skip record still
// named the older format: the failing work ran again and again, each time with fresh attempts. The
// daemon's files on disk, a SQLite file; the older version is the file reader with a message hidden,
// the failure a memory store that refuses writes.
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../core/config.js";
import { SqliteLearningStore } from "../../stores/sqlite/learning-store.js";
import { SESSION, TABS_AFTER_LAYOUT, threadOnDisk } from "./world.js";

const config = defaultConfig({ localUser: "alice", learning: { worker: { intervalMs: 1000, maxAttempts: 2 } } });

describe("a re-learn after an upgrade that fails until its thread is dropped", () => {
  it("waits out the drop's back-off like any dropped thread", async () => {
    const { m, olderLearner, upgrade } = threadOnDisk(TABS_AFTER_LAYOUT);
    await olderLearner(["m2"], { config }).worker.drain();
    expect(await new SqliteLearningStore(m.db).skipped("conversation", SESSION)).toMatchObject({ from: 2 });

    const up = upgrade();
    const m2 = up.m;
    // the new version's writes of candidates fail (a store that refuses them)
    const refusing = new Proxy(m2.store, {
      get(target, prop, recv) {
        if (prop === "insert" || prop === "addSource") return async () => Promise.reject(new Error("memory store is read-only"));
        const v = Reflect.get(target, prop, recv) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const attempts = () => (m2.db.prepare(`SELECT kind FROM learning_events WHERE thread_id = ? AND kind IN ('thread_failed', 'thread_dropped') ORDER BY id`).all(SESSION) as { kind: string }[]).map((e) => e.kind);
    try {
      const l = up.learner({ config, memory: refusing });
      await l.worker.runOnce();
      m2.clock.advance(config.learning.worker.intervalMs + config.learning.worker.leaseMs);
      await l.worker.runOnce();
      expect(attempts()).toEqual(["thread_failed", "thread_dropped"]);
      // passes within the back-off do not read it again
      for (let i = 0; i < 5; i++) {
        m2.clock.advance(1_000);
        await l.worker.runOnce();
      }
      expect(attempts()).toEqual(["thread_failed", "thread_dropped"]);
      // past it, the re-learn runs again (here with a store that takes the writes) and finishes
      m2.clock.advance(10_000);
      const ok = up.learner({ config });
      await ok.worker.drain();
      expect(m2.db.prepare(`SELECT content FROM memories WHERE status = 'pending'`).pluck().all()).toEqual(["User prefers tabs."]);
      expect(await ok.store.skipped("conversation", SESSION)).toBeNull();
      expect(await ok.store.droppedThreads()).toEqual([]);
    } finally {
      up.close();
    }
  });
});

// The worker isolates failures: a thread that cannot be read is retried, then dropped, each time
// recorded as an event, while the other threads are processed.
import Database from "better-sqlite3";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LearningService } from "../../core/learning/service.js";
import { LearningWorker } from "../../core/learning/worker.js";
import { scopeResolver } from "../../core/learning/scope.js";
import type { ConversationReader } from "../../stores/traits.js";
import { tempDir } from "../helpers/tmp.js";
import { msg, openWorld } from "./world.js";

describe("learning worker", () => {
  it("a pass while another process holds the database past the busy timeout ends quietly, and the next one does the work", async () => {
    // nothing awaits a background pass: a claim that threw took the whole server process down
    const dir = tempDir("learn-");
    const w = openWorld(dir);
    await w.append("later", [msg.user("Say hi"), msg.text("Hi!")]);
    w.mem.db.pragma("busy_timeout = 50");
    const locker = new Database(join(dir, "memory.db"));
    try {
      locker.exec("BEGIN IMMEDIATE");
      await expect(w.worker.runOnce()).resolves.toMatchObject({ processed: 0 });
      locker.exec("COMMIT");
    } finally {
      if (locker.inTransaction) locker.exec("ROLLBACK");
      locker.close();
    }
    expect(await w.worker.runOnce()).toMatchObject({ discovered: 1, processed: 1 });
    expect((await w.store.episodesOfThread("conversation", "later")).length).toBe(1);
  });

  it("records a failing thread as an event, retries it with back-off, drops it after maxAttempts, and processes the rest", async () => {
    const w = openWorld(tempDir("learn-"));
    await w.append("good", [msg.user("Say hi"), msg.text("Hi!")]);
    await w.append("bad", [msg.user("Say hi"), msg.text("Hi!")]);
    const broken: ConversationReader = {
      listThreads: () => w.conv.listThreads(),
      getRootThreadId: (t) => w.conv.getRootThreadId(t),
      threadInfo: (t) => w.conv.threadInfo(t),
      messageCount: (t) => w.conv.messageCount(t),
      loadMessagesWithIds: async (t, from, to) => {
        if (t === "bad") throw new Error("disk says no");
        return w.conv.loadMessagesWithIds(t, from, to);
      },
    };
    const cfg = w.config.learning.worker;
    const service = new LearningService({
      store: w.store,
      memory: w.mem.store,
      config: w.config,
      clock: w.mem.clock,
      conversation: broken,
      scopeOf: scopeResolver({ localUser: "alice" }),
    });
    const worker = new LearningWorker(service, cfg, w.mem.clock);
    const first = await worker.runOnce();
    expect(first).toMatchObject({ discovered: 2, processed: 1, failed: 1 });
    expect((await w.store.episodesOfThread("conversation", "good")).length).toBe(1);
    const [ev] = await w.store.events({ kind: "thread_failed" });
    expect(ev).toMatchObject({ threadId: "bad", detail: { source: "conversation", attempts: 1, error: "Error" } });

    // not retried before its back-off ends
    expect((await worker.runOnce()).failed).toBe(0);
    for (let i = 1; i < cfg.maxAttempts; i++) {
      w.mem.clock.advance(cfg.intervalMs * 2 ** i + cfg.leaseMs);
      expect((await worker.runOnce()).failed).toBe(1);
    }
    expect(await w.store.queueDepth()).toBe(0);
    expect((await w.store.events({ kind: "thread_dropped" })).map((e) => e.threadId)).toEqual(["bad"]);
  });

  it("isolates a failing episode: the others are stored, the failure is an event, and a retry finishes it", async () => {
    const w = openWorld(tempDir("learn-"));
    await w.append("iso", [msg.user("I prefer tabs."), msg.text("Noted."), msg.user("Say hi"), msg.text("Hi!")]);
    let broken = true;
    const memory = new Proxy(w.mem.store, {
      get(target, prop, recv) {
        if (prop === "insert" && broken) return async () => Promise.reject(new Error("memory store is read-only"));
        const v = Reflect.get(target, prop, recv) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const service = new LearningService({ store: w.store, memory, config: w.config, clock: w.mem.clock, conversation: w.conv, scopeOf: scopeResolver({ localUser: "alice" }) });
    const worker = new LearningWorker(service, w.config.learning.worker, w.mem.clock);
    expect(await worker.runOnce()).toMatchObject({ processed: 0, failed: 1 });
    const eps = await w.store.episodesOfThread("conversation", "iso");
    expect(eps.map((e) => [e.state, e.candidatesDone])).toEqual([
      ["done", false],
      ["done", true],
    ]);
    expect((await w.store.events({ kind: "episode_failed" }))[0]).toMatchObject({ threadId: "iso", detail: { start_ord: 0, error: "Error" } });

    broken = false;
    w.mem.clock.advance(w.config.learning.worker.intervalMs + w.config.learning.worker.leaseMs);
    expect(await worker.runOnce()).toMatchObject({ processed: 1, failed: 0 });
    expect((await w.mem.service.pending({ owner: "alice" }, 10)).items.map((m) => m.content)).toEqual(["User prefers tabs."]);
    expect((await w.store.episodesOfThread("conversation", "iso")).map((e) => e.id)).toEqual(eps.map((e) => e.id));
  });

  it("start() processes new experience in the background and stop() waits for the pass", async () => {
    const w = openWorld(tempDir("learn-"), { config: { learning: { worker: { intervalMs: 10 } } } });
    await w.append("bg", [msg.user("Say hi"), msg.text("Hi!")]);
    w.worker.start();
    const deadline = Date.now() + 5000;
    while ((await w.store.episodesOfThread("conversation", "bg")).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await w.worker.stop();
    expect((await w.store.episodesOfThread("conversation", "bg")).map((e) => e.state)).toEqual(["done"]);
  });
});

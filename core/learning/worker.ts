// The background learning worker inside `serve`: each pass finds threads with new experience,
// claims a few from the on-disk queue and processes them one at a time, yielding to the event
// loop between threads so tool acks and model calls are never held up. A thread that fails is
// retried later and recorded as an event; a killed worker's claims expire and another pass (in
// this process after a restart, or in a sibling server on the same file) takes them over.
import type { MemoryConfig } from "../config.js";
import type { Clock } from "../clock.js";
import type { LearningService, ThreadResult } from "./service.js";
import { failureText } from "./failure.js";
import type { QueueItem } from "./types.js";

export interface WorkerLog {
  warn(obj: object, msg: string): void;
  debug?(obj: object, msg: string): void;
}

export interface WorkerHooks {
  /** called after each processed thread (tests use it to stop a worker mid-queue) */
  afterThread?(item: QueueItem, result: ThreadResult): void | Promise<void>;
}

export interface PassResult {
  discovered: number;
  processed: number;
  failed: number;
  steps: number;
}

const yieldToLoop = () => new Promise<void>((r) => setImmediate(r));

export class LearningWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<PassResult> | null = null;
  private stopped = false;
  /** threads whose unknown message kinds were logged: each pass over a growing thread reads them again */
  private readonly toldUnknown = new Set<string>();
  /** unreadable threads already logged: each pass tries them again */
  private readonly toldUnreadable = new Set<string>();

  constructor(
    private readonly service: LearningService,
    private readonly cfg: MemoryConfig["learning"]["worker"],
    private readonly clock: Clock,
    private readonly log: WorkerLog | null = null,
    private readonly hooks: WorkerHooks = {},
  ) {}

  /** One pass: discover, then process up to `batch` queued threads. Never throws. */
  runOnce(): Promise<PassResult> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<PassResult> {
    const store = this.service.store;
    const out: PassResult = { discovered: 0, processed: 0, failed: 0, steps: 0 };
    try {
      const found = await this.service.discover();
      out.discovered = found.enqueued;
      const fresh = found.unreadable.filter((t) => !this.toldUnreadable.has(t.threadId));
      for (const t of fresh) this.toldUnreadable.add(t.threadId);
      if (fresh.length > 0) this.log?.warn({ threads: fresh }, "learning: conversation threads that could not be read were left for a later pass; the others are learned from");
    } catch (e) {
      this.log?.warn({ err: e }, "learning: discovery failed");
      await store.event("discover_failed", null, null, { error: failureText(e) }, this.clock.now()).catch(() => undefined);
    }
    const claimedAt = this.clock.now();
    let items: QueueItem[];
    try {
      items = await store.claim(claimedAt, this.cfg.leaseMs, this.cfg.batch);
    } catch (e) {
      // The database refused (another process holds its lock past the busy timeout, as a reindex of
      // a large store does): the next pass claims them. Nothing awaits a background pass, so thrown
      // from here it ended the whole server process.
      this.log?.warn({ err: e }, "learning: claiming queued threads failed; the next pass tries again");
      return out;
    }
    for (const item of items) {
      if (this.stopped) break;
      try {
        const r = await this.service.processThread(item);
        await store.complete(item.source, item.threadId, claimedAt);
        out.processed++;
        out.steps += r.steps;
        const key = `${item.source}\u0000${item.threadId}`;
        if (r.unknownKinds.length > 0 && !this.toldUnknown.has(key)) {
          this.toldUnknown.add(key);
          this.log?.warn(
            { thread: item.threadId, kinds: r.unknownKinds },
            "learning: conversation messages of kinds this version does not know (written by a newer daemon) were left out; the rest of the thread is learned from",
          );
        }
        await this.hooks.afterThread?.(item, r);
      } catch (e) {
        out.failed++;
        // what the rows keep: no message, which can quote the thread (failure.ts)
        const msg = failureText(e);
        this.log?.warn({ err: e, thread: item.threadId }, "learning: processing a thread failed");
        try {
          const dropped = await store.fail(item.source, item.threadId, msg, this.cfg.maxAttempts, this.clock.now() + this.cfg.intervalMs * 2 ** item.attempts);
          if (dropped) await this.service.threadDropped(item, msg);
          await store.event(dropped ? "thread_dropped" : "thread_failed", item.threadId, null, { source: item.source, attempts: item.attempts + 1, error: msg }, this.clock.now());
        } catch (e2) {
          // refused as well: the claim expires and a later pass takes the thread again
          this.log?.warn({ err: e2, thread: item.threadId }, "learning: recording a failed thread failed");
        }
      }
      await yieldToLoop();
    }
    return out;
  }

  /** Passes until the queue is empty (or `maxPasses`); for tests, the bench and a final flush. */
  async drain(maxPasses = 1000): Promise<PassResult> {
    const total: PassResult = { discovered: 0, processed: 0, failed: 0, steps: 0 };
    for (let i = 0; i < maxPasses; i++) {
      const r = await this.runOnce();
      total.discovered += r.discovered;
      total.processed += r.processed;
      total.failed += r.failed;
      total.steps += r.steps;
      if (r.processed === 0 && r.failed === 0 && r.discovered === 0) break;
    }
    return total;
  }

  start(): void {
    this.stopped = false;
    const tick = () => {
      this.timer = setTimeout(() => {
        void this.runOnce().finally(() => {
          if (!this.stopped) tick();
        });
      }, this.cfg.intervalMs);
      this.timer.unref();
    };
    tick();
  }

  /** stop scheduling and wait for the pass in progress */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}

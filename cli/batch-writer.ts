// Bulk writes for import and benchmarks: the write policy of each batch (safety scan, hashing,
// checks — about half the cost of a write) runs on a worker thread while this thread commits the
// previous batch to SQLite, so the two overlap on a multi-core machine. Commits keep submission
// order. With `workers: 0` (or one CPU) everything runs on this thread.
import { existsSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { Clock } from "../core/clock.js";
import type { MemoryConfig } from "../core/config.js";
import { prepareBatch, type BatchRememberItem, type BatchRememberResult, type PreparedBatch } from "../core/memory/batch.js";
import type { MemoryService } from "../core/memory/service.js";

export class BatchWriter {
  private readonly worker: Worker | null;
  private readonly waiting = new Map<number, { resolve(p: PreparedBatch): void; reject(e: Error): void }>();
  private seq = 0;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly service: MemoryService,
    private readonly config: Pick<MemoryConfig, "write">,
    private readonly clock: Clock,
    opts: { workers?: number } = {},
  ) {
    const script = new URL("./batch-worker.js", import.meta.url);
    // Run from TypeScript sources (tests) there is no compiled worker: prepare inline.
    const use = (opts.workers ?? (cpus().length > 1 ? 1 : 0)) > 0 && existsSync(fileURLToPath(script));
    this.worker = use ? new Worker(script) : null;
    this.worker?.on("message", (m: { id: number; prepared?: PreparedBatch; error?: string }) => {
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (this.waiting.size === 0) this.worker?.unref();
      if (m.prepared) w?.resolve(m.prepared);
      else w?.reject(new Error(m.error ?? "batch worker failed"));
    });
    this.worker?.on("error", (e) => {
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
    });
    // An idle worker must not keep the process alive (it is ref'd while a batch is out).
    this.worker?.unref();
  }

  private prepare(items: BatchRememberItem[]): Promise<PreparedBatch> {
    const now = this.clock.now();
    if (!this.worker) return Promise.resolve(prepareBatch(items, this.config, now));
    const id = this.seq++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker!.ref();
      this.worker!.postMessage({ id, items, config: { write: this.config.write }, now });
    });
  }

  /**
   * Prepare and commit one batch. Several calls may be in flight (keep two to overlap policy and
   * commit); they commit in the order they were made.
   */
  write(items: BatchRememberItem[]): Promise<BatchRememberResult[]> {
    const prepared = this.prepare(items);
    const done = this.tail.then(() => prepared).then((p) => this.service.commitBatch(p));
    this.tail = done.catch(() => undefined);
    return done;
  }

  async close(): Promise<void> {
    await this.tail;
    await this.worker?.terminate();
  }
}

// WAL checkpoints off the store's thread. SQLite's automatic checkpoint runs inside the commit that
// takes the log past 1,000 pages: that write copies ~4 MB into the database file and syncs it, so
// every few dozen remembers one takes 20-80 ms more (scale bench, paced_writes at 100k: remember p99
// 16.8 ms with it, 9.4 ms without). Here, once the store has written, a worker thread with its own
// connection checkpoints (PASSIVE: never blocks a reader or a writer) when the writers pause, and
// the store's connection turns its automatic checkpoint off. Durability is unchanged: a commit is
// in the log when it returns, as before; a checkpoint only moves it into the main file.
//
// The worker stops with the store: its connection closes first, so the store's close is still the
// last one and removes the log. If the worker cannot start or dies, the connection's automatic
// checkpoint comes back.
import { Worker } from "node:worker_threads";
import type { Db } from "./database.js";
import { workerScript } from "./worker-script.js";

/** how often the worker looks for commits (PRAGMA data_version: no I/O); a tick without one is a pause */
export const CHECKPOINT_TICK_MS = 100;
/**
 * the longest a commit waits for its checkpoint while commits keep coming without a pause (a bulk
 * import): bounds the log at about this much writing
 */
export const CHECKPOINT_MAX_DELAY_MS = 2000;
/**
 * how long after the first write the worker starts: a one-shot command (remember from the CLI)
 * closes before, and never pays for a thread it would not use
 */
export const CHECKPOINT_START_DELAY_MS = 1000;
/** SQLite's default automatic checkpoint, in log pages (restored when the worker is gone) */
const SQLITE_AUTOCHECKPOINT = 1000;
/** how long close() waits for the worker's connection to close */
const STOP_WAIT_MS = 2000;

export interface CheckpointWorkerData {
  dbPath: string;
  tickMs: number;
  maxDelayMs: number;
  /** [0] becomes 1 once the worker's connection is closed */
  stopped: SharedArrayBuffer;
}

export type FromCheckpointWorker = { t: "ready" };

type State = "idle" | "scheduled" | "starting" | "running" | "off";

export class WalCheckpoints {
  private worker: Worker | null = null;
  private state: State = "idle";
  private startTimer: NodeJS.Timeout | null = null;
  private readonly stopped = new SharedArrayBuffer(4);

  constructor(private readonly db: Db) {}

  /** Whether the worker checkpoints for this connection now (its automatic checkpoint is off). */
  get running(): boolean {
    return this.state === "running";
  }

  /** A write committed: start the worker soon, if this connection has none yet. */
  wrote(): void {
    if (this.state !== "idle") return;
    // no log to checkpoint in memory; a read-only connection never writes
    if (this.db.memory || this.db.readonly) {
      this.state = "off";
      return;
    }
    this.state = "scheduled";
    // unref'd: a process with nothing else to do exits without waiting for it
    this.startTimer = setTimeout(() => {
      this.startTimer = null;
      this.start();
    }, CHECKPOINT_START_DELAY_MS).unref();
  }

  private start(): void {
    if (this.state !== "scheduled") return;
    const script = this.db.open ? workerScript("wal-checkpoint-worker.js") : null;
    if (!script) {
      this.state = "off";
      return;
    }
    let w: Worker;
    try {
      const data: CheckpointWorkerData = {
        dbPath: this.db.name,
        tickMs: CHECKPOINT_TICK_MS,
        maxDelayMs: CHECKPOINT_MAX_DELAY_MS,
        stopped: this.stopped,
      };
      w = new Worker(script, { workerData: data });
    } catch {
      this.state = "off";
      return;
    }
    this.worker = w;
    this.state = "starting";
    w.on("message", (m: FromCheckpointWorker) => {
      if (this.worker !== w) return;
      if (m.t === "ready" && this.state === "starting" && this.db.open) {
        this.db.pragma("wal_autocheckpoint = 0");
        this.state = "running";
      }
    });
    // an error ends the thread too: "exit" follows
    w.on("error", (e) => process.emitWarning(`WAL checkpoints: ${e.message}; the store checkpoints in its commits from now on`));
    w.on("exit", () => {
      if (this.worker === w) this.fallBack();
    });
    // after the listeners: a "message" listener refs the worker's port again. An idle store never
    // keeps the process alive for its checkpoints.
    w.unref();
  }

  private fallBack(): void {
    this.worker = null;
    this.state = "off";
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT}`);
  }

  /**
   * Stop the worker before the store's connection closes, and wait (briefly) for its connection to
   * close, so the store's own close is the last one and checkpoints and removes the log as before.
   */
  close(): void {
    if (this.startTimer) clearTimeout(this.startTimer);
    this.startTimer = null;
    if (this.state === "scheduled") this.state = "off";
    const w = this.worker;
    if (!w) return;
    this.worker = null;
    this.state = "off";
    w.postMessage("stop");
    Atomics.wait(new Int32Array(this.stopped), 0, 0, STOP_WAIT_MS);
    void w.terminate();
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT}`);
  }
}

const checkpoints = new WeakMap<Db, WalCheckpoints>();

/** The checkpoints of this connection (one per connection, shared by the stores that use it). */
export function walCheckpoints(db: Db): WalCheckpoints {
  let c = checkpoints.get(db);
  if (!c) checkpoints.set(db, (c = new WalCheckpoints(db)));
  return c;
}

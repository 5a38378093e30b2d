// What a forget leaves in the full-text indexes, merged away in the background. The word, trigram
// and conversation indexes are contentless FTS5 tables with contentless_delete: deleting a row
// writes a tombstone, and the row's postings (the terms of the forgotten text, and which row held
// them) stay in their segment until the segment is rewritten. A full 'optimize' rewrote every
// segment inside the forget: ~1 s at 100k memories, growing with the index, with the event loop
// blocked.
//
// Instead the forgetting transaction marks the table (table fts_purge, so a process that dies
// first leaves the work to the next one that opens the file), and the purge runs FTS5's
// incremental optimize ('merge' with a negative page count) a few dozen pages at a time, one short
// write transaction per step. A step that merges nothing means no segment holds a tombstone: the
// mark goes, unless a forget renewed it meanwhile (its generation moved), and the WAL is
// checkpointed so no old page image of the text stays. On a database file the steps run in a
// worker thread with its own connection (fts-purge-worker.ts), so searches go on beside them; in
// memory, or when the worker cannot start, they run on the store's thread between searches.
// Closing the store and taking a backup finish the purge first.
import type { Statement } from "better-sqlite3";
import { Worker } from "node:worker_threads";
import type { Db } from "./database.js";
import { workerScript } from "./worker-script.js";

/**
 * leaf pages merged per step: a few ms of work, though a step ends only at a term boundary, so one
 * that meets a common term's doclist takes tens of ms at 1M memories
 */
export const PURGE_STEP_PAGES = 64;

/** Contentless full-text tables whose forgotten rows are merged away. */
export type PurgeTable = "memory_fts" | "memory_tri" | "session_fts";
const TABLES: readonly PurgeTable[] = ["memory_fts", "memory_tri", "session_fts"];

interface Statements {
  mark: Statement;
  pending: Statement;
  done: Statement;
  changes: Statement;
  step: Map<PurgeTable, Statement>;
}

/** how long the closing checkpoint waits for another connection's checkpoint to end */
const CHECKPOINT_WAIT_MS = 500;
const CHECKPOINT_RETRY_MS = 5;
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** The purge worker's report: whether it merged everything, and checkpointed after. */
export interface FromPurgeWorker {
  done: boolean;
  synced: boolean;
}

/** how long searches in flight may hold the next step back (so a busy server still purges) */
export const PURGE_MAX_DEFER_MS = 100;

export class FtsPurge {
  private st: Statements | null = null;
  private running: Promise<void> | null = null;
  /** searches in flight on this connection's stores: the next in-thread step waits for them */
  private searching = 0;
  /** the worker thread merging now, if any */
  private worker: Worker | null = null;
  /** set once a worker failed to run: the purge stays on this thread from then on */
  private inThreadOnly = false;
  /**
   * merged pages may still be only in the log: a forget on this connection, a merge here, or a
   * worker started since this thread's last complete checkpoint (the worker's own may not have
   * run: stopped between its last step and its checkpoint, or refused), so finish() checkpoints too
   */
  private unsynced = false;
  /** a forget on this connection marked a table since its purge worker started */
  private marked = false;

  constructor(private readonly db: Db) {}

  private statements(): Statements {
    if (!this.st) {
      const p = (sql: string): Statement => this.db.prepare(sql);
      this.st = {
        mark: p(`INSERT INTO fts_purge (tbl, gen) VALUES (?, 1) ON CONFLICT (tbl) DO UPDATE SET gen = gen + 1`),
        pending: p(`SELECT tbl, gen FROM fts_purge ORDER BY tbl`),
        done: p(`DELETE FROM fts_purge WHERE tbl = ? AND gen = ?`),
        changes: p(`SELECT total_changes()`).pluck(),
        step: new Map(TABLES.map((t) => [t, p(`INSERT INTO ${t} (${t}, rank) VALUES ('merge', ${-PURGE_STEP_PAGES})`)])),
      };
    }
    return this.st;
  }

  /**
   * A search starts: no in-thread step starts until it ends (a step under way finishes first), for
   * at most PURGE_MAX_DEFER_MS at a time; otherwise a search would meet a step at each of its awaits.
   */
  hold(): void {
    this.searching++;
  }

  release(): void {
    this.searching--;
  }

  /** Inside the forgetting transaction: this table now holds tombstoned rows to merge away. */
  mark(table: PurgeTable): void {
    this.statements().mark.run(table);
    this.unsynced = true;
    this.marked = true;
  }

  /** Nothing merged here is left only in the log (as far as this connection knows). */
  get synced(): boolean {
    return !this.unsynced;
  }

  /** Whether any table still holds forgotten rows' postings (as far as this file says). */
  get pending(): boolean {
    return this.db.open && this.statements().pending.all().length > 0;
  }

  /**
   * Merge one step of one marked table. Returns false once nothing is marked. A step that finds
   * nothing to merge clears the mark it read, if no forget renewed it since.
   */
  private stepOnce(): boolean {
    const st = this.statements();
    const marked = st.pending.all() as { tbl: PurgeTable; gen: number }[];
    const m = marked[0];
    if (!m) return false;
    const step = st.step.get(m.tbl);
    // a table this build does not know (a newer build marked it): nothing here can merge it
    if (!step) {
      st.done.run(m.tbl, m.gen);
      return true;
    }
    const before = st.changes.get() as number;
    step.run();
    // FTS5 writes at least two rows when a merge did any work (the docs' own test for it)
    if ((st.changes.get() as number) - before < 2) st.done.run(m.tbl, m.gen);
    return true;
  }

  private checkpoint(): void {
    // Old page images of the merged segments live on in the WAL until a checkpoint rewrites them.
    // Another connection's checkpoint (the store's checkpoint worker, wal-checkpoints.ts) holds the
    // lock for a few ms at most: wait it out rather than leave the images until the next purge.
    // Without a busy timeout: a TRUNCATE checkpoint takes the writers' lock and then waits, under
    // the busy timeout, for readers of an older snapshot (an export, a backup, a search in another
    // process), so every writer of every process waited with it, up to 5 s, and an /invoke meanwhile
    // got a 503. With none it gives up at once and lets go of the lock; this loop tries again.
    if (!this.db.open) return;
    const timeout = this.db.pragma("busy_timeout", { simple: true }) as number;
    this.db.pragma("busy_timeout = 0");
    const start = performance.now();
    try {
      for (;;) {
        let busy = true;
        try {
          const [r] = this.db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
          busy = r?.busy === 1;
          if (!busy) this.unsynced = false;
        } catch {
          // the database closed under it, or an I/O error: the next purge or checkpoint does it
          return;
        }
        // still busy (a reader kept it past CHECKPOINT_WAIT_MS): the next purge or checkpoint does it
        if (!busy || performance.now() - start >= CHECKPOINT_WAIT_MS) return;
        Atomics.wait(PAUSE, 0, 0, CHECKPOINT_RETRY_MS);
      }
    } finally {
      if (this.db.open) this.db.pragma(`busy_timeout = ${timeout}`);
    }
  }

  /**
   * Merge in the background until nothing is marked; resolves then (a running purge is joined). A
   * failed step stops it: the mark stays for the next purge.
   */
  run(): Promise<void> {
    if (this.running) return this.running;
    const script = this.db.memory || this.db.readonly || this.inThreadOnly ? null : workerScript("fts-purge-worker.js");
    this.running = (script ? this.inWorker(script) : this.inThread()).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Worker runs until nothing is marked (a forget may mark again while one runs). */
  private async inWorker(script: URL): Promise<void> {
    for (;;) {
      const outcome = await new Promise<"done" | "stopped" | "failed">((resolve) => {
        let outcome: "done" | "stopped" | "failed" = "failed";
        let w: Worker;
        try {
          w = new Worker(script, { workerData: { dbPath: this.db.name } });
        } catch {
          resolve("failed");
          return;
        }
        this.worker = w;
        this.unsynced = true;
        this.marked = false;
        w.on("message", (m: FromPurgeWorker) => {
          outcome = m.done ? "done" : "stopped";
          if (m.synced && !this.marked) this.unsynced = false;
        });
        w.on("error", () => (outcome = "failed"));
        w.on("exit", () => {
          // finish() stopped it: not a failure
          if (this.worker !== w) outcome = "stopped";
          this.worker = null;
          resolve(outcome);
        });
      });
      if (!this.db.open) return;
      if (outcome === "failed") {
        this.inThreadOnly = true;
        return this.inThread();
      }
      if (outcome === "stopped" || !this.pending) return;
    }
  }

  /** Steps on this thread, one per turn of the event loop, between searches. */
  private inThread(): Promise<void> {
    return new Promise<void>((resolve) => {
      let stepped = performance.now();
      const next = (): void => {
        if (this.searching > 0 && this.db.open && performance.now() - stepped < PURGE_MAX_DEFER_MS) {
          setTimeout(next, 1);
          return;
        }
        stepped = performance.now();
        let more = false;
        try {
          more = this.db.open && this.stepOnce();
        } catch {
          // busy or closed: the mark stays, and the next forget, open or close takes it up
        }
        if (more) {
          setImmediate(next);
          return;
        }
        if (this.db.open) this.checkpoint();
        resolve();
      };
      setImmediate(next);
    });
  }

  /**
   * Finish now, without yielding (closing the store, taking a backup). False when a step failed
   * (another process held the database past the busy timeout): the mark stays for the next purge.
   */
  finish(): boolean {
    if (!this.db.open || this.db.readonly) return true;
    // a worker's step under way ends first (this connection waits for its lock)
    const w = this.worker;
    this.worker = null;
    void w?.terminate();
    try {
      while (this.stepOnce()) this.unsynced = true;
    } catch {
      return false;
    } finally {
      if (this.unsynced) this.checkpoint();
    }
    return true;
  }
}

const purges = new WeakMap<Db, FtsPurge>();

/** The purge of this connection (one per connection, shared by the stores that use it). */
export function ftsPurge(db: Db): FtsPurge {
  let p = purges.get(db);
  if (!p) purges.set(db, (p = new FtsPurge(db)));
  return p;
}

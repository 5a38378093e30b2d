// The checkpoint worker (wal-checkpoints.ts). On its own connection it notices other connections'
// commits (PRAGMA data_version, no I/O) and moves them from the log into the database file with a
// PASSIVE checkpoint, which waits for no reader or writer: once the writers pause for a tick, or
// after CHECKPOINT_MAX_DELAY_MS of commits without a pause. On "stop" it closes its connection,
// says so through the shared flag, and exits.
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "./database.js";
import type { CheckpointWorkerData, FromCheckpointWorker } from "./wal-checkpoints.js";

const { dbPath, tickMs, maxDelayMs, stopped } = workerData as CheckpointWorkerData;
const flag = new Int32Array(stopped);
const db = openDatabase(dbPath);
const dataVersion = db.prepare("PRAGMA data_version").pluck();
/** the version last checkpointed, and the one the previous tick saw */
let done = dataVersion.get();
let previous = done;
/** when the first commit not yet checkpointed was seen (0: none) */
let pendingSince = 0;

const timer = setInterval(() => {
  const v = dataVersion.get();
  if (v === done) return;
  const now = performance.now();
  if (pendingSince === 0) pendingSince = now;
  const paused = v === previous;
  previous = v;
  // a checkpoint beside a stream of commits slows them (copies and syncs compete): wait for a pause
  if (!paused && now - pendingSince < maxDelayMs) return;
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
    done = v;
    pendingSince = 0;
  } catch {
    // another connection's checkpoint holds the lock (a purge's, a backup's): the next tick retries
  }
}, tickMs);

parentPort?.on("message", (m: unknown) => {
  if (m !== "stop") return;
  clearInterval(timer);
  try {
    db.close();
  } finally {
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    parentPort?.close();
  }
});
parentPort?.postMessage({ t: "ready" } satisfies FromCheckpointWorker);

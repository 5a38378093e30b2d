// The purge's worker thread (fts-purge.ts): on its own connection to the file it merges what
// forgets left in the full-text tables, step after step, while the store's thread goes on
// answering. Searches read beside it (WAL); a write waits for one step at most. It reports whether
// it finished, and exits.
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "./database.js";
import { FtsPurge, type FromPurgeWorker } from "./fts-purge.js";

const db = openDatabase((workerData as { dbPath: string }).dbPath);
try {
  const purge = new FtsPurge(db);
  const done = purge.finish();
  parentPort?.postMessage({ done, synced: purge.synced } satisfies FromPurgeWorker);
} finally {
  db.close();
}

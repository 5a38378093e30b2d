// The counts read ahead (df-prefill.ts), in a worker thread on a read-only connection to the file:
// the vocabulary in short reads, pausing after each as long as it took, so the store's thread and
// the semantic worker keep most of a two-core machine. Posts the commonest terms' counts and exits.
import { setTimeout as sleep } from "node:timers/promises";
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "./database.js";
import { commonTerms } from "./df-prefill.js";

const db = openDatabase((workerData as { dbPath: string }).dbPath, { readonly: true });
try {
  const terms = await commonTerms(db, { pause: (ms) => sleep(ms) });
  parentPort?.postMessage({ terms: terms.map((t) => t.term), docs: terms.map((t) => t.doc) });
} finally {
  db.close();
}

// The semantic channel's worker thread (see semantic-channel.ts): it holds the association indexes
// and scores queries on its own read-only connection, beside the store's thread, which meanwhile
// runs the word channel. Scope change tokens tell it what any connection changed; the store's
// messages, in the order its writes were made, change a scope's index in place (or drop
// it, when it missed another writer's change).
import { parentPort, receiveMessageOnPort, workerData } from "node:worker_threads";
import { openDatabase } from "./database.js";
import { SemanticIndexes } from "./semantic-index.js";
import type { FromSemanticWorker, SemanticUpdate, SemanticWorkerData, ToSemanticWorker } from "./semantic-channel.js";

const port = parentPort;
if (!port) throw new Error("semantic-worker.js runs as a worker thread of the memory store");
const { dbPath, updates } = workerData as SemanticWorkerData;
const db = openDatabase(dbPath, { readonly: true });
const indexes = new SemanticIndexes(db);

const apply = (u: SemanticUpdate): void => indexes.updated(u.key, u.prev, u.next, u.delta);
updates.on("message", apply);

/**
 * Every update the store has sent so far, in order, before a search reads the scope tokens: the
 * store sends each one right after its commit, so a token the search then reads is one it was told
 * of (else another connection's write, which rebuilds the scope as it should).
 */
function takeUpdates(): void {
  for (let m = receiveMessageOnPort(updates); m !== undefined; m = receiveMessageOnPort(updates)) apply(m.message as SemanticUpdate);
}

port.on("message", (m: ToSemanticWorker) => {
  switch (m.t) {
    case "warm":
      // one scope per turn of the event loop: a search that arrives meanwhile is not held up by the rest
      warmUp(m.id, m.scopes, m.memories);
      return;
    case "score": {
      let reply: FromSemanticWorker;
      try {
        takeUpdates();
        reply = { id: m.id, hits: indexes.score(m.keys, m.text, m.limit), builds: indexes.builds };
      } catch (e) {
        reply = { id: m.id, error: (e as Error).message };
      }
      port.postMessage(reply);
    }
  }
});

/**
 * Build the indexes of the scopes written last, one per turn of the event loop (a search that
 * arrives meanwhile is not held up by the rest), then report them. A scope that fails is left to the
 * first search that needs it, which builds it again and reports the error.
 */
function warmUp(id: number, scopes: number, memories: number): void {
  let keys: string[] = [];
  try {
    keys = indexes.recentScopes(scopes, memories);
  } catch {
    // nothing warmed; searches build as they go
  }
  const built: string[] = [];
  const next = (): void => {
    const key = keys.shift();
    if (key === undefined) {
      port!.postMessage({ id, warmed: built } satisfies FromSemanticWorker);
      return;
    }
    try {
      takeUpdates();
      indexes.indexesFor([key]);
      built.push(key);
    } catch {
      // left to the search that needs it
    }
    setImmediate(next);
  };
  next();
}

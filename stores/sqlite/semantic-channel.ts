// Where the semantic channel runs. On a database file it runs in a worker thread with its own
// read-only connection, so a search starts it first and runs the word channel meanwhile (every
// channel on at 100k memories, the channel's ~1-2 ms are off the critical path on two cores). An
// in-memory database cannot be shared with another connection, and a worker that fails falls back:
// there the indexes live on the store's own thread, as before. Either way the indexes check their
// scopes' change tokens on every search (semantic-index.ts), the store reports its own writes here
// so each write changes a loaded index in place (or drops it, when it missed another writer's change),
// and the result is the same list.
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import { WARM_UP, type IndexDelta } from "../../core/retrieval/association-cache.js";
import type { Db } from "./database.js";
import { SemanticIndexes } from "./semantic-index.js";
import { workerScript } from "./worker-script.js";

export interface SemanticHit {
  rowid: number;
  score: number;
}

export interface SemanticChannel {
  /** A write committed `delta` to a scope's indexed memories; its change token went from `prev` to `next`. */
  updated(key: string, prev: number | null, next: number, delta: IndexDelta): void;
  /** The best `limit` memories of these scopes for the query text, best first. */
  score(keys: string[], text: string, limit: number): Promise<SemanticHit[]>;
  /**
   * Build the indexes of the scopes of whoever wrote last in the background (`WARM_UP`), so a
   * fresh server's first search does not pay for them. Only a worker does: on the store's own thread it
   * would block, and there the first search builds its scope as before. Resolves with the scopes
   * built once they are (none off a worker, or when a warm-up already ran).
   */
  warm(): Promise<string[]>;
  close(): void;
}

export { WARM_UP };

/** A write's change to a scope's index, sent on the worker's own updates port (see WorkerSemantic). */
export interface SemanticUpdate {
  key: string;
  prev: number | null;
  next: number;
  delta: IndexDelta;
}

export type ToSemanticWorker = { t: "score"; id: number; keys: string[]; text: string; limit: number } | { t: "warm"; id: number; scopes: number; memories: number };

/** `builds`: scope indexes the worker has read from the table so far */
export type FromSemanticWorker = { id: number; hits: SemanticHit[]; builds: number } | { id: number; error: string } | { id: number; warmed: string[] };

/** What the worker thread is started with. */
export interface SemanticWorkerData {
  dbPath: string;
  updates: MessagePort;
}

/** The semantic channel for this database: in a worker when the database is a file. */
export function semanticChannel(db: Db): SemanticChannel {
  const script = db.memory ? null : workerScript("semantic-worker.js");
  return script ? new WorkerSemantic(db, script) : new InThreadSemantic(db);
}

export class InThreadSemantic implements SemanticChannel {
  private readonly indexes: SemanticIndexes;

  constructor(db: Db) {
    this.indexes = new SemanticIndexes(db);
  }

  updated(key: string, prev: number | null, next: number, delta: IndexDelta): void {
    this.indexes.updated(key, prev, next, delta);
  }

  scoreNow(keys: string[], text: string, limit: number): SemanticHit[] {
    return this.indexes.score(keys, text, limit);
  }

  /** Scope indexes read from the table so far (tests). */
  get builds(): number {
    return this.indexes.builds;
  }

  score(keys: string[], text: string, limit: number): Promise<SemanticHit[]> {
    return Promise.resolve(this.scoreNow(keys, text, limit));
  }

  warm(): Promise<string[]> {
    return Promise.resolve([]);
  }

  close(): void {
    this.indexes.clear();
  }
}

interface Job {
  keys: string[];
  text: string;
  limit: number;
  resolve: (hits: SemanticHit[]) => void;
}

export class WorkerSemantic implements SemanticChannel {
  /** started by the first search; until then it holds no index, so writes need not reach it */
  private worker: Worker | null = null;
  /**
   * The worker's updates port. Writes go there, not with the searches: the worker takes every
   * update sent so far before a search reads the scope tokens. On the shared port an update still
   * queued behind the search looked like another connection's write, so the search rebuilt the
   * scope, and the late update, its token now behind, dropped the rebuilt index. Under steady
   * writes every search rebuilt its scope (a 200-thread soak: the worker busy all the time, each
   * search waiting seconds for it).
   */
  private updates: MessagePort | null = null;
  /** scope indexes the worker had read when it last answered */
  private built = 0;
  /** set once the worker failed: the channel runs on this thread from then on */
  private fallback: InThreadSemantic | null = null;
  private closed = false;
  /** the warm-up, once asked for (its promise settles when the worker has built the scopes) */
  private warming: { id: number; done: (keys: string[]) => void } | null = null;
  private readonly jobs = new Map<number, Job>();
  private nextJob = 1;

  constructor(
    private readonly db: Db,
    private readonly script: URL,
  ) {}

  /** Whether the worker thread is up (tests). */
  get running(): boolean {
    return this.worker !== null;
  }

  /** Scope indexes the worker had read from the table when it last answered a search (tests, diagnostics). */
  get builds(): number {
    return this.fallback ? this.fallback.builds : this.built;
  }

  updated(key: string, prev: number | null, next: number, delta: IndexDelta): void {
    if (this.fallback) this.fallback.updated(key, prev, next, delta);
    else this.updates?.postMessage({ key, prev, next, delta } satisfies SemanticUpdate);
  }

  score(keys: string[], text: string, limit: number): Promise<SemanticHit[]> {
    if (this.closed) return Promise.resolve([]);
    if (this.fallback) return this.fallback.score(keys, text, limit);
    const w = this.started();
    if (!w) return this.fallback!.score(keys, text, limit);
    const id = this.nextJob++;
    return new Promise((resolve) => {
      // a job in flight keeps the process alive; an idle worker never does
      if (this.jobs.size === 0) w.ref();
      this.jobs.set(id, { keys, text, limit, resolve });
      w.postMessage({ t: "score", id, keys, text, limit } satisfies ToSemanticWorker);
    });
  }

  warm(): Promise<string[]> {
    if (this.closed || this.fallback || this.warming) return Promise.resolve([]);
    const w = this.started();
    if (!w) return Promise.resolve([]);
    const id = this.nextJob++;
    // not a job: an idle worker stays unref'd, so a warm-up never keeps the process alive
    this.warming = { id, done: () => {} };
    const p = new Promise<string[]>((resolve) => (this.warming!.done = resolve));
    w.postMessage({ t: "warm", id, scopes: WARM_UP.scopes, memories: WARM_UP.memories } satisfies ToSemanticWorker);
    return p;
  }

  /** The worker, started on first use; null when it cannot start (the channel fell back). */
  private started(): Worker | null {
    if (this.worker) return this.worker;
    try {
      return (this.worker = this.start());
    } catch (e) {
      this.fail(e as Error);
      return null;
    }
  }

  private start(): Worker {
    const { port1, port2 } = new MessageChannel();
    const w = new Worker(this.script, { workerData: { dbPath: this.db.name, updates: port2 } satisfies SemanticWorkerData, transferList: [port2] });
    this.updates = port1;
    w.on("message", (m: FromSemanticWorker) => this.settle(m));
    w.on("error", (e) => this.fail(e));
    w.on("exit", (code) => {
      if (!this.closed && this.worker === w) this.fail(new Error(`the semantic worker exited (code ${code})`));
    });
    // after the listeners: a "message" listener refs the worker's port again
    w.unref();
    return w;
  }

  private settle(m: FromSemanticWorker): void {
    if ("warmed" in m) return this.warming?.id === m.id ? this.warming.done(m.warmed) : undefined;
    // a job the worker could not score: fail() answers it (and the rest) from this thread
    if ("error" in m) return this.fail(new Error(m.error));
    const job = this.jobs.get(m.id);
    if (!job) return;
    this.jobs.delete(m.id);
    if (this.jobs.size === 0) this.worker?.unref();
    this.built = m.builds;
    job.resolve(m.hits);
  }

  /** The worker is gone or never started: answer what it owed from this thread, and keep doing so. */
  private fail(e: Error): void {
    if (this.closed || this.fallback) return;
    process.emitWarning(`semantic channel: ${e.message}; it runs on the store's thread from now on`);
    const w = this.worker;
    this.worker = null;
    this.updates?.close();
    this.updates = null;
    const fallback = (this.fallback = new InThreadSemantic(this.db));
    this.warming?.done([]);
    void w?.terminate();
    for (const [id, job] of this.jobs) {
      this.jobs.delete(id);
      job.resolve(fallback.scoreNow(job.keys, job.text, job.limit));
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const job of this.jobs.values()) job.resolve([]);
    this.jobs.clear();
    this.warming?.done([]);
    void this.worker?.terminate();
    this.worker = null;
    this.updates?.close();
    this.updates = null;
    this.fallback?.close();
  }
}

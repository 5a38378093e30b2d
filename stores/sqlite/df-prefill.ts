// Word counts read ahead. The planner (fts-planner.ts) weighs each query word by its document count,
// and reading a common word's count walks its whole doclist: ~1.5 ms at 100k memories, 8-33 ms at
// 1M for the commonest. The planner caches a count once read, so a server paid that on the first
// search of each common word after it started, and again once a count aged out while memories
// were written. Here a worker thread reads the commonest words' counts from the vocabulary (one
// pass over the index: ~0.3 s at 100k memories, ~2.5 s at 1M, paced to half a core) and hands them
// to the planner, once when the store warms up and again every PREFILL_EVERY_MS while the memories
// change. Counts only: no text leaves the index, and a forgotten memory's words are gone from the
// vocabulary the next pass reads.
import { Worker } from "node:worker_threads";
import type { Db } from "./database.js";
import { type FtsPlanner, type DfMark, POSTINGS_BUDGET } from "./fts-planner.js";
import { workerScript } from "./worker-script.js";

/** a word in fewer memories costs ~0.1 ms to count on demand: not worth a slot */
export const PREFILL_MIN_DOCS = 500;
/** at most this many counts, the commonest first (a quarter of the planner's cache) */
export const PREFILL_MAX_TERMS = 5_000;
/** terms per read of the vocabulary: each read is its own short transaction */
const CHUNK_TERMS = 1_000;
/** how often a server's counts are read again while its memories change (the planner trusts a count up to 10 min) */
export const PREFILL_EVERY_MS = 5 * 60_000;

/**
 * The word index's commonest terms and their document counts, read in chunks of the vocabulary
 * (`pause` runs between chunks with the chunk's duration), commonest first.
 */
export async function commonTerms(
  db: Db,
  opts: { minDocs?: number; maxTerms?: number; pause?: (ms: number) => Promise<unknown> } = {},
): Promise<{ term: string; doc: number }[]> {
  const minDocs = opts.minDocs ?? PREFILL_MIN_DOCS;
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.prefill_vocab USING fts5vocab(main, memory_fts, 'row')`);
  const read = db.prepare(`SELECT term, doc FROM temp.prefill_vocab WHERE term > ? ORDER BY term LIMIT ${CHUNK_TERMS}`);
  const out: { term: string; doc: number }[] = [];
  let after = "";
  for (;;) {
    const t0 = performance.now();
    const rows = read.all(after) as { term: string; doc: number }[];
    for (const r of rows) if (r.doc >= minDocs) out.push(r);
    if (rows.length < CHUNK_TERMS) break;
    after = rows[rows.length - 1]!.term;
    await opts.pause?.(performance.now() - t0);
  }
  return out.sort((a, b) => b.doc - a.doc || (a.term < b.term ? -1 : 1)).slice(0, opts.maxTerms ?? PREFILL_MAX_TERMS);
}

/** Reads the counts ahead for one store's planner, in a worker on the same file. */
export class DfPrefill {
  private running: Promise<number> | null = null;
  private worker: Worker | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** where the planner stood when the last counts it took were read */
  private last: DfMark | null = null;

  constructor(
    private readonly db: Db,
    private readonly planner: FtsPlanner,
  ) {}

  /**
   * Read the commonest words' counts in a worker and give them to the planner; resolves with how
   * many it took. Nothing to do (0) for a store the planner reads no counts for (in memory, or
   * within its postings budget) or when no worker can start; a read under way is joined.
   */
  run(): Promise<number> {
    if (this.running) return this.running;
    const script = this.db.memory || this.db.readonly || !this.db.open ? null : workerScript("df-prefill-worker.js");
    if (!script || this.planner.corpus().n <= POSTINGS_BUDGET) return Promise.resolve(0);
    const mark = this.planner.prefillMark();
    this.running = new Promise<number>((resolve) => {
      let w: Worker;
      try {
        w = new Worker(script, { workerData: { dbPath: this.db.name } });
      } catch {
        resolve(0);
        return;
      }
      // a read-ahead never holds a process open
      w.unref();
      this.worker = w;
      let taken = 0;
      w.on("message", (m: { terms: string[]; docs: number[] }) => {
        if (!this.db.open || this.worker !== w) return;
        taken = this.planner.prefill(
          m.terms.map((t, i) => [t, m.docs[i]!] as const),
          mark,
        );
        this.last = mark;
      });
      // a failed read leaves the counts to be read on demand, as without it
      w.on("error", () => {});
      w.on("exit", () => {
        if (this.worker === w) this.worker = null;
        resolve(taken);
      });
    }).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** From now on read them again every PREFILL_EVERY_MS if the memories changed meanwhile (a server's store). */
  keepFresh(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (!this.db.open || (this.last && !this.planner.changedSince(this.last))) return;
      void this.run();
    }, PREFILL_EVERY_MS);
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const w = this.worker;
    this.worker = null;
    void w?.terminate();
  }
}

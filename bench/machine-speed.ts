// A fixed workload that says how fast this machine is right now, so scale figures from different
// days (or a shared machine's busy hours) can be compared: the same rows and queries every run,
// on an in-memory SQLite database (no disk), in the shapes search and ingest use (an FTS5 table
// with bm25 ranking, a table with an index, JSON, hashing). Lower is faster; the figures are only
// meaningful against the same probe on another run.
import { createHash } from "node:crypto";
import Database from "better-sqlite3";

const ROWS = 20_000;
const QUERIES = 400;

/** A deterministic word stream (xorshift), Zipf-ish: low word numbers are common. */
function words(seed: number): () => string {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    const r = x / 2 ** 32;
    return `w${Math.floor(2000 * r * r * r)}`;
  };
}

export interface SpeedProbe {
  /** inserting ROWS rows into an indexed table and an FTS5 table, in one transaction */
  insert_ms: number;
  /** QUERIES two-word bm25 queries, 10 results each */
  search_ms: number;
  /** hashing and JSON of ROWS records (the write path's JavaScript work) */
  js_ms: number;
  total_ms: number;
}

export function probeMachineSpeed(): SpeedProbe {
  const db = new Database(":memory:");
  try {
    db.exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT, body TEXT); CREATE INDEX t_k ON t (k);
      CREATE VIRTUAL TABLE f USING fts5 (body, tokenize = 'porter unicode61');`);
    const next = words(42);
    const texts = Array.from({ length: ROWS }, () => Array.from({ length: 12 }, next).join(" "));
    const t0 = performance.now();
    const ins = db.prepare(`INSERT INTO t (k, body) VALUES (?, ?)`);
    const insF = db.prepare(`INSERT INTO f (rowid, body) VALUES (?, ?)`);
    db.transaction(() => {
      texts.forEach((body, i) => {
        const id = Number(ins.run(`k${i % 97}`, body).lastInsertRowid);
        insF.run(id, body);
      });
    })();
    const t1 = performance.now();
    const q = db.prepare(`SELECT rowid, bm25(f) AS r FROM f WHERE f MATCH ? ORDER BY r LIMIT 10`);
    for (let i = 0; i < QUERIES; i++) q.all(`${next()} OR ${next()}`);
    const t2 = performance.now();
    let acc = 0;
    for (const body of texts) acc += createHash("sha256").update(JSON.stringify({ body, at: acc })).digest()[0]!;
    const t3 = performance.now();
    const r = (ms: number) => Math.round(ms);
    return { insert_ms: r(t1 - t0), search_ms: r(t2 - t1), js_ms: r(t3 - t2), total_ms: r(t3 - t0) };
  } finally {
    db.close();
  }
}

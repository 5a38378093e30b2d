// Neighbour spreading for the SQLite word channel: finds the memories next to each head hit in the
// same conversation (same scope, current versions); core/retrieval/spread.ts does the scoring.
import type { Statement } from "better-sqlite3";
import type { Db } from "./database.js";
import { spreadHead, spreadScores, type Sides, type SpreadHit } from "../../core/retrieval/spread.js";

export { SPREAD_HEAD, SPREAD_SHARES } from "../../core/retrieval/spread.js";

const CURRENT = `('active','pending')`;

interface SidesRow {
  hit: number;
  b1: number | null;
  b2: number | null;
  a1: number | null;
  a2: number | null;
}

export class NeighbourSpread {
  /** one statement per head size: all head hits' conversations and neighbours in one read */
  private readonly cache = new Map<number, Statement>();

  constructor(private readonly db: Db) {}

  /**
   * The neighbours of each head hit in each conversation it came from: two memories on each
   * side, walked over the (thread_id, memory_rowid) index as the context column is
   * (memory-fts.ts). One statement for the whole head: twenty small ones cost 0.4 ms a search at
   * 100k memories, most of it per-statement overhead.
   */
  private statement(n: number): Statement {
    let st = this.cache.get(n);
    if (!st) {
      const near = (cmp: string, dir: string, offset: number) => `(SELECT DISTINCT s.memory_rowid FROM memory_sources s
        JOIN memories m ON m.rowid = s.memory_rowid
        WHERE s.thread_id = t.thread_id AND s.memory_rowid ${cmp} t.hit AND m.vis_key = t.vis_key AND m.status IN ${CURRENT}
        ORDER BY s.memory_rowid ${dir} LIMIT 1 OFFSET ${offset})`;
      st = this.db.prepare(`SELECT t.hit, ${near("<", "DESC", 0)} AS b1, ${near("<", "DESC", 1)} AS b2,
        ${near(">", "ASC", 0)} AS a1, ${near(">", "ASC", 1)} AS a2
        FROM (SELECT DISTINCT s.memory_rowid AS hit, s.thread_id, m.vis_key FROM memory_sources s
          JOIN memories m ON m.rowid = s.memory_rowid
          WHERE s.memory_rowid IN (${Array.from({ length: n }, () => "?").join(",")}) AND s.thread_id IS NOT NULL) t`);
      this.cache.set(n, st);
    }
    return st;
  }

  /** Scores after spreading (core/retrieval/spread.ts) with this database's neighbours. */
  spread(hits: SpreadHit[]): { rowid: number; score: number }[] {
    const head = spreadHead(hits);
    const sides = new Map<number, Sides[]>();
    if (head.length > 0) {
      for (const r of this.statement(head.length).all(...head.map((h) => h.rowid)) as SidesRow[]) {
        const s: Sides = { before: [r.b1, r.b2].filter((x) => x !== null), after: [r.a1, r.a2].filter((x) => x !== null) };
        (sides.get(r.hit) ?? sides.set(r.hit, []).get(r.hit)!).push(s);
      }
    }
    return spreadScores(hits, (rowid) => sides.get(rowid) ?? []);
  }
}

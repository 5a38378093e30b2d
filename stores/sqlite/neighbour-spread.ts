// Neighbour spreading for the SQLite word channel: finds the memories next to each head hit in the
// same conversation (same scope, current versions); core/retrieval/spread.ts does the scoring.
import type { Statement } from "better-sqlite3";
import type { Db } from "./database.js";
import { spreadHead, spreadScores, type Sides, type SpreadHit } from "../../core/retrieval/spread.js";

export { SPREAD_HEAD, SPREAD_SHARES } from "../../core/retrieval/spread.js";

const CURRENT = `('active','pending')`;

export class NeighbourSpread {
  private readonly cache = new Map<number, Statement>();
  private readonly sides: Statement;

  constructor(private readonly db: Db) {
    // Same walk as the context column (memory-fts.ts): the (thread_id, memory_rowid) index
    // outwards, two memories on each side, one statement per hit and conversation.
    const side = (cmp: string, dir: string, tag: number) => `SELECT ${tag} AS side, r FROM (SELECT DISTINCT s.memory_rowid AS r
      FROM memory_sources s JOIN memories m ON m.rowid = s.memory_rowid
      WHERE s.thread_id = @thread AND s.memory_rowid ${cmp} @rowid AND m.vis_key = @key AND m.status IN ${CURRENT}
      ORDER BY s.memory_rowid ${dir} LIMIT 2)`;
    this.sides = db.prepare(`${side("<", "DESC", -1)} UNION ALL ${side(">", "ASC", 1)}`);
  }

  /** The conversations (and scope key) of each hit, in one query. */
  private threadsOf(rowids: number[]): Map<number, { thread_id: string; vis_key: string }[]> {
    let st = this.cache.get(rowids.length);
    if (!st) {
      st = this.db.prepare(`SELECT DISTINCT s.memory_rowid AS rowid, s.thread_id, m.vis_key FROM memory_sources s
        JOIN memories m ON m.rowid = s.memory_rowid
        WHERE s.memory_rowid IN (${rowids.map(() => "?").join(",")}) AND s.thread_id IS NOT NULL`);
      this.cache.set(rowids.length, st);
    }
    const out = new Map<number, { thread_id: string; vis_key: string }[]>();
    for (const r of st.all(...rowids) as { rowid: number; thread_id: string; vis_key: string }[]) {
      (out.get(r.rowid) ?? out.set(r.rowid, []).get(r.rowid)!).push(r);
    }
    return out;
  }

  /** Scores after spreading (core/retrieval/spread.ts) with this database's neighbours. */
  spread(hits: SpreadHit[]): { rowid: number; score: number }[] {
    const head = spreadHead(hits);
    const threads = head.length > 0 ? this.threadsOf(head.map((h) => h.rowid)) : new Map<number, { thread_id: string; vis_key: string }[]>();
    return spreadScores(hits, (rowid) =>
      (threads.get(rowid) ?? []).map((t): Sides => {
        const sides: Sides = { before: [], after: [] };
        for (const r of this.sides.all({ thread: t.thread_id, rowid, key: t.vis_key }) as { side: number; r: number }[]) {
          (r.side < 0 ? sides.before : sides.after).push(r.r);
        }
        return sides;
      }),
    );
  }
}

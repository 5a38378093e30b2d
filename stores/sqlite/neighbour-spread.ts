// Neighbour spreading for the word channel: a turn that answers a question often shares few words
// with it, while the turn before it (the question asked in the conversation) or after it shares
// many. Each head hit passes a share of its score to the memories next to it in the same
// conversation (same scope, current versions), so the answer rises next to the turn that matched.
// The shares are fixed constants chosen on the LoCoMo tuning split (bench/locomo.ts --split tune).
import type { Statement } from "better-sqlite3";
import type { Db } from "./database.js";

// (Fusing the neighbours as a separate RRF list instead measured worse on the tuning split.)
/**
 * share of a hit's score that the memory 1 after it (prev1), 1 before it (next1), 2 after, 2 before
 * receives; `reply` replaces prev1 when the hit asks something: the turn after a matching question
 * is most often its answer (tune split R@5 73.7 → 76.2). `asker`: what a hit that asks keeps of its
 * own score, since a question is seldom itself the answer (R@5 76.2 → 77.1).
 */
export const SPREAD_SHARES = { prev1: 0.1, next1: 0.05, prev2: 0.05, next2: 0.05, reply: 0.4, asker: 0.8 } as const;
/** how many head hits spread their score */
export const SPREAD_HEAD = 20;

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

  /**
   * Scores after spreading: every hit keeps its own score and adds the shares of its neighbours'
   * scores; neighbours that were not hits enter with their shares alone. `asks`: the hit holds a
   * question mark. Sorted best first, ties by
   * rowid, so the order is deterministic.
   */
  spread(hits: { rowid: number; score: number; asks?: boolean }[]): { rowid: number; score: number }[] {
    const out = new Map<number, number>();
    for (const h of hits) out.set(h.rowid, (out.get(h.rowid) ?? 0) + h.score * (h.asks ? SPREAD_SHARES.asker : 1));
    const s = SPREAD_SHARES;
    const head = hits.slice(0, SPREAD_HEAD).filter((h) => h.score > 0);
    const threads = head.length > 0 ? this.threadsOf(head.map((h) => h.rowid)) : new Map();
    for (const h of head) {
      for (const t of threads.get(h.rowid) ?? []) {
        const before: number[] = [];
        const after: number[] = [];
        for (const r of this.sides.all({ thread: t.thread_id, rowid: h.rowid, key: t.vis_key }) as { side: number; r: number }[]) {
          (r.side < 0 ? before : after).push(r.r);
        }
        const give = (r: number | undefined, share: number) => {
          if (r !== undefined) out.set(r, (out.get(r) ?? 0) + share * h.score);
        };
        give(before[0], s.next1); // this hit is the turn after before[0]
        give(after[0], h.asks ? s.reply : s.prev1); // this hit is the turn before after[0]
        give(before[1], s.next2);
        give(after[1], s.prev2);
      }
    }
    return [...out].map(([rowid, score]) => ({ rowid, score })).sort((a, b) => b.score - a.score || a.rowid - b.rowid);
  }
}

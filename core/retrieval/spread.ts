// Neighbour spreading, the arithmetic: a turn that answers a question often shares few words with
// it, while the turn before it (the question asked in the conversation) shares many. Each head hit
// passes a share of its score to the memories next to it in the same conversation, so the answer
// rises next to the turn that matched. The store adapters find the neighbours; this module only
// scores. Shares are fixed constants chosen on the LoCoMo tuning split (bench/locomo.ts --split tune).

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

export interface SpreadHit {
  rowid: number;
  /** higher is better, positive */
  score: number;
  /** the hit holds a question */
  asks?: boolean;
}

/** A hit's neighbours in one conversation, nearest first on each side. */
export interface Sides {
  before: number[];
  after: number[];
}

/** Whether a memory's text asks something (what `SpreadHit.asks` means). */
export function asks(content: string): boolean {
  return content.includes("?");
}

/**
 * Scores after spreading: every hit keeps its own score (a question `asker` of it) and adds the
 * shares of its neighbours' scores; neighbours that were not hits enter with their shares alone.
 * `sidesOf` gives the neighbours of each of the head hits (one entry per conversation). Sorted
 * best first, ties by rowid, so the order is deterministic.
 */
export function spreadScores(hits: SpreadHit[], sidesOf: (rowid: number) => Sides[]): { rowid: number; score: number }[] {
  const s = SPREAD_SHARES;
  const out = new Map<number, number>();
  for (const h of hits) out.set(h.rowid, (out.get(h.rowid) ?? 0) + h.score * (h.asks ? s.asker : 1));
  for (const h of spreadHead(hits)) {
    const give = (r: number | undefined, share: number) => {
      if (r !== undefined) out.set(r, (out.get(r) ?? 0) + share * h.score);
    };
    for (const { before, after } of sidesOf(h.rowid)) {
      give(before[0], s.next1); // this hit is the turn after before[0]
      give(after[0], h.asks ? s.reply : s.prev1); // this hit is the turn before after[0]
      give(before[1], s.next2);
      give(after[1], s.prev2);
    }
  }
  return [...out].map(([rowid, score]) => ({ rowid, score })).sort((a, b) => b.score - a.score || a.rowid - b.rowid);
}

/** The hits whose neighbours receive a share (the adapters look up only these). */
export function spreadHead<T extends SpreadHit>(hits: T[]): T[] {
  return hits.slice(0, SPREAD_HEAD).filter((h) => h.score > 0);
}

// Reciprocal-rank fusion: each channel's ranked list contributes weight / (k + rank) per item.
export const RRF_K = 60;

export interface Ranked<T> {
  key: number;
  item: T;
}

export interface Fused<T> {
  key: number;
  item: T;
  score: number;
  /** the channels that returned this item */
  from: Set<string>;
}

export function rrf<T>(lists: { name: string; weight: number; hits: Ranked<T>[] }[], k = RRF_K): Fused<T>[] {
  const out = new Map<number, Fused<T>>();
  for (const l of lists) {
    l.hits.forEach((h, i) => {
      const cur = out.get(h.key) ?? out.set(h.key, { key: h.key, item: h.item, score: 0, from: new Set() }).get(h.key)!;
      cur.score += l.weight / (k + i + 1);
      cur.from.add(l.name);
    });
  }
  return [...out.values()];
}

/**
 * Two ranked lists over the same score scale added up per item: `extra` counts `weight` of its
 * rank (an item in only one list keeps that part). Ranks are bm25-like, better is lower (SQLite)
 * or higher (PostgreSQL); best first, ties by rowid.
 */
export function addRanks<T extends { row: { rowid: number }; rank: number }>(base: T[], extra: T[], weight: number, better: "lower" | "higher"): T[] {
  const out = new Map<number, T>();
  for (const h of base) out.set(h.row.rowid, { ...h });
  for (const h of extra) {
    const cur = out.get(h.row.rowid);
    if (cur) cur.rank += weight * h.rank;
    else out.set(h.row.rowid, { ...h, rank: weight * h.rank });
  }
  const dir = better === "lower" ? 1 : -1;
  return [...out.values()].sort((a, b) => dir * (a.rank - b.rank) || a.row.rowid - b.row.rowid);
}

/**
 * `base` joined by the items of `extra` it lacks, at their own rank (the two lists share one score
 * scale, so an item in both keeps its `base` rank); best first, ties by rowid.
 */
export function addMissing<T extends { row: { rowid: number }; rank: number }>(base: T[], extra: T[], better: "lower" | "higher"): T[] {
  const have = new Set(base.map((h) => h.row.rowid));
  return addRanks(base, extra.filter((h) => !have.has(h.row.rowid)), 1, better);
}

/**
 * The word pool with the semantic channel's memories added (`scored`, best first, with the rows
 * that passed the search's filters in `rows`): its best one at `weight` of the pool's best word
 * score, the others in proportion to their association scores (the scales differ, so the channel's
 * are mapped onto the pool's). At most `depth` of them; ranks better `lower` (SQLite bm25, negative)
 * or `higher` (PostgreSQL, positive).
 */
export function addAssociationHits<R extends { rowid: number }>(
  pool: { row: R; rank: number }[],
  scored: { rowid: number; score: number }[],
  rows: Map<number, R>,
  depth: number,
  weight: number,
  better: "lower" | "higher",
): { row: R; rank: number }[] {
  const top = scored[0]?.score ?? 0;
  if (top <= 0) return pool;
  // an empty pool takes a unit score as its best
  const best = better === "lower" ? pool.reduce((m, h) => Math.min(m, h.rank), 0) || -1 : pool.reduce((m, h) => Math.max(m, h.rank), 0) || 1;
  const found: { row: R; rank: number }[] = [];
  for (const h of scored) {
    const row = rows.get(h.rowid);
    if (row) found.push({ row, rank: (h.score / top) * best });
    if (found.length >= depth) break;
  }
  return addRanks(pool, found, weight, better);
}

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

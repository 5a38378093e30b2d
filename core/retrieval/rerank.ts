// Head re-ranking over fused results: a proximity/phrase boost (a memory that holds more of the
// query's words in its own text, some of them side by side, moves up) and maximal marginal
// relevance (near-duplicates do not crowd the top k). Both look only at the head of the list.
import { contentWords } from "./analyze.js";

interface Scored {
  score: number;
  item: { content: string };
}

/** how many of the head are re-ranked */
const HEAD = 50;
const COVERAGE_BOOST = 0.5;
const PHRASE_BOOST = 0.25;

// Proximity and MMR read the same head: each memory's words are split once.
const wordCache = new WeakMap<object, string[]>();
function wordsOf(item: { content: string }): string[] {
  let ws = wordCache.get(item);
  if (!ws) wordCache.set(item, (ws = contentWords(item.content)));
  return ws;
}

/** Same word up to its first five letters: a poor man's stem that joins "camping"/"camp". */
function key(w: string): string {
  return w.slice(0, 5);
}

export function proximityRerank<T extends Scored>(list: T[], terms: string[]): T[] {
  if (terms.length < 2 || list.length < 2) return list;
  const qs = [...new Set(terms.map(key))];
  const pairs = new Set<string>();
  for (let i = 0; i + 1 < terms.length; i++) pairs.add(`${key(terms[i]!)} ${key(terms[i + 1]!)}`);
  const head = list.slice(0, HEAD).map((h) => {
    const ws = wordsOf(h.item).map(key);
    const set = new Set(ws);
    const coverage = qs.filter((q) => set.has(q)).length / qs.length;
    let phrase = 0;
    for (let i = 0; i + 1 < ws.length; i++) if (pairs.has(`${ws[i]} ${ws[i + 1]}`)) phrase = 1;
    return { h, s: h.score * (1 + COVERAGE_BOOST * coverage + PHRASE_BOOST * phrase) };
  });
  head.sort((a, b) => b.s - a.s);
  return [...head.map((x) => ({ ...x.h, score: x.s })), ...list.slice(HEAD)];
}

const LAMBDA = 0.7;

function jaccard(a: Set<string>, b: Set<string>): number {
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  const union = a.size + b.size - inter;
  return union === 0 ? 0 : inter / union;
}

/** Greedy MMR over the head: relevance (score / best score) against the most similar pick. */
export function mmr<T extends Scored>(list: T[], k: number): T[] {
  const n = Math.min(list.length, Math.max(k * 2, HEAD));
  if (n < 2) return list;
  const cand = list.slice(0, n).map((h) => ({ h, words: new Set(wordsOf(h.item)), sim: 0 }));
  const best = cand[0]!.h.score || 1;
  const picked: typeof cand = [];
  // Each candidate keeps its similarity to the closest pick so far: one comparison per round.
  while (cand.length > 0) {
    let bi = 0;
    let bv = -Infinity;
    cand.forEach((c, i) => {
      const v = LAMBDA * (c.h.score / best) - (1 - LAMBDA) * c.sim;
      if (v > bv) {
        bv = v;
        bi = i;
      }
    });
    const p = cand.splice(bi, 1)[0]!;
    picked.push(p);
    if (picked.length >= k) break;
    for (const c of cand) c.sim = Math.max(c.sim, jaccard(c.words, p.words));
  }
  return [...picked.map((p) => p.h), ...cand.map((c) => c.h), ...list.slice(n)];
}

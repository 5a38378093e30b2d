// Corpus-trained semantic channel: term associations learned from one scope's own memories, with
// no model files. Two words are associated when one occurs in a memory and the other within a
// few turns of it in the same conversation (a window), more often than their frequencies predict
// (positive pointwise mutual information). A query is expanded with the words most associated
// with its own words, and the scope's memories are scored against the expanded, weighted query.
// Pure and deterministic: the store adapter feeds memories in and drops a scope's index whenever
// memories leave it, so nothing of a forgotten memory stays here.
import { contentWords } from "./analyze.js";

export interface AssociationParams {
  /** turns on each side that form a word's window */
  window: number;
  /** expansion words at most */
  terms: number;
  /** weight of the strongest expansion word (query words weigh 1) */
  weight: number;
  /** a pair must co-occur in at least this many windows */
  minPairs: number;
  /** weight of a word found only in a memory's window rather than in its own text */
  windowWeight: number;
  /** the channel's weight in reciprocal-rank fusion (the word channel weighs 1) */
  fusionWeight: number;
  /** weight of the query's own words in the channel (expansion words weigh up to `weight`) */
  queryWeight: number;
  /**
   * Bounded work: memories a query may read through its words' postings, each with its window.
   * Words are taken rarest first while they fit; a word in more memories than this is left out
   * (it is slow to walk and nearly weightless, and the word channel still has it).
   */
  postingsBudget: number;
  /** the same for the query words that are expanded (each posting reads its whole window) */
  expandBudget: number;
}

// Chosen on the LoCoMo tuning split (bench/locomo.ts --split tune).
export const DEFAULT_ASSOCIATIONS: AssociationParams = { window: 2, terms: 10, weight: 0.5, minPairs: 2, windowWeight: 0.5, fusionWeight: 0.25, queryWeight: 1, postingsBudget: 600, expandBudget: 250 };

const SUFFIXES: [string, string][] = [
  ["ies", "y"],
  ["ing", ""],
  ["ed", ""],
  ["es", ""],
  ["s", ""],
];

/** A light stem that joins plurals and -ing/-ed forms ("paintings" / "painting" → "paint"). */
export function wordKey(w: string): string {
  // two rounds: a plural first, then -ing/-ed ("paintings" → "painting" → "paint")
  let out = w;
  for (let round = 0; round < 2; round++) {
    const suf = SUFFIXES.find(([s]) => out.endsWith(s) && out.length - s.length >= 3 && !out.endsWith("ss"));
    if (!suf) break;
    out = out.slice(0, out.length - suf[0].length) + suf[1];
  }
  return out;
}

/** The distinct word keys of a text (stop words, numbers and 1-2 letter words out). */
export function textKeys(text: string): string[] {
  return [...new Set(contentWords(text).filter((w) => w.length > 2 && !/^\d+$/u.test(w)).map(wordKey))];
}

interface Doc {
  rowid: number;
  thread: string;
  /** word ids */
  keys: number[];
}

/** One scope's memories in conversation order, with an inverted index over word keys. */
export class AssociationIndex {
  private readonly docs = new Map<number, Doc>();
  /** rowids of each thread in ascending order (turn order) */
  private readonly threads = new Map<string, number[]>();
  /** word key → id; ids index `postings` and `words` */
  private readonly ids = new Map<string, number>();
  private readonly words: string[] = [];
  private readonly postings: number[][] = [];

  get size(): number {
    return this.docs.size;
  }

  get vocabulary(): number {
    return this.words.length;
  }

  /** Add a memory (any order; a thread's turns are kept sorted by rowid). */
  add(rowid: number, thread: string | null, text: string): void {
    if (this.docs.has(rowid)) return;
    const t = thread ?? `#${rowid}`;
    const keys = textKeys(text).map((k) => {
      let id = this.ids.get(k);
      if (id === undefined) {
        id = this.words.length;
        this.ids.set(k, id);
        this.words.push(k);
        this.postings.push([]);
      }
      return id;
    });
    this.docs.set(rowid, { rowid, thread: t, keys });
    const list = this.threads.get(t) ?? this.threads.set(t, []).get(t)!;
    if (list.length === 0 || list[list.length - 1]! < rowid) list.push(rowid);
    else list.splice(lowerBound(list, rowid), 0, rowid);
    for (const id of keys) this.postings[id]!.push(rowid);
  }

  /** the rowids within `w` turns of a memory in its thread, itself included */
  window(rowid: number, w: number): number[] {
    const d = this.docs.get(rowid);
    if (!d) return [];
    const list = this.threads.get(d.thread)!;
    const i = lowerBound(list, rowid);
    return list.slice(Math.max(0, i - w), i + w + 1);
  }

  private counts = new Int32Array(0);

  /** A zeroed counter per word id (callers leave it zeroed). */
  scratch(): Int32Array {
    if (this.counts.length < this.words.length) this.counts = new Int32Array(Math.max(1024, this.words.length * 2));
    return this.counts;
  }

  /** Call `f` for each memory within `w` turns of `rowid` in its thread, itself included. */
  eachInWindow(rowid: number, w: number, f: (rowid: number) => void): void {
    const d = this.docs.get(rowid);
    if (!d) return;
    const list = this.threads.get(d.thread)!;
    const i = lowerBound(list, rowid);
    for (let j = Math.max(0, i - w); j <= i + w && j < list.length; j++) f(list[j]!);
  }

  idOf(key: string): number | undefined {
    return this.ids.get(key);
  }

  wordOf(id: number): string {
    return this.words[id]!;
  }

  df(key: string): number {
    const id = this.ids.get(key);
    return id === undefined ? 0 : this.postings[id]!.length;
  }

  dfById(id: number): number {
    return this.postings[id]?.length ?? 0;
  }

  postingsOf(key: string): readonly number[] {
    const id = this.ids.get(key);
    return id === undefined ? [] : this.postings[id]!;
  }

  keyIdsOf(rowid: number): readonly number[] {
    return this.docs.get(rowid)?.keys ?? [];
  }

  keysOf(rowid: number): string[] {
    return (this.docs.get(rowid)?.keys ?? []).map((id) => this.words[id]!);
  }
}

function lowerBound(xs: number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The words, rarest first, whose postings add up to at most `budget` (absent words cost nothing). */
export function withinBudget(words: string[], df: (w: string) => number, budget: number): string[] {
  const out: string[] = [];
  let spent = 0;
  for (const { w, d } of words.map((w) => ({ w, d: df(w) })).sort((a, b) => a.d - b.d || (a.w < b.w ? -1 : 1))) {
    if (d === 0 || spent + d > budget) continue;
    spent += d;
    out.push(w);
  }
  return out;
}

function idf(n: number, df: number): number {
  return Math.max(0, Math.log((n - df + 0.5) / (df + 0.5)));
}

/**
 * Expansion words for a query over the given indexes (the viewer's scopes; their counts add up):
 * each candidate word is scored by Σ over query words q of idf(q) · PMI(q, word) · log(1 + pairs),
 * and the best `terms` are weighted relative to the best one. Query words too common to carry
 * meaning (idf ≤ 0, e.g. the speakers' names) expand nothing, which also bounds the work.
 */
export function expandQuery(indexes: AssociationIndex[], queryText: string, p: AssociationParams = DEFAULT_ASSOCIATIONS): Map<string, number> {
  const q = textKeys(queryText);
  const n = indexes.reduce((s, ix) => s + ix.size, 0);
  const out = new Map<string, number>(q.map((k) => [k, p.queryWeight]));
  if (n === 0) return out;
  const dfAll = (k: string) => indexes.reduce((s, ix) => s + ix.df(k), 0);
  const acc = new Map<string, number>();
  for (const k of withinBudget(q, dfAll, p.expandBudget)) {
    const wq = idf(n, dfAll(k));
    if (wq <= 0) continue;
    // pair counts per candidate word (summed over the indexes), and windows holding k
    const pairs = new Map<string, number>();
    let windows = 0;
    for (const ix of indexes) {
      const seen = new Set<number>();
      for (const r of ix.postingsOf(k)) ix.eachInWindow(r, p.window, (w) => seen.add(w));
      windows += seen.size;
      // counts by word id in a scratch array; only words seen in ≥ minPairs windows leave it
      const counts = ix.scratch();
      const touched: number[] = [];
      for (const r of seen) {
        for (const id of ix.keyIdsOf(r)) {
          if (counts[id] === 0) touched.push(id);
          counts[id]!++;
        }
      }
      for (const id of touched) {
        const c = counts[id]!;
        counts[id] = 0;
        if (c < p.minPairs && indexes.length === 1) continue;
        const word = ix.wordOf(id);
        pairs.set(word, (pairs.get(word) ?? 0) + c);
      }
    }
    for (const [t, c] of pairs) {
      if (out.has(t) || c < p.minPairs) continue;
      const pmi = Math.log((c * n) / (windows * dfAll(t)));
      if (pmi <= 0) continue;
      acc.set(t, (acc.get(t) ?? 0) + wq * pmi * Math.log(1 + c));
    }
  }
  const best = [...acc].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, p.terms);
  const top = best[0]?.[1] ?? 1;
  for (const [t, s] of best) out.set(t, (p.weight * s) / top);
  return out;
}

/**
 * Score the memories of the indexes against a weighted query: a word in a memory's own text counts
 * idf · weight, a word only in its window counts `windowWeight` of that. Best first, ties by rowid.
 */
export function scoreExpanded(
  indexes: AssociationIndex[],
  weights: Map<string, number>,
  limit: number,
  p: AssociationParams = DEFAULT_ASSOCIATIONS,
): { rowid: number; score: number }[] {
  const n = indexes.reduce((s, ix) => s + ix.size, 0);
  const scores = new Map<number, number>();
  const dfAll = (k: string) => indexes.reduce((s, ix) => s + ix.df(k), 0);
  for (const k of withinBudget([...weights.keys()], dfAll, p.postingsBudget)) {
    const w = weights.get(k)!;
    const dfk = dfAll(k);
    const v = w * idf(n, dfk);
    if (v <= 0) continue;
    for (const ix of indexes) {
      // per memory: the best of own-text and window credit for this word
      const credit = new Map<number, number>();
      const own = ix.postingsOf(k);
      for (const r of own) credit.set(r, 1);
      if (p.windowWeight > 0) {
        for (const r of own) ix.eachInWindow(r, p.window, (x) => void (credit.has(x) || credit.set(x, p.windowWeight)));
      }
      for (const [r, c] of credit) scores.set(r, (scores.get(r) ?? 0) + v * c);
    }
  }
  return topScores(scores, limit);
}

/** The best `limit` entries, best first, ties by rowid: one pass (a full sort of every scored memory cost more than the scoring). */
function topScores(scores: Map<number, number>, limit: number): { rowid: number; score: number }[] {
  const top: { rowid: number; score: number }[] = [];
  const before = (a: { rowid: number; score: number }, b: { rowid: number; score: number }) => a.score > b.score || (a.score === b.score && a.rowid < b.rowid);
  for (const [rowid, score] of scores) {
    const e = { rowid, score };
    if (top.length === limit && !before(e, top[top.length - 1]!)) continue;
    let i = top.length < limit ? top.length : limit - 1;
    if (top.length < limit) top.push(e);
    while (i > 0 && before(e, top[i - 1]!)) {
      top[i] = top[i - 1]!;
      i--;
    }
    top[i] = e;
  }
  return top;
}

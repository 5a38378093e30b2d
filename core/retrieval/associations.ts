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
  /**
   * what the channel adds to the word pool, as a share of the pool's best word score for the
   * channel's best memory (scaled down for the others): the pool is re-ranked before the cues
   */
  poolWeight: number;
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

// Chosen on the LoCoMo tuning split (bench/locomo.ts --split tune). The budgets bound the work on a
// big scope: 300/120 postings (from 600/250) left LoCoMo recall with semantic on unchanged within
// one question and cut the channel's p95 at 100k memories from ~2.8 to ~1.6 ms. Added to the word
// pool (tune R@5/10/25 with the other default channels 77.8/85.9/90.2 -> 78.5/85.7/90.0 at 0.05,
// 79.1/85.7/90.1 at 0.15, 78.9/85.8/90.0 at 0.2, 78.7/85.2/89.9 at 0.35) instead of fused by
// reciprocal rank (78.0/85.1/89.9 at RRF weight 0.25).
export const DEFAULT_ASSOCIATIONS: AssociationParams = { window: 2, terms: 10, weight: 0.5, minPairs: 2, windowWeight: 0.5, poolWeight: 0.15, queryWeight: 1, postingsBudget: 300, expandBudget: 120 };

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
  /** its conversation's key in `threads` */
  thread: string;
  /** word ids */
  keys: number[];
  /** its conversation's memories in turn order (rowid ascending), itself included */
  turns: Doc[];
  /**
   * the turns just before and after it (null at either end): a window is walked from the memory
   * outward, without a search of `turns`, whose binary search touched a dozen memories per posting
   * (each a cache miss on a worker whose caches went cold between requests)
   */
  prev: Doc | null;
  next: Doc | null;
  /** per-pass scratch: the last pass that reached it */
  mark: number;
  /** its score in the query numbered `scoreMark` (see beginScoring) */
  score: number;
  scoreMark: number;
}

/**
 * One scope's memories in conversation order, with an inverted index over word keys. Postings and
 * conversations hold the memories themselves and per-pass marks live on them, so a query's walk
 * over windows does no map lookups (it is the semantic channel's hot loop).
 */
export class AssociationIndex {
  private readonly docs = new Map<number, Doc>();
  private readonly threads = new Map<string, Doc[]>();
  /** word key → id; ids index `postings` and `words` */
  private readonly ids = new Map<string, number>();
  private readonly words: string[] = [];
  private readonly postings: Doc[][] = [];
  /** ids of words no memory holds any more (see remove) */
  private readonly freeIds: number[] = [];
  private pass = 0;
  private counts = new Int32Array(0);

  get size(): number {
    return this.docs.size;
  }

  get vocabulary(): number {
    return this.words.length - this.freeIds.length;
  }

  /** Add a memory (any order; a thread's turns are kept sorted by rowid). */
  add(rowid: number, thread: string | null, text: string): void {
    if (this.docs.has(rowid)) return;
    const t = thread ?? `#${rowid}`;
    const keys = textKeys(text).map((k) => {
      let id = this.ids.get(k);
      if (id === undefined) {
        // a word id freed by remove() first, so a long-lived index at its cap does not grow
        id = this.freeIds.pop();
        if (id === undefined) {
          id = this.words.length;
          this.words.push(k);
          this.postings.push([]);
        } else this.words[id] = k;
        this.ids.set(k, id);
      }
      return id;
    });
    const turns = this.threads.get(t) ?? this.threads.set(t, []).get(t)!;
    const d: Doc = { rowid, thread: t, keys, turns, mark: 0, score: 0, scoreMark: 0, prev: null, next: null };
    this.docs.set(rowid, d);
    const at = turns.length === 0 || turns[turns.length - 1]!.rowid < rowid ? turns.length : lowerBound(turns, rowid);
    turns.splice(at, 0, d);
    d.prev = turns[at - 1] ?? null;
    d.next = turns[at + 1] ?? null;
    if (d.prev) d.prev.next = d;
    if (d.next) d.next.prev = d;
    for (const id of keys) this.postings[id]!.push(d);
  }

  /**
   * Take a memory out: its postings, its place in its conversation (a conversation left empty goes
   * too) and the words no other memory holds (their ids are reused), so nothing of it is kept: a
   * memory forgotten, expired, corrected or archived, or the oldest one of a scope at its cap.
   */
  remove(rowid: number): boolean {
    const d = this.docs.get(rowid);
    if (!d) return false;
    this.docs.delete(rowid);
    const i = lowerBound(d.turns, rowid);
    if (d.turns[i] === d) d.turns.splice(i, 1);
    if (d.prev) d.prev.next = d.next;
    if (d.next) d.next.prev = d.prev;
    if (d.turns.length === 0) this.threads.delete(d.thread);
    for (const id of d.keys) {
      const ps = this.postings[id]!;
      const j = ps.indexOf(d);
      if (j >= 0) ps.splice(j, 1);
      if (ps.length === 0) {
        // the word leaves the vocabulary; its id is reused by the next new word
        this.ids.delete(this.words[id]!);
        this.words[id] = "";
        this.freeIds.push(id);
      }
    }
    return true;
  }

  /** The smallest row id held (the memory written first), or undefined when empty. */
  oldest(): number | undefined {
    let min: number | undefined;
    for (const r of this.docs.keys()) if (min === undefined || r < min) min = r;
    return min;
  }

  /** A fresh pass number: marks from earlier passes no longer count. */
  private nextPass(): number {
    return ++this.pass;
  }

  /**
   * The memories within `w` turns of a memory holding `key` (each once), and per word id how many
   * of them hold it: the co-occurrence counts of one query word. `touched` lists the ids counted.
   */
  cooccurrence(key: string, w: number): { windows: number; touched: number[]; counts: Int32Array } {
    const id = this.ids.get(key);
    if (this.counts.length < this.words.length) this.counts = new Int32Array(Math.max(1024, this.words.length * 2));
    const counts = this.counts;
    const touched: number[] = [];
    if (id === undefined) return { windows: 0, touched, counts };
    const pass = this.nextPass();
    let windows = 0;
    const count = (d: Doc) => {
      if (d.mark === pass) return;
      d.mark = pass;
      windows++;
      for (const k of d.keys) {
        if (counts[k] === 0) touched.push(k);
        counts[k]!++;
      }
    };
    for (const p of this.postings[id]!) {
      count(p);
      for (let d = p.prev, s = 0; d !== null && s < w; d = d.prev, s++) count(d);
      for (let d = p.next, s = 0; d !== null && s < w; d = d.next, s++) count(d);
    }
    return { windows, touched, counts };
  }

  /**
   * Add `v` · credit for word `key` to each memory's score: credit 1 for its own text, `windowWeight`
   * for a memory within `w` turns of one (the better of the two). Memories first scored in this
   * query (`query` from `beginScoring`) join `scored`.
   */
  credit(key: string, v: number, w: number, windowWeight: number, query: number, scored: { rowid: number; score: number }[]): void {
    const id = this.ids.get(key);
    if (id === undefined) return;
    const pass = this.nextPass();
    const add = (d: Doc, c: number) => {
      d.mark = pass;
      if (d.scoreMark !== query) {
        d.scoreMark = query;
        d.score = 0;
        scored.push(d);
      }
      d.score += v * c;
    };
    const own = this.postings[id]!;
    for (const d of own) add(d, 1);
    if (windowWeight <= 0) return;
    for (const p of own) {
      for (let d = p.prev, s = 0; d !== null && s < w; d = d.prev, s++) if (d.mark !== pass) add(d, windowWeight);
      for (let d = p.next, s = 0; d !== null && s < w; d = d.next, s++) if (d.mark !== pass) add(d, windowWeight);
    }
  }

  /** A query number for `credit` (scores from earlier queries no longer count). */
  beginScoring(): number {
    return this.nextPass();
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

  keysOf(rowid: number): string[] {
    return (this.docs.get(rowid)?.keys ?? []).map((id) => this.words[id]!);
  }
}

function lowerBound(xs: Doc[], rowid: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]!.rowid < rowid) lo = mid + 1;
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
  // empty scopes add nothing; the largest leads (see below)
  const ixs = indexes.filter((ix) => ix.size > 0).sort((a, b) => b.size - a.size);
  const n = ixs.reduce((s, ix) => s + ix.size, 0);
  const out = new Map<string, number>(q.map((k) => [k, p.queryWeight]));
  if (n === 0) return out;
  const dfAll = (k: string) => ixs.reduce((s, ix) => s + ix.df(k), 0);
  const acc = new Map<string, number>();
  const candidate = (t: string, c: number, windows: number, wq: number, df: number) => {
    const pmi = Math.log((c * n) / (windows * df));
    if (pmi > 0) acc.set(t, (acc.get(t) ?? 0) + wq * pmi * Math.log(1 + c));
  };
  for (const k of withinBudget(q, dfAll, p.expandBudget)) {
    const wq = idf(n, dfAll(k));
    if (wq <= 0) continue;
    // Counts stay in the largest scope's word ids; the other scopes' words are mapped onto them
    // (a word only they hold is counted by string), so most words never become a string.
    const [big, ...rest] = ixs;
    const co = big!.cooccurrence(k, p.window);
    let windows = co.windows;
    const { touched, counts } = co;
    const only = new Map<string, number>();
    for (const ix of rest) {
      const other = ix.cooccurrence(k, p.window);
      windows += other.windows;
      for (const id of other.touched) {
        const c = other.counts[id]!;
        other.counts[id] = 0;
        const t = ix.wordOf(id);
        const bigId = big!.idOf(t);
        if (bigId === undefined) only.set(t, (only.get(t) ?? 0) + c);
        else {
          if (counts[bigId] === 0) touched.push(bigId);
          counts[bigId]! += c;
        }
      }
    }
    const dfRest = (t: string) => rest.reduce((s, ix) => s + ix.df(t), 0);
    for (const id of touched) {
      const c = counts[id]!;
      counts[id] = 0;
      if (c < p.minPairs) continue;
      const t = big!.wordOf(id);
      if (!out.has(t)) candidate(t, c, windows, wq, big!.dfById(id) + dfRest(t));
    }
    for (const [t, c] of only) if (c >= p.minPairs && !out.has(t)) candidate(t, c, windows, wq, dfRest(t));
  }
  const best = topK(acc, p.terms, (x, y) => x[1] > y[1] || (x[1] === y[1] && x[0] < y[0]));
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
  const ixs = indexes.filter((ix) => ix.size > 0);
  const n = ixs.reduce((s, ix) => s + ix.size, 0);
  const dfAll = (k: string) => ixs.reduce((s, ix) => s + ix.df(k), 0);
  // a memory belongs to one scope, so each index scores its own memories
  const runs = ixs.map((ix) => ({ ix, query: ix.beginScoring(), scored: [] as { rowid: number; score: number }[] }));
  for (const k of withinBudget([...weights.keys()], dfAll, p.postingsBudget)) {
    const v = weights.get(k)! * idf(n, dfAll(k));
    if (v <= 0) continue;
    for (const r of runs) r.ix.credit(k, v, p.window, p.windowWeight, r.query, r.scored);
  }
  // the scored entries are the memories themselves, so their scores are final only now; best
  // first, ties by rowid
  const best = topK(
    runs.flatMap((r) => r.scored),
    limit,
    (a, b) => a.score > b.score || (a.score === b.score && a.rowid < b.rowid),
  );
  return best.map((d) => ({ rowid: d.rowid, score: d.score }));
}

/** The best `k` items by `before`, best first, in one pass (a full sort of every candidate cost more than the scoring). */
function topK<T>(items: Iterable<T>, k: number, before: (a: T, b: T) => boolean): T[] {
  const top: T[] = [];
  if (k <= 0) return top;
  for (const e of items) {
    if (top.length === k && !before(e, top[k - 1]!)) continue;
    let i = top.length < k ? top.length : k - 1;
    if (top.length < k) top.push(e);
    while (i > 0 && before(e, top[i - 1]!)) {
      top[i] = top[i - 1]!;
      i--;
    }
    top[i] = e;
  }
  return top;
}

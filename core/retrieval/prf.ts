// Pseudo-relevance feedback: the best few hits of a first pass say which other words the answer's
// neighbourhood uses; the rarest of those that recur across the feedback set become a second query.
// Pure: the caller supplies index stems and document frequencies, so the choice is deterministic.
import { contentWords } from "./analyze.js";

export interface PrfParams {
  /** feedback documents taken from the head of the first pass */
  docs: number;
  /** expansion terms at most */
  terms: number;
  /** a term must occur in at least this many feedback documents */
  minDocs: number;
}

export const DEFAULT_PRF: PrfParams = { docs: 5, terms: 8, minDocs: 2 };

export interface PrfInput {
  /** feedback texts, best first */
  texts: string[];
  /** stems of the query's own terms (never re-added) */
  queryStems: Set<string>;
  /** index stem of each word (same tokenizer as the index) */
  stem: (words: string[]) => Map<string, string>;
  /** documents in the index holding a stem */
  df: (stem: string) => number;
  /** documents in the index */
  n: number;
}

/** Surface words (one per stem) to query in the second pass, best first. */
export function expansionTerms(input: PrfInput, p: PrfParams = DEFAULT_PRF): string[] {
  const texts = input.texts.slice(0, p.docs);
  const perDoc = texts.map((t) => [...new Set(contentWords(t).filter((w) => w.length > 2 && !/^\d+$/u.test(w)))]);
  const stems = input.stem([...new Set(perDoc.flat())]);
  const acc = new Map<string, { word: string; w: number; docs: number }>();
  perDoc.forEach((ws, rank) => {
    const seen = new Set<string>();
    for (const w of ws) {
      const s = stems.get(w);
      if (!s || input.queryStems.has(s) || seen.has(s)) continue;
      seen.add(s);
      const a = acc.get(s) ?? acc.set(s, { word: w, w: 0, docs: 0 }).get(s)!;
      a.w += 1 / (rank + 1);
      a.docs++;
    }
  });
  const scored: { word: string; score: number; stem: string }[] = [];
  for (const [s, a] of acc) {
    if (a.docs < p.minDocs) continue;
    const df = input.df(s);
    const idf = Math.log((input.n - df + 0.5) / (df + 0.5));
    if (idf <= 0) continue;
    scored.push({ word: a.word, score: a.w * idf, stem: s });
  }
  scored.sort((x, y) => y.score - x.score || (x.stem < y.stem ? -1 : x.stem > y.stem ? 1 : 0));
  return scored.slice(0, p.terms).map((x) => x.word);
}

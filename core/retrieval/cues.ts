// Question cues: what a question says beyond its words. Who it asks about (speaker.ts), which
// period (dates.ts) and what kind of answer (answer-type.ts). Each cue that a candidate memory
// fits multiplies its word-channel score, so cues re-order what the words found and never bring in
// a memory the words did not. Pure: the store adapters apply the factors to their own score scale.
import { answerKind, holdsAnswer, type AnswerKind } from "./answer-type.js";
import { inWindows, queryDateWindows, type DateWindow } from "./dates.js";
import { askedSpeaker, speakerOf } from "./speaker.js";

export interface CueWeights {
  /** spoken by the one participant the question names */
  speaker: number;
  /** dated inside a period the question names */
  date: number;
  /** holds a time expression, for "when" questions */
  time: number;
  /** holds a future time expression, for "when is … going to / does … plan to" questions */
  plan: number;
  /** holds a number or frequency, for "how many/often/long" questions */
  amount: number;
  /** names a place, for "where" and "which city/country" questions */
  place: number;
  /** names a title (quoted, or capitalised words in a row), for "what book/movie/game" questions */
  title: number;
}

// Chosen on the LoCoMo tuning split (bench/locomo-ablation.ts --split tune); see the README's
// retrieval table for the held-out figures. `title` is the strongest because its evidence is the
// most distinct (tune: 62% of evidence turns against 5% of all turns): tune R@5/10/25 77.8/85.3/90.1 ->
// 77.5/85.4/90.1 at 0.3, 77.8/85.9/90.2 at 1.0, 77.6/86.1/90.2 at 1.5 (holdout 72.4/79.1/84.3 ->
// 72.3/79.6/84.4 at 1.0). `plan` is as distinct (tune: every evidence turn of its 6 questions holds
// a future time expression, against 4% of all turns) and takes the same weight; tune is unchanged
// at 0.3/0.6/1.0.
export const DEFAULT_CUES: CueWeights = { speaker: 0.3, date: 0.5, time: 0.3, plan: 1.0, amount: 0.5, place: 0.5, title: 1.0 };

/**
 * Word-channel candidates re-ordered by cues: at least this many are fetched, so a search for 10
 * ranks nearly as the top of a search for 50 would (LoCoMo holdout R@10 with limit 10: 75.0 with a
 * pool of 20, 77.7 with 40, 78.0 from a top-50 list). Each costs a row read: +0.4 ms p50 at 100k.
 */
export const CUE_POOL = 40;

/**
 * The cue pool on a store within the word postings budget (3,000 memories), where a search is
 * cheap: cues, the added words and the associations then re-order a deeper pool, so evidence the
 * words rank low still reaches the top. LoCoMo (limit 50) tune R@5/10/25/50 79.7/85.9/90.3/92.2 ->
 * 79.5/85.9/90.6/93.0 at 100 (80: 90.4/92.9, 150: 90.6/93.2); holdout 73.4/80.2/85.3/89.6 ->
 * 73.9/80.6/85.7/90.1. Past the budget the pool stays CUE_POOL: at 100k memories a pool of 100 cost
 * +0.9 ms p50 and +1 ms p95 (alternating runs on one file).
 */
export const SMALL_STORE_CUE_POOL = 100;

export interface QueryCues {
  terms: readonly string[];
  /** the question as written (which of two named speakers is its subject) */
  text?: string;
  windows: DateWindow[];
  kind: AnswerKind | null;
}

/** The cues of one query; `text` is the question as written, `terms` its analysed words. */
export function queryCues(text: string, terms: readonly string[], now: number): QueryCues {
  return { terms, text, windows: queryDateWindows(text, now), kind: answerKind(text) };
}

export interface CueCandidate {
  content: string;
  validFrom: number | null;
}

/**
 * One factor (≥ 1) per candidate. The asked speaker is decided over the whole candidate list: a
 * question naming both participants has no single one.
 */
export function cueFactors(cues: QueryCues, candidates: readonly CueCandidate[], w: CueWeights = DEFAULT_CUES): number[] {
  const speakers = w.speaker > 0 ? candidates.map((c) => speakerOf(c.content)) : [];
  const asked = w.speaker > 0 ? askedSpeaker(cues.terms, speakers, cues.text) : null;
  const kindWeight = cues.kind === null ? 0 : w[cues.kind];
  return candidates.map((c, i) => {
    let f = 1;
    if (asked !== null && speakers[i] === asked) f += w.speaker;
    // (PostgreSQL returns bigint columns as strings)
    if (w.date > 0 && cues.windows.length > 0 && inWindows(c.validFrom === null ? null : Number(c.validFrom), cues.windows)) f += w.date;
    if (kindWeight > 0 && cues.kind !== null && holdsAnswer(cues.kind, c.content)) f += kindWeight;
    return f;
  });
}

/** Whether any cue can change an order (saves the work when none applies). */
export function hasCues(cues: QueryCues): boolean {
  return cues.windows.length > 0 || cues.kind !== null || cues.terms.length > 0;
}

/**
 * Hits with their scores multiplied by their cue factors, re-sorted. `better` says which way the
 * store's scores point: bm25() ranks are negative and ascend, ts_rank() scores descend. Ties keep
 * the smaller rowid first, so the order is deterministic. A memory with no date of its own
 * (`valid_from`: most of what an agent writes) is dated by when it was written.
 */
export function applyCues<T extends { rank: number; row: { rowid: number; content: string; valid_from: number | null; created_at?: number } }>(
  hits: T[],
  cues: QueryCues,
  better: "lower" | "higher",
  w: CueWeights = DEFAULT_CUES,
): T[] {
  if (hits.length === 0) return hits;
  const f = cueFactors(cues, hits.map((h) => ({ content: h.row.content, validFrom: h.row.valid_from ?? h.row.created_at ?? null })), w);
  const dir = better === "lower" ? 1 : -1;
  return hits.map((h, i) => ({ ...h, rank: h.rank * f[i]! })).sort((a, b) => dir * (a.rank - b.rank) || a.row.rowid - b.row.rowid);
}

// Words a search adds to its own at a lower weight (a share of their word score, own text and tags
// only), in two passes: the members of a category the question asks for (categories.ts) with the
// other forms of the irregular verbs it uses (verb-forms.ts), then the everyday near-synonyms of its
// words (related-words.ts) at a lower share still. Both stores search them the same way.
import { categoryMembers } from "./categories.js";
import { relatedWords } from "./related-words.js";
import { otherVerbForms } from "./verb-forms.js";

/**
 * Weight of an added word's score against a query word's. Chosen for category members (LoCoMo tune,
 * default + categories, R@5/10/25: 0.25 77.7/85.3/89.9, 0.4 77.8/85.4/90.1, 0.5 77.5/85.4/90.2, 0.7
 * 77.6/85.4/89.9, 1.0 77.1/85.0/89.8; without 77.3/85.0/89.8); verb forms measured the same at
 * 0.3, 0.4 and 0.5 (tune 79.4/85.7/90.1), and as much worse at full weight in the query itself
 * (R@10 85.7 -> 85.2).
 */
export const ADDED_WORD_WEIGHT = 0.4;

/**
 * Weight of a near-synonym's score. A synonym is a looser match than a category member: on LoCoMo
 * tune (R@5/10/25/50) 0.1 79.6/86.1/90.8/93.3, 0.2 79.2/86.1/90.9/93.6, 0.3 79.1/85.7/90.9/93.7,
 * 0.4 79.0/85.9/90.9/93.9, without 79.5/85.9/90.6/93.0; holdout at 0.2 74.0/80.4/86.0/90.3 (without
 * 73.9/80.6/85.8/90.1).
 */
export const RELATED_WORD_WEIGHT = 0.2;

/**
 * Postings an added-word pass may score on a store past the word channel's budget (the first pass
 * scores up to 3,000). Each pass is one more word query per question; at 100k memories of
 * conversation (LoCoMo turns copied into one scope, searched with its questions, A/B in one
 * process) the near-synonym pass cost +0.9 ms p50 and +1.0 ms p95 at 1,000 postings, +0.5/+0.4 at
 * 300. Their words weigh 0.4 and 0.2, so their rarest ones are what can move a ranking there.
 * Stores within the budget (3,000 memories) search every added word.
 */
export const ADDED_POSTINGS_BUDGET = 1000;
export const RELATED_POSTINGS_BUDGET = 300;

export interface AddedWords {
  words: string[];
  /** share of their word score */
  weight: number;
  /** postings the pass may score on a large store */
  budget: number;
}

/**
 * The added words of a query, by weight: category members (when that channel is on and the question
 * is known) with verb forms, then near-synonyms (category channel on). Each word once, none of the
 * query's own terms; passes with no words are left out.
 */
export function addedWords(question: string | undefined, terms: readonly string[], categories: boolean): AddedWords[] {
  const seen = new Set<string>();
  const take = (ws: readonly string[]) => ws.filter((w) => !seen.has(w) && (seen.add(w), true));
  const first = take([...(categories && question ? categoryMembers(question) : []), ...otherVerbForms(terms)]);
  const related = take(categories ? relatedWords(terms) : []);
  return [
    { words: first, weight: ADDED_WORD_WEIGHT, budget: ADDED_POSTINGS_BUDGET },
    { words: related, weight: RELATED_WORD_WEIGHT, budget: RELATED_POSTINGS_BUDGET },
  ].filter((p) => p.words.length > 0);
}

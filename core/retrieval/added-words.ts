// Words a search adds to its own at a lower weight (ADDED_WORD_WEIGHT of their word score, own
// text and tags only): the members of a category the question asks for (categories.ts) and the other
// forms of the irregular verbs it uses (verb-forms.ts). Both stores search them the same way.
import { categoryMembers } from "./categories.js";
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
 * The added words of a query: category members when that channel is on and the question is known,
 * then verb forms (both distinct, none of the query's own terms).
 */
export function addedWords(question: string | undefined, terms: readonly string[], categories: boolean): string[] {
  const members = categories && question ? categoryMembers(question) : [];
  const seen = new Set(members);
  return [...members, ...otherVerbForms(terms).filter((w) => !seen.has(w))];
}

// Words a search adds to its own at a lower weight (CATEGORY_WEIGHT of their word score, own text
// and tags only): the members of a category the question asks for (categories.ts) and the other
// forms of the irregular verbs it uses (verb-forms.ts). Both stores search them the same way.
import { categoryMembers } from "./categories.js";
import { otherVerbForms } from "./verb-forms.js";

/**
 * The added words of a query: category members when that channel is on and the question is known,
 * then verb forms (both distinct, none of the query's own terms).
 */
export function addedWords(question: string | undefined, terms: readonly string[], categories: boolean): string[] {
  const members = categories && question ? categoryMembers(question) : [];
  const seen = new Set(members);
  return [...members, ...otherVerbForms(terms).filter((w) => !seen.has(w))];
}

// Who said it. A memory taken from a transcript reads "Name: what they said"; a question that
// names one participant ("What are Joanna's hobbies?") is far more often answered by that
// person's own turns than by turns that merely address them ("Hey Joanna! ..."), which plain word
// matching cannot tell apart. On the LoCoMo dev questions naming one speaker, 83% of evidence
// turns are that speaker's own.

// One or two capitalised words, then a colon and a space, at the very start.
const SPEAKER_RE = /^\s*(\p{Lu}[\p{L}\p{M}'’.-]{0,40})(?: \p{Lu}[\p{L}\p{M}'’.-]{0,40})?:\s/u;

/** The speaker a memory's text opens with ("Jon: ..." → "jon"), lower-cased; null when none. */
export function speakerOf(content: string): string | null {
  const m = SPEAKER_RE.exec(content);
  return m ? m[1]!.normalize("NFKC").toLowerCase() : null;
}

/**
 * The one speaker a query asks about: among the speakers of the candidate memories, those the
 * query names. Exactly one → that name; none → null. Several: with the question's text, the one
 * named first is its subject ("What does Melanie think about Caroline's plan?" → melanie) unless
 * it is joined to another by "and"/"or" ("What do Jon and Gina share?" → null); without the text,
 * null.
 */
export function askedSpeaker(queryTerms: readonly string[], candidateSpeakers: Iterable<string | null>, question?: string): string | null {
  const terms = new Set(queryTerms);
  const named = new Set<string>();
  for (const s of candidateSpeakers) if (s !== null && terms.has(s)) named.add(s);
  if (named.size === 1) return [...named][0]!;
  if (named.size === 0 || question === undefined) return null;
  const first = queryTerms.find((t) => named.has(t))!;
  const text = question.normalize("NFKC").toLowerCase();
  const name = first.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&");
  const joined = new RegExp(`(?:^|[^\\p{L}])${name}(?:['’]s)?\\s*(?:,|&|\\band\\b|\\bor\\b)|(?:,|&|\\band|\\bor)\\s+${name}(?![\\p{L}])`, "u");
  return joined.test(text) ? null : first;
}

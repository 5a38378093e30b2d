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
 * query names. Exactly one → that name; none or several ("What do Jon and Gina share?") → null.
 */
export function askedSpeaker(queryTerms: readonly string[], candidateSpeakers: Iterable<string | null>): string | null {
  const terms = new Set(queryTerms);
  const named = new Set<string>();
  for (const s of candidateSpeakers) if (s !== null && terms.has(s)) named.add(s);
  return named.size === 1 ? [...named][0]! : null;
}

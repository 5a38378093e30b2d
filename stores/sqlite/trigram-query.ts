// Queries of the trigram index (memory_tri). It keeps no positions (migration 19), so a phrase
// cannot be asked of it: a word is matched as all of its trigrams, in any order, and the rows read
// are then checked for the word itself.

/** The trigram tokenizer's tokens of a word: its overlapping three-character runs (code points). */
function trigramsOf(word: string): string[] {
  const cs = [...word];
  const out = new Set<string>();
  for (let i = 0; i + 3 <= cs.length; i++) out.add(cs.slice(i, i + 3).join(""));
  return [...out];
}

/** MATCH expression for rows holding every trigram of one of these (lower-case) words. */
export function trigramMatch(words: string[]): string {
  return words.map((w) => `(${trigramsOf(w).map((t) => `"${t.replace(/"/g, '""')}"`).join(" AND ")})`).join(" OR ");
}

/** Whether the text holds one of the (lower-case, NFKC) words, folded as the trigram index folds it. */
export function holdsAny(text: string, words: string[]): boolean {
  const folded = text.normalize("NFKC").toLowerCase();
  return words.some((w) => folded.includes(w));
}

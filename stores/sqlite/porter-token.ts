// The index token of a plain word without a round trip through SQLite. The word index tokenizes
// with FTS5's `porter unicode61`: an ASCII letters-and-digits word is one token, case-folded, then
// Porter-stemmed unless longer than FTS5's 64-byte stemming limit. The `stemmer` package implements
// the same Porter (1980) algorithm; test/stores/porter-token.test.ts checks it token for token
// against the index's own tokenizer. Anything else (other scripts, diacritics, punctuation) goes
// to the real tokenizer.
import { stemmer } from "stemmer";

/** Words this long or shorter take the fast path (FTS5 stems up to 64; real words are shorter). */
const MAX_FAST = 40;
const PLAIN = /^[A-Za-z0-9]+$/;

/** The single index token of a plain ASCII word, or null when the real tokenizer must decide. */
export function plainWordToken(text: string): string | null {
  if (text.length === 0 || text.length > MAX_FAST || !PLAIN.test(text)) return null;
  return stemmer(text.toLowerCase());
}

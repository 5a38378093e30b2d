// Words as SQLite's tokenizer finds them, on PostgreSQL. The text search parser (session index,
// skill search) reads ASCII punctuation as spaces: it keeps 'alice.smith@corp.com',
// 'vpn.acme-corp.io', '/home/a/b.pem', 'package.json' and '4417-9921' whole (an email, a host, a
// file, a signed '-9921'), so a word inside them was found nowhere; SQLite splits at every mark.
// And a substring scan (the DSQL profile) matches letters outside ASCII in either case, and a Latin
// letter with or without its diacritics.

const PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

/**
 * Every character SQLite's word tokenizer does not keep in a word (stores/sqlite/word-tokenizer.ts
 * keeps letters, numbers, marks and private-use characters): ASCII punctuation, and also
 * typographic punctuation, symbols, emoji and spaces such as U+00A0. Under the C locale the parser
 * reads every character outside ASCII as a letter, so '“Atlas”', 'deploy—tomorrow', 'nine…',
 * 'Alice’s' or '500\u00a0euros' were one word each and "atlas" or "tomorrow" found nothing.
 */
const SEPARATOR_RE = /[^\p{L}\p{N}\p{M}\p{Co}]/gu;
/** the diacritics of a Latin letter, once decomposed (what remove_diacritics 2 drops on SQLite) */
const LATIN_DIACRITICS_RE = /(?<=[A-Za-z])[\u0300-\u036f]+/gu;
const MAY_HOLD_DIACRITICS = /[\u00c0-\u024f\u0300-\u036f\u1e00-\u1eff]/u;

/**
 * `text` as SQLite's word tokenizer reads it, for text built in JavaScript (splitPunct does ASCII
 * punctuation in SQL): every character that separates words there a space, and a Latin letter's
 * diacritics dropped ("Zürich" is "Zurich", "café" "cafe": SQLite folds them, so "zurich" found it
 * there and nothing on PostgreSQL). Other scripts keep their marks ("ά", "й", Devanagari).
 */
export function sqliteWords(text: string): string {
  return foldLatin(text.replace(SEPARATOR_RE, " "));
}

/** `text` with a Latin letter's diacritics dropped ("Zürich" is "Zurich"), other scripts as they are */
export function foldLatin(text: string): string {
  return MAY_HOLD_DIACRITICS.test(text) ? text.normalize("NFD").replace(LATIN_DIACRITICS_RE, "").normalize("NFC") : text;
}

/**
 * Each ASCII letter (lower case) and the precomposed letters foldLatin folds to it, in both cases:
 * "e" → "eéèêë…ÉÈÊË…". A substring scan has no index to fold for it, so a query word's letters
 * become these classes instead (the DSQL profile has no unaccent extension).
 */
const FOLDS_TO: ReadonlyMap<string, string> = (() => {
  const m = new Map<string, string>();
  for (const [lo, hi] of [[0xc0, 0x24f], [0x1e00, 0x1eff]] as const) {
    for (let cp = lo; cp <= hi; cp++) {
      const ch = String.fromCodePoint(cp);
      const base = foldLatin(ch);
      if (base !== ch && /^[A-Za-z]$/.test(base)) m.set(base.toLowerCase(), (m.get(base.toLowerCase()) ?? base.toLowerCase()) + ch);
    }
  }
  return m;
})();

/** `sql` (a text expression) with every ASCII punctuation mark as a space, for to_tsvector / plainto_tsquery */
export function splitPunct(sql: string): string {
  return `translate(${sql}, '${PUNCT.replace(/'/g, "''")}', '${" ".repeat(PUNCT.length)}')`;
}

/** A regex finding lower-case `word` in a lower()ed text, each letter outside ASCII in either case. */
export function eitherCase(word: string): string {
  return [...word]
    .map((ch) => {
      const up = ch.toUpperCase();
      return ch.charCodeAt(0) < 128 || up === ch || [...up].length !== 1 ? ch.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&") : `[${ch}${up}]`;
    })
    .join("");
}

/**
 * SQL: `expr` (a text) holds `word` (lower-case), a Latin letter's diacritics folded on both sides
 * as the word indexes fold them ("cafe" finds "Café", "zürich" finds "Zurich"). lower() folds ASCII
 * under every locale, other letters only under a locale that knows them (Aurora DSQL and a C-locale
 * database keep 'Ü' or 'М' as written), so a word with such letters, or with letters that have
 * accented forms, is matched by a regex taking each in either case and every accented form.
 */
export function holdsWord(expr: string, word: string, param: (v: string) => string): string {
  const w = foldLatin(word);
  return /^[\x00-\x7f]*$/.test(w) && ![...w].some((ch) => FOLDS_TO.has(ch))
    ? `lower(${expr}) LIKE ${param(`%${w.replace(/[\\%_]/g, "\\$&")}%`)}`
    : `lower(${expr}) ~ ${param(foldedPattern(w))}`;
}

/** A regex finding folded, lower-case `word`: each letter in either case and in every form that folds to it. */
function foldedPattern(word: string): string {
  return [...word].map((ch) => (FOLDS_TO.has(ch) ? `[${FOLDS_TO.get(ch)}]` : eitherCase(ch))).join("");
}

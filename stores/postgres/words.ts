// Words as SQLite's tokenizer finds them, on PostgreSQL. The text search parser (session index,
// skill search) reads ASCII punctuation as spaces: it keeps 'alice.smith@corp.com',
// 'vpn.acme-corp.io', '/home/a/b.pem', 'package.json' and '4417-9921' whole (an email, a host, a
// file, a signed '-9921'), so a word inside them was found nowhere; SQLite splits at every mark.
// And a substring scan (the DSQL profile) matches letters outside ASCII in either case.

import type { PoolClient } from "pg";

const PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

/**
 * Every character SQLite's word tokenizer does not keep in a word (stores/sqlite/word-tokenizer.ts
 * keeps letters, numbers, marks and private-use characters): ASCII punctuation, and also
 * typographic punctuation, symbols, emoji and spaces such as U+00A0. Under the C locale the parser
 * reads every character outside ASCII as a letter, so '“Atlas”', 'deploy—tomorrow', 'nine…',
 * 'Alice’s' or '500\u00a0euros' were one word each and "atlas" or "tomorrow" found nothing.
 */
const SEPARATOR_RE = /[^\p{L}\p{N}\p{M}\p{Co}]/gu;

/** `text` with every character that separates words on SQLite as a space, for text built in JavaScript (splitPunct does ASCII's in SQL) */
export function punctAsSpace(text: string): string {
  return text.replace(SEPARATOR_RE, " ");
}

/**
 * Whether this database's parser reads characters outside ASCII as letters (the C locale: 'a—b'
 * is one word), so words written before punctAsSpace split at every separator need it once.
 */
export async function parserGluesNonAscii(q: Pick<PoolClient, "query">): Promise<boolean> {
  return (await q.query<{ g: boolean }>(`SELECT (SELECT count(*) FROM ts_parse('default', 'a' || chr(8212) || 'b')) = 1 AS g`)).rows[0]!.g;
}

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
 * SQL: `expr` (a text) holds `word` (lower-case). lower() folds ASCII under every locale, other
 * letters only under a locale that knows them (Aurora DSQL and a C-locale database keep 'Ü' or
 * 'М' as written), so a word with such letters is matched by a regex taking either case.
 */
export function holdsWord(expr: string, word: string, param: (v: string) => string): string {
  return /^[\x00-\x7f]*$/.test(word)
    ? `lower(${expr}) LIKE ${param(`%${word.replace(/[\\%_]/g, "\\$&")}%`)}`
    : `lower(${expr}) ~ ${param(eitherCase(word))}`;
}

// Text analysis shared by indexing and querying: word terms, CJK bigrams and trigram
// substrings. Pure functions; the SQLite FTS tokenizers do stemming and case folding.
import type { LexicalQuery } from "../../stores/traits.js";

// English stop words plus question words: they carry no topic, and in an OR query they only add
// cost and noise.
const STOP_WORDS = new Set(
  `a about above after again against all am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself
him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't
she she'd she'll she's should shouldn't so some such than that that's the their theirs them themselves then
there there's these they they'd they'll they're they've this those through to too under until up very was
wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while who who's
whom why why's with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves
also just will shall may might must would get got gets ever really much many s t d ll re ve m o y
kind sort thing things something anything everything anyone someone anybody somebody`
    .split(/\s+/)
    .filter(Boolean),
);

const CJK_RE = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;
const CJK_RUN_RE = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+/gu;
// A combining mark (\p{M}: Devanagari and Thai vowel signs, Arabic harakat) belongs to its word, as
// in the word indexes' tokenizer (stores/sqlite/word-tokenizer.ts).
const WORD_RE = /[\p{L}\p{N}][\p{L}\p{M}\p{N}'’_-]*/gu;

export function hasCjk(text: string): boolean {
  return CJK_RE.test(text);
}

function normalize(text: string): string {
  return text.normalize("NFKC").toLowerCase();
}

/** Overlapping CJK bigrams (a lone CJK character stands for itself), for the `cjk` column. */
export function cjkBigrams(text: string): string[] {
  const out: string[] = [];
  for (const run of normalize(text).match(CJK_RUN_RE) ?? []) {
    const chars = [...run];
    if (chars.length === 1) out.push(chars[0]!);
    for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  }
  return out;
}

/** Latin/other-script words, lower-cased, apostrophes and edge hyphens trimmed. */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const raw of normalize(text.replace(CJK_RUN_RE, " ")).match(WORD_RE) ?? []) {
    const w = raw.replace(/[’']s$/u, "").replace(/[’'_-]+$/u, "");
    if (w.length > 0) out.push(w);
  }
  return out;
}

export function isStopWord(w: string): boolean {
  return STOP_WORDS.has(w);
}

// A lone letter before "#" or "++" names a language ("C#", "F#", "C++"): the word index keeps it as
// the letter, and a query for it must too, where any other lone letter is noise.
const CODE_LETTER_RE = /(?<![\p{L}\p{N}])(\p{L})(?:#|\+\+)/gu;

function codeLetters(text: string): Set<string> | null {
  if (!text.includes("#") && !text.includes("++")) return null;
  const out = new Set<string>();
  for (const m of normalize(text).matchAll(CODE_LETTER_RE)) out.add(m[1]!);
  return out.size > 0 ? out : null;
}

/** Content words: stop words out; numbers kept whatever their length, lone letters only as "C#"/"C++". */
export function contentWords(text: string): string[] {
  const letters = codeLetters(text);
  return words(text).filter((w) => !STOP_WORDS.has(w) && (w.length > 1 || /\d/u.test(w) || (letters?.has(w) ?? false)));
}

/** Build the lexical query for a search string. Terms are unique and in order of appearance. */
export function analyzeQuery(text: string, maxTerms = 32): LexicalQuery {
  let terms = unique(contentWords(text));
  // A question made only of stop words ("what is it?") still means something: keep its words.
  if (terms.length === 0) terms = unique(words(text).filter((w) => w.length > 1));
  const cjk = unique(cjkBigrams(text));
  const trigrams = unique([
    ...terms.filter((t) => [...t].length >= 4),
    ...(normalize(text).match(CJK_RUN_RE) ?? []).filter((r) => [...r].length >= 3),
  ]);
  return { terms: terms.slice(0, maxTerms), cjk: cjk.slice(0, maxTerms), trigrams: trigrams.slice(0, maxTerms) };
}

export function isEmptyQuery(q: LexicalQuery): boolean {
  return q.terms.length === 0 && q.cjk.length === 0 && q.trigrams.length === 0;
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}

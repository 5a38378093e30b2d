// What a forget looks for in the session index besides the forgotten text itself. The index
// holds a tool call as `name {JSON arguments}` cut at 1,000 characters, so a memory_remember
// call carries the text JSON-escaped (a quote as \", a line break as \n) and, when long, only
// its beginning; a plain substring test of the text missed both and left the call searchable.
// The learning loop's experience (core/learning/forget.ts) and results waiting in the RAP
// outbox (toolsets/rap/outbox-forget.ts) are searched for the same needles.
import { words as wordsOf } from "../retrieval/analyze.js";

/** A text's first characters: long enough to be the forgotten text and nothing else, short enough to survive an argument excerpt. */
export const NEEDLE_HEAD_CHARS = 400;

/** The form texts are compared in: NFKC, lower case, runs of white space as one space. */
export function foldForMatch(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
}

export function forgetNeedles(texts: string[]): string[] {
  const out = new Set<string>();
  for (const t of texts) {
    const escaped = JSON.stringify(t).slice(1, -1);
    for (const form of [t, escaped]) {
      out.add(form);
      // Arrays.from counts characters, so a head never ends inside a surrogate pair
      const chars = Array.from(form);
      if (chars.length > NEEDLE_HEAD_CHARS * 1.5) out.add(chars.slice(0, NEEDLE_HEAD_CHARS).join(""));
    }
  }
  return [...out];
}

/**
 * The words a store looks for a needle's candidate messages by: those of three letters or more
 * (at most 8). A needle with none ("Go 1.22", "C#", "OK") has its shorter words instead. Before,
 * such a text was never looked for, so a very short memory stayed in session search after its
 * forget. A needle with no word and no CJK pair (a lone CJK character) has the user's every
 * message read (`scanAll`); `cjkPairs` are the needle's two-character CJK pairs.
 */
export function needleWords(needle: string, cjkPairs: readonly string[]): { words: string[]; scanAll: boolean } {
  const long = [...new Set(needle.match(/[\p{L}\p{N}]{3,}/gu) ?? [])].slice(0, 8);
  // CJK runs are looked for by their pairs (a run is one word to the index)
  const words = long.length > 0 ? long : [...new Set(wordsOf(needle))].slice(0, 8);
  return { words, scanAll: words.length === 0 && cjkPairs.length === 0 && /\S/u.test(needle) };
}

/**
 * What a store reads with first: the needle's longest run of ASCII letters and digits (compared
 * ASCII case-insensitively, and nothing to escape in LIKE), else nothing, which reads every row.
 */
export function probeOf(needle: string): string {
  const runs = needle.match(/[a-z0-9]{3,}/g) ?? [];
  return runs.reduce((a, b) => (b.length > a.length ? b : a), "");
}

/** How a forget finds stored copies of texts: probes for the stores, then the exact check. */
export interface CopyMatcher {
  probes: string[];
  /** whether a text holds one of the needles (folded as foldForMatch does) */
  holds(text: string): boolean;
  /** where the first copy begins in the folded text (foldForMatch), or -1 */
  find(text: string): number;
}

/** The matcher for these texts (memory contents and ids); null when they hold nothing to look for. */
export function copyMatcher(texts: string[]): CopyMatcher | null {
  const needles = [...new Set(forgetNeedles(texts).map(foldForMatch))].filter((n) => n.length > 0);
  if (needles.length === 0) return null;
  return {
    probes: [...new Set(needles.map(probeOf))],
    holds: (text) => {
      const t = foldForMatch(text);
      return needles.some((n) => t.includes(n));
    },
    find: (text) => {
      const t = foldForMatch(text);
      return needles.reduce((first, n) => {
        const at = t.indexOf(n);
        return at >= 0 && (first < 0 || at < first) ? at : first;
      }, -1);
    },
  };
}

/** How far up the thread tree a forget looks for the user turn that led to a child's remember. */
export const MAX_PARENT_HOPS = 16;

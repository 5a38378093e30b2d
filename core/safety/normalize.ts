// Text normalisation for the pattern pass, keeping a map back to the original so findings can
// point at (and redact) the exact original characters.
//   - invisible/format characters are dropped, so they cannot split a trigger word;
//   - NFKC folds full-width, ligature and mathematical-alphanumeric look-alikes;
//   - a small table folds Cyrillic/Greek letters that look Latin ("іgnоrе");
//   - whitespace runs collapse to one space, or one newline if the run held a line break,
//     so line-anchored patterns still work.
// Case is left alone: patterns use the `i` flag, because lowercasing can change string length.
import { isStripped } from "./invisible.js";

export interface NormalizedText {
  text: string;
  /** for each UTF-16 unit of `text`: start of the original span it came from */
  starts: number[];
  /** for each UTF-16 unit of `text`: end (exclusive) of the original span it came from */
  ends: number[];
}

export interface NormalizeOptions {
  /** NFKC + confusable folding (default true) */
  fold?: boolean;
  /** collapse whitespace runs (default true) */
  collapseWhitespace?: boolean;
}

const CONFUSABLES: Record<string, string> = {
  // Cyrillic
  "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
  "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w",
  "һ": "h", "ɡ": "g", "ӏ": "l",
  "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
  "У": "Y", "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "I",
  // Greek
  "α": "a", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
  "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
  "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
};

const COMBINING = /^\p{M}$/u;
const ALL_SPACE = /^\s+$/u;

// Plain ASCII needs no NFKC, has no confusables and cannot take a combining mark from a character
// below U+0300, so most text takes a per-unit fast path (the general path costs ~100 µs per short
// memory, a large share of a bulk import). The table comes from isStripped itself, so both agree.
const ASCII_STRIPPED = Array.from({ length: 128 }, (_, cp) => isStripped(cp));
const FIRST_COMBINING = 0x300;

/** Normalise text[start, end). Indexes in the result map to absolute indexes of `text`. */
export function normalizeForScan(
  text: string,
  start = 0,
  end = text.length,
  options: NormalizeOptions = {},
): NormalizedText {
  const fold = options.fold ?? true;
  const collapse = options.collapseWhitespace ?? true;
  const out: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let lastWasSpace = false;

  let i = start;
  while (i < end) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80 && !ASCII_STRIPPED[unit] && (i + 1 >= end || text.charCodeAt(i + 1) < FIRST_COMBINING)) {
      const space = unit === 32 || (unit >= 9 && unit <= 13);
      if (collapse && space) {
        const isBreak = unit >= 10 && unit <= 13;
        if (lastWasSpace) {
          const k = out.length - 1;
          if (isBreak) out[k] = "\n";
          ends[k] = i + 1;
        } else {
          out.push(isBreak ? "\n" : " ");
          starts.push(i);
          ends.push(i + 1);
          lastWasSpace = true;
        }
      } else {
        out.push(text[i]!);
        starts.push(i);
        ends.push(i + 1);
        lastWasSpace = false;
      }
      i += 1;
      continue;
    }
    const cp = text.codePointAt(i) ?? 0;
    const width = cp > 0xffff ? 2 : 1;
    if (isStripped(cp)) {
      i += width;
      continue;
    }
    // A cluster is one base code point plus its combining marks, so NFKC can compose them.
    let j = i + width;
    while (j < end) {
      const next = text.codePointAt(j) ?? 0;
      if (isStripped(next)) break;
      const ch = String.fromCodePoint(next);
      if (!COMBINING.test(ch)) break;
      j += ch.length;
    }
    const raw = text.slice(i, j);
    let piece = raw;
    if (fold) {
      piece = raw.normalize("NFKC");
      let folded = "";
      for (const ch of piece) folded += CONFUSABLES[ch] ?? ch;
      piece = folded;
    }
    if (collapse && ALL_SPACE.test(piece)) {
      const isBreak = /[\n\r\u2028\u2029\v\f]/.test(piece);
      if (lastWasSpace) {
        const k = out.length - 1;
        if (isBreak) out[k] = "\n";
        ends[k] = j;
      } else {
        out.push(isBreak ? "\n" : " ");
        starts.push(i);
        ends.push(j);
        lastWasSpace = true;
      }
    } else if (piece.length > 0) {
      for (let u = 0; u < piece.length; u++) {
        out.push(piece[u] ?? "");
        starts.push(i);
        ends.push(j);
      }
      lastWasSpace = false;
    }
    i = j;
  }
  return { text: out.join(""), starts, ends };
}

/** Map a [from, to) span of the normalised text back to an absolute {index, length} in the original. */
export function mapSpan(norm: NormalizedText, from: number, to: number): { index: number; length: number } {
  const index = norm.starts[from] ?? norm.starts[norm.starts.length - 1] ?? 0;
  const last = Math.max(from, to - 1);
  const endAbs = norm.ends[last] ?? norm.ends[norm.ends.length - 1] ?? index;
  return { index, length: Math.max(0, endAbs - index) };
}

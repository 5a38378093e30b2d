// Invisible and direction-changing code points. They let a payload hide from the person reviewing
// a memory while the model still reads it (zero-width splitting of trigger words, bidi reordering,
// Unicode tag "ASCII smuggling", variation-selector byte smuggling), so each run is reported; the
// pattern pass strips them so "ig\u200Bnore" still reads as "ignore".

export type InvisibleKind = "zero_width" | "bidi_control" | "unicode_tag" | "variation_selector_run";

export interface InvisibleRun {
  kind: InvisibleKind;
  index: number;
  length: number;
}

/** Code points that are reported when they appear outside a legitimate context. */
export function reportedKind(cp: number): InvisibleKind | null {
  if (cp === 0x200b || cp === 0x200c || cp === 0x200d || cp === 0xfeff) return "zero_width";
  if (cp >= 0x2060 && cp <= 0x2064) return "zero_width";
  if (cp === 0x200e || cp === 0x200f) return "bidi_control";
  if (cp >= 0x202a && cp <= 0x202e) return "bidi_control";
  if (cp >= 0x2066 && cp <= 0x2069) return "bidi_control";
  if (cp >= 0xe0000 && cp <= 0xe007f) return "unicode_tag";
  return null;
}

export function isVariationSelector(cp: number): boolean {
  return (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef);
}

/** Formatting fillers with no visible glyph: stripped for matching but not worth a finding. */
function isFiller(cp: number): boolean {
  return (
    cp === 0x00ad || // soft hyphen (common in text copied from the web)
    cp === 0x034f ||
    cp === 0x061c ||
    cp === 0x115f ||
    cp === 0x1160 ||
    cp === 0x17b4 ||
    cp === 0x17b5 ||
    cp === 0x180e ||
    cp === 0x3164 ||
    cp === 0xffa0 ||
    cp === 0x2065
  );
}

/** True for every code point the pattern pass drops. */
export function isStripped(cp: number): boolean {
  return reportedKind(cp) !== null || isVariationSelector(cp) || isFiller(cp);
}

const PICTOGRAPHIC = /[\p{Extended_Pictographic}\u{1F3FB}-\u{1F3FF}\uFE0F\u20E3]/u;
const NON_LATIN_LETTER = /[\p{L}\p{M}]/u;
const LATIN = /\p{Script=Latin}/u;
const RTL_LETTER = /[\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;
const BLACK_FLAG = 0x1f3f4;

function cpBefore(text: string, i: number): string {
  if (i <= 0) return "";
  const lo = text.charCodeAt(i - 1);
  if (lo >= 0xdc00 && lo <= 0xdfff && i >= 2) return text.slice(i - 2, i);
  return text.slice(i - 1, i);
}

function cpAt(text: string, i: number): string {
  const cp = text.codePointAt(i);
  return cp === undefined ? "" : String.fromCodePoint(cp);
}

function isScriptJoinerContext(prev: string, next: string): boolean {
  // ZWJ/ZWNJ shape Arabic, Persian and Indic words; in Latin text they only split words.
  return NON_LATIN_LETTER.test(prev) && NON_LATIN_LETTER.test(next) && !LATIN.test(prev) && !LATIN.test(next);
}

/** Legitimate uses: emoji ZWJ sequences, script joiners, direction marks in RTL text, a leading BOM. */
function isExempt(text: string, i: number, cp: number, runEnd: number): boolean {
  const prev = cpBefore(text, i);
  const next = cpAt(text, runEnd);
  if (cp === 0x200d && PICTOGRAPHIC.test(prev) && /\p{Extended_Pictographic}/u.test(next)) return true;
  if ((cp === 0x200c || cp === 0x200d) && isScriptJoinerContext(prev, next)) return true;
  if (cp === 0x200e || cp === 0x200f) {
    const around = text.slice(Math.max(0, i - 16), Math.min(text.length, runEnd + 16));
    if (RTL_LETTER.test(around)) return true;
  }
  if (cp === 0xfeff && i === 0) return true;
  return false;
}

/** Length of a valid emoji tag sequence (subdivision flags such as England) starting at `i`, or 0. */
function emojiTagSequenceLength(text: string, i: number): number {
  if (text.codePointAt(i - 2) !== BLACK_FLAG) return 0;
  let j = i;
  let tags = 0;
  while (j < text.length && tags < 12) {
    const cp = text.codePointAt(j) ?? 0;
    if (cp === 0xe007f) return tags > 0 ? j + 2 - i : 0;
    if (!((cp >= 0xe0030 && cp <= 0xe0039) || (cp >= 0xe0061 && cp <= 0xe007a))) return 0;
    tags++;
    j += 2;
  }
  return 0;
}

/** Runs of reported invisible code points in text[start, end), with absolute indexes. */
export function findInvisible(text: string, start = 0, end = text.length): InvisibleRun[] {
  const runs: InvisibleRun[] = [];
  let i = start;
  while (i < end) {
    const cp = text.codePointAt(i) ?? 0;
    const width = cp > 0xffff ? 2 : 1;
    if (cp === BLACK_FLAG) {
      const tagLen = emojiTagSequenceLength(text, i + 2);
      if (tagLen > 0) {
        i += 2 + tagLen;
        continue;
      }
    }
    if (isVariationSelector(cp)) {
      // One selector after a base character is normal emoji presentation; a run encodes data.
      let j = i;
      let count = 0;
      while (j < end && isVariationSelector(text.codePointAt(j) ?? 0)) {
        j += (text.codePointAt(j) ?? 0) > 0xffff ? 2 : 1;
        count++;
      }
      if (count >= 2) runs.push({ kind: "variation_selector_run", index: i, length: j - i });
      i = j;
      continue;
    }
    const kind = reportedKind(cp);
    if (kind === null) {
      i += width;
      continue;
    }
    // Extend over a run of the same kind so one hidden payload yields one finding.
    let j = i + width;
    while (j < end) {
      const next = text.codePointAt(j) ?? 0;
      if (reportedKind(next) !== kind) break;
      j += next > 0xffff ? 2 : 1;
    }
    if (!(j - i === width && isExempt(text, i, cp, j))) runs.push({ kind, index: i, length: j - i });
    i = j;
  }
  return runs;
}

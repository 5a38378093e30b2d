// Cutting text for excerpts and previews without splitting a character. A JavaScript string
// counts UTF-16 units: a cut between the two halves of a surrogate pair (an emoji, a rare CJK
// character) leaves a lone surrogate, which JSON.stringify writes as "\ud83d". The daemon's
// serde_json refuses such a body (400, not retried), so the tool result was lost.

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** `s.slice(0, end)`, one unit shorter when `end` falls inside a surrogate pair. */
export function headOf(s: string, end: number): string {
  if (end <= 0) return "";
  if (end >= s.length) return s;
  return s.slice(0, isHigh(s.charCodeAt(end - 1)) && isLow(s.charCodeAt(end)) ? end - 1 : end);
}

/** `s.slice(start, end)` with both ends moved off the middle of a surrogate pair. */
export function sliceOf(s: string, start: number, end = s.length): string {
  let a = Math.max(0, start);
  if (a > 0 && a < s.length && isLow(s.charCodeAt(a)) && isHigh(s.charCodeAt(a - 1))) a += 1;
  return headOf(s, end).slice(a);
}

/** At most `max` units: the head and "…" (counted) when longer. */
export function clip(s: string, max: number): string {
  return s.length > max ? `${headOf(s, max - 1)}…` : s;
}

/** Lone surrogates (never valid in UTF-8) as U+FFFD; paired ones untouched. */
export function wellFormed(s: string): string {
  return s.replace(/\p{Cs}/gu, "\uFFFD");
}

/** Whitespace runs (line breaks included) as one space, trimmed: a multi-line text on one listing line. */
export function oneLine(s: string): string {
  return s.replace(/\s+/gu, " ").trim();
}

// Which slices of a text the scanners read. Scanning is capped so a huge write cannot stall the
// store; the tail is read as well because an attacker who pads a text to push a payload past the
// cap puts it at the end.

export const HEAD_CHARS = 65_536;
export const TAIL_CHARS = 4_096;

export interface ScanWindow {
  start: number;
  end: number;
}

/** A boundary that does not split a surrogate pair (moves forward past a low surrogate). */
function safeBoundary(text: string, i: number): number {
  if (i <= 0 || i >= text.length) return Math.max(0, Math.min(i, text.length));
  const c = text.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff ? i + 1 : i;
}

/** Disjoint, ordered windows covering the head and the tail of `text`. */
export function scanWindows(text: string, headChars: number = HEAD_CHARS, tailChars: number = TAIL_CHARS): ScanWindow[] {
  if (text.length <= headChars) return [{ start: 0, end: text.length }];
  const headEnd = safeBoundary(text, headChars);
  const tailStart = Math.max(headEnd, safeBoundary(text, text.length - tailChars));
  const windows: ScanWindow[] = [{ start: 0, end: headEnd }];
  if (tailStart < text.length) windows.push({ start: tailStart, end: text.length });
  return windows;
}

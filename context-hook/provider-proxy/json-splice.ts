// Replace one string value inside a JSON text without re-encoding the rest. JSON.parse →
// JSON.stringify would round large integers (tool arguments carrying 64-bit ids), rewrite `1.0`
// as `1` and reorder integer-like keys; the upstream provider must see every other byte as sent.

export interface Span {
  start: number;
  /** exclusive */
  end: number;
}

class ScanError extends Error {}

/** whitespace , ] } end a bare value */
const VALUE_END = new Set([0x20, 0x0a, 0x0d, 0x09, 0x2c, 0x5d, 0x7d]);

function skipWs(s: string, i: number): number {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
    else return i;
  }
}

/** `i` at the opening quote; returns the index after the closing quote */
function scanString(s: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = s.indexOf('"', j);
    if (q < 0) throw new ScanError("unterminated string");
    let backslashes = 0;
    for (let k = q - 1; k > i && s.charCodeAt(k) === 0x5c; k--) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** `i` at a value; returns the index after it */
function scanValue(s: string, i: number): number {
  const c = s[i];
  if (c === '"') return scanString(s, i);
  if (c === "{" || c === "[") {
    const close = c === "{" ? "}" : "]";
    i = skipWs(s, i + 1);
    if (s[i] === close) return i + 1;
    for (;;) {
      if (c === "{") {
        if (s[i] !== '"') throw new ScanError("expected a key");
        i = skipWs(s, scanString(s, i));
        if (s[i] !== ":") throw new ScanError("expected ':'");
        i = skipWs(s, i + 1);
      }
      i = skipWs(s, scanValue(s, i));
      if (s[i] === ",") i = skipWs(s, i + 1);
      else if (s[i] === close) return i + 1;
      else throw new ScanError(`expected ',' or '${close}'`);
    }
  }
  // number, true, false, null
  let j = i;
  while (j < s.length && !VALUE_END.has(s.charCodeAt(j))) j++;
  if (j === i) throw new ScanError("expected a value");
  return j;
}

function keyEquals(s: string, start: number, end: number, key: string): boolean {
  const raw = s.slice(start + 1, end - 1);
  if (!raw.includes("\\")) return raw === key;
  return JSON.parse(s.slice(start, end)) === key;
}

/**
 * The span of the value at `path` (object keys only), or null when a key is missing or a step
 * is not an object. Throws on text that is not JSON. First match wins: a duplicate key is
 * rejected by the serde side anyway.
 */
export function findValueSpan(s: string, path: readonly string[]): Span | null {
  let i = skipWs(s, 0);
  for (const key of path) {
    if (s[i] !== "{") return null;
    i = skipWs(s, i + 1);
    let found = false;
    while (s[i] !== "}") {
      if (s[i] !== '"') throw new ScanError("expected a key");
      const keyEnd = scanString(s, i);
      const match = keyEquals(s, i, keyEnd, key);
      i = skipWs(s, keyEnd);
      if (s[i] !== ":") throw new ScanError("expected ':'");
      i = skipWs(s, i + 1);
      if (match) {
        found = true;
        break;
      }
      i = skipWs(s, scanValue(s, i));
      if (s[i] === ",") i = skipWs(s, i + 1);
      else if (s[i] !== "}") throw new ScanError("expected ',' or '}'");
    }
    if (!found) return null;
  }
  return { start: i, end: scanValue(s, i) };
}

/**
 * `text` with the string at `path` replaced by `value`; null when there is no string there.
 */
export function replaceStringAt(text: string, path: readonly string[], value: string): string | null {
  let span: Span | null;
  try {
    span = findValueSpan(text, path);
  } catch (e) {
    if (e instanceof ScanError) return null;
    throw e;
  }
  if (!span || text[span.start] !== '"') return null;
  return text.slice(0, span.start) + JSON.stringify(value) + text.slice(span.end);
}

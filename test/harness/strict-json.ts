// JSON parsing with serde_json's strictness (reference §1.2): besides what JSON.parse rejects
// (syntax errors, a UTF-8 BOM), serde rejects invalid UTF-8 and duplicate keys in one object,
// and a `usize` field rejects float-looking literals such as `2.0` or `1e0`. Its parser also
// refuses a surrogate escape that is not half of a pair (a Rust String is UTF-8), a number
// beyond f64 (JSON.parse makes it Infinity) and nesting 128 arrays or objects deep. JSON.parse
// would accept all of these, so a harness built on it would pass payloads the daemon answers
// with 400.

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export class StrictJsonError extends Error {
  override name = "StrictJsonError";
}

/** Decode bytes as strict UTF-8 (a BOM is kept, so parsing rejects it like serde does). */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new StrictJsonError("invalid UTF-8");
  }
}

export interface StrictParse {
  value: unknown;
  /** raw number literals of the top-level object, by key (for integer-only fields) */
  topLevelNumbers: Map<string, string>;
}

/** serde_json's recursion limit: entering the 128th nested array or object fails. */
const MAX_DEPTH = 128;

/** JSON.parse plus a scan for what serde_json rejects besides. Throws StrictJsonError. */
export function parseStrictJson(text: string): StrictParse {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new StrictJsonError((e as Error).message);
  }
  const topLevelNumbers = new Map<string, string>();
  // The text is valid JSON here, so a shallow tokenizer is enough.
  type Frame = { keys: Set<string> | null; expectKey: boolean; lastKey: string | null };
  const stack: Frame[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "{" || c === "[") {
      if (stack.length + 1 >= MAX_DEPTH) throw new StrictJsonError("recursion limit exceeded");
      stack.push({ keys: c === "{" ? new Set() : null, expectKey: c === "{", lastKey: null });
      i++;
    } else if (c === "}" || c === "]") {
      stack.pop();
      i++;
    } else if (c === ",") {
      const top = stack[stack.length - 1];
      if (top?.keys) top.expectKey = true;
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const str = JSON.parse(text.slice(i, j + 1)) as string;
      // the bytes were valid UTF-8, so a lone surrogate can only come from a \u escape
      if (/\p{Cs}/u.test(str)) throw new StrictJsonError("lone leading surrogate in hex escape");
      const top = stack[stack.length - 1];
      if (top?.keys && top.expectKey) {
        const key = str;
        if (top.keys.has(key)) throw new StrictJsonError(`duplicate field \`${key}\``);
        top.keys.add(key);
        top.expectKey = false;
        top.lastKey = key;
      }
      i = j + 1;
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      let j = i;
      while (j < text.length && /[-+0-9.eE]/.test(text[j]!)) j++;
      if (!Number.isFinite(Number(text.slice(i, j)))) throw new StrictJsonError("number out of range");
      const top = stack[stack.length - 1];
      if (stack.length === 1 && top?.keys && top.lastKey !== null) topLevelNumbers.set(top.lastKey, text.slice(i, j));
      i = j;
    } else {
      i++;
    }
  }
  return { value, topLevelNumbers };
}

/** serde's `usize` accepts only integer literals. */
export function isIntegerLiteral(raw: string): boolean {
  return /^-?(0|[1-9][0-9]*)$/.test(raw);
}

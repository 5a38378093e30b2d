// Tool-call display strings. The runtime evaluates a tool's `displayScript` (Rhai) with the
// call's arguments as an `args` map and stores the result as the ToolCall's `display_as`; any
// failure yields nothing (reference §1.3). Rhai is not available here, so this evaluates the
// subset tool servers use in practice — `"literal" + args.name + …` — and treats every other
// script as a failed evaluation (no display string), which is what Rhai does on an error.

type Val = string | number | boolean;

/** Rhai's to_string of an `args` value: strings, bools and numbers natively, other JSON as text. */
function argValue(v: unknown): Val | undefined {
  if (typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "number") return v;
  if (v === undefined) return undefined;
  return JSON.stringify(v);
}

function show(v: Val): string {
  if (typeof v === "number" && !Number.isInteger(v)) return String(v);
  return String(v);
}

export function evalDisplayScript(script: string | null | undefined, args: unknown): string | null {
  if (!script) return null;
  const obj = args !== null && typeof args === "object" && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  const tokens: Val[] = [];
  let i = 0;
  const src = script.trim();
  let expectOperand = true;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (expectOperand && c === '"') {
      let j = i + 1;
      let s = "";
      while (j < src.length && src[j] !== '"') {
        if (src[j] === "\\") {
          const n = src[j + 1];
          s += n === "n" ? "\n" : n === "t" ? "\t" : (n ?? "");
          j += 2;
        } else {
          s += src[j];
          j++;
        }
      }
      if (j >= src.length) return null;
      tokens.push(s);
      i = j + 1;
      expectOperand = false;
      continue;
    }
    const m = expectOperand ? /^args\.([A-Za-z_][A-Za-z0-9_]*)/.exec(src.slice(i)) : null;
    if (m) {
      const v = argValue(Object.hasOwn(obj, m[1]!) ? obj[m[1]!] : undefined);
      // a missing key is Rhai's `()`, and `string + ()` is an error
      if (v === undefined) return null;
      tokens.push(v);
      i += m[0].length;
      expectOperand = false;
      continue;
    }
    if (!expectOperand && c === "+") {
      expectOperand = true;
      i++;
      continue;
    }
    return null;
  }
  if (expectOperand || tokens.length === 0) return null;
  // Rhai adds left to right; the result must be a string (eval::<String>).
  let acc: Val = tokens[0]!;
  for (const t of tokens.slice(1)) {
    if (typeof acc === "string" || typeof t === "string") acc = show(acc) + show(t);
    else if (typeof acc === "number" && typeof t === "number") acc = acc + t;
    else return null;
  }
  return typeof acc === "string" ? acc : null;
}

// safeParse for values that come off the wire. zod's length checks (`.min(1)` on a list) read
// `value.length` even when the value is neither a list nor text, and compare it with a number: a
// JSON object whose own "valueOf" and "toString" are not functions, such as
// {"ids": {"length": {"valueOf": 1, "toString": 1}}}, makes that comparison throw out of safeParse.
// The tools answered "memory_forget failed: Cannot convert object to primitive value" and the admin
// API a 500. Such a value is a wrong argument like any other: it is parsed again with those objects
// left out, which yields the ordinary issue at its field ("ids" must be an array).
import { z } from "zod";

/** an object a comparison cannot turn into a number or a string */
function unconvertible(v: object): boolean {
  const own = (k: string) => Object.hasOwn(v, k) && typeof (v as Record<string, unknown>)[k] !== "function";
  return own("valueOf") || own("toString");
}

/** a copy with every unconvertible object left out (undefined), and the path of the first one */
function blanked(value: unknown, path: PropertyKey[], found: { path: PropertyKey[] | null }): unknown {
  if (value === null || typeof value !== "object") return value;
  if (!Array.isArray(value) && unconvertible(value)) {
    found.path ??= path;
    return undefined;
  }
  if (Array.isArray(value)) return value.map((v, i) => blanked(v, [...path, i], found));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, blanked(v, [...path, k], found)]));
}

export function safeParseWire<S extends z.ZodType>(schema: S, value: unknown): z.ZodSafeParseResult<z.output<S>> {
  try {
    return schema.safeParse(value);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    const found: { path: PropertyKey[] | null } = { path: null };
    const again = schema.safeParse(blanked(value, [], found));
    if (!again.success) return again;
    // the blanked copy passes (the object sat where anything goes): still not a value to act on
    const issue = { code: "custom" as const, path: found.path ?? [], message: 'is an object with its own "valueOf" or "toString" keys, which no argument takes', input: value };
    return { success: false, error: new z.ZodError([issue]) } as z.ZodSafeParseResult<z.output<S>>;
  }
}

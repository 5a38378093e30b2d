// Turns zod validation issues into one line that names each bad field and what to send instead:
// the `Error: …` result a model gets for bad tool arguments (the runtime never validates them,
// reference §1.3, so this text is its only feedback) and the 400 text for a malformed request.
import type { z } from "zod";
import { firstBadCharacter } from "../../core/bad-characters.js";

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

const MAX_ISSUES = 8;

const ARTICLE: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  bigint: "an integer",
  boolean: "a boolean (true or false)",
  object: "an object",
  array: "an array",
  null: "null",
  nonoptional: "a value",
  date: "a date",
};

function label(path: Path, root: string): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out === "" ? root : `"${out}"`;
}

function valueAt(root: unknown, path: Path): unknown {
  let v = root;
  for (const key of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "number" && !Number.isInteger(v)) return `the number ${v}`;
  if (typeof v === "string") return v.length > 40 ? "a string" : `the string ${JSON.stringify(v)}`;
  if (typeof v === "object") return "an object";
  return `${typeof v} ${String(v)}`;
}

function quoteList(values: readonly unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join(", ");
}

function bound(i: Issue & { code: "too_small" | "too_big" }): string {
  const small = i.code === "too_small";
  const n = Number(small ? i.minimum : i.maximum);
  if (i.exact) {
    const unit = i.origin === "string" ? " characters long" : i.origin === "array" || i.origin === "set" ? " items" : "";
    return i.origin === "array" || i.origin === "set" ? `must have exactly ${n}${unit}` : `must be exactly ${n}${unit}`;
  }
  const at = i.inclusive ? (small ? "at least" : "at most") : small ? "more than" : "less than";
  switch (i.origin) {
    case "string":
      return small && n === 1 && i.inclusive ? "must not be empty" : `must be ${at} ${n} characters long`;
    case "array":
    case "set":
      return small && n === 1 && i.inclusive ? "must not be empty" : `must have ${at} ${n} items`;
    default:
      return `must be ${at} ${n}`;
  }
}

/**
 * What is wrong at the issue's path, without naming the path ("must be an array (got …)"); `join`
 * is how the path goes in front, or null when the text names what it is about already.
 */
function problem(i: Issue, args: unknown, rootKeys: string[] | null): { text: string; join: " " | ": " | null } {
  const said = (text: string) => ({ text, join: " " as const });
  switch (i.code) {
    case "invalid_type": {
      const expected = ARTICLE[i.expected] ?? i.expected;
      const got = valueAt(args, i.path);
      if (got === undefined) return said(`is required (expected ${expected})`);
      return said(`must be ${expected} (got ${kindOf(got)})`);
    }
    case "too_small":
    case "too_big":
      return said(bound(i));
    case "invalid_value":
      return said(i.values.length === 1 ? `must be ${quoteList(i.values)}` : `must be one of ${quoteList(i.values)}`);
    case "unrecognized_keys": {
      const keys = quoteList(i.keys);
      const plural = i.keys.length === 1 ? "" : "s";
      if (i.path.length === 0 && rootKeys) {
        return { text: `unknown argument${plural} ${keys} (allowed: ${rootKeys.join(", ") || "none"})`, join: null };
      }
      return { text: `has unknown field${plural} ${keys}`, join: " " };
    }
    case "invalid_union": {
      if ("options" in i && Array.isArray(i.options)) return said(`must be one of ${quoteList(i.options)}`);
      // Plain union: name the top-level types and values the alternatives expected (an import's
      // "scope" is a level or an object: "team" was told only "must be an object").
      const expected = new Set<string>();
      for (const branch of i.errors) {
        for (const b of branch) {
          if (b.path.length > 0) continue;
          if (b.code === "invalid_type") expected.add(ARTICLE[b.expected] ?? b.expected);
          else if (b.code === "invalid_value") expected.add(b.values.length === 1 ? quoteList(b.values) : `one of ${quoteList(b.values)}`);
        }
      }
      const got = valueAt(args, i.path);
      if (expected.size > 0) {
        const what = [...expected].join(" or ");
        return said(got === undefined ? `is required (expected ${what})` : `must be ${what} (got ${kindOf(got)})`);
      }
      return said("does not match any accepted form");
    }
    case "invalid_format":
      return said(`must be a valid ${i.format}`);
    case "not_multiple_of":
      return said(`must be a multiple of ${String(i.divisor)}`);
    case "custom": {
      // A refinement's message usually names its fields already.
      const last = i.path.at(-1);
      if (i.path.length === 0 || (last !== undefined && i.message.includes(`"${String(last)}"`))) return { text: i.message, join: null };
      return { text: i.message, join: ": " };
    }
    default:
      return { text: i.message, join: ": " };
  }
}

function describe(i: Issue, args: unknown, rootKeys: string[] | null, root: string): string {
  const p = problem(i, args, rootKeys);
  return p.join === null ? p.text : `${label(i.path, root)}${p.join}${p.text}`;
}

/** The field an issue is about (`tags[0]`, or null for the whole value) and what is wrong with it. */
export function issueParts(schema: z.ZodType, value: unknown, issue: Issue): { field: string | null; text: string } {
  const field = issue.path.length === 0 ? null : label(issue.path, "").slice(1, -1);
  return { field, text: problem(issue, value, shapeKeys(schema)).text };
}

/** The keys a top-level object schema accepts, for "allowed: …" hints. */
function shapeKeys(schema: z.ZodType): string[] | null {
  const shape = (schema as { shape?: unknown }).shape;
  return shape && typeof shape === "object" ? Object.keys(shape) : null;
}

/** One readable line for a failed parse of `value` against `schema`: `"a" is required …; "b" must …`. */
export function describeIssues(schema: z.ZodType, value: unknown, issues: readonly Issue[], root = "arguments"): string {
  const keys = shapeKeys(schema);
  const parts = [...new Set(issues.map((i) => describe(i, value, keys, root)))];
  const shown = parts.slice(0, MAX_ISSUES);
  if (parts.length > shown.length) shown.push(`and ${parts.length - shown.length} more problems`);
  return shown.join("; ");
}

export function invalidArgumentsText(tool: string, schema: z.ZodType, args: unknown, issues: readonly Issue[]): string {
  return `Error: invalid arguments for ${tool}: ${describeIssues(schema, args, issues)}. Fix the arguments and call ${tool} again.`;
}

/**
 * A NUL character (U+0000) or an unpaired surrogate in any argument is refused before the handler
 * runs: no tool has a use for one, and no store keeps it as given (core/bad-characters.ts):
 * PostgreSQL text cannot hold a NUL, and an unpaired surrogate came back from SQLite as three
 * U+FFFD and from PostgreSQL as one.
 */
export function badCharacterArgumentText(tool: string, args: unknown): string | null {
  const hit = firstBadCharacter(args);
  if (!hit) return null;
  const line = hit.text.slice(0, hit.at).split("\n").length;
  const where = hit.text.includes("\n") ? `line ${line}, character ${hit.at + 1}` : `character ${hit.at + 1}`;
  return `Error: invalid arguments for ${tool}: ${label(hit.path, "arguments")} holds ${hit.what} at ${where}; remove it and call ${tool} again.`;
}

// Step arguments with their constants abstracted: the same action on another file, line or id
// gets the same shape and digest, so recurring steps can be recognised across episodes.
import { createHash } from "node:crypto";
import { clip } from "../text.js";

const PATH = /(?:~|\.{1,2})?(?:\/[\w.@+-]+){2,}\/?|[\w.-]+\.(?:ts|tsx|js|mjs|cjs|jsx|py|rs|go|java|rb|md|json|yaml|yml|toml|sql|sh|c|h|cpp|hpp|css|html|txt|lock)\b/g;
const URL = /\bhttps?:\/\/\S+/g;
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const HEX = /\b[0-9a-f]{12,}\b/gi;
const NUMBER = /\b\d+(?:\.\d+)?\b/g;
const QUOTED = /(["'`])(?:(?!\1).){1,200}\1/g;
/** strings longer than this are content (a file body, a message), not part of the action */
const LONG_STRING = 80;

function abstractString(s: string): string {
  if (s.length > LONG_STRING) return "<text>";
  return s.replace(URL, "<url>").replace(UUID, "<id>").replace(PATH, "<path>").replace(HEX, "<id>").replace(QUOTED, "<str>").replace(NUMBER, "<n>");
}

export function abstractArgs(v: unknown, depth = 0): unknown {
  if (depth > 6) return "<…>";
  if (typeof v === "string") return abstractString(v);
  if (typeof v === "number") return "<n>";
  if (typeof v === "boolean" || v === null || v === undefined) return v ?? null;
  if (Array.isArray(v)) {
    // a list's length is a constant too: keep the shapes of its distinct items
    const shapes = [...new Set(v.map((x) => JSON.stringify(abstractArgs(x, depth + 1))))];
    return shapes.slice(0, 4).map((s) => JSON.parse(s) as unknown);
  }
  if (typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v as object).sort()) out[k] = abstractArgs((v as Record<string, unknown>)[k], depth + 1);
    return out;
  }
  return "<?>";
}

export function argsShape(args: unknown, maxChars: number): string {
  const s = JSON.stringify(abstractArgs(args)) ?? "null";
  return clip(s, maxChars);
}

export function argsDigest(tool: string, shape: string): string {
  return createHash("sha256").update(`${tool}\0${shape}`).digest("hex").slice(0, 32);
}

// SKILL.md (Agent Skills format): YAML frontmatter + Markdown body, plus the other files of the
// skill folder (conventionally under references/, assets/ and scripts/, but a published skill
// also keeps forms.md or LICENSE.txt beside its SKILL.md). Parsing is strict about the fields the format defines
// and keeps any other frontmatter keys, so a skill written for another runtime survives a
// round-trip. Errors name the line of SKILL.md they are about.
import { createHash } from "node:crypto";
import { isMap, LineCounter, parseDocument, stringify } from "yaml";
import { CoreError } from "../errors.js";

export const SKILL_FILE = "SKILL.md";
const NAME_MAX = 64;
const DESCRIPTION_MAX = 1024;
const COMPATIBILITY_MAX = 500;
const NAME_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;

export interface SkillFile {
  /** relative to the skill folder, forward slashes (e.g. scripts/fill.py, reference.md) */
  path: string;
  /** text; scripts are stored as text and never executed by us */
  content: string;
}

export interface SkillDocument {
  name: string;
  description: string;
  /** every frontmatter key as written (name, description, license, compatibility, metadata, allowed-tools, …) */
  frontmatter: Record<string, unknown>;
  /** tools the skill asks for, from `allowed-tools` (list, or a comma- or space-separated string) */
  allowedTools: string[];
  /** Markdown, line endings normalised, no leading blank lines, exactly one trailing newline */
  body: string;
  files: SkillFile[];
}

export class SkillFormatError extends CoreError {
  constructor(
    message: string,
    readonly line: number | null,
  ) {
    super("invalid_argument", line === null ? message : `SKILL.md line ${line}: ${message}`);
  }
}

/** Why a name is not a valid skill name, or null when it is. */
export function nameProblem(name: string): string | null {
  if (name.length === 0) return "the name is empty";
  if (name.length > NAME_MAX) return `the name is ${name.length} characters; at most ${NAME_MAX}`;
  if (!NAME_RE.test(name)) {
    return `"${name}" is not a valid skill name: use lower-case letters, digits and single hyphens, not at the start or end`;
  }
  return null;
}

export function normaliseBody(text: string): string {
  const t = text.replace(/\r\n?/g, "\n").replace(/^\s*\n/, "").trimEnd();
  return t.length === 0 ? "" : `${t}\n`;
}

/** `allowed-tools` as a list: YAML list, or "Read, Grep" (comma form), or "Read Grep" (spec form). */
export function parseAllowedTools(v: unknown): string[] | string {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) {
    if (!v.every((x) => typeof x === "string" && x.trim().length > 0)) return "allowed-tools entries must be non-empty strings";
    return [...new Set(v.map((x: string) => x.trim()))];
  }
  if (typeof v !== "string") return "allowed-tools must be a list or a string";
  return splitToolList(v);
}

/**
 * A tool list written as one string, split as `allowed-tools` is: at commas outside parentheses
 * when there is one ("Read, Grep"), else at spaces outside them ("Read Grep"), so that
 * "Bash(git log:*)" stays one tool. `skills grant` reads its arguments the same way.
 */
export function splitToolList(s: string): string[] {
  const parts = splitOutsideParens(s, topLevelComma(s) ? /,/ : /\s/);
  return [...new Set(parts.map((p) => p.trim()).filter((p) => p.length > 0))];
}

/** Whether `s` holds a comma outside parentheses (the comma form). */
function topLevelComma(s: string): boolean {
  return splitOutsideParens(s, /,/).length > 1;
}

/**
 * Split at separators outside parentheses: a tool's argument pattern may hold spaces or commas
 * ("Bash(git log:*)", "Bash(sed -n 1,5p)") and is one tool.
 */
function splitOutsideParens(s: string, sep: RegExp): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "(") depth++;
    else if (ch === ")" && depth > 0) depth--;
    if (depth === 0 && sep.test(ch)) {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

/** Line (1-based, in SKILL.md) where a top-level frontmatter key is written; `fmStart` is the first YAML line. */
function keyLine(doc: ReturnType<typeof parseDocument>, lc: LineCounter, key: string, fmStart: number): number | null {
  const contents = doc.contents;
  if (!isMap(contents)) return null;
  for (const item of contents.items) {
    const k = item.key as { value?: unknown; range?: [number, number, number] } | null;
    if (k && k.value === key && k.range) return lc.linePos(k.range[0]).line + fmStart - 1;
  }
  return null;
}

/** YAML errors a plain (unquoted) value causes: ": " or " #" inside it, or a first character YAML reserves (` @ * [ …). */
const PLAIN_VALUE_ERRORS = new Set(["BLOCK_AS_IMPLICIT_KEY", "BAD_SCALAR_START", "UNEXPECTED_TOKEN"]);

/** The fix for such an error on a top-level `key: value` line: quote the value, naming the key. */
function quoteHint(code: string, line: string | undefined): string {
  const kv = line === undefined ? null : /^([A-Za-z0-9_-]+):[ \t]+(\S.*)$/.exec(line);
  if (!PLAIN_VALUE_ERRORS.has(code) || !kv || /^["'|>]/.test(kv[2]!)) return "";
  return `; if the value of "${kv[1]}" is text, put it in quotes: ${kv[1]}: "…"`;
}

/** Parse SKILL.md text (files come separately). Throws SkillFormatError naming the line. */
export function parseSkillMd(text: string, files: SkillFile[] = []): SkillDocument {
  const src = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const lines = src.split("\n");
  // a NUL is no Markdown, and PostgreSQL text cannot store it
  const nul = lines.findIndex((l) => l.includes("\u0000"));
  if (nul >= 0) throw new SkillFormatError("the text holds a NUL character (U+0000); remove it", nul + 1);
  if (lines[0]?.trim() !== "---") throw new SkillFormatError('SKILL.md must start with a "---" line opening the YAML frontmatter', 1);
  const close = lines.findIndex((l, i) => i > 0 && /^(---|\.\.\.)\s*$/.test(l));
  if (close < 0) throw new SkillFormatError('the frontmatter is never closed: add a "---" line after it', lines.length);
  const yamlText = lines.slice(1, close).join("\n");
  const lc = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  const first = doc.errors[0];
  if (first) {
    const line = first.linePos?.[0]?.line ?? lc.linePos(first.pos[0]).line;
    const msg = first.message.split("\n")[0] ?? first.message;
    throw new SkillFormatError(`invalid YAML: ${msg}${quoteHint(first.code, lines[line])}`, line + 1);
  }
  let fm: unknown;
  try {
    fm = doc.toJS({ maxAliasCount: 10 });
  } catch (e) {
    // e.g. aliases expanding past the limit (a billion-laughs frontmatter)
    throw new SkillFormatError(`invalid YAML: ${e instanceof Error ? e.message : String(e)} (a frontmatter may use aliases only a few times)`, 2);
  }
  if (fm === null || typeof fm !== "object" || Array.isArray(fm)) {
    throw new SkillFormatError("the frontmatter must be a mapping with at least name and description", 2);
  }
  const front = fm as Record<string, unknown>;
  const at = (k: string) => keyLine(doc, lc, k, 2) ?? 2;

  if (typeof front.name !== "string") throw new SkillFormatError('the frontmatter needs "name" (a string)', front.name === undefined ? 2 : at("name"));
  const np = nameProblem(front.name);
  if (np) throw new SkillFormatError(np, at("name"));
  if (typeof front.description !== "string" || front.description.trim().length === 0) {
    throw new SkillFormatError('the frontmatter needs a non-empty "description" (a string)', front.description === undefined ? 2 : at("description"));
  }
  // characters, not UTF-16 units: an emoji counts once
  const descriptionChars = [...front.description].length;
  if (descriptionChars > DESCRIPTION_MAX) {
    throw new SkillFormatError(`the description is ${descriptionChars} characters; at most ${DESCRIPTION_MAX}`, at("description"));
  }
  if (front.license !== undefined && typeof front.license !== "string") throw new SkillFormatError('"license" must be a string', at("license"));
  if (front.compatibility !== undefined && (typeof front.compatibility !== "string" || front.compatibility.length > COMPATIBILITY_MAX)) {
    throw new SkillFormatError(`"compatibility" must be a string of at most ${COMPATIBILITY_MAX} characters`, at("compatibility"));
  }
  if (front.metadata !== undefined && (front.metadata === null || typeof front.metadata !== "object" || Array.isArray(front.metadata))) {
    throw new SkillFormatError('"metadata" must be a mapping', at("metadata"));
  }
  const tools = parseAllowedTools(front["allowed-tools"]);
  if (typeof tools === "string") throw new SkillFormatError(tools, at("allowed-tools"));

  const body = normaliseBody(lines.slice(close + 1).join("\n"));
  if (body.length === 0) throw new SkillFormatError("the body (Markdown after the frontmatter) is empty", close + 1);
  return { name: front.name, description: front.description, frontmatter: front, allowedTools: tools, body, files: checkFiles(files) };
}

/**
 * Why a support-file path is not acceptable, or null. Any path inside the skill folder is: a body
 * links `[reference.md](reference.md)` as readily as `references/api.md`. The folder's own SKILL.md
 * is the skill itself; a file by that name (in any letter case: on macOS and Windows it is the same
 * file) would overwrite it on export.
 */
export function filePathProblem(path: string): string | null {
  const parts = path.split("/");
  if (path.includes("\u0000")) return `"${path.replace(/\u0000/g, "\\0")}" holds a NUL character (U+0000)`;
  if (path.startsWith("/") || parts.some((p) => p === "" || p === "." || p === ".." || p.includes("\\"))) {
    return `"${path}" must be a relative path without "." or ".." segments`;
  }
  if (parts.length === 1 && path.toLowerCase() === SKILL_FILE.toLowerCase()) {
    return `"${path}" would be a second ${SKILL_FILE}: the skill's own text is its ${SKILL_FILE}; rename or remove this file`;
  }
  return null;
}

function checkFiles(files: SkillFile[]): SkillFile[] {
  const seen = new Set<string>();
  for (const f of files) {
    const p = filePathProblem(f.path);
    if (p) throw new SkillFormatError(p, null);
    if (seen.has(f.path)) throw new SkillFormatError(`"${f.path}" is listed twice`, null);
    if (f.content.includes("\u0000")) throw new SkillFormatError(`"${f.path}" holds a NUL character (U+0000): support files are text; remove it`, null);
    seen.add(f.path);
  }
  // A path that is also a folder of another ("scripts" and "scripts/run.sh") names a version no
  // folder can hold: export stopped part way at it and import could never have read it.
  for (const f of files) {
    const parts = f.path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join("/");
      if (seen.has(folder)) throw new SkillFormatError(`"${folder}" is a file and also the folder of "${f.path}": a skill folder cannot hold both; rename one`, null);
    }
  }
  return [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** SKILL.md text for a document: the frontmatter as YAML, a blank line, the body. */
export function renderSkillMd(doc: Pick<SkillDocument, "frontmatter" | "body">): string {
  // name and description first, as readers expect; other keys keep their order.
  const { name, description, ...rest } = doc.frontmatter;
  const yaml = stringify({ name, description, ...rest }, { lineWidth: 0 });
  return `---\n${yaml}---\n\n${doc.body}`;
}

/** JSON with sorted keys, so equal frontmatter hashes equally whatever its key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v instanceof Date ? v.toISOString() : v) ?? "null";
}

/** The version's identity: frontmatter + body + files (path and content). */
export function contentHash(doc: Pick<SkillDocument, "frontmatter" | "body" | "files">): string {
  const h = createHash("sha256");
  h.update(`fm\u0000${canonical(doc.frontmatter)}\u0000body\u0000${doc.body}`);
  for (const f of [...doc.files].sort((a, b) => (a.path < b.path ? -1 : 1))) h.update(`\u0000file\u0000${f.path}\u0000${f.content}`);
  return h.digest("hex");
}

// What may be written and how: size limits, normalisation for duplicate detection, default
// scope per kind, expiry parsing and the "same subject, different content" conflict test.
import { createHash } from "node:crypto";
import { CoreError } from "../errors.js";
import { contentWords } from "../retrieval/analyze.js";
import { LATEST_TIME, parseIsoTime } from "../timestamps.js";
import type { MemoryKind, ScopeLevel } from "./record.js";
import { MAX_TAGS, MAX_TAG_CHARS } from "./record.js";

/** Kinds that describe the work rather than the person default to the project scope. */
export function defaultLevelFor(kind: MemoryKind): ScopeLevel {
  return kind === "project" || kind === "lesson" || kind === "procedure" ? "project" : "user";
}

export function normalizeForHash(content: string): string {
  return content.normalize("NFKC").replace(/\s+/gu, " ").trim().toLowerCase();
}

export function contentHash(content: string): string {
  return createHash("sha256").update(normalizeForHash(content)).digest("hex");
}

export function checkContent(content: string, maxChars: number): string {
  const text = content.replace(/\r\n?/g, "\n").trim();
  if (text.length === 0) {
    throw new CoreError("invalid_argument", `"content" is empty; pass the fact to remember as one or two sentences.`);
  }
  // No engine keeps it the same way (PostgreSQL text refuses it) and no fact needs it.
  if (text.includes("\u0000")) {
    throw new CoreError("invalid_argument", `"content" holds a NUL character (U+0000) at character ${text.indexOf("\u0000") + 1}; remove it and remember the text again.`);
  }
  const n = [...text].length;
  if (n > maxChars) {
    throw new CoreError(
      "invalid_argument",
      `"content" is ${n} characters; the limit is ${maxChars}. Split it into several memories or summarise it.`,
    );
  }
  return text;
}

export function normalizeTags(tags: string[] | undefined): string[] {
  if (!tags) return [];
  const out = [...new Set(tags.map((t) => t.normalize("NFKC").trim().toLowerCase()).filter(Boolean))];
  if (out.length > MAX_TAGS) throw new CoreError("invalid_argument", `"tags" has ${out.length} tags; at most ${MAX_TAGS} are allowed.`);
  const nul = out.find((t) => t.includes("\u0000"));
  if (nul !== undefined) throw new CoreError("invalid_argument", `tag "${nul.replace(/\u0000/g, "\\0").slice(0, 20)}" holds a NUL character (U+0000); remove it.`);
  const long = out.find((t) => t.length > MAX_TAG_CHARS);
  if (long) throw new CoreError("invalid_argument", `tag "${long.slice(0, 20)}…" is longer than ${MAX_TAG_CHARS} characters.`);
  return out;
}

const DURATION_RE = /^(\d+)\s*(m|h|d|w|y)$/i;
// "never" is how an update clears an expiry (an update without one keeps the current expiry)
const NEVER_RE = /^\s*never\s*$/i;
/** written like an ISO date, so a parse failure is a day or hour out of range, not a wrong form */
const ISO_SHAPE_RE = /^\d{4}-\d{2}-\d{2}(?:$|[Tt ]\d{2}:\d{2})/;
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 };

/** `expires_at`: an ISO 8601 date/time, a duration from now such as "30d", "12h", "2w", or "never". */
export function parseExpiry(value: string | undefined, now: number): number | null {
  if (value === undefined || value === "" || NEVER_RE.test(value)) return null;
  const d = DURATION_RE.exec(value.trim());
  if (d) {
    // "0d" would be an expiry of now: the memory would be stored already expired
    if (Number(d[1]) === 0) throw new CoreError("invalid_argument", `"expires_at" (${value}) is a duration of zero; give one of at least 1, like "1h" or "30d".`);
    const at = now + Number(d[1]) * UNIT_MS[d[2]!.toLowerCase()]!;
    // past the last ISO 8601 date (and far before Date's own limit) a time cannot be written back
    if (!(at <= LATEST_TIME)) throw new CoreError("invalid_argument", `"expires_at" (${value}) reaches past the year 9999; give a shorter duration, or "never".`);
    return at;
  }
  const t = parseIsoTime(value);
  if (Number.isNaN(t) && ISO_SHAPE_RE.test(value.trim())) {
    throw new CoreError("invalid_argument", `"expires_at" (${value}) is not a date and time the calendar has: check the day of the month (1 to 28, 29, 30 or 31), the hour (0 to 23) and the minutes.`);
  }
  if (Number.isNaN(t)) {
    throw new CoreError(
      "invalid_argument",
      `"expires_at" must be an ISO 8601 date or time (e.g. "2027-01-31" or "2027-01-31T12:00:00Z"), a duration like "30d", or "never"; got "${value}".`,
    );
  }
  if (t <= now) throw new CoreError("invalid_argument", `"expires_at" (${value}) is in the past; give a future date or a duration like "30d".`);
  return t;
}

// Verbs that separate a statement's subject from what it says about it.
const PREDICATE_RE =
  /\b(is|are|was|were|prefers?|likes?|loves?|hates?|dislikes?|uses?|wants?|needs?|lives?|works?|has|have|should|must|runs?|deploys?|builds?)\b|[:=]/iu;

/** "User prefers tabs" → "user|prefers": the subject words plus the predicate verb. */
export function subjectKey(content: string): string | null {
  const m = PREDICATE_RE.exec(content);
  if (!m || m.index === 0) return null;
  const subject = contentWords(content.slice(0, m.index)).sort().join(" ");
  if (!subject) return null;
  const verb = m[0].toLowerCase().replace(/s$/u, "");
  return `${subject}|${verb}`;
}

export function overlap(a: string, b: string): number {
  const A = new Set(contentWords(a));
  const B = new Set(contentWords(b));
  if (A.size === 0 || B.size === 0) return 0;
  let inter = 0;
  for (const w of A) if (B.has(w)) inter++;
  return inter / (A.size + B.size - inter);
}

/** Two different statements likely about the same thing: same subject and predicate, or heavy word overlap. */
export function likelyConflict(a: string, b: string, minOverlap: number): boolean {
  if (normalizeForHash(a) === normalizeForHash(b)) return false;
  const ka = subjectKey(a);
  if (ka !== null && ka === subjectKey(b)) return true;
  return overlap(a, b) >= minOverlap;
}

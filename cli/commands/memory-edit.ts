// `infinity-memory memory add TEXT…` and `memory correct ID [TEXT…]`: the person states a memory
// or corrects one at the command line. Both go through the same write policy as memory_remember
// and memory_update (size, credential refusal, injection scan, duplicates, conflicts, versions);
// what the person types is trusted as user_stated.
import { InvalidArgumentError } from "commander";
import type { MemoryKind, MemoryRecord } from "../../core/memory/record.js";
import { requestScopeOwning, type RequestScope } from "../../core/memory/scope.js";
import type { Origin, RememberResult } from "../../core/memory/service.js";
import { defaultLevelFor, parseExpiry } from "../../core/memory/write-policy.js";
import { recordBlock, recordList } from "../../toolsets/memory/render.js";
import type { AnyMemoryContext } from "../context.js";
import { forCommandLine } from "../tool-hints.js";

const ORIGIN: Origin = { actor: "user", threadId: null, toolCallId: null };

/** `--expires-at`: checked when the option is read, so a typo stops before anything is opened. */
export function expiryOption(v: string): string {
  try {
    parseExpiry(v, Date.now());
  } catch (e) {
    if (e instanceof Error && / is not a date and time the calendar has| is a duration of zero/.test(e.message)) {
      throw new InvalidArgumentError(e.message.replace(/^"expires_at" \([^)]*\) /, ""));
    }
    throw new InvalidArgumentError('expected an ISO 8601 date or time in the future (e.g. "2027-01-31"), a duration such as "30d" or "12h", or "never"');
  }
  return v;
}

/** `--tags a,b`: labels; an empty value clears them (on a correction). */
export function tagsOption(v: string): string[] {
  return v.split(",").map((t) => t.trim()).filter(Boolean);
}

export interface AddOptions {
  kind?: MemoryKind;
  scope?: "user" | "project";
  tags?: string[];
  confidence?: number;
  expiresAt?: string;
  json?: boolean;
}

export interface CorrectOptions {
  kind?: MemoryKind;
  tags?: string[];
  confidence?: number;
  expiresAt?: string;
  json?: boolean;
}

interface Person {
  owner: string;
  project: string | null;
}

/**
 * The text a person gave: the words, or with a lone "-" whatever comes on standard input
 * (`pbpaste | infinity-memory memory add -`); "-" itself was stored as a memory.
 */
async function givenText(words: string[]): Promise<string> {
  if (words.length !== 1 || words[0] !== "-") return words.join(" ");
  if (process.stdin.isTTY) throw new Error('"-" reads the text from standard input; pipe it in (echo "…" | infinity-memory memory add -), or give the text as words');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  try {
    return utf8.decode(Buffer.concat(chunks));
  } catch {
    throw new Error('"-": standard input is not UTF-8 text (it was written in another encoding, such as Latin-1 or Windows-1252); convert it to UTF-8 (iconv -t UTF-8) and pipe it in again');
  }
}

// fatal: text in another encoding is refused, not stored with U+FFFD for each accented letter
const utf8 = new TextDecoder("utf-8", { fatal: true });

export async function addMemory(ctx: AnyMemoryContext, person: Person, words: string[], o: AddOptions): Promise<void> {
  const content = await givenText(words);
  const kind = o.kind ?? "note";
  let level = o.scope ?? defaultLevelFor(kind);
  const notes: string[] = [];
  if (level === "project" && !person.project) {
    if (o.scope === "project") throw new Error("--scope project needs --project DIR: the project the memory belongs to");
    notes.push(`a ${kind} memory goes to its project, but no --project was given, so it was stored in the user scope`);
    level = "user";
  }
  // the person's own view: their user scope plus the project they named
  const req: RequestScope = { user: person.owner, project: person.project, session: "", thread: "", ancestors: [] };
  const r = await ctx.service.remember(
    req,
    // the kind as given: a default one would count as asked for when the text is already stored
    { content, kind: o.kind, scope: level, tags: o.tags, confidence: o.confidence, expiresAt: o.expiresAt, userStated: true },
    ORIGIN,
  );
  report(ctx, { ...r, notes: [...notes, ...r.notes] }, o.json === true);
}

export async function correctMemory(ctx: AnyMemoryContext, person: Person, id: string, words: string[], o: CorrectOptions): Promise<void> {
  const changes = o.kind !== undefined || o.tags !== undefined || o.confidence !== undefined || o.expiresAt !== undefined;
  if (words.length === 0 && !changes) {
    throw new Error("give the corrected text, or at least one of --kind, --tags, --confidence, --expires-at");
  }
  const current = await ctx.service.getVisible(person, id);
  const r = await ctx.service.update(
    requestScopeOwning(current.scope),
    {
      id: current.id,
      content: words.length > 0 ? await givenText(words) : current.content,
      kind: o.kind,
      tags: o.tags,
      confidence: o.confidence,
      expiresAt: o.expiresAt,
      userStated: true,
    },
    ORIGIN,
  );
  report(ctx, r, o.json === true);
}

function report(ctx: AnyMemoryContext, r: RememberResult, json: boolean): void {
  const now = ctx.clock.now();
  if (json) {
    const brief = (m: MemoryRecord) => ({ id: m.id, kind: m.kind, scope: m.scope.level, content: m.content });
    process.stdout.write(
      `${JSON.stringify({ status: r.status, id: r.record.id, version: r.record.version, supersedes: r.record.supersedes, memory_status: r.record.status, notes: r.notes, conflicts: r.conflicts.map(brief) })}\n`,
    );
    return;
  }
  const rec = r.record;
  const head =
    r.status === "duplicate"
      ? `already remembered as ${rec.id}; added this as another source for it`
      : r.status === "superseded"
        ? `saved ${rec.id} as version ${rec.version}; ${rec.supersedes} is now a past version`
        : r.status === "proposed"
          ? `saved ${rec.id} as a proposed correction (version ${rec.version}) of ${rec.supersedes}, which stays current until it is confirmed`
          : `remembered as ${rec.id}`;
  const lines = [head, recordBlock(rec, now)];
  for (const n of r.notes) lines.push(`note: ${forCommandLine(n)}`);
  if (r.conflicts.length > 0) {
    lines.push(
      `possible conflict with ${r.conflicts.length} memor${r.conflicts.length === 1 ? "y" : "ies"} (both are kept; ` +
        "correct one with `memory correct ID TEXT` or remove it with `memory forget ID`):",
      recordList(r.conflicts, now),
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}

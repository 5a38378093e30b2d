// Memory candidates from episodes (consent-aware): what the user stated about themselves or the
// project, their corrections, and lessons from a failure followed by a success. Deterministic
// patterns; every candidate is written `pending` (trust model_inferred, tag auto_extracted) with
// provenance to its messages and the episode, and reaches the context prefix only once a person
// confirms it. A duplicate of an existing memory becomes another source of that memory instead.
import { createHash } from "node:crypto";
import type { Clock } from "../clock.js";
import type { MemoryConfig } from "../config.js";
import { newId } from "../ids.js";
import type { Actor, MemoryKind, MemoryRecord, NewMemory, ScopeLevel } from "../memory/record.js";
import { recordScopeFor, visibilityKey, type RequestScope } from "../memory/scope.js";
import { contentHash, normalizeForHash } from "../memory/write-policy.js";
import { analyzeQuery, contentWords, isEmptyQuery } from "../retrieval/analyze.js";
import { scanContent } from "../safety/index.js";
import { DuplicateMemoryError, type MemoryStore } from "../../stores/traits.js";
import { excerpt } from "./episodes.js";
import { asksNotToRemember, correctionBody, reactionOf } from "./user-text.js";
import type { EpisodeDraft } from "./types.js";

/** the tag every auto-extracted memory carries (trust stays model_inferred until confirmed) */
export const AUTO_EXTRACTED_TAG = "auto_extracted";

/**
 * What is kept of a learned candidate a person rejected or forgot: a hash of its normalised text
 * (case, spacing and a closing full stop aside), so the loop does not propose it again in that
 * scope (a thread re-learnt after an upgrade said it again) while no text of it stays.
 */
export function candidateFingerprint(content: string): string {
  const norm = normalizeForHash(content).replace(/[.!。！]+$/u, "").trimEnd();
  return createHash("sha256").update(`learning-candidate\u0000${norm}`).digest("hex").slice(0, 32);
}

export interface Candidate {
  kind: MemoryKind;
  level: ScopeLevel;
  content: string;
  actor: Actor;
  messageIds: string[];
}

const LEAD_IN = /^(?:(?:also|and|btw|by the way|fyi|oh|ok|okay|so|note|please note|just so you know)[,:]?\s+)*(?:(?:please\s+)?(?:remember|keep in mind|note)\s+(?:that\s+)?)?/i;

const VERB3: Record<string, string> = {
  prefer: "prefers",
  like: "likes",
  love: "loves",
  hate: "hates",
  dislike: "dislikes",
  want: "wants",
  always: "always",
  never: "never",
  usually: "usually",
  use: "uses",
};

const UNCHANGED = new Set(["can", "could", "will", "would", "should", "must", "may", "might", "not", "really", "just", "only"]);

/** "use tabs" → "uses tabs": the verb after "always/never/usually" in the third person */
function thirdPerson(phrase: string): string {
  const m = /^(\S+)(.*)$/s.exec(phrase);
  if (!m) return phrase;
  const w = m[1]!;
  const lw = w.toLowerCase();
  let v: string;
  if (UNCHANGED.has(lw)) v = w;
  else if (lw === "am") v = "is";
  else if (lw === "have") v = "has";
  else if (/[^aeiou]y$/.test(lw)) v = `${w.slice(0, -1)}ies`;
  else if (/(?:s|sh|ch|x|z|o)$/.test(lw)) v = `${w}es`;
  else v = `${w}s`;
  return v + m[2]!;
}

interface Rule {
  re: RegExp;
  kind: MemoryKind;
  level: ScopeLevel;
  render: (m: RegExpExecArray) => string;
}

const RULES: Rule[] = [
  {
    re: /^i\s+(?:really\s+|strongly\s+|generally\s+)?(prefer|like|love|hate|dislike|want|always|never|usually|use)\s+(.{2,})$/i,
    kind: "preference",
    level: "user",
    render: (m) => {
      const verb = m[1]!.toLowerCase();
      const adverb = verb === "always" || verb === "never" || verb === "usually";
      return `User ${VERB3[verb]} ${adverb ? thirdPerson(m[2]!) : m[2]}`;
    },
  },
  { re: /^i(?:'d| would) rather\s+(.{2,})$/i, kind: "preference", level: "user", render: (m) => `User would rather ${m[1]}` },
  { re: /^(?:please\s+)?(always|never)\s+(.{2,})$/i, kind: "preference", level: "user", render: (m) => `User wants the assistant to ${m[1]!.toLowerCase()} ${m[2]}` },
  {
    re: /^my\s+(name|email|role|job|title|timezone|time zone|team|company|employer|pronouns|editor|shell|os)\s+is\s+(.{1,})$/i,
    kind: "fact",
    level: "user",
    render: (m) => `User's ${m[1]!.toLowerCase()} is ${m[2]}`,
  },
  { re: /^i\s+(work|live)\s+(at|for|in|on)\s+(.{2,})$/i, kind: "fact", level: "user", render: (m) => `User ${m[1]!.toLowerCase()}s ${m[2]!.toLowerCase()} ${m[3]}` },
  {
    re: /^(?:our|this|the)\s+(project|repo|repository|codebase|app|service|api|team)\s+(uses|is|runs|deploys|has|needs|requires|targets)\s+(.{2,})$/i,
    kind: "project",
    level: "project",
    render: (m) => `The ${m[1]!.toLowerCase()} ${m[2]!.toLowerCase()} ${m[3]}`,
  },
  {
    re: /^we\s+(use|deploy|run|build|ship|release|test|target|host)\s+(.{2,})$/i,
    kind: "project",
    level: "project",
    render: (m) => `The team ${VERB3[m[1]!.toLowerCase()] ?? `${m[1]!.toLowerCase()}s`} ${m[2]}`,
  },
];

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+|;\s+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function tidy(s: string): string {
  const t = s.replace(/\s+/g, " ").replace(/[\s,;:]+$/, "").trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** candidate statements in one user text */
export function statementsOf(text: string): { kind: MemoryKind; level: ScopeLevel; content: string }[] {
  const out: { kind: MemoryKind; level: ScopeLevel; content: string }[] = [];
  for (const raw of sentences(text)) {
    if (/\?\s*$/.test(raw)) continue; // questions state nothing
    const s = raw
      .replace(LEAD_IN, "")
      .replace(/[.!]+$/, "")
      // "…, please remember that": the request to remember is not part of the fact
      .replace(/,?\s*(?:and\s+)?(?:please\s+)?(?:remember|note|keep in mind)(?:\s+(?:that|this|it))?$/i, "")
      .trim();
    for (const r of RULES) {
      const m = r.re.exec(s);
      if (m) {
        out.push({ kind: r.kind, level: r.level, content: tidy(r.render(m)) });
        break;
      }
    }
  }
  return out;
}

/** Every candidate an episode suggests, before consent and duplicates are checked. */
export function extractCandidates(d: EpisodeDraft, maxChars: number): Candidate[] {
  const out: Candidate[] = [];
  for (const u of d.userTexts) {
    for (const st of statementsOf(u.text)) out.push({ ...st, content: excerpt(st.content, maxChars), actor: "user", messageIds: [u.messageId] });
  }
  const correction = correctionCandidate(d, maxChars);
  if (correction) out.push(correction);
  // A step that failed and a later call of the same tool that worked: what to do instead.
  const seen = new Set<string>();
  for (const [i, failed] of d.steps.entries()) {
    if (failed.outcome !== "error" || seen.has(failed.tool)) continue;
    const fix = d.steps.slice(i + 1).find((s) => s.tool === failed.tool && s.outcome === "ok" && s.argsShape !== failed.argsShape);
    if (!fix) continue;
    seen.add(failed.tool);
    const why = (failed.excerpt.split("\n").find((l) => l.trim().length > 0) ?? "an error").trim();
    out.push({
      kind: "lesson",
      level: "project",
      content: excerpt(tidy(`${failed.tool} failed with ${failed.argsShape} because "${excerpt(why, 120)}"; it worked with ${fix.argsShape}`), maxChars),
      actor: "tool",
      messageIds: [],
    });
  }
  return out;
}

/** A correction of this answer, in the next user turn, is a lesson for the project. */
export function correctionCandidate(d: EpisodeDraft, maxChars: number): Candidate | null {
  const next = d.nextUserText;
  if (!next || reactionOf(next.text, d.task) !== "correction") return null;
  const body = correctionBody(next.text);
  if (contentWords(body).length < 3 || /\?\s*$/.test(body)) return null;
  return {
    kind: "lesson",
    level: "project",
    content: excerpt(tidy(`Correction from the user about "${excerpt(d.task, 80)}": ${body}`), maxChars),
    actor: "user",
    messageIds: [next.messageId],
  };
}

/** the user asked, in this task or right after it, not to keep anything from it */
export function isSuppressed(d: EpisodeDraft): boolean {
  return d.userTexts.some((u) => asksNotToRemember(u.text)) || (d.nextUserText !== null && asksNotToRemember(d.nextUserText.text));
}

export interface WrittenCandidate {
  memoryId: string;
  disposition: "created" | "merged";
  /** the episode had already written it (a retried pass): nothing was added */
  repeat?: true;
}

function jaccard(a: string, b: string): number {
  const x = new Set(contentWords(a));
  const y = new Set(contentWords(b));
  if (x.size === 0 || y.size === 0) return 0;
  let inter = 0;
  for (const w of x) if (y.has(w)) inter++;
  return inter / (x.size + y.size - inter);
}

/** Writes candidates as pending memories, or as evidence for an existing one. */
export class CandidateWriter {
  constructor(
    private readonly memory: MemoryStore,
    private readonly clock: Clock,
    private readonly config: MemoryConfig["learning"]["candidates"],
    /** whether a person rejected (or forgot) this candidate in this scope before (candidateFingerprint) */
    private readonly rejected: (visKey: string, fingerprint: string) => Promise<boolean> = async () => false,
  ) {}

  private async existing(visKey: string, content: string): Promise<MemoryRecord | null> {
    const exact = await this.memory.findDuplicate(visKey, contentHash(content), this.clock.now());
    if (exact) return exact;
    const q = analyzeQuery(content);
    if (isEmptyQuery(q)) return null;
    const hits = await this.memory.search({
      visibility: { keys: [visKey] },
      query: q,
      statuses: ["active", "pending"],
      includeFlagged: true,
      now: this.clock.now(),
      limit: 5,
      wordsOnly: true,
    });
    return hits.map((h) => h.record).find((r) => jaccard(r.content, content) >= this.config.mergeOverlap) ?? null;
  }

  /**
   * Refused when the safety scan refuses the text (a credential or an injection) or a person
   * rejected it in this scope before. `own`: the memories this episode already wrote or merged
   * into (a pass that failed half way is retried).
   */
  async write(c: Candidate, scope: RequestScope, episode: { id: string; threadId: string }, own: ReadonlySet<string> = new Set()): Promise<WrittenCandidate | { refused: "safety scan" | "rejected before" }> {
    const scan = scanContent(c.content);
    if (scan.verdict === "refuse_secret" || scan.verdict === "refuse_injection") return { refused: "safety scan" };
    const level: ScopeLevel = c.level === "project" && !scope.project ? "user" : c.level;
    const recScope = recordScopeFor(scope, level);
    if (await this.rejected(visibilityKey(recScope), candidateFingerprint(c.content))) return { refused: "rejected before" };
    const now = this.clock.now();
    const source = { threadId: episode.threadId, messageIds: c.messageIds, toolCallId: null, actor: c.actor, at: now };
    const audit = (action: "create" | "duplicate", targetId: string) => ({
      at: now,
      actor: "learning",
      action,
      targetKind: "memory" as const,
      targetId,
      detail: { episode: episode.id, auto_extracted: true },
    });
    const dup = await this.existing(visibilityKey(recScope), c.content);
    if (dup) {
      // its own earlier write is not new evidence: another source and "merged" would hide it
      // from the withdrawal that "don't remember this" does
      if (own.has(dup.id)) return { memoryId: dup.id, disposition: "merged", repeat: true };
      await this.memory.addSource(dup.id, source, audit("duplicate", dup.id));
      return { memoryId: dup.id, disposition: "merged" };
    }
    const id = newId("mem", now);
    const rec: NewMemory = {
      id,
      lineageId: id,
      scope: recScope,
      kind: c.kind,
      content: c.content,
      tags: [AUTO_EXTRACTED_TAG],
      trust: "model_inferred",
      confidence: this.config.confidence,
      status: "pending",
      flags: scan.verdict === "flag" ? ["possible_injection"] : [],
      version: 1,
      supersedes: null,
      validFrom: null,
      validTo: null,
      createdAt: now,
      expiresAt: null,
      contentHash: contentHash(c.content),
      source,
    };
    try {
      await this.memory.insert(rec, audit("create", id), [{ src: id, dst: episode.id, relation: "derived_from", at: now }]);
    } catch (e) {
      // written by another process since the check above: evidence for that one
      if (!(e instanceof DuplicateMemoryError)) throw e;
      await this.memory.addSource(e.existingId, source, audit("duplicate", e.existingId));
      return { memoryId: e.existingId, disposition: "merged" };
    }
    return { memoryId: id, disposition: "created" };
  }
}

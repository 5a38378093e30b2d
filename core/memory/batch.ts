// Batched writes (bulk import, seeding): the per-item write policy of `remember` as a pure
// function — content and size checks, the credential/injection screen, tags, expiry, scope level
// and content hash — so it can run on another thread while the store commits the previous batch.
// The store then writes the prepared records in one transaction (MemoryStore.insertMany).
import type { MemoryConfig } from "../config.js";
import { CoreError } from "../errors.js";
import { newId } from "../ids.js";
import { scanContent } from "../safety/index.js";
import type { Actor, MemoryKind, NewMemory, SafetyFlag, ScopeLevel, Trust } from "./record.js";
import { recordScopeFor, type RequestScope } from "./scope.js";
import { checkContent, contentHash, defaultLevelFor, normalizeTags, parseExpiry } from "./write-policy.js";
import type { AuditEntry } from "../../stores/traits.js";

export interface BatchOrigin {
  actor: Actor;
  threadId: string | null;
  toolCallId: string | null;
  messageIds?: string[];
}

export interface BatchInput {
  content: string;
  kind?: MemoryKind | undefined;
  scope?: ScopeLevel | undefined;
  tags?: string[] | undefined;
  confidence?: number | undefined;
  expiresAt?: string | undefined;
  supersedes?: string | undefined;
  userStated?: boolean | undefined;
  trust?: Trust | undefined;
  validFrom?: number | null | undefined;
  /** still waiting for a person's confirmation (an exported pending candidate stays one) */
  pending?: boolean | undefined;
}

/** One item of a batched write: who writes it (scope), what, and where it came from. */
export interface BatchRememberItem {
  req: RequestScope;
  input: BatchInput;
  origin: BatchOrigin;
}

/** Per item of a batched write, in input order. */
export type BatchRememberResult =
  | { status: "created"; id: string; flagged: boolean; notes: string[] }
  | { status: "duplicate"; id: string; flagged: false; notes: string[] }
  | { status: "refused"; code: string; field: string; message: string };

export interface PreparedItem {
  /** index in the input batch */
  at: number;
  rec: NewMemory;
  audit: AuditEntry;
  notes: string[];
}

/** Plain data (it crosses a worker boundary): refusals filled in, records ready to insert. */
export interface PreparedBatch {
  results: (BatchRememberResult | null)[];
  items: PreparedItem[];
}

/** The safety verdict on new content: throws on credentials and clear injection, returns flags otherwise. */
export function screenContent(content: string): SafetyFlag[] {
  const scan = scanContent(content);
  if (scan.verdict === "refuse_secret") {
    throw new CoreError(
      "refused_credential",
      `nothing was stored: the content ${scan.reason}. Memories are plain text shown to models later; ` +
        `store where the secret is kept (e.g. "the deploy token is in the team vault"), never the secret itself.`,
    );
  }
  if (scan.verdict === "refuse_injection") {
    throw new CoreError(
      "refused_injection",
      `nothing was stored: the content ${scan.reason}, which reads as instructions to an AI rather than a fact. ` +
        `Rephrase it as a plain statement of fact or preference.`,
    );
  }
  return scan.verdict === "flag" ? ["possible_injection"] : [];
}

class FieldError extends Error {
  constructor(
    readonly field: string,
    readonly inner: CoreError,
  ) {
    super(inner.message);
  }
}

function check<T>(field: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof CoreError) throw new FieldError(field, e);
    throw e;
  }
}

/**
 * Apply the write policy to each item. Differences from `remember`, which keep a batch cheap and
 * a re-run idempotent: no conflict search, and `supersedes` is refused (update that memory alone).
 */
export function prepareBatch(items: BatchRememberItem[], config: Pick<MemoryConfig, "write">, now: number): PreparedBatch {
  const results: (BatchRememberResult | null)[] = [];
  const prepared: PreparedItem[] = [];
  items.forEach(({ req, input, origin }, i) => {
    try {
      if (input.supersedes !== undefined) {
        throw new FieldError("supersedes", new CoreError("invalid_argument", `"supersedes" is not supported in a batch; update that memory on its own.`));
      }
      const content = check("content", () => checkContent(input.content, config.write.maxContentChars));
      const flags = check("content", () => screenContent(content));
      const tags = check("tags", () => normalizeTags(input.tags));
      const expiresAt = check("expires_at", () => parseExpiry(input.expiresAt, now));
      const kind = input.kind ?? "note";
      const notes: string[] = [];
      let level = input.scope ?? defaultLevelFor(kind);
      if (level === "project" && !req.project) {
        notes.push("no project is known for this session, so it was stored in the user scope");
        level = "user";
      }
      const trust: Trust = input.trust ?? (input.userStated ? "user_stated" : origin.actor === "model" ? "model_inferred" : "imported");
      const id = newId("mem", now);
      const rec: NewMemory = {
        id,
        lineageId: id,
        scope: recordScopeFor(req, level),
        kind,
        content,
        tags,
        trust,
        confidence: input.confidence ?? (trust === "user_stated" ? config.write.userStatedConfidence : config.write.defaultConfidence),
        status: flags.length > 0 || input.pending === true ? "pending" : "active",
        flags,
        version: 1,
        supersedes: null,
        validFrom: input.validFrom ?? null,
        validTo: null,
        createdAt: now,
        expiresAt,
        contentHash: contentHash(content),
        source: { threadId: origin.threadId, messageIds: origin.messageIds ?? [], toolCallId: origin.toolCallId, actor: origin.actor, at: now },
      };
      if (flags.length > 0) notes.push("it looks like instructions to an AI, so it is stored as pending and needs a person's confirmation (memory_review)");
      const actor = origin.actor === "model" && origin.threadId ? `model@${origin.threadId}` : origin.actor;
      const audit: AuditEntry = {
        at: now,
        actor,
        action: "create",
        targetKind: "memory",
        targetId: id,
        detail: { kind, level, flags, batch: true, ...(origin.toolCallId ? { tool_call_id: origin.toolCallId } : {}) },
      };
      prepared.push({ at: i, rec, audit, notes });
      results.push(null);
    } catch (e) {
      if (!(e instanceof FieldError)) throw e;
      results.push({ status: "refused", code: e.inner.code, field: e.field, message: e.inner.message });
    }
  });
  return { results, items: prepared };
}

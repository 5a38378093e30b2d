// The memory domain: remember, search, update, history, forget, list and review, over a
// MemoryStore. No I/O of its own; the toolset, the CLI and the benchmarks all call this.
import type { Clock } from "../clock.js";
import type { MemoryConfig } from "../config.js";
import { CoreError } from "../errors.js";
import { newId } from "../ids.js";
import { analyzeQuery, isEmptyQuery } from "../retrieval/analyze.js";
import { scanContent } from "../safety/index.js";
import type {
  Actor,
  MemoryKind,
  MemoryRecord,
  MemoryStatus,
  NewMemory,
  SafetyFlag,
  ScopeLevel,
  Trust,
} from "./record.js";
import { recordScopeFor, visibilityKey, visibleKeys, type RequestScope } from "./scope.js";
import {
  checkContent,
  contentHash,
  defaultLevelFor,
  likelyConflict,
  normalizeTags,
  parseExpiry,
} from "./write-policy.js";
import type { ProcessIdentity } from "../process-identity.js";
import { DuplicateMemoryError, StatusChangedError, StoreError, type AuditEntry, type BatchInsertOutcome, type ListPage, type MemoryStore, type UnfinishedForget, type MessageRef, type SearchHit, type Visibility } from "../../stores/traits.js";
import { prepareBatch, type BatchRememberItem, type BatchRememberResult, type PreparedBatch } from "./batch.js";

export type { BatchRememberItem, BatchRememberResult, PreparedBatch } from "./batch.js";

/** Who caused a change, for provenance and the audit log. */
export interface Origin {
  actor: Actor;
  threadId: string | null;
  toolCallId: string | null;
  messageIds?: string[];
}

export interface RememberInput {
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
}

export interface RememberResult {
  /** "proposed": a flagged correction, pending; the memory it corrects stays current until confirmed */
  status: "created" | "duplicate" | "replayed" | "superseded" | "proposed";
  record: MemoryRecord;
  conflicts: MemoryRecord[];
  flagged: boolean;
  notes: string[];
}

export interface SearchInput {
  query: string;
  kinds?: MemoryKind[] | undefined;
  scopes?: ScopeLevel[] | undefined;
  limit?: number | undefined;
  includeHistory?: boolean | undefined;
  /** also pending records, flagged ones included: a person reviewing them (the review page), never the agent */
  includePending?: boolean | undefined;
}

export interface UpdateInput {
  id: string;
  content: string;
  kind?: MemoryKind | undefined;
  tags?: string[] | undefined;
  confidence?: number | undefined;
  expiresAt?: string | undefined;
  userStated?: boolean | undefined;
}

export interface ListInput {
  kinds?: MemoryKind[] | undefined;
  scopes?: ScopeLevel[] | undefined;
  statuses?: MemoryStatus[] | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
  order?: "newest" | "oldest" | undefined;
}

/** A thread's view (RequestScope) or a person's view of everything they own. */
export type Viewer = { thread: RequestScope } | { owner: string; project?: string | null };

const CURRENT: MemoryStatus[] = ["active", "pending"];
const ALL_LIVE: MemoryStatus[] = ["active", "pending", "superseded", "expired"];
// Search answers with what a person stands behind: pending records (auto-extracted candidates,
// flagged writes) wait in memory_review until confirmed.
const SEARCHABLE: MemoryStatus[] = ["active"];
const SEARCHABLE_HISTORY: MemoryStatus[] = ["active", "superseded", "expired"];

/**
 * A new version's expiry: the one given, else (a correction) its previous version's while that is
 * still ahead, so fixing a typo does not make an expiring memory permanent. An empty value counts
 * as not given; only "never" clears an expiry.
 */
function expiryOf(given: string | undefined, previous: MemoryRecord | null, now: number): number | null {
  if (given?.trim()) return parseExpiry(given, now);
  return previous?.expiresAt != null && previous.expiresAt > now ? previous.expiresAt : null;
}

/**
 * An update that would store a copy of the current version: same text, and every field it gives
 * equal to what the memory has. Saved, it would only lengthen the history (and, from the model,
 * lower a person's statement to model_inferred).
 */
function changesNothing(current: MemoryRecord, input: UpdateInput): boolean {
  if (input.content.replace(/\r\n?/g, "\n").trim() !== current.content) return false;
  if (input.kind !== undefined && input.kind !== current.kind) return false;
  if (input.tags !== undefined && normalizeTags(input.tags).sort().join("\u0000") !== [...current.tags].sort().join("\u0000")) return false;
  if (input.confidence !== undefined && input.confidence !== current.confidence) return false;
  const expiry = input.expiresAt?.trim();
  if (expiry && !(/^never$/i.test(expiry) && current.expiresAt === null)) return false;
  if (input.userStated && current.trust !== "user_stated") return false;
  return true;
}

/** Derived artifacts outside the memory store that must forget with it (e.g. the session index). */
export interface ForgetHook {
  /**
   * Runs once the store has claimed the records (deleted for everyone) and before it purges them
   * (their texts are still there if this fails or the process dies, so running the forget again,
   * or serve's start-up sweep, finishes both). `contents`: the texts and ids of one
   * user's records being forgotten, to find copies elsewhere; `madeFrom`: the conversation messages
   * their sources name (what a candidate was extracted from); `records`: those records themselves.
   */
  beforeForget(user: string, contents: string[], madeFrom: MessageRef[], records: readonly MemoryRecord[]): Promise<void>;
}

/** A caller's page size: a whole number of at least 1 (the stores put it into SQL). */
function wholeLimit(limit: number | undefined): number | undefined {
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1)) {
    throw new CoreError("invalid_argument", `"limit" must be a whole number of at least 1 (got ${String(limit)})`);
  }
  return limit;
}

/**
 * How long a claim whose process runs (or cannot be checked: another machine) is left to it. A
 * cascade takes seconds; one held longer is taken as stuck and finished by the sweep.
 */
export const FORGET_CLAIM_LEASE_MS = 10 * 60_000;
/** Pages of forget.maxByQuery claims one finishForgets run reads at most, past claims it leaves to their processes. */
export const FORGET_SWEEP_PAGES = 20;

export class MemoryService {
  private readonly forgetHooks: ForgetHook[] = [];

  constructor(
    private readonly store: MemoryStore,
    private readonly clock: Clock,
    private readonly config: MemoryConfig,
    /** who this service's forget claims belong to (the CLI passes cli/process-ids.ts); without one, claims carry no owner and any sweep finishes them */
    private readonly owner: ProcessIdentity | null = null,
  ) {}

  onForget(hook: ForgetHook): void {
    this.forgetHooks.push(hook);
  }

  /** What a viewer may read; `levels` narrows a thread viewer's keys to those levels' (the store still filters by level). */
  visibility(viewer: Viewer, levels?: readonly ScopeLevel[]): Visibility {
    return "thread" in viewer ? { keys: visibleKeys(viewer.thread, levels) } : { owner: viewer.owner, project: viewer.project ?? null };
  }

  private canSee(viewer: Viewer, rec: MemoryRecord): boolean {
    if ("thread" in viewer) return visibleKeys(viewer.thread).includes(visibilityKey(rec.scope));
    if (rec.scope.user !== viewer.owner) return false;
    return !viewer.project || rec.scope.level === "user" || rec.scope.project === viewer.project;
  }

  /** A record the viewer may see, or a not_found error that does not reveal other scopes. */
  /** The record as a reader may see it: a version whose forget is under way shows no text. */
  async getVisible(viewer: Viewer, id: string): Promise<MemoryRecord> {
    return shownForgotten(await this.visible(viewer, id));
  }

  /** The record itself (a claimed version keeps its text until its forget purges it). */
  private async visible(viewer: Viewer, id: string): Promise<MemoryRecord> {
    const rec = await this.store.get(id);
    if (!rec || !this.canSee(viewer, rec)) {
      throw new CoreError("not_found", `no memory with id "${id}" is visible here; use memory_search or memory_list to find ids.`);
    }
    return rec;
  }

  private audit(origin: Origin, action: AuditEntry["action"], targetId: string, detail: Record<string, unknown> = {}): AuditEntry {
    return {
      at: this.clock.now(),
      actor: origin.actor === "model" && origin.threadId ? `model@${origin.threadId}` : origin.actor,
      action,
      targetKind: "memory",
      targetId,
      detail: { ...detail, ...(origin.toolCallId ? { tool_call_id: origin.toolCallId } : {}) },
    };
  }

  /** Safety verdict on new content: throws on credentials and clear injection, returns flags otherwise. */
  private screen(content: string): SafetyFlag[] {
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

  async remember(req: RequestScope, input: RememberInput, origin: Origin): Promise<RememberResult> {
    const content = checkContent(input.content, this.config.write.maxContentChars);
    const flags = this.screen(content);
    const now = this.clock.now();
    const notes: string[] = [];

    // A replayed invocation (same tool call in the same thread) returns what it wrote the first time.
    if (origin.toolCallId && origin.threadId) {
      const prior = await this.store.findByToolCall(origin.threadId, origin.toolCallId);
      if (prior) return { status: "replayed", record: prior, conflicts: [], flagged: prior.flags.length > 0, notes };
    }

    const previous = input.supersedes ? await this.visible({ thread: req }, input.supersedes) : null;
    if (previous && previous.status !== "active" && previous.status !== "pending") {
      throw new CoreError(
        "conflict",
        `memory ${previous.id} is ${previous.status}; only a current memory can be superseded (see memory_history for its newest version).`,
      );
    }
    // Past its expiry but not yet swept (expireDue runs on a timer): expired all the same, or a
    // correction in that gap would make it current again, with no end.
    if (previous && previous.expiresAt !== null && previous.expiresAt <= now) {
      throw new CoreError(
        "conflict",
        `memory ${previous.id} expired at ${new Date(previous.expiresAt).toISOString()}; only a current memory can be superseded (remember the current fact as a new memory).`,
      );
    }
    const kind = input.kind ?? previous?.kind ?? "note";
    let level = input.scope ?? previous?.scope.level ?? defaultLevelFor(kind);
    if (level === "project" && !req.project) {
      notes.push("no project is known for this session, so it was stored in the user scope");
      level = "user";
    }
    const scope = previous && !input.scope ? previous.scope : recordScopeFor(req, level);
    const hash = contentHash(content);
    const tags = normalizeTags(input.tags);
    // checked before the duplicate test: a bad value is an error whether or not the text is new
    const expiresAt = expiryOf(input.expiresAt, previous, now);
    const source = {
      threadId: origin.threadId,
      messageIds: origin.messageIds ?? [],
      toolCallId: origin.toolCallId,
      actor: origin.actor,
      at: now,
    };

    const trust: Trust = input.trust ?? (input.userStated ? "user_stated" : origin.actor === "model" ? "model_inferred" : "imported");

    // The same fact said again is supporting evidence, not a second memory.
    const asDuplicate = async (dupId: string): Promise<RememberResult> => {
      const forgotten = () => new CoreError("conflict", `memory ${dupId} was forgotten while this one was being stored; try again`);
      try {
        await this.store.addSource(dupId, source, this.audit(origin, "duplicate", dupId));
      } catch (e) {
        if (e instanceof StoreError && e.code === "not_found") throw forgotten();
        throw e;
      }
      let rec = await this.store.get(dupId);
      if (!rec || rec.status === "deleted") throw forgotten();
      // A candidate waiting for a person's review (auto-extracted, imported pending) that the
      // person now states themselves (`memory add`) is theirs: current, as their fresh write of
      // it would have been. Before, "already remembered" left it out of every search and prefix.
      if (rec.status === "pending" && origin.actor === "user" && rec.flags.length === 0 && flags.length === 0 && rec.supersedes === null) {
        try {
          // only while still pending: a review that rejected it since the read above must not be undone
          rec = await this.store.setStatus(rec.id, "active", trust, this.audit(origin, "confirm", rec.id, { stated_again: true }), { expect: "pending" });
          notes.push("it was waiting for review; stated by you, it is now current");
        } catch (e) {
          if (!(e instanceof StatusChangedError)) throw e;
          rec = await this.store.get(dupId);
          if (!rec || rec.status === "deleted") throw new CoreError("conflict", `memory ${dupId} was rejected in review while this one was being stored; try again`);
        }
      } else if (rec.status === "pending") {
        // from a model this is not a person's yes: say where it is instead of "already remembered" alone
        notes.push("it is waiting for a person's review (memory_review), so search and recalled context leave it out until it is confirmed");
      }
      // What this write asked for that the stored memory does not have is not applied (a duplicate
      // changes no field): said, or an expiry or tags asked for were dropped without a word.
      const fields: string[] = [];
      const has: string[] = [];
      const notApplied = (field: string, kept: string) => {
        fields.push(field);
        has.push(kept);
      };
      if (input.kind !== undefined && input.kind !== rec.kind) notApplied("kind", `kind ${rec.kind}`);
      if (input.tags !== undefined && tags.some((t) => !rec!.tags.includes(t))) notApplied("tags", rec.tags.length > 0 ? `tags ${rec.tags.join(", ")}` : "no tags");
      if (input.confidence !== undefined && input.confidence !== rec.confidence) notApplied("confidence", `confidence ${rec.confidence.toFixed(2)}`);
      if (input.expiresAt?.trim() && expiresAt !== rec.expiresAt) {
        notApplied("expires_at", rec.expiresAt === null ? "no expiry" : `expiry ${new Date(rec.expiresAt).toISOString()}`);
      }
      if (fields.length > 0) {
        const list = fields.length === 1 ? fields[0]! : `${fields.slice(0, -1).join(", ")} and ${fields.at(-1)!}`;
        notes.push(`this call's ${list} ${fields.length === 1 ? "was" : "were"} not applied; it still has ${has.join("; ")} (memory_update on ${rec.id} changes that)`);
      }
      return { status: "duplicate", record: rec, conflicts: [], flagged: rec.flags.length > 0, notes };
    };
    const dup = await this.store.findDuplicate(visibilityKey(scope), hash, now);
    if (dup && !previous) return asDuplicate(dup.id);
    // A correction to the exact text of another current memory (not a version of this one) would
    // leave two identical current memories. Refused, naming both: merging would retire one memory
    // and re-point the other in two writes the store cannot make atomically.
    if (dup && previous && dup.lineageId !== previous.lineageId) {
      throw new CoreError(
        "conflict",
        `memory ${dup.id} already says exactly this in the same scope${dup.status === "pending" ? " (it is waiting for a person's review, memory_review)" : ""}; ` +
          `nothing was changed, so there are not two copies. If ${previous.id} is wrong, forget it (memory_forget with "id": "${previous.id}") and keep ${dup.id}; ` +
          `to change ${dup.id} itself, update that one.`,
      );
    }
    // A correction that looks like instructions to an AI does not replace what a person stood
    // behind until a person confirms it: it waits as a proposal beside the current version.
    const proposal = previous !== null && previous.status === "active" && flags.length > 0;

    const confidence =
      input.confidence ?? (trust === "user_stated" ? this.config.write.userStatedConfidence : this.config.write.defaultConfidence);
    const id = newId("mem", now);
    const rec: NewMemory = {
      id,
      lineageId: previous?.lineageId ?? id,
      scope,
      kind,
      content,
      tags,
      trust,
      confidence,
      // a new version of a memory awaiting review awaits it too: correcting is not confirming
      status: flags.length > 0 || previous?.status === "pending" ? "pending" : "active",
      flags,
      // past the lineage's newest, not the previous one's: a proposal may sit beside it
      version: previous ? Math.max(...(await this.store.lineage(previous.lineageId)).map((v) => v.version), previous.version) + 1 : 1,
      supersedes: previous?.id ?? null,
      validFrom: input.validFrom ?? previous?.validFrom ?? null,
      validTo: null,
      createdAt: now,
      expiresAt,
      contentHash: hash,
      source,
    };

    const conflicts = previous ? [] : await this.findConflicts(req, content);
    let stored: MemoryRecord;
    try {
      stored = proposal
        ? await this.store.insert(
            rec,
            this.audit(origin, "supersede", id, { previous: previous.id, version: rec.version, proposed: true }),
            [{ src: id, dst: previous.id, relation: "supersedes", at: now }],
            // checked inside the write: a proposal left in a lineage forgotten meanwhile would make
            // it current again once confirmed
            { expect: new Map([[previous.id, previous.status]]) },
          )
        : previous
        ? // as read: a pending memory confirmed meanwhile would otherwise be replaced by a version
          // still pending (derived from the status read above), leaving the fact with none current
          await this.store.supersede(previous.id, rec, this.audit(origin, "supersede", id, { previous: previous.id, version: rec.version }), { expect: previous.status })
        : await this.store.insert(
            rec,
            this.audit(origin, "create", id, { kind, level: scope.level, flags }),
            conflicts.map((c) => ({ src: id, dst: c.id, relation: "conflicts_with" as const, at: now })),
          );
    } catch (e) {
      // another process stored the same content in this scope after the check above
      if (e instanceof DuplicateMemoryError) return asDuplicate(e.existingId);
      // another process corrected or forgot the memory this one corrects after the check above:
      // the answer that check gives, not the store's
      if (previous && e instanceof StatusChangedError) throw await this.changedMeanwhile({ thread: req }, previous.id, previous.lineageId);
      if (previous && e instanceof StoreError && e.code === "constraint") throw await this.notCurrent({ thread: req }, previous.id, previous.lineageId);
      throw e;
    }
    if (proposal) {
      notes.push(`it looks like instructions to an AI, so it is stored as pending; ${previous.id} stays current until a person confirms this correction (memory_review)`);
    } else if (flags.length > 0) notes.push("it looks like instructions to an AI, so it is stored as pending and needs a person's confirmation (memory_review)");
    else if (rec.status === "pending") notes.push("the memory it corrects was still waiting for review, so this version waits too: a person confirms it (memory_review)");
    return { status: proposal ? "proposed" : previous ? "superseded" : "created", record: stored, conflicts, flagged: flags.length > 0, notes };
  }

  /**
   * Bulk write (import, seeding): `remember`'s per-item policy (core/memory/batch.ts), one store
   * transaction for the batch. A refused item is reported with its field and never stops the
   * others; a duplicate (same content under the same scope, in the store or earlier in the batch)
   * is skipped, not added as a source, so re-running an import changes nothing.
   */
  async rememberMany(items: BatchRememberItem[]): Promise<BatchRememberResult[]> {
    return this.commitBatch(prepareBatch(items, this.config, this.clock.now()));
  }

  /** Write a batch prepared by `prepareBatch` (possibly on a worker thread). */
  async commitBatch(p: PreparedBatch): Promise<BatchRememberResult[]> {
    const out = [...p.results];
    // A store that takes at most maxBatch records a call (Aurora DSQL) gets the batch in parts,
    // one transaction each; a duplicate of an earlier part is then found in the store. An import's
    // default of 1,000 lines a batch was refused there whole.
    const per = this.store.maxBatch ?? Math.max(1, p.items.length);
    const stored: BatchInsertOutcome[] = [];
    for (let i = 0; i < p.items.length; i += per) {
      stored.push(...(await this.store.insertMany(p.items.slice(i, i + per).map(({ rec, audit }) => ({ rec, audit })))));
    }
    stored.forEach((r, j) => {
      const b = p.items[j]!;
      out[b.at] =
        r.status === "created"
          ? { status: "created", id: r.id, flagged: b.rec.flags.length > 0, notes: b.notes }
          : { status: "duplicate", id: r.id, flagged: false, notes: [] };
    });
    return out as BatchRememberResult[];
  }

  private async findConflicts(req: RequestScope, content: string): Promise<MemoryRecord[]> {
    const q = analyzeQuery(content);
    if (isEmptyQuery(q)) return [];
    const hits = await this.store.search({
      visibility: { keys: visibleKeys(req) },
      query: q,
      statuses: CURRENT,
      includeFlagged: false,
      now: this.clock.now(),
      limit: this.config.write.conflictCandidates,
      wordsOnly: true,
    });
    return hits.map((h) => h.record).filter((r) => likelyConflict(content, r.content, this.config.write.conflictOverlap));
  }

  async search(viewer: Viewer, input: SearchInput): Promise<SearchHit[]> {
    const query = analyzeQuery(input.query);
    if (isEmptyQuery(query)) {
      throw new CoreError("invalid_argument", `"query" has no searchable words; describe what to look for, e.g. "editor preferences".`);
    }
    const limit = Math.min(wholeLimit(input.limit) ?? this.config.search.defaultLimit, this.config.search.maxLimit);
    // Asked for expired memories: the ones past their expiry that no sweep reached yet (serve
    // sweeps on a timer, the command line never did) become expired first; they were in neither view.
    if (input.includeHistory) await this.expireDue("system");
    return this.store.search({
      visibility: this.visibility(viewer, input.scopes),
      query,
      text: input.query,
      kinds: input.kinds,
      levels: input.scopes,
      statuses: [...(input.includeHistory ? SEARCHABLE_HISTORY : SEARCHABLE), ...(input.includePending ? (["pending"] as const) : [])],
      includeFlagged: input.includePending === true,
      now: this.clock.now(),
      limit,
    });
  }

  async update(req: RequestScope, input: UpdateInput, origin: Origin): Promise<RememberResult> {
    // A replayed invocation returns what it wrote the first time (by then the memory it corrected
    // is a past version, which would be refused below).
    if (origin.toolCallId && origin.threadId) {
      const prior = await this.store.findByToolCall(origin.threadId, origin.toolCallId);
      if (prior) return { status: "replayed", record: prior, conflicts: [], flagged: prior.flags.length > 0, notes: [] };
    }
    const current = await this.visible({ thread: req }, input.id);
    if (current.status !== "active" && current.status !== "pending") throw await this.notCurrent({ thread: req }, current.id, current.lineageId);
    if (changesNothing(current, input)) {
      throw new CoreError(
        "invalid_argument",
        `memory ${current.id} already says exactly this, with the same kind, tags, confidence and expiry; nothing was changed (no new version). Give the corrected text or a field to change.`,
      );
    }
    return this.remember(
      req,
      {
        content: input.content,
        kind: input.kind,
        tags: input.tags ?? current.tags,
        confidence: input.confidence ?? current.confidence,
        expiresAt: input.expiresAt,
        supersedes: current.id,
        userStated: input.userStated,
      },
      origin,
    );
  }

  /** A memory that is no longer current: what it is now, and its current version if it has one the viewer may see. */
  private async notCurrent(viewer: Viewer, id: string, lineageId: string): Promise<CoreError> {
    const status = (await this.store.get(id))?.status ?? "deleted";
    const newest = (await this.store.lineage(lineageId))
      .filter((r) => (r.status === "active" || r.status === "pending") && this.canSee(viewer, r))
      .at(-1);
    return new CoreError("conflict", `memory ${id} is ${status}${newest ? `; its current version is ${newest.id}, update that one` : ""}.`);
  }

  /** A correction whose memory was forgotten or corrected between its read and its write. */
  private async changedMeanwhile(viewer: Viewer, id: string, lineageId: string): Promise<CoreError> {
    const status = (await this.store.get(id))?.status ?? "deleted";
    if (status === "deleted") {
      return new CoreError("conflict", `memory ${id} was forgotten while this correction was being stored; nothing was stored.`);
    }
    const newest = (await this.store.lineage(lineageId))
      .filter((r) => (r.status === "active" || r.status === "pending") && this.canSee(viewer, r))
      .at(-1);
    return new CoreError(
      "conflict",
      `memory ${id} became ${status} while this correction was being stored; nothing was stored${newest ? ` (its current version is ${newest.id}, update that one)` : ""}.`,
    );
  }

  async history(viewer: Viewer, id: string): Promise<{ versions: MemoryRecord[]; audit: Awaited<ReturnType<MemoryStore["audit"]>> }> {
    const rec = await this.visible(viewer, id);
    // A correction may have moved the memory to a narrower scope (remember with supersedes and a
    // scope): that version is the other thread's or project's, not this viewer's to read.
    const versions = (await this.store.lineage(rec.lineageId)).filter((v) => this.canSee(viewer, v)).map(shownForgotten);
    const audit = (await Promise.all(versions.map((v) => this.store.audit(v.id, 50)))).flat().sort((a, b) => a.seq - b.seq);
    return { versions, audit };
  }

  /** Forget memories and every version of them; returns the ids purged. */
  async forget(viewer: Viewer, ids: string[], origin: Origin, reason?: string): Promise<string[]> {
    const lineages = new Set<string>();
    for (const id of ids) lineages.add((await this.visible(viewer, id)).lineageId);
    return this.purge(
      async () => {
        // A version written between the read of a lineage and the claim (an update by another
        // process) is claimed in the next round; once every current version is claimed, no new
        // one can be made from them.
        const claimed = new Map<string, MemoryRecord>();
        for (let round = 0; round < 5; round++) {
          const open: string[] = [];
          for (const l of lineages) for (const v of await this.store.lineage(l)) if (!claimed.has(v.id) && !purged(v)) open.push(v.id);
          if (open.length === 0) break;
          for (const r of await this.store.claimForget(open, this.clock.now(), { owner: this.ownerId })) claimed.set(r.id, r);
        }
        return [...claimed.values()];
      },
      ids,
      origin,
      reason,
    );
  }

  /**
   * Forget exactly these versions: what a forget by query listed and the person confirmed. The
   * other versions of their memories stay (a query matching only an old version's words must not
   * take the current one, which the person was never shown).
   */
  async forgetVersions(viewer: Viewer, ids: string[], origin: Origin, reason?: string): Promise<string[]> {
    const targets: string[] = [];
    for (const id of ids) {
      const rec = await this.visible(viewer, id);
      if (!purged(rec)) targets.push(rec.id);
    }
    return this.purge(() => this.store.claimForget(targets, this.clock.now(), { owner: this.ownerId }), ids, origin, reason);
  }

  /**
   * Forgets that a process claimed and never finished (it stopped in the cascade; the RAP journal
   * re-runs the call only when it was a tool call): cascaded and purged now. Run at start-up. A
   * claim whose process still runs (its cascade under way) is left to it for FORGET_CLAIM_LEASE_MS;
   * one whose process is gone, or that nobody can tell about, or held longer, is finished here,
   * taken over from the owner read here only (another sweep that took it first keeps it).
   */
  async finishForgets(opts: { all?: boolean } = {}): Promise<string[]> {
    const now = this.clock.now();
    const batch = this.config.forget.maxByQuery;
    // all: every claim, whoever holds it (a copy no process works on, such as a backup's)
    const take = (u: UnfinishedForget) => opts.all === true || this.abandoned(u.claimedBy, now - u.record.updatedAt);
    // Page past the claims left to their running processes: a stopped one behind a page of live
    // ones waited for ever. Bounded so that one run stays short; the next run starts over.
    const left: UnfinishedForget[] = [];
    let after: { updatedAt: number; id: string } | undefined;
    for (let page = 0; page < FORGET_SWEEP_PAGES && left.length < batch; page++) {
      const rows = await this.store.unfinishedForgets(batch, after);
      left.push(...rows.filter(take).slice(0, batch - left.length));
      if (rows.length < batch) break;
      const last = rows.at(-1)!.record;
      after = { updatedAt: last.updatedAt, id: last.id };
    }
    if (left.length === 0) return [];
    const ids = left.map((u) => u.record.id);
    const heldBy = new Map(left.map((u) => [u.record.id, { by: u.claimedBy, at: u.record.updatedAt }]));
    return this.purge(
      () => this.store.claimForget(ids, now, { owner: this.ownerId, heldBy }),
      ids,
      { actor: "user", threadId: null, toolCallId: null },
      "finishing a forget that stopped part way",
      "system",
    );
  }

  private get ownerId(): string | null {
    return this.owner?.id ?? null;
  }

  /** Whether a claim held this long by `owner` is for the sweep to finish (finishForgets). */
  private abandoned(owner: string | null, heldMs: number): boolean {
    if (owner === null || heldMs >= FORGET_CLAIM_LEASE_MS) return true;
    // a process that cannot check (none given) leaves a recorded owner its lease
    return this.owner?.gone(owner) === true;
  }

  /**
   * Claim the records (deleted for everyone from here, their texts kept), cascade through the
   * derived indexes, then purge them. The claim comes first so that a decision another process
   * made meanwhile (a confirm, an update) wins before anything is purged: cascaded first, a reject
   * that then lost left a confirmed memory whose copies were gone. The texts stay until the purge
   * so that a forget run again after a process died in the cascade (the journal re-runs an
   * unfinished call) still finds them to cascade.
   */
  private async purge(claim: () => Promise<MemoryRecord[]>, requested: string[], origin: Origin, reason?: string, actor?: string): Promise<string[]> {
    const targets = await claim();
    if (targets.length === 0) return [];
    // The cascade: copies of the forgotten text in derived indexes go too.
    // Needles: the forgotten texts and the ids, which results quoting the memory carry.
    // And the messages a record was made from (a learning candidate's user turn), as the user turn
    // before a remember call is: forgetting the memory forgets what it came from.
    const byUser = new Map<string, { contents: string[]; madeFrom: MessageRef[]; records: MemoryRecord[] }>();
    for (const r of targets) {
      const u = byUser.get(r.scope.user) ?? { contents: [], madeFrom: [], records: [] };
      u.contents.push(r.content, r.id);
      u.records.push(r);
      for (const s of r.sources) if (s.threadId) for (const messageId of s.messageIds) u.madeFrom.push({ threadId: s.threadId, messageId });
      byUser.set(r.scope.user, u);
    }
    for (const hook of this.forgetHooks) for (const [user, u] of byUser) await hook.beforeForget(user, u.contents, u.madeFrom, u.records);
    const audit = this.audit(origin, "forget", requested[0]!, { requested, ...(reason ? { reason } : {}) });
    await this.store.forget(
      targets.map((r) => r.id),
      actor ? { ...audit, actor } : audit,
    );
    // all of them are purged now, by this forget or by another process finishing the same claim
    return targets.map((r) => r.id);
  }

  /**
   * Candidates for a forget by query: current and past versions, flagged ones included, at most
   * forget.maxByQuery of them; `more` when others match too (one past the cap is looked for), so
   * the person is not told "forget all 50" while more stay behind.
   */
  async findForForget(viewer: Viewer, query: string): Promise<{ records: MemoryRecord[]; more: boolean }> {
    const q = analyzeQuery(query);
    if (isEmptyQuery(q)) throw new CoreError("invalid_argument", `"query" has no searchable words; say which memories to forget.`);
    const hits = await this.store.search({
      visibility: this.visibility(viewer),
      query: q,
      statuses: ALL_LIVE,
      includeFlagged: true,
      now: this.clock.now(),
      limit: this.config.forget.maxByQuery + 1,
      // What a memory says, not what its neighbours say: a forget must not sweep up bystanders.
      wordsOnly: true,
    });
    const cap = this.config.forget.maxByQuery;
    return { records: hits.slice(0, cap).map((h) => h.record), more: hits.length > cap };
  }

  async list(viewer: Viewer, input: ListInput): Promise<ListPage> {
    // as in search: an unswept expired memory is expired before a list that asks for expired ones
    if (input.statuses?.includes("expired")) await this.expireDue("system");
    const page = await this.store.list({
      visibility: this.visibility(viewer, input.scopes),
      kinds: input.kinds,
      levels: input.scopes,
      // an empty list filters nothing, as empty kinds and scopes do (it matched no row: "No memories yet")
      statuses: input.statuses && input.statuses.length > 0 ? input.statuses : CURRENT,
      includeFlagged: true,
      now: this.clock.now(),
      limit: Math.min(wholeLimit(input.limit) ?? this.config.list.defaultLimit, this.config.list.maxLimit),
      cursor: input.cursor,
      order: input.order ?? "newest",
    });
    return { ...page, items: page.items.map(shownForgotten) };
  }

  async pending(viewer: Viewer, limit: number): Promise<ListPage> {
    return this.list(viewer, { statuses: ["pending"], limit, order: "oldest" });
  }

  /**
   * A person confirmed these pending memories: they become active and user-confirmed. A confirmed
   * correction takes effect: the version it corrects becomes a past version in the same write.
   */
  async confirm(viewer: Viewer, ids: string[], origin: Origin): Promise<MemoryRecord[]> {
    // every id is checked before any is confirmed, as reject does: a bad id confirms nothing
    ids = [...new Set(ids)];
    const plan: { id: string; supersede: string | undefined }[] = [];
    const lineages = new Set<string>();
    for (const id of ids) {
      const rec = await this.visible(viewer, id);
      if (rec.status !== "pending") throw new CoreError("conflict", `memory ${id} is ${rec.status}, not pending; nothing to confirm.`);
      if (lineages.has(rec.lineageId)) {
        throw new CoreError("conflict", `memory ${id} and another id given are versions of one memory; confirm one of them.`);
      }
      lineages.add(rec.lineageId);
      plan.push({ id, supersede: this.correctedBy(rec, await this.store.lineage(rec.lineageId))?.id });
    }
    // all or nothing, each only while still pending: a reject or confirm by another process since
    // the read above wins, and then none of these is confirmed
    try {
      return await this.store.setStatuses(
        plan.map(({ id, supersede }) => ({
          id,
          status: "active" as const,
          trust: "user_confirmed" as const,
          audit: this.audit(origin, "confirm", id, supersede ? { supersedes: supersede } : {}),
          expect: "pending" as const,
          ...(supersede ? { supersede } : {}),
        })),
      );
    } catch (e) {
      if (!(e instanceof StatusChangedError)) throw e;
      throw decidedMeanwhile(e, `nothing was confirmed${plan.length > 1 ? ` (none of the ${plan.length} given)` : ""}`);
    }
  }

  /**
   * The active version a pending correction replaces once confirmed: the first active one down
   * its chain of corrected versions. Refused when the lineage's active version is not on that
   * chain (it was corrected another way meanwhile: confirming would silently undo that).
   */
  private correctedBy(rec: MemoryRecord, lineage: MemoryRecord[]): MemoryRecord | null {
    const byId = new Map(lineage.map((v) => [v.id, v]));
    const active = lineage.filter((v) => v.status === "active");
    for (let p = rec.supersedes ? byId.get(rec.supersedes) : undefined; p; p = p.supersedes ? byId.get(p.supersedes) : undefined) {
      if (p.status === "active") return p;
    }
    if (active.length > 0) {
      const now = active.at(-1)!;
      throw new CoreError(
        "conflict",
        `memory ${rec.id} corrects a version that has since been corrected as ${now.id}; reject ${rec.id}, or update ${now.id} instead.`,
      );
    }
    return null;
  }

  /**
   * Rejecting a pending memory forgets it. A rejected correction goes with the unconfirmed
   * versions it was made from, never the version a person stands behind: that one stays current.
   */
  async reject(viewer: Viewer, ids: string[], origin: Origin): Promise<string[]> {
    const targets = new Map<string, MemoryRecord>();
    for (const id of ids) {
      const rec = await this.visible(viewer, id);
      const lineage = await this.store.lineage(rec.lineageId);
      if (claimedForForget(rec)) {
        // a reject (or forget) that claimed it and stopped before its purge: finished by this one
        for (const v of lineage) if (claimedForForget(v)) targets.set(v.id, v);
        continue;
      }
      if (rec.status !== "pending") throw new CoreError("conflict", `memory ${id} is ${rec.status}, not pending; use memory_forget to remove it.`);
      const byId = new Map(lineage.map((v) => [v.id, v]));
      // the active version and the versions it grew from are what a person stands behind
      const kept = new Set<string>();
      for (const a of lineage.filter((v) => v.status === "active")) {
        for (let p: MemoryRecord | undefined = a; p && !kept.has(p.id); p = p.supersedes ? byId.get(p.supersedes) : undefined) kept.add(p.id);
      }
      if (kept.size === 0) {
        // nothing in it was ever confirmed current: the whole lineage goes
        for (const v of lineage) if (!purged(v)) targets.set(v.id, v);
        continue;
      }
      for (let p: MemoryRecord | undefined = rec; p && !kept.has(p.id); p = p.supersedes ? byId.get(p.supersedes) : undefined) {
        if (!purged(p)) targets.set(p.id, p);
      }
    }
    // only while each version is as read above: a confirm by another process since then wins,
    // and then nothing is claimed, so nothing is cascaded either
    const expect = new Map<string, MemoryStatus>([...targets.values()].map((t) => [t.id, t.status]));
    try {
      return await this.purge(() => this.store.claimForget([...targets.keys()], this.clock.now(), { expect, owner: this.ownerId }), ids, origin, "rejected in review");
    } catch (e) {
      if (!(e instanceof StatusChangedError)) throw e;
      throw decidedMeanwhile(e, "nothing was rejected");
    }
  }

  exportAll(viewer: Viewer): AsyncIterable<MemoryRecord> {
    return this.store.exportAll(this.visibility(viewer));
  }

  async expireDue(actor: string): Promise<number> {
    return this.store.expireDue(this.clock.now(), actor);
  }

}

/** A forgotten version whose text is gone (a claimed one still has it: its forget has not finished). */
function purged(r: MemoryRecord): boolean {
  return r.status === "deleted" && r.content === "";
}

/** A forgotten version as shown to a reader: without the text a forget still in progress keeps for its cascade. */
function shownForgotten(r: MemoryRecord): MemoryRecord {
  return r.status === "deleted" && r.content !== "" ? { ...r, content: "", tags: [], sources: [] } : r;
}

/** Claimed by a forget or reject that has not purged it yet (MemoryStore.claimForget). */
function claimedForForget(r: MemoryRecord): boolean {
  return r.status === "deleted" && r.content !== "";
}

/** A review decision that lost to another decider (another process, server or the CLI) between its read and its write. */
function decidedMeanwhile(e: StatusChangedError, outcome: string): CoreError {
  const now = e.actual === null || e.actual === "deleted" ? "forgotten" : e.actual;
  return new CoreError("conflict", `memory ${e.id} is ${now} now, no longer ${e.expected}: another review decided it first; ${outcome}.`);
}

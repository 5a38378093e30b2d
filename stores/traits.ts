// Store interfaces in the style of Infinity's traits (async, one error class per adapter).
// Only stores/*/ implement these; core/ depends on nothing but this file.
import type {
  MemoryKind,
  MemoryRecord,
  MemorySource,
  MemoryStatus,
  NewMemory,
  ScopeLevel,
  Trust,
} from "../core/memory/record.js";

export class StoreError extends Error {
  constructor(
    readonly code: "not_found" | "constraint" | "io" | "schema",
    message: string,
  ) {
    super(message);
    this.name = "StoreError";
  }
}

/**
 * `insert` found, inside its transaction, a live memory with the same content in the same scope:
 * one written by another process between the caller's duplicate check and this write.
 */
export class DuplicateMemoryError extends StoreError {
  constructor(readonly existingId: string) {
    super("constraint", `a memory with the same content in the same scope exists: ${existingId}`);
    this.name = "DuplicateMemoryError";
  }
}

/**
 * A change made on the condition that a record still has the status the caller saw (a review
 * decision: pending → active, or a pending one forgotten) found another status: another process
 * decided first. Nothing was changed.
 */
export class StatusChangedError extends StoreError {
  constructor(
    readonly id: string,
    readonly expected: string,
    /** null when the record is gone */
    readonly actual: string | null,
  ) {
    super("constraint", `${id} is ${actual ?? "missing"} now, no longer ${expected}`);
    this.name = "StatusChangedError";
  }
}

/**
 * Which records a query may touch. `keys`: the visibility keys of a request (thread view; see
 * core/memory/scope.ts). `owner`: every record of one user, optionally narrowed to a project
 * (the person's own view through the CLI).
 */
export type Visibility = { keys: string[] } | { owner: string; project?: string | null };

/** Lexical query, already analysed by core/retrieval/query.ts. */
export interface LexicalQuery {
  /** word terms (lower-cased, stop words removed); the store's porter tokenizer stems them */
  terms: string[];
  /** CJK bigrams for the CJK column */
  cjk: string[];
  /** substrings of ≥3 chars for the trigram channel (partial words, CJK runs) */
  trigrams: string[];
}

export interface SearchQuery {
  visibility: Visibility;
  query: LexicalQuery;
  kinds?: MemoryKind[] | undefined;
  levels?: ScopeLevel[] | undefined;
  /** statuses to include; expiry is applied on top using `now` unless "expired" is listed */
  statuses: MemoryStatus[];
  includeFlagged: boolean;
  now: number;
  limit: number;
  /** skip the trigram channel and the neighbour context: a record's own words only (conflicts) */
  wordsOnly?: boolean;
  /** the query as the person wrote it, for the vector channel (default: the lexical terms) */
  text?: string | undefined;
}

export interface SearchHit {
  record: MemoryRecord;
  /** higher is better; comparable within one result list only */
  score: number;
  channel: "lexical" | "trigram" | "both" | "vector";
}

export interface ListQuery {
  visibility: Visibility;
  kinds?: MemoryKind[] | undefined;
  levels?: ScopeLevel[] | undefined;
  statuses: MemoryStatus[];
  includeFlagged: boolean;
  now: number;
  limit: number;
  /** opaque cursor from a previous page */
  cursor?: string | undefined;
  order: "newest" | "oldest";
  /**
   * count matching memories up to this many (LIST_TOTAL_CAP when absent; 0 for a caller that
   * ignores the total, such as an export walking every page)
   */
  totalCap?: number | undefined;
}

export interface ListPage {
  items: MemoryRecord[];
  nextCursor: string | null;
  /** memories matching the query, counted up to its cap (see totalCapped) */
  total: number;
  /** more than `total` memories match: the count stopped at the cap */
  totalCapped: boolean;
}

export type AuditAction =
  | "create"
  | "duplicate"
  | "update"
  | "supersede"
  | "confirm"
  | "reject"
  | "forget"
  | "expire"
  | "toggle";

/** Append-only; never holds forgotten content. */
export interface AuditEntry {
  at: number;
  actor: string;
  action: AuditAction;
  targetKind: "memory" | "toolset";
  targetId: string;
  detail: Record<string, unknown>;
}

export interface StoredAuditEntry extends AuditEntry {
  seq: number;
}

export type EdgeRelation = "supersedes" | "conflicts_with" | "derived_from";

export interface Edge {
  src: string;
  dst: string;
  relation: EdgeRelation;
  at: number;
}

export interface BatchInsertItem {
  rec: NewMemory;
  audit: AuditEntry;
}

/** per item of `insertMany`, in input order: the new record's id, or the id it duplicates */
export type BatchInsertOutcome = { status: "created"; id: string } | { status: "duplicate"; id: string };

/** A record a forget claimed and has not purged (MemoryStore.unfinishedForgets); record.updatedAt is when it was claimed. */
export interface UnfinishedForget {
  record: MemoryRecord;
  /** the claiming process (an opaque id its service gave), null when none was recorded */
  claimedBy: string | null;
}

/** One change of MemoryStore.setStatuses; the fields are setStatus's. */
export interface StatusChange {
  id: string;
  status: MemoryStatus;
  trust: Trust | null;
  audit: AuditEntry;
  supersede?: string;
  expect?: MemoryStatus;
}

export interface MemoryStore {
  /**
   * insert a record with its provenance, index entries, audit row and edges, atomically. With
   * `expect` (id → status the caller saw: a proposed correction's `supersedes`), it fails with
   * StatusChangedError, inserting nothing, when any of those records has another status at the
   * time of the write (a forget, even one only claimed, or a correction made meanwhile).
   */
  insert(rec: NewMemory, audit: AuditEntry, edges?: Edge[], opts?: { expect?: ReadonlyMap<string, MemoryStatus> }): Promise<MemoryRecord>;
  /**
   * Insert many new records in one transaction (bulk import). A record whose content hash already
   * exists under its visibility key — in the store or earlier in the batch — is not inserted and is
   * reported as a duplicate of that record; every other record gets its provenance, tags, audit
   * row and index entries exactly as `insert` would give them.
   */
  insertMany(items: BatchInsertItem[]): Promise<BatchInsertOutcome[]>;
  /** Optional: the most records one insertMany may hold (Aurora DSQL's rows per transaction); callers split larger batches */
  readonly maxBatch?: number | undefined;
  /**
   * insert `next` as a new version of `previousId` and mark that one superseded, atomically. With
   * `expect`, only while `previousId` still has that status (else StatusChangedError, nothing written).
   */
  supersede(previousId: string, next: NewMemory, audit: AuditEntry, opts?: { expect?: MemoryStatus }): Promise<MemoryRecord>;
  get(id: string): Promise<MemoryRecord | null>;
  /**
   * The current record (active or pending, not past its expiry at `now`) with this content hash
   * under the same visibility key, if any. A superseded or expired one is history: the same text
   * said again is a new current memory, not a duplicate of the past.
   */
  findDuplicate(visibilityKey: string, contentHash: string, now: number): Promise<MemoryRecord | null>;
  /** the record written by this tool call in this thread (idempotent replays) */
  findByToolCall(threadId: string, toolCallId: string): Promise<MemoryRecord | null>;
  /** fails with StoreError("not_found") when the record is missing or forgotten */
  addSource(id: string, source: MemorySource, audit: AuditEntry): Promise<void>;
  search(q: SearchQuery): Promise<SearchHit[]>;
  list(q: ListQuery): Promise<ListPage>;
  /** every version sharing a lineage, oldest first */
  lineage(lineageId: string): Promise<MemoryRecord[]>;
  /**
   * Set a record's status (and trust when given). With `supersede`, that other current version
   * of the lineage becomes superseded in the same transaction (a confirmed correction taking
   * effect); it fails with a constraint error when that one is no longer current. With `expect`
   * (compare-and-set), it fails with StatusChangedError, changing nothing, when the record's
   * status is not that one at the time of the write.
   */
  setStatus(
    id: string,
    status: MemoryStatus,
    trust: Trust | null,
    audit: AuditEntry,
    opts?: { supersede?: string; expect?: MemoryStatus },
  ): Promise<MemoryRecord>;
  /**
   * setStatus for several records, all or nothing: one transaction, so when any change fails (its
   * `expect` no longer holds, its `supersede` is no longer current) none is made.
   */
  setStatuses(changes: StatusChange[]): Promise<MemoryRecord[]>;
  /**
   * The first step of a forget: these records become deleted at once (from here confirm, update,
   * supersede, addSource, search, list and prefixes treat them as forgotten) but keep their text
   * and sources, so the forget's cascade, and a forget run again after a process died in it, can
   * still find the copies to purge; forget() then purges them. Records a forget claimed before and
   * never purged are returned again; missing and purged ones are skipped. With `expect` (id →
   * status the caller saw) it fails with StatusChangedError, claiming nothing, when any of those
   * records has another status at the time of the write. Returns the claimed records, with text.
   * The claim records `owner` (the claiming process, null: unknown) and `at` as its time, on records
   * claimed before too: a forget run again takes its earlier claim over. With `heldBy` (id → owner
   * and claim time a sweep read), a record claimed before is taken only while that claim still
   * holds it; one another process took over meanwhile, or its owner claimed again since (a forget
   * run again: its lease starts over), is skipped.
   */
  claimForget(
    ids: string[],
    at: number,
    opts?: { expect?: ReadonlyMap<string, MemoryStatus>; owner?: string | null; heldBy?: ReadonlyMap<string, { by: string | null; at: number }> },
  ): Promise<MemoryRecord[]>;
  /**
   * Records claimed by a forget that has not purged them (yet, or ever: its process stopped), oldest
   * claim first, with who claimed them: for a sweep to finish. With `after` (the last record of the
   * page before), the page after it: a sweep looks past the claims it leaves to their processes.
   */
  unfinishedForgets(limit: number, after?: { updatedAt: number; id: string }): Promise<UnfinishedForget[]>;
  /**
   * tombstone + purge content from every index, source, tag and edge payload (records a
   * claimForget left deleted with their text included); returns ids purged.
   * With `expect` (id → status the caller saw), it fails with StatusChangedError, purging nothing,
   * when any of those records has another status at the time of the write.
   */
  forget(ids: string[], audit: AuditEntry, opts?: { expect?: ReadonlyMap<string, MemoryStatus> }): Promise<string[]>;
  /** mark records whose expires_at passed as expired; returns how many */
  expireDue(now: number, actor: string): Promise<number>;
  addEdge(edge: Edge): Promise<void>;
  edgesOf(id: string): Promise<Edge[]>;
  audit(targetId: string, limit: number): Promise<StoredAuditEntry[]>;
  /** all exportable (non-deleted) records visible under `visibility`, oldest first */
  exportAll(visibility: Visibility): AsyncIterable<MemoryRecord>;
  /**
   * Optional: a server's background warm-up, so a fresh server's first searches do not pay for it:
   * in-memory search indexes of the scopes written last (SQLite's semantic channel) and the
   * commonest words' counts (SQLite's word planner, kept fresh from then on). Searches need not
   * wait for it; it resolves with the scopes it built.
   */
  warm?(): Promise<string[]>;
  close(): void;
}

/** Per-thread enable/disable of a toolset; children inherit unless set. */
export interface ToggleStore {
  set(toolset: string, threadId: string, enabled: boolean | null, audit: AuditEntry): Promise<void>;
  /** nearest explicit setting along [thread, parent, …, root]; null when none */
  resolve(toolset: string, threadChainNearestFirst: string[]): Promise<boolean | null>;
}

// ---- RAP server state (toolsets/rap) ----

/** One tool call as the runtime identifies it: (toolset, thread, tool call id). */
export interface RapCallKey {
  toolset: string;
  groupId: string;
  callId: string;
}

export type RapInvocationStatus = "received" | "done" | "cancelled" | "failed";

export interface RapJournalEntry extends RapCallKey {
  /** the raw invocation JSON while the call is open; null once it finished */
  body: string | null;
  status: RapInvocationStatus;
  /** `${pid}:${bootId}` of the server process running the call */
  owner: string;
  receivedAt: number;
  finishedAt: number | null;
}

/** A callback waiting for delivery; `body` is the exact JSON to POST. */
export interface RapOutboxEntry extends RapCallKey {
  callbackUrl: string;
  body: string;
}

/** Invocation journal: what was acknowledged but not yet answered survives a crash. */
export interface RapJournalStore {
  /** journal a new invocation; false when this call was journaled before */
  record(key: RapCallKey, body: string, owner: string, at: number): Promise<boolean>;
  get(key: RapCallKey): Promise<RapJournalEntry | null>;
  /**
   * Atomically enqueue the call's result and close the invocation (status done, body dropped).
   * False, and nothing enqueued, when the call is no longer open under `owner` (cancelled or
   * taken over).
   */
  complete(key: RapCallKey, owner: string, result: RapOutboxEntry, at: number): Promise<boolean>;
  /** close an open invocation without a result (status failed, body dropped) */
  fail(key: RapCallKey, owner: string, at: number): Promise<boolean>;
  /** close an open invocation because the runtime cancelled it; false when it was not open */
  cancel(key: RapCallKey, at: number): Promise<boolean>;
  /** open invocations of a toolset, oldest first */
  open(toolset: string): Promise<RapJournalEntry[]>;
  /** move an open invocation from owner `from` to `to`; false when another process won */
  takeOver(key: RapCallKey, from: string, to: string): Promise<boolean>;
}

export interface RapOutboxRow extends RapOutboxEntry {
  id: number;
  attempts: number;
  createdAt: number;
}

export interface RapOutboxStats {
  pending: number;
  delivered: number;
  rejected: number;
  dead: number;
  /** delivery attempts made for rows still pending */
  pendingAttempts: number;
}

/**
 * A claim's share per receiver: a due row whose receiver (`key` of its callback URL) has no
 * `room` left is passed over and stays pending, unleased, so one hung receiver cannot take every
 * delivery slot.
 */
export interface RapClaimSpread {
  key(callbackUrl: string): string;
  room(key: string): number;
}

/** Durable callback outbox. Leases let several processes share one file without double sends. */
export interface RapOutboxStore {
  enqueue(entry: RapOutboxEntry, at: number): Promise<number>;
  /**
   * Lease up to `limit` due rows (oldest first, at most one per call at a time) until now+leaseMs;
   * with `spread`, at most `room(key)` of them per receiver.
   */
  claimDue(now: number, leaseMs: number, limit: number, spread?: RapClaimSpread): Promise<RapOutboxRow[]>;
  markDelivered(id: number, at: number): Promise<void>;
  /** the receiver refused the callback for good */
  markRejected(id: number, at: number, error: string): Promise<void>;
  retryAt(id: number, nextAttemptAt: number, error: string): Promise<void>;
  /** pending rows created before `createdBefore` become dead; returns how many */
  expire(createdBefore: number, now: number): Promise<number>;
  /** the earliest time a pending row may next be claimed (attempt time and lease), or null */
  nextDueAt(): Promise<number | null>;
  pendingCount(): Promise<number>;
  stats(): Promise<RapOutboxStats>;
  /**
   * Pending rows whose body contains one of `probes` (ASCII letters and digits, case ignored; an
   * empty one matches every body), for the caller's exact check. A forget looks for copies of its text.
   */
  pendingMentioning(probes: string[]): Promise<{ id: number; body: string }[]>;
  /** a pending row's body becomes `body`; false when the row is no longer pending */
  replacePending(id: number, body: string): Promise<boolean>;
}

export type RapUserChoiceStatus = "waiting" | "answered" | "dismissed";

export interface RapUserChoiceRecord {
  toolset: string;
  /** the tool call id that asked */
  choiceId: string;
  groupId: string;
  prompt: string;
  choices: string[];
  status: RapUserChoiceStatus;
  selected: number | null;
  createdAt: number;
  answeredAt: number | null;
}

/** Questions a tool asked the person through RAP `user_choice`, until its call finishes. */
export interface RapUserChoiceStore {
  /** store a waiting question; asking again under the same id replaces the earlier one */
  ask(
    c: { toolset: string; choiceId: string; groupId: string; prompt: string; choices: string[] },
    at: number,
  ): Promise<void>;
  get(toolset: string, choiceId: string): Promise<RapUserChoiceRecord | null>;
  /** record the answer; false when no question with this id is waiting */
  answer(toolset: string, choiceId: string, selected: number, at: number): Promise<boolean>;
  dismiss(toolset: string, choiceId: string, at: number): Promise<void>;
  /** drop the question once its call finished (prompts are not kept) */
  remove(toolset: string, choiceId: string): Promise<void>;
  /**
   * Questions whose prompt contains one of `probes` (ASCII letters and digits, case ignored; an
   * empty one matches every prompt), for the caller's exact check. A forget looks for copies of its text.
   */
  promptsMentioning(probes: string[]): Promise<{ toolset: string; choiceId: string; prompt: string }[]>;
  /** a question's prompt becomes `prompt` (its choices, status and answer stay) */
  replacePrompt(toolset: string, choiceId: string, prompt: string): Promise<void>;
}
export * from "./infinity/traits.js";

// ---- trace events and session contexts (context hook) ----

export type TraceSource = "provider_proxy" | "grpc" | "toolset" | "harness";

/** One observed step of a thread, e.g. a relayed model call. Bodies hold excerpts only. */
export interface TraceEvent {
  source: TraceSource;
  /** the same observation seen twice (a retried request, a replay) has the same key */
  dedupKey: string;
  threadId: string | null;
  rootThreadId: string | null;
  kind: string;
  body: Record<string, unknown>;
  at: number;
}

export interface StoredTraceEvent extends TraceEvent {
  id: number;
}

export interface TraceStore {
  /** store the event; false (nothing written) when one with the same dedup key exists */
  record(event: TraceEvent): Promise<boolean>;
  /** a thread's events in recording order, after `afterId` (exclusive), at most `limit` */
  listByThread(threadId: string, opts?: { afterId?: number; limit?: number }): Promise<StoredTraceEvent[]>;
  /**
   * Events whose body (its JSON text) contains one of `probes` (ASCII letters and digits, case
   * ignored; an empty one matches every event), with that text for the caller's exact check. A
   * forget looks for copies of its text; a long scan gives way to other work now and then.
   */
  eventsMentioning(probes: string[]): Promise<{ id: number; threadId: string | null; rootThreadId: string | null; text: string }[]>;
  /** delete these events (a forget found the forgotten text in them) */
  forgetEvents(ids: number[]): Promise<void>;
}

/** What the toolsets learned about a session (root thread) from its invocations. */
export interface RootContext {
  rootThreadId: string;
  userId: string;
  project: string | null;
  updatedAt: number;
}

export interface RootContextStore {
  /** insert or replace; an update older than the stored one is ignored */
  upsert(rootThreadId: string, userId: string, project: string | null, at: number): Promise<void>;
  get(rootThreadId: string): Promise<RootContext | null>;
}

// ---- session search index ---------------------------------------------------------------------

export interface IndexedMessage {
  ord: number;
  messageId: string;
  role: string;
  text: string;
}

export interface SessionThreadState {
  indexedCount: number;
  fingerprint: string | null;
  /** the user the thread's messages are indexed under (the session's owner when they were read) */
  user: string;
  /** messages left out as kinds the reader did not know; null when none were */
  skipped: SkippedMessages | null;
}

/**
 * Where a thread's indexing first left out a message of a kind its reader did not know (a newer
 * daemon's), and the reader's message format then: a reader of another format reads from there.
 */
export interface SkippedMessages {
  from: number;
  format: string;
}

export interface SessionHit {
  sourceId: number;
  threadId: string;
  rootThreadId: string;
  ord: number;
  messageId: string;
  role: string;
  text: string;
  at: number;
  score: number;
}

/** Our derived full-text index of past conversations (never the fact store). */
/** one message of a conversation thread, as a memory's source names it */
export interface MessageRef {
  threadId: string;
  messageId: string;
}

/** A child thread's place under its parent: the parent's messages before `spawnOrder` led to it. */
export interface ThreadParent {
  threadId: string;
  spawnOrder: number;
}

export interface SessionIndexStore {
  /**
   * The source's id, created when new. `formerLocation`: the same source as an earlier version
   * spelt it (its path through a symbolic link); a source indexed under that name takes
   * `location` and keeps its id and rows, so nothing is indexed a second time.
   */
  sourceId(kind: "infinity-files" | "sqlite" | "postgres", location: string, formerLocation?: string): Promise<number>;
  threadState(sourceId: number, threadId: string): Promise<SessionThreadState | null>;
  /** append messages of one thread (skipping suppressed ones) and move its watermark */
  append(
    sourceId: number,
    thread: { threadId: string; rootThreadId: string; user: string; cwd: string | null; parent?: ThreadParent | null; skipped?: SkippedMessages | null },
    messages: IndexedMessage[],
    indexedCount: number,
    fingerprint: string | null,
    at: number,
  ): Promise<number>;
  /** drop a thread's rows so it is indexed again from the start */
  resetThread(sourceId: number, threadId: string): Promise<void>;
  /** the ids of the threads indexed from this source */
  indexedThreads(sourceId: number): Promise<string[]>;
  /** every source of this kind the index holds */
  sources(kind: "infinity-files" | "sqlite" | "postgres"): Promise<{ id: number; location: string }[]>;
  /**
   * A source that moved (`fromId`, gone from its location) is now `intoId`: its suppressed
   * messages are `intoId`'s too (any of them `intoId` already indexed leave the index), and its
   * indexed threads are dropped. The source and its suppressions stay, so a location that comes
   * back (a drive mounted again) still keeps what was forgotten there.
   */
  mergeSource(fromId: number, intoId: number): Promise<void>;
  /** `user`: the session owner whose messages may match (the scope predicate is inside the FTS lookup) */
  search(q: {
    user: string;
    query: LexicalQuery;
    rootThreadId?: string | undefined;
    excludeRootThreadId?: string | undefined;
    limit: number;
  }): Promise<SessionHit[]>;
  /** messages [ord - before, ord + after] of one thread */
  window(sourceId: number, threadId: string, fromOrd: number, toOrd: number): Promise<SessionHit[]>;
  find(sourceId: number | null, threadId: string, ref: { ord?: number; messageId?: string }, user: string): Promise<SessionHit | null>;
  /**
   * Remove (and never re-index) this user's messages that contain any of these texts, and the
   * messages named in `madeFrom` (what the forgotten memories were made from), with the later
   * messages quoting any of them.
   */
  purgeContaining(user: string, texts: string[], madeFrom?: MessageRef[]): Promise<number>;
  /** ids of a thread's messages a forget purged (from any source): never to be read as what they said */
  forgottenMessages(threadId: string): Promise<Set<string>>;
  counts(): Promise<{ threads: number; messages: number }>;
}

// ---- skill catalog (core/skills) ----

import type { SkillFile } from "../core/skills/skill-md.js";
import type {
  NewSkillVersion,
  Skill,
  SkillGrant,
  SkillSearchHit,
  SkillStatus,
  SkillToggle,
  SkillVersion,
} from "../core/skills/version.js";

export type SkillAuditAction =
  | "propose"
  | "publish"
  | "reject"
  | "rollback"
  | "pin"
  | "unpin"
  | "grant"
  | "revoke"
  | "enable"
  | "disable"
  | "feedback"
  // the learning loop's lifecycle and evolution (core/learning/lifecycle.ts, evolution.ts)
  | "promote"
  | "retire"
  | "eta"
  | "evolve"
  // a forget withdrew what the learning loop had derived from the forgotten text (core/learning/skill-forget.ts)
  | "withdraw";

/** An audit_log row about a skill (target_kind 'skill'; target_id the skill name). */
/** Tools granted together with a publish, with their own audit line. */
export interface PointerGrant {
  tools: string[];
  grantedBy: string;
  audit: SkillAuditEntry;
}

export interface SkillAuditEntry {
  at: number;
  actor: string;
  action: SkillAuditAction;
  targetKind: "skill";
  targetId: string;
  detail: Record<string, unknown>;
}

export interface SkillSearchQuery {
  match: string;
  minEta: number;
  probationaryMinEta?: number;
  excludeSkillIds: string[];
  limit: number;
}

export interface SkillStore {
  skillByName(name: string): Promise<Skill | null>;
  skillById(id: string): Promise<Skill | null>;
  listSkills(): Promise<Skill[]>;
  version(id: string): Promise<SkillVersion | null>;
  versionsOf(skillId: string): Promise<SkillVersion[]>;
  versionByHash(skillId: string, contentHash: string): Promise<SkillVersion | null>;
  filesOf(versionId: string): Promise<SkillFile[]>;
  /** create the skill when new, then the version and its files; one transaction */
  insertVersion(v: NewSkillVersion, ids: { skillId: string; versionId: string }, audit: SkillAuditEntry): Promise<SkillVersion>;
  /**
   * Move the published pointer from `expectedFrom` to `to` atomically: `to` gets `toStatus`, the
   * old version `fromStatus`, the search index follows. Fails with StoreError("constraint") when
   * the pointer is no longer `expectedFrom` (someone else moved it). A publish pushes `to` on the
   * publication stack; a rollback pops the old version off it. `grant` (a new learned skill's
   * verified tools) is written in the same transaction, so a crash leaves neither. With
   * `expectTo`, it fails with StatusChangedError, changing nothing, when `to` has another status
   * (a person rejected it meanwhile).
   */
  movePointer(
    skillId: string,
    move: {
      expectedFrom: string | null;
      to: string;
      toStatus: SkillStatus;
      fromStatus: SkillStatus;
      kind: "publish" | "rollback";
      grant?: PointerGrant;
      expectTo?: SkillStatus;
    },
    audit: SkillAuditEntry,
  ): Promise<void>;
  /** With `expect` (compare-and-set), fails with StatusChangedError, changing nothing, when the version has another status. */
  setStatus(versionId: string, status: SkillStatus, audit: SkillAuditEntry, opts?: { expect?: SkillStatus }): Promise<void>;
  setPinned(skillId: string, pinned: boolean, audit: SkillAuditEntry): Promise<void>;
  grantsOf(skillId: string): Promise<SkillGrant[]>;
  grant(skillId: string, tools: string[], grantedBy: string, audit: SkillAuditEntry): Promise<void>;
  setToggle(t: SkillToggle, value: boolean | null, audit: SkillAuditEntry): Promise<void>;
  /** every setting whose (level, key) is one of these */
  togglesFor(scopes: { level: SkillToggle["level"]; key: string }[]): Promise<SkillToggle[]>;
  recordView(versionId: string): Promise<void>;
  /** add one trial (pass or fail) and store the new η; returns the updated version */
  recordTrial(
    versionId: string,
    trial: { passed: boolean; note: string | null; threadId: string | null; at: number },
    eta: (passes: number, trials: number) => number,
    audit: SkillAuditEntry,
  ): Promise<SkillVersion>;
  /**
   * Published, unflagged, retrievable versions (active, or probationary with η ≥
   * `probationaryMinEta`, default 0) with η > minEta whose name/description match; never
   * `excludeSkillIds`. Every filter applies before the limit.
   */
  search(q: SkillSearchQuery): Promise<SkillSearchHit[]>;
  auditOf(name: string, limit: number): Promise<(SkillAuditEntry & { seq: number })[]>;
  /**
   * Versions the agent wrote (author 'agent') one of whose texts (description, body, frontmatter,
   * a file's path or content) contains one of `probes` (ASCII letters and digits, case ignored;
   * an empty one matches every text), with those texts for the caller's exact check. A forget
   * looks for copies of its text; a long scan gives way to other work now and then.
   */
  agentVersionsMentioning(probes: string[]): Promise<{ version: SkillVersion; texts: string[] }[]>;
  /**
   * A forget withdrew this version the agent wrote: its description, body and frontmatter become
   * `blank`, its files go, its content hash becomes WITHHELD_HASH_PREFIX + its id, it is rejected
   * and off the publication stack; when the skill's pointer is at it, the search index holds the
   * blank description. Written with the audit row in one transaction; false (nothing written)
   * when it is not a version the agent wrote.
   */
  withdrawVersion(
    versionId: string,
    blank: { description: string; body: string; frontmatter: Record<string, unknown> },
    audit: SkillAuditEntry,
  ): Promise<boolean>;
  /** trials whose note contains one of `probes` (as agentVersionsMentioning), for the caller's exact check */
  trialNotesMentioning(probes: string[]): Promise<{ id: number; versionId: string; threadId: string | null; note: string }[]>;
  /** clear these trials' notes (a forget found the forgotten text in them) */
  clearTrialNotes(ids: number[]): Promise<void>;
}

// ---- learning loop (core/learning) ----

import type {
  CandidateDisposition,
  EpisodeDraft,
  EpisodeSource,
  LearningEvent,
  QueueItem,
  RewardSignal,
  ScoredStep,
  SignalKind,
  StoredEpisode,
  StoredSignal,
  TaskFeedback,
} from "../core/learning/types.js";

/** a message position left out unread, and the reader's message format (ConversationReader.messageFormat) then */
export interface ThreadSkip {
  from: number;
  format: string;
}

/** a thread dropped after its retries: its reader's format then, how often, and when it may be tried again */
export interface DroppedThread {
  source: EpisodeSource;
  threadId: string;
  rootThreadId: string;
  format: string;
  drops: number;
  retryAt: number;
  reason: string;
}

export interface LearningStore {
  /**
   * Insert or update the episode keyed by (source, thread, startOrd) with its steps, message
   * edges and derived signals (kinds in `derivedKinds` are replaced; explicit and rubric ones are
   * kept), in one transaction. `changed` is false when the stored content hash was the same, or
   * the stored episode was forgotten (it stays as forgetEpisodes left it).
   */
  upsertEpisode(
    draft: EpisodeDraft,
    derived: RewardSignal[],
    derivedKinds: SignalKind[],
    newId: string,
    at: number,
  ): Promise<{ episode: StoredEpisode; changed: boolean; created: boolean }>;
  episode(id: string): Promise<StoredEpisode | null>;
  episodesOfThread(source: EpisodeSource, threadId: string): Promise<StoredEpisode[]>;
  /**
   * Where an incremental rebuild begins: the start of the thread's last episode, or of an earlier
   * one whose processing did not finish (candidates not done); null when none is stored.
   */
  resumeOrd(source: EpisodeSource, threadId: string): Promise<number | null>;
  stepsOf(episodeId: string): Promise<ScoredStep[]>;
  /** the episode of a thread whose steps include this tool call */
  episodeOfCall(threadId: string, callId: string): Promise<StoredEpisode | null>;
  /** store a signal; false when one with the same dedup key exists */
  addSignal(episodeId: string, signal: RewardSignal): Promise<boolean>;
  signalsOf(episodeId: string): Promise<StoredSignal[]>;
  /** store R (null: no signal yet), whether a non-rubric signal backs it, and each step's α and V */
  setScores(episodeId: string, reward: number | null, grounded: boolean, steps: { idx: number; alpha: number; value: number | null }[], at: number): Promise<void>;
  setSuppressed(episodeId: string, at: number): Promise<void>;
  markCandidatesDone(episodeId: string, at: number): Promise<void>;
  addCandidate(episodeId: string, memoryId: string, disposition: CandidateDisposition, at: number): Promise<void>;
  candidatesOf(episodeId: string): Promise<{ memoryId: string; disposition: CandidateDisposition }[]>;
  /**
   * Remember that a person rejected (or forgot) learned candidates: their fingerprints (hashes, no
   * text) in the visibility key of their scope. Idempotent.
   */
  addRejected(visKey: string, fingerprints: string[], at: number): Promise<void>;
  /** whether that fingerprint was rejected in that visibility key */
  isRejected(visKey: string, fingerprint: string): Promise<boolean>;
  /** which of these memories the loop proposed or added a candidate to as evidence (learning_candidates) */
  proposedAmong(memoryIds: string[]): Promise<Set<string>>;
  /**
   * Episodes one of whose texts (task, final answer, step excerpts and argument shapes, signal and
   * feedback notes) contains one of `probes` (ASCII letters and digits, case ignored; an empty one
   * matches every text), with the texts that matched for the caller's exact check. A forget looks
   * for copies of its text; a long scan gives way to other work now and then.
   */
  episodesMentioning(probes: string[]): Promise<{ id: string; rootThreadId: string; texts: string[] }[]>;
  /**
   * A forget reached these episodes: their texts are blanked (steps dropped, notes cleared), they
   * are suppressed with their candidates done, and their content hash becomes
   * FORGOTTEN_EPISODE_HASH, so upsertEpisode never writes them again.
   */
  forgetEpisodes(ids: string[], at: number): Promise<void>;
  /** the messages this thread's forgotten episodes were built from (read as empty when the thread is read again) */
  forgottenEpisodeMessages(source: EpisodeSource, threadId: string): Promise<Set<string>>;
  /** episodes built from any of these messages (their message edges), not forgotten yet (`withForgotten`: those too) */
  episodesOfMessages(refs: MessageRef[], opts?: { withForgotten?: boolean }): Promise<{ id: string; rootThreadId: string }[]>;

  /** keep a task_feedback call; false when this call was recorded before */
  recordFeedback(fb: TaskFeedback): Promise<boolean>;
  /** feedback of a thread not yet attached to an episode */
  unresolvedFeedback(threadId: string): Promise<TaskFeedback[]>;
  resolveFeedback(threadId: string, callId: string, episodeId: string): Promise<void>;

  /** put a thread on the work queue (again); an already queued thread keeps its place */
  enqueue(source: EpisodeSource, threadId: string, rootThreadId: string, at: number): Promise<void>;
  /** lease up to `limit` queued threads whose lease expired, oldest first */
  claim(now: number, leaseMs: number, limit: number): Promise<QueueItem[]>;
  /** done: drop it from the queue unless it was enqueued again after `claimedAt` */
  complete(source: EpisodeSource, threadId: string, claimedAt: number): Promise<void>;
  /** count a failure; the item is dropped after `maxAttempts` (returns true when dropped) */
  fail(source: EpisodeSource, threadId: string, error: string, maxAttempts: number, retryAt: number): Promise<boolean>;
  queueDepth(): Promise<number>;

  cursor(source: string, key: string): Promise<number>;
  setCursor(source: string, key: string, position: number): Promise<void>;

  /** the first message of a thread the worker left out as a kind its reader did not know, and that reader's format */
  skipped(source: EpisodeSource, threadId: string): Promise<ThreadSkip | null>;
  /** every thread of a source with such a record (discovery queues them again after a format change) */
  skippedThreads(source: EpisodeSource): Promise<({ threadId: string } & ThreadSkip)[]>;
  /** record it, or (null) forget it once the thread reads in full */
  setSkipped(source: EpisodeSource, threadId: string, skip: ThreadSkip | null): Promise<void>;

  /** threads dropped from the queue after their retries, for discovery to try again */
  droppedThreads(): Promise<DroppedThread[]>;
  /** record (or replace) a dropped thread, or (null) forget it once it was learned from */
  setDropped(source: EpisodeSource, threadId: string, dropped: Omit<DroppedThread, "source" | "threadId"> | null): Promise<void>;

  event(kind: string, threadId: string | null, episodeId: string | null, detail: Record<string, unknown>, at: number): Promise<void>;
  events(opts?: { kind?: string; limit?: number }): Promise<LearningEvent[]>;
}

/** New trace events across all threads, for the learning worker's discovery pass. */
export interface TraceFeed {
  /** threads with events of id > afterId (at most `limit` events read), and the last id read */
  threadsAfter(
    afterId: number,
    limit: number,
  ): Promise<{ lastId: number; threads: { source: TraceSource; threadId: string; rootThreadId: string | null }[] }>;
}

// ---- skills that evolve (core/learning/evolution.ts) ----

import type { EvalReport } from "../core/learning/replay.js";
import type { PolicyDraft } from "../core/learning/policy.js";

export interface StoredPolicy extends PolicyDraft {
  id: string;
  /** the skill crystallized from it, and the policy content hash and gain it was built from */
  skillName: string | null;
  builtHash: string | null;
  builtGain: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface StoredEvalReport {
  id: number;
  skillName: string;
  versionId: string | null;
  baselineVersionId: string | null;
  policyId: string | null;
  passed: boolean;
  report: EvalReport & { verification?: string[]; source?: string };
  createdAt: number;
}

export type SkillRequestKind = "publish" | "merge" | "retire";
/**
 * "approving": a person said yes and the action (publish, retire, merge) is under way; `decidedBy`
 * and `decidedAt` say who and since when. A decline is refused meanwhile; approving it again after
 * its process stopped finishes it. Stored as a pending row with its claim columns set (Aurora DSQL
 * cannot change the status CHECK).
 */
export type SkillRequestStatus = "pending" | "approving" | "approved" | "rejected" | "superseded";

/** Who is approving a request, since when, from which process (host:pid:start; null: unrecorded). */
export interface ApprovalClaim {
  by: string;
  at: number;
  process: string | null;
}

export interface SkillRequest {
  id: string;
  kind: SkillRequestKind;
  skillName: string;
  versionId: string | null;
  otherSkill: string | null;
  policyId: string | null;
  reportId: number | null;
  status: SkillRequestStatus;
  detail: Record<string, unknown>;
  createdAt: number;
  decidedAt: number | null;
  decidedBy: string | null;
  /** while approving: the process carrying it out (ApprovalClaim.process), else null */
  approvingProcess: string | null;
}

export interface GoldenTask {
  id: number;
  skillName: string;
  task: string;
  tools: string[];
  createdAt: number;
}

/** What the evolution tables hold that may quote a forgotten text (EvolutionStore.mentioning). */
export interface EvolutionMentions {
  policies: StoredPolicy[];
  requests: SkillRequest[];
  reports: StoredEvalReport[];
  goldenTasks: GoldenTask[];
}

/** What a forget changes in the evolution tables (EvolutionStore.withhold). */
export interface EvolutionWithholding {
  /**
   * A policy's entries that quoted the text are gone: these are what is left. It becomes
   * ineligible (the loop does not build from it until a recompute finds the pattern again in the
   * episodes left), and its support edges keep only `episodeIds`.
   */
  policies: { id: string; keyTerms: string[]; tasks: string[]; episodeIds: string[]; pitfalls: PolicyDraft["pitfalls"]; steps: PolicyDraft["steps"] }[];
  /** a request's detail without the text; `close`: a pending one is rejected, decided by "forget" */
  requests: { id: string; detail: Record<string, unknown>; close: boolean }[];
  reports: { id: number; report: StoredEvalReport["report"] }[];
  goldenTaskIds: number[];
}

export interface EvolutionStore {
  /** ids of finished episodes, newest change first, at most `limit` */
  recentEpisodeIds(limit: number): Promise<string[]>;
  /** the newest episode change (updated_at), 0 when none */
  episodesChangedAt(): Promise<number>;
  /**
   * insert or update by signature, replacing its provenance edges; one transaction. `previousGain`
   * is the stored gain this save replaced (null when new), read in the same transaction, so of two
   * servers saving one change only one sees it move.
   */
  savePolicy(p: PolicyDraft, id: string, at: number): Promise<StoredPolicy & { previousGain: number | null }>;
  policies(): Promise<StoredPolicy[]>;
  policy(id: string): Promise<StoredPolicy | null>;
  policiesOfSkill(skillName: string): Promise<StoredPolicy[]>;
  markBuilt(policyId: string, skillName: string, builtHash: string, builtGain: number, at: number): Promise<void>;
  /** the episodes of a policy by role */
  policyEpisodes(policyId: string, role: "support" | "counter"): Promise<string[]>;
  addReport(r: Omit<StoredEvalReport, "id">): Promise<StoredEvalReport>;
  report(id: number): Promise<StoredEvalReport | null>;
  reportsOf(skillName: string, limit: number): Promise<StoredEvalReport[]>;
  /** a new pending request supersedes the pending one (not one being approved) of the same kind and skill */
  addRequest(r: Omit<SkillRequest, "status" | "decidedAt" | "decidedBy" | "approvingProcess">): Promise<SkillRequest>;
  /**
   * addRequest as a compare-and-set on what its filer (the curator) read at `since`: filed only while
   * no request of its question (kind, skill and other skill; a merge's pair either way round) is
   * open, pending or being approved, but `replaces` (pending, not being approved: superseded by this
   * one), and none was approved or declined at or after `since`. Otherwise nothing is filed: null.
   * Two curators, or a curator and a person's decline, at one instant file one question once.
   */
  proposeRequest(r: Omit<SkillRequest, "status" | "decidedAt" | "decidedBy" | "approvingProcess">, read: { replaces: string | null; since: number }): Promise<SkillRequest | null>;
  request(id: string): Promise<SkillRequest | null>;
  /** newest first; `kinds`: only these kinds */
  requests(opts?: { status?: SkillRequestStatus; kinds?: SkillRequestKind[]; limit?: number }): Promise<SkillRequest[]>;
  /** false when it was no longer pending (decided, or being approved) */
  decide(id: string, status: "approved" | "rejected", by: string, at: number): Promise<boolean>;
  /**
   * pending → approving under `claim`; with `over`, an approving request whose claim is exactly
   * `over` (a stopped approval taken over) instead. False when it was not so.
   */
  claimApproval(id: string, claim: ApprovalClaim, over?: ApprovalClaim): Promise<boolean>;
  /** approving under exactly `claim` → pending again (its action could not be done); false when not so */
  releaseApproval(id: string, claim: ApprovalClaim): Promise<boolean>;
  /** approving under exactly `claim` → approved, decided by `claim.by` at `at`; false when not so */
  finishApproval(id: string, claim: ApprovalClaim, at: number): Promise<boolean>;
  addGoldenTask(skillName: string, task: string, tools: string[], at: number): Promise<GoldenTask>;
  goldenTasks(skillName: string): Promise<GoldenTask[]>;
  /** set a version's η and write the audit row, in one transaction */
  setEta(versionId: string, eta: number, audit: SkillAuditEntry): Promise<void>;
  /** write an audit row about a skill */
  audit(entry: SkillAuditEntry): Promise<void>;
  /** the last trial of any version of the skill, or null */
  lastTrialAt(skillName: string): Promise<number | null>;
  /**
   * Policies (pattern or key terms), requests (detail), evaluation reports and golden tasks one
   * of whose texts contains one of `probes` (ASCII letters and digits, case ignored; an empty one
   * matches every text), for the caller's exact check. A forget looks for copies of its text; a
   * long scan gives way to other work now and then.
   */
  mentioning(probes: string[]): Promise<EvolutionMentions>;
  /** write what a forget changed, with its audit rows, in one transaction */
  withhold(w: EvolutionWithholding, at: number, audits: SkillAuditEntry[]): Promise<void>;
}

// SQLite implementation of MemoryStore: records, provenance, tags, edges, audit and the two
// full-text channels. Every multi-row change runs in one transaction; statements are prepared once.
import { randomInt } from "node:crypto";
import type { Statement } from "better-sqlite3";
import { visibilityKey } from "../../core/memory/scope.js";
import type { MemoryRecord, MemorySource, MemoryStatus, NewMemory, Trust } from "../../core/memory/record.js";
import {
  DuplicateMemoryError,
  StatusChangedError,
  StoreError,
  type AuditEntry,
  type BatchInsertItem,
  type BatchInsertOutcome,
  type Edge,
  type ListPage,
  type ListQuery,
  type MemoryStore,
  type SearchHit,
  type SearchQuery,
  type StatusChange,
  type UnfinishedForget,
  type StoredAuditEntry,
  type Visibility,
} from "../traits.js";
import type { Db } from "./database.js";
import { cappedTotal, purgedRow, DATED_AT, LIST_KEY_BRANCHES, decodeCursor, encodeCursor, exportAllVia, pushTo, totalCapOf, recordOf, sourcesByMemory, statusPredicate, type MemoryRow, type SourceRow } from "../memory-rows.js";
import { DfPrefill } from "./df-prefill.js";
import { FtsPlanner, POSTINGS_BUDGET, type WordPlan } from "./fts-planner.js";
import { NeighbourSpread } from "./neighbour-spread.js";
import { semanticChannel, type SemanticChannel, type SemanticHit } from "./semantic-channel.js";
import { DEFAULT_ASSOCIATIONS } from "../../core/retrieval/associations.js";
import { indexNewRows, kindToken, neighbours, refreshNeighbours, writeWordRow, type FreshRow } from "./memory-fts.js";
import { holdsAny, trigramMatch } from "./trigram-query.js";
import { DEFAULT_CHANNELS, type RetrievalChannels } from "../../core/retrieval/channels.js";
import { joinsIndex, type IndexDelta } from "../../core/retrieval/association-cache.js";
import { ftsPurge, type FtsPurge } from "./fts-purge.js";
import { walCheckpoints, type WalCheckpoints } from "./wal-checkpoints.js";
import { addAssociationHits, addMissing, addRanks, rrf } from "../../core/retrieval/fusion.js";
import { DEFAULT_PRF, expansionTerms } from "../../core/retrieval/prf.js";
import { mmr, proximityRerank } from "../../core/retrieval/rerank.js";
import { applyCues, CUE_POOL, queryCues, SMALL_STORE_CUE_POOL } from "../../core/retrieval/cues.js";
import { DATED_POOL, newestInPeriod, type DateWindow } from "../../core/retrieval/dates.js";
import { addedWords, type AddedWords } from "../../core/retrieval/added-words.js";
import { hasCjk } from "../../core/retrieval/analyze.js";
import { asks } from "../../core/retrieval/spread.js";
// [vector channel] optional embedder + sqlite-vec index (issue 8 §2), kept in step with every write
import { VectorChannel } from "./vector-channel.js";



// What a search reads of each candidate: the fields its passes use (cues, spreading, fusion,
// re-ranking). Only the results are read whole: 23 columns made into a JS object cost about 5 µs
// a row, and a search at 100k memories weighs some 50 candidates for its 10 results.
type PoolRow = Pick<MemoryRow, "rowid" | "content" | "valid_from" | "created_at" | "updated_at">;
const POOL_COLS = "m.rowid, m.content, m.valid_from, m.created_at, m.updated_at";

// Column weights for bm25(memory_fts): content, tags, cjk, context (neighbours + date), vis_key.
const FTS_WEIGHTS = "1.0, 2.0, 1.0, 0.3, 0.0";
// RRF weight of the feedback pass relative to the first word pass.
const PRF_WEIGHT = 1.0;
// The feedback pass scores half the first pass's postings: its common words are the first to go,
// its rarer expansion words stay (100k, every channel on: p95 8.7 -> 7.6 ms, same top-10 source
// rates; stores under 3,000 memories are not planned, so LoCoMo is unchanged).
const PRF_POSTINGS_BUDGET = POSTINGS_BUDGET / 2;
// The conversation channel groups the word hits of the cue pool, and weighs this much in RRF.
// A deeper word pass of its own (100) cost the word channel ~1.3 ms at 100k for no recall (LoCoMo
// tune, default + session, R@5/10/25: 72.4/82.1/89.0 at 40 against 72.5/82.7/88.7 at 100;
// holdout 66.7/76.0/83.4 against 66.4/75.9/82.9).
const SESSION_DEPTH = CUE_POOL;
const SESSION_WEIGHT = 1.0;
/** best turns per conversation that make up its score */
const SESSION_TOP = 3;

/**
 * Conversation channel: score each thread by its best few word-channel hits, then list hits by
 * their thread's score (best conversation first) and their own rank inside it.
 */
function sessionChannel<T extends { row: { rowid: number }; rank: number }>(hits: T[], threads: Map<number, string>, limit: number): T[] {
  const byThread = new Map<string, T[]>();
  for (const h of hits) {
    const t = threads.get(h.row.rowid) ?? `#${h.row.rowid}`;
    (byThread.get(t) ?? byThread.set(t, []).get(t)!).push(h);
  }
  const score = (hs: T[]) => hs.slice(0, SESSION_TOP).reduce((s, h) => s - h.rank, 0);
  return [...byThread.values()]
    .sort((a, b) => score(b) - score(a))
    .flat()
    .slice(0, limit);
}
// The trigram channel runs when the word channel returns fewer hits than this (or than asked).
const TRIGRAM_WHEN_FEWER = 10;
// The trigram table tokenizes vis_key into trigrams too, so a key in MATCH becomes a long phrase
// over postings that cover most rows (measured 170 ms at 100k): filter scope in the join instead.
const TRIGRAM_PLAN = { keysInMatch: false, newest: false } as const;
// Trigram candidates read per hit wanted: a few rows hold a word's trigrams but not the word.
const TRIGRAM_OVERREAD = 2;
// A plan whose every term is too common (plan.newest) walks at most this many of the newest
// matches for ones that pass the filters; they all get this rank (bm25 ranks are negative).
const NEWEST_WALK_CAP = 4 * POSTINGS_BUDGET;
// Words left out as too common come back (withCommonWords) from a shorter walk: a fallback for a
// short result, it must not cost a full walk each time a filter passes nothing (7 ms a search at
// 100k memories with a kind no memory has).
const COMMON_WALK_CAP = POSTINGS_BUDGET;
const NEWEST_RANK = -1;
// Past this many scopes a person's view filters by user id (and project) instead of a key list.
const MAX_OWNER_KEYS = 500;
// [vector channel] past this many keys an owner's KNN reads the owner's partitions (one KNN per key otherwise).
const VECTOR_MAX_KEYS = 32;

function quote(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}

function orGroup(terms: string[]): string {
  return `(${terms.map(quote).join(" OR ")})`;
}

/** The plan's words as MATCH groups over `cols`; words too common for the context match own text and tags only. */
function wordGroups(cols: string, plan: Pick<WordPlan, "terms" | "ownTextOnly">): string[] {
  const own = cols === "{content tags}" ? [] : plan.terms.filter((t) => plan.ownTextOnly.includes(t));
  const wide = plan.terms.filter((t) => !own.includes(t));
  return [...(wide.length > 0 ? [`${cols}: ${orGroup(wide)}`] : []), ...(own.length > 0 ? [`{content tags}: ${orGroup(own)}`] : [])];
}

/** A write's change to one scope's semantic index, handed to the channel once the write commits. */
interface IndexChange {
  key: string;
  prev: number | null;
  next: number;
  delta: IndexDelta;
}

export class SqliteMemoryStore implements MemoryStore {
  private readonly st: Record<string, Statement>;
  /** dynamic statements (IN lists of varying length) keyed by their SQL text */
  private readonly cache = new Map<string, Statement>();
  private readonly planner: FtsPlanner;
  /** reads the commonest words' counts for the planner ahead of searches, once warmed (df-prefill.ts) */
  private readonly dfPrefill: DfPrefill;
  private readonly spread: NeighbourSpread;
  /** [semantic channel] per-scope association indexes (in a worker thread); every write below tells it what changed */
  private readonly semantic: SemanticChannel;
  private readonly purge: FtsPurge;
  /** checkpoints the log in a worker once this store has written (wal-checkpoints.ts) */
  private readonly checkpoints: WalCheckpoints;

  private readonly channels: RetrievalChannels;

  /** [vector channel] null when no embedder is configured and no vectors were ever stored */
  readonly vectors: VectorChannel | null;

  constructor(
    private readonly db: Db,
    channels: Partial<RetrievalChannels> = {},
    vectors?: VectorChannel | null,
  ) {
    // Without an embedder, vectors stored earlier still follow forgets and status changes.
    this.vectors = vectors ?? VectorChannel.maintenance(db);
    this.channels = { ...DEFAULT_CHANNELS, ...channels, lexical: true };
    this.planner = new FtsPlanner(db);
    this.dfPrefill = new DfPrefill(db, this.planner);
    this.spread = new NeighbourSpread(db);
    this.semantic = semanticChannel(db);
    this.purge = ftsPurge(db);
    this.checkpoints = walCheckpoints(db);
    // a process that stopped before its purge finished left the mark: take the work up
    if (!db.readonly && this.purge.pending) void this.purge.run();
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      insert: p(`INSERT INTO memories (id, lineage_id, vis_key, level, user_id, project, session_id, thread_id, kind,
        content, trust, confidence, status, flags, version, supersedes, valid_from, valid_to, created_at, updated_at,
        expires_at, content_hash) VALUES (@id, @lineage_id, @vis_key, @level, @user_id, @project, @session_id,
        @thread_id, @kind, @content, @trust, @confidence, @status, @flags, @version, @supersedes, @valid_from,
        @valid_to, @created_at, @updated_at, @expires_at, @content_hash)`),
      insertTag: p(`INSERT OR IGNORE INTO memory_tags (memory_rowid, tag) VALUES (?, ?)`),
      insertSource: p(`INSERT INTO memory_sources (memory_rowid, thread_id, tool_call_id, actor, at) VALUES (?, ?, ?, ?, ?)`),
      insertSourceMsg: p(`INSERT INTO memory_source_messages (source_id, ord, message_id) VALUES (?, ?, ?)`),
      insertTri: p(`INSERT INTO memory_tri (rowid, content) VALUES (?, ?)`),
      deleteFts: p(`DELETE FROM memory_fts WHERE rowid = ?`),
      deleteTri: p(`DELETE FROM memory_tri WHERE rowid = ?`),
      byId: p(`SELECT * FROM memories WHERE id = ?`),
      // only a current record counts: the same text said after it was superseded or expired is
      // current again (status <> 'deleted' repeats the partial index's predicate so it is used)
      dupId: p(`SELECT id FROM memories WHERE vis_key = ? AND content_hash = ? AND status <> 'deleted'
        AND status IN ('active','pending') AND (expires_at IS NULL OR expires_at > ?) LIMIT 1`),
      dup: p(`SELECT * FROM memories WHERE vis_key = ? AND content_hash = ? AND status <> 'deleted'
        AND status IN ('active','pending') AND (expires_at IS NULL OR expires_at > ?)
        ORDER BY (status = 'active') DESC, version DESC LIMIT 1`),
      byCall: p(`SELECT m.* FROM memory_sources s JOIN memories m ON m.rowid = s.memory_rowid
        WHERE s.thread_id = ? AND s.tool_call_id = ? ORDER BY m.version DESC LIMIT 1`),
      setStatus: p(`UPDATE memories SET status = ?, trust = COALESCE(?, trust), updated_at = ? WHERE id = ?`),
      scopeToken: p(`SELECT token FROM scope_tokens WHERE vis_key = ?`),
      // what the semantic index holds of a memory (semantic-index.ts reads the same when it builds)
      indexEntry: p(`SELECT m.rowid AS rowid, m.content AS content,
          (m.status IN ('active','pending') AND (m.flags = '' OR m.trust = 'user_confirmed')) AS joins,
          (SELECT s.thread_id FROM memory_sources s WHERE s.memory_rowid = m.rowid AND s.thread_id IS NOT NULL ORDER BY s.id LIMIT 1) AS thread
        FROM memories m WHERE m.rowid = ?`),
      // the scope's person comes from its memories (a scope's rows are all one person's)
      renewScope: p(`INSERT INTO scope_tokens (vis_key, token, user_id) VALUES (@key, @token, (SELECT user_id FROM memories WHERE vis_key = @key LIMIT 1))
        ON CONFLICT (vis_key) DO UPDATE SET token = excluded.token, user_id = coalesce(scope_tokens.user_id, excluded.user_id)`),
      touch: p(`UPDATE memories SET updated_at = ? WHERE rowid = ?`),
      lineage: p(`SELECT * FROM memories WHERE lineage_id = ? ORDER BY version`),
      purge: p(`UPDATE memories SET content = '', content_hash = NULL, flags = '', status = 'deleted', updated_at = ?, claimed_by = NULL
        WHERE rowid = ?`),
      // a forget's claim: deleted for everyone from now, the text kept for its cascade (claimForget);
      // who claimed it and when, so a sweep leaves a claim alone while its process lives
      claim: p(`UPDATE memories SET status = 'deleted', updated_at = ?, claimed_by = ? WHERE rowid = ?`),
      reclaim: p(`UPDATE memories SET updated_at = ?, claimed_by = ? WHERE rowid = ?`),
      unfinished: p(`SELECT * FROM memories WHERE status = 'deleted' AND content <> '' ORDER BY updated_at, rowid LIMIT ?`),
      // the next page: past the last record of the one before (in the same order)
      unfinishedAfter: p(
        `SELECT * FROM memories WHERE status = 'deleted' AND content <> ''
           AND (updated_at, rowid) > (@at, (SELECT rowid FROM memories WHERE id = @id)) ORDER BY updated_at, rowid LIMIT @limit`,
      ),
      deleteTags: p(`DELETE FROM memory_tags WHERE memory_rowid = ?`),
      deleteSources: p(`DELETE FROM memory_sources WHERE memory_rowid = ?`),
      dueExpiry: p(`SELECT rowid, id, vis_key FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?
        AND status IN ('active','pending') LIMIT 500`),
      expire: p(`UPDATE memories SET status = 'expired', updated_at = ? WHERE rowid = ?`),
      edge: p(`INSERT OR IGNORE INTO edges (src, dst, relation, at) VALUES (?, ?, ?, ?)`),
      edgesOf: p(`SELECT src, dst, relation, at FROM edges WHERE src = ? UNION ALL
        SELECT src, dst, relation, at FROM edges WHERE dst = ? AND src <> dst ORDER BY at`),
      audit: p(`INSERT INTO audit_log (at, actor, action, target_kind, target_id, detail) VALUES (?, ?, ?, ?, ?, ?)`),
      auditOf: p(`SELECT * FROM audit_log WHERE target_id = ? ORDER BY seq DESC LIMIT ?`),
      // From the scope table (migration 16), not a read of every memory of the person. In a
      // project's view: a person-wide key, that project's key, and a session or thread key that
      // holds memories of the project (its rows can name several projects).
      ownerKeys: p(`SELECT vis_key FROM scope_tokens WHERE user_id = @owner LIMIT ${MAX_OWNER_KEYS + 1}`),
      ownerProjectKeys: p(`SELECT t.vis_key FROM scope_tokens t WHERE t.user_id = @owner AND (
          SELECT CASE m.level WHEN 'user' THEN 1 WHEN 'project' THEN m.project = @project
            ELSE EXISTS (SELECT 1 FROM memories x WHERE x.vis_key = t.vis_key AND x.project = @project) END
          FROM memories m WHERE m.vis_key = t.vis_key LIMIT 1)`),
    };
  }

  // ---- writes ---------------------------------------------------------------------------------

  private insertRow(rec: NewMemory): number {
    const key = visibilityKey(rec.scope);
    const rowid = this.insertBaseRow(rec, key);
    writeWordRow(this.db, rowid, true);
    // The neighbours' context now includes this memory.
    refreshNeighbours(this.db, neighbours(this.db, rowid));
    this.st.insertTri!.run(rowid, rec.content);
    return rowid;
  }

  /** The record's row, tags and source (no index entries). */
  private insertBaseRow(rec: NewMemory, key: string): number {
    const info = this.st.insert!.run({
      id: rec.id,
      lineage_id: rec.lineageId,
      vis_key: key,
      level: rec.scope.level,
      user_id: rec.scope.user,
      project: rec.scope.project,
      session_id: rec.scope.session,
      thread_id: rec.scope.thread,
      kind: rec.kind,
      content: rec.content,
      trust: rec.trust,
      confidence: rec.confidence,
      status: rec.status,
      flags: rec.flags.join(","),
      version: rec.version,
      supersedes: rec.supersedes,
      valid_from: rec.validFrom,
      valid_to: rec.validTo,
      created_at: rec.createdAt,
      updated_at: rec.createdAt,
      expires_at: rec.expiresAt,
      content_hash: rec.contentHash,
    });
    const rowid = Number(info.lastInsertRowid);
    for (const tag of rec.tags) this.st.insertTag!.run(rowid, tag);
    this.insertSourceRow(rowid, rec.source);
    return rowid;
  }

  private insertSourceRow(rowid: number, s: MemorySource): void {
    const info = this.st.insertSource!.run(rowid, s.threadId, s.toolCallId, s.actor, s.at);
    const sid = Number(info.lastInsertRowid);
    s.messageIds.forEach((m, i) => this.st.insertSourceMsg!.run(sid, i, m));
  }

  /**
   * [semantic channel] Inside a write transaction: the scope gets a fresh change token (any process
   * holding an index of it sees the change), returned with the one it replaces.
   */
  private renewScope(key: string): { prev: number | null; next: number } {
    const prev = (this.st.scopeToken!.get(key) as { token: number } | undefined)?.token ?? null;
    const next = randomInt(2 ** 47);
    this.st.renewScope!.run({ key, token: next });
    return { prev, next };
  }

  /**
   * Inside a write transaction: these memories of one scope changed, so the scope gets a new token,
   * and what its semantic index must do to follow: each memory joins it (again, with its current
   * conversation) or leaves it. The caller hands the result to the channel once the write commits.
   */
  private indexChange(key: string, rowids: number[]): IndexChange {
    const delta: IndexDelta = { remove: [], add: [] };
    for (const r of rowids) {
      const e = this.st.indexEntry!.get(r) as { rowid: number; content: string; joins: number; thread: string | null } | undefined;
      if (e && e.joins) delta.add.push({ rowid: e.rowid, thread: e.thread, content: e.content });
      else delta.remove.push(r);
    }
    return { key, ...this.renewScope(key), delta };
  }

  /** indexChange for each scope of these memories (scope key → row ids) */
  private indexChanges(byKey: Map<string, number[]>): IndexChange[] {
    return [...byKey].map(([k, rowids]) => this.indexChange(k, rowids));
  }

  /** After every write's commit: the semantic index follows, and the log is checkpointed off this thread. */
  private indexChanged(changes: IndexChange[]): void {
    for (const c of changes) this.semantic.updated(c.key, c.prev, c.next, c.delta);
    this.checkpoints.wrote();
  }

  private writeAudit(a: AuditEntry): void {
    this.st.audit!.run(a.at, a.actor, a.action, a.targetKind, a.targetId, JSON.stringify(a.detail));
  }

  async insert(rec: NewMemory, audit: AuditEntry, edges: Edge[] = [], opts: { expect?: ReadonlyMap<string, MemoryStatus> } = {}): Promise<MemoryRecord> {
    const [vec] = this.vectors ? await this.vectors.vectorsFor([rec.content]) : [];
    const key = visibilityKey(rec.scope);
    const change = this.db.transaction(() => {
      // under the write lock: a forget (or correction) of what this record proposes to correct,
      // made since the caller read it, leaves nothing in that lineage to be confirmed back later
      this.checkExpected(opts.expect);
      // checked again under the write lock: another process may have written it since the caller looked
      const dup = this.st.dupId!.get(key, rec.contentHash, rec.createdAt) as { id: string } | undefined;
      if (dup) throw new DuplicateMemoryError(dup.id);
      // insertRow must run with or without a vector channel (no optional-chaining short circuit)
      const rowid = this.insertRow(rec);
      this.vectors?.onInsert(rowid, rec, vec);
      for (const e of edges) this.st.edge!.run(e.src, e.dst, e.relation, e.at);
      this.writeAudit(audit);
      return this.indexChange(key, [rowid]);
    }).immediate();
    // [semantic channel] once committed, the memory joins its scope's association index (unless
    // a flag holds it back, as a build would)
    this.indexChanged([change]);
    return this.mustGet(rec.id);
  }

  async insertMany(items: BatchInsertItem[]): Promise<BatchInsertOutcome[]> {
    const out: BatchInsertOutcome[] = [];
    const vecs = this.vectors ? await this.vectors.vectorsFor(items.map((i) => i.rec.content)) : [];
    const changes = this.db.transaction(() => {
      // (vis_key, content hash) → id of the record written earlier in this batch
      const seen = new Map<string, string>();
      const fresh: FreshRow[] = [];
      // what each scope's semantic index gains: a fresh row's only source is the one it came with
      const joined = new Map<string, IndexDelta>();
      for (const { rec, audit } of items) {
        const key = visibilityKey(rec.scope);
        const k = `${key}\u0000${rec.contentHash}`;
        const prior = seen.get(k) ?? (this.st.dupId!.get(key, rec.contentHash, rec.createdAt) as { id: string } | undefined)?.id;
        if (prior !== undefined) {
          out.push({ status: "duplicate", id: prior });
          continue;
        }
        const rowid = this.insertBaseRow(rec, key);
        this.vectors?.onInsert(rowid, rec, vecs[out.length]);
        const delta = joined.get(key) ?? joined.set(key, { remove: [], add: [] }).get(key)!;
        if (joinsIndex(rec)) delta.add.push({ rowid, thread: rec.source.threadId, content: rec.content });
        this.st.insertTri!.run(rowid, rec.content);
        this.writeAudit(audit);
        seen.set(k, rec.id);
        fresh.push({
          rowid,
          content: rec.content,
          vis_key: key,
          status: rec.status,
          kind: rec.kind,
          valid_from: rec.validFrom,
          created_at: rec.createdAt,
          tags: rec.tags,
          threads: rec.source.threadId === null ? [] : [rec.source.threadId],
        });
        out.push({ status: "created", id: rec.id });
      }
      // Word rows once all rows and sources exist: each new row and each older neighbour is
      // written once per batch, not once per arriving neighbour.
      indexNewRows(this.db, fresh);
      return [...joined].map(([key, delta]): IndexChange => ({ key, ...this.renewScope(key), delta }));
    }).immediate();
    // [semantic channel] the new memories join their scopes' loaded indexes (a large batch drops them)
    this.indexChanged(changes);
    return out;
  }

  /** Inside a write transaction: each still has the status its caller read, or StatusChangedError. */
  private checkExpected(expect: ReadonlyMap<string, MemoryStatus> | undefined): void {
    for (const [id, want] of expect ?? []) {
      const now = (this.st.byId!.get(id) as MemoryRow | undefined)?.status ?? null;
      if (now !== want) throw new StatusChangedError(id, want, now);
    }
  }

  async supersede(previousId: string, next: NewMemory, audit: AuditEntry, opts: { expect?: MemoryStatus } = {}): Promise<MemoryRecord> {
    const [vec] = this.vectors ? await this.vectors.vectorsFor([next.content]) : [];
    const changes = this.db.transaction(() => {
      const prev = this.st.byId!.get(previousId) as MemoryRow | undefined;
      if (!prev || (prev.status !== "active" && prev.status !== "pending")) {
        throw new StoreError("constraint", `memory ${previousId} is not current (status ${prev?.status ?? "missing"})`);
      }
      if (opts.expect !== undefined && prev.status !== opts.expect) throw new StatusChangedError(previousId, opts.expect, prev.status);
      const around = neighbours(this.db, prev.rowid);
      this.st.setStatus!.run("superseded", null, next.createdAt, previousId);
      // The superseded version leaves its neighbours' context (its own row stays for history).
      refreshNeighbours(this.db, around);
      const rowid = this.insertRow(next);
      this.vectors?.onInsert(rowid, next, vec);
      this.st.edge!.run(next.id, previousId, "supersedes", next.createdAt);
      this.writeAudit(audit);
      // the old version leaves its scope's semantic index and the new one joins its own (mostly the same scope)
      const nextKey = visibilityKey(next.scope);
      return nextKey === prev.vis_key
        ? [this.indexChange(nextKey, [prev.rowid, rowid])]
        : [this.indexChange(prev.vis_key, [prev.rowid]), this.indexChange(nextKey, [rowid])];
    }).immediate();
    this.indexChanged(changes);
    return this.mustGet(next.id);
  }

  async addSource(id: string, source: MemorySource, audit: AuditEntry): Promise<void> {
    const change = this.db.transaction(() => {
      const row = this.st.byId!.get(id) as MemoryRow | undefined;
      if (!row) throw new StoreError("not_found", `memory ${id} not found`);
      // forgotten since the caller found it: no provenance is written onto the tombstone
      if (row.status === "deleted") throw new StoreError("not_found", `memory ${id} was forgotten`);
      this.insertSourceRow(row.rowid, source);
      this.st.touch!.run(source.at, row.rowid);
      // A source in another conversation gives it neighbours there too.
      writeWordRow(this.db, row.rowid);
      refreshNeighbours(this.db, neighbours(this.db, row.rowid));
      this.writeAudit(audit);
      // (the same fact said again: its index entry stays, with the conversation it was first said in)
      return this.indexChange(row.vis_key, [row.rowid]);
    }).immediate();
    this.indexChanged([change]);
  }

  async setStatus(
    id: string,
    status: MemoryStatus,
    trust: Trust | null,
    audit: AuditEntry,
    opts: { supersede?: string; expect?: MemoryStatus } = {},
  ): Promise<MemoryRecord> {
    const [rec] = await this.setStatuses([{ id, status, trust, audit, ...opts }]);
    return rec!;
  }

  async setStatuses(changes: StatusChange[]): Promise<MemoryRecord[]> {
    if (changes.some((c) => c.status === "deleted")) throw new StoreError("constraint", "use forget() to delete a memory");
    // one write transaction: a change that fails (another process decided first) rolls back the ones before it
    const indexChanges = this.db.transaction(() => changes.flatMap((c) => this.statusRow(c))).immediate();
    this.indexChanged(indexChanges);
    return changes.map((c) => this.mustGet(c.id));
  }

  /** Inside a write transaction: one status change (setStatuses). */
  private statusRow({ id, status, trust, audit, supersede, expect }: StatusChange): IndexChange[] {
    const row = this.st.byId!.get(id) as MemoryRow | undefined;
    if (!row) throw new StoreError("not_found", `memory ${id} not found`);
    // read under the write lock: another process's decision made since the caller's read shows here
    if (expect !== undefined && row.status !== expect) throw new StatusChangedError(id, expect, row.status);
    const old = supersede === undefined ? undefined : (this.st.byId!.get(supersede) as MemoryRow | undefined);
    if (supersede !== undefined && (!old || (old.status !== "active" && old.status !== "pending"))) {
      throw new StoreError("constraint", `memory ${supersede} is not current (status ${old?.status ?? "missing"})`);
    }
    const around = neighbours(this.db, row.rowid);
    if (old) {
      around.push(...neighbours(this.db, old.rowid));
      this.st.setStatus!.run("superseded", null, audit.at, old.id);
    }
    this.st.setStatus!.run(status, trust, audit.at, id);
    refreshNeighbours(this.db, [...around, ...neighbours(this.db, row.rowid)]);
    this.writeAudit(audit);
    return !old
      ? [this.indexChange(row.vis_key, [row.rowid])]
      : old.vis_key === row.vis_key
        ? [this.indexChange(row.vis_key, [old.rowid, row.rowid])]
        : [this.indexChange(old.vis_key, [old.rowid]), this.indexChange(row.vis_key, [row.rowid])];
  }

  async claimForget(
    ids: string[],
    at: number,
    opts: { expect?: ReadonlyMap<string, MemoryStatus>; owner?: string | null; heldBy?: ReadonlyMap<string, { by: string | null; at: number }> } = {},
  ): Promise<MemoryRecord[]> {
    const claimed: string[] = [];
    const owner = opts.owner ?? null;
    const changes = this.db.transaction(() => {
      // every condition before any claim (a decision made elsewhere since the caller's read wins)
      this.checkExpected(opts.expect);
      const left = new Map<string, number[]>();
      const around = new Set<number>();
      for (const id of ids) {
        const row = this.st.byId!.get(id) as MemoryRow | undefined;
        if (!row || purgedRow(row)) continue;
        if (row.status === "deleted") {
          // claimed by a forget that has not finished: taken over (a sweep's only from the owner it saw)
          const held = opts.heldBy?.get(id);
          if (held && (held.by !== (row.claimed_by ?? null) || held.at !== row.updated_at)) continue;
          this.st.reclaim!.run(at, owner, row.rowid);
          claimed.push(id);
          continue;
        }
        claimed.push(id);
        for (const n of neighbours(this.db, row.rowid)) around.add(n);
        this.st.claim!.run(at, owner, row.rowid);
        // its word row goes now (a deleted memory has none); its neighbours' context loses its text
        writeWordRow(this.db, row.rowid);
        pushTo(left, row.vis_key, row.rowid);
      }
      refreshNeighbours(this.db, around);
      return this.indexChanges(left);
    }).immediate();
    this.indexChanged(changes);
    return claimed.map((id) => this.mustGet(id));
  }

  async unfinishedForgets(limit: number, after?: { updatedAt: number; id: string }): Promise<UnfinishedForget[]> {
    const rows = (after ? this.st.unfinishedAfter!.all({ at: after.updatedAt, id: after.id, limit }) : this.st.unfinished!.all(limit)) as MemoryRow[];
    return this.hydrateAll(rows).map((record, i) => ({ record, claimedBy: rows[i]!.claimed_by ?? null }));
  }

  async forget(ids: string[], audit: AuditEntry, opts: { expect?: ReadonlyMap<string, MemoryStatus> } = {}): Promise<string[]> {
    const purged: string[] = [];
    const around = new Set<number>();
    const changes = this.db.transaction(() => {
      // every condition before any purge: the vector index is changed outside the transaction
      this.checkExpected(opts.expect);
      const left = new Map<string, number[]>();
      for (const id of ids) {
        const row = this.st.byId!.get(id) as MemoryRow | undefined;
        // (one a claimForget left deleted with its text is purged now)
        if (!row || purgedRow(row)) continue;
        // Neighbours carry this memory's text in their context: collected before the sources go.
        for (const n of neighbours(this.db, row.rowid)) around.add(n);
        this.st.deleteFts!.run(row.rowid);
        this.st.deleteTri!.run(row.rowid);
        if (this.vectors) this.vectors.onForget(row.rowid);
        else VectorChannel.forgetVector(this.db, row.rowid);
        pushTo(left, row.vis_key, row.rowid);
        this.st.deleteTags!.run(row.rowid);
        this.st.deleteSources!.run(row.rowid);
        this.st.purge!.run(audit.at, row.rowid);
        purged.push(id);
      }
      refreshNeighbours(this.db, around);
      this.writeAudit({ ...audit, detail: { ...audit.detail, ids: purged } });
      // The deletes left tombstones: the rows' postings stay in their segments until merged.
      if (purged.length > 0) for (const t of ["memory_fts", "memory_tri"] as const) this.purge.mark(t);
      return this.indexChanges(left);
    }).immediate();
    // [semantic channel] the forgotten memories leave their scopes' loaded indexes, words and all,
    // before the next search (an index that missed a write is rebuilt from the table instead)
    this.indexChanged(changes);
    // They are merged away in the background, a few milliseconds at a time, and the WAL is
    // checkpointed after (fts-purge.ts); secure_delete zeroes the freed space in the main file.
    // (Merging inside the forget took ~1 s at 100k memories with the event loop blocked.)
    if (purged.length > 0) void this.purge.run();
    return purged;
  }

  /** Resolves once what forgets left in the full-text indexes is merged away (fts-purge.ts). */
  purged(): Promise<void> {
    return this.purge.run();
  }

  async expireDue(now: number, actor: string): Promise<number> {
    let n = 0;
    const changes = this.db.transaction(() => {
      const left = new Map<string, number[]>();
      for (const r of this.st.dueExpiry!.all(now) as { rowid: number; id: string; vis_key: string }[]) {
        this.st.expire!.run(now, r.rowid);
        pushTo(left, r.vis_key, r.rowid);
        this.writeAudit({ at: now, actor, action: "expire", targetKind: "memory", targetId: r.id, detail: {} });
        n++;
      }
      return this.indexChanges(left);
    }).immediate();
    this.indexChanged(changes);
    return n;
  }

  async addEdge(edge: Edge): Promise<void> {
    this.st.edge!.run(edge.src, edge.dst, edge.relation, edge.at);
  }

  async edgesOf(id: string): Promise<Edge[]> {
    return (this.st.edgesOf!.all(id, id) as Edge[]).map((e) => ({ ...e }));
  }

  async audit(targetId: string, limit: number): Promise<StoredAuditEntry[]> {
    type Row = { seq: number; at: number; actor: string; action: string; target_kind: string; target_id: string; detail: string };
    return (this.st.auditOf!.all(targetId, limit) as Row[]).map((r) => ({
      seq: r.seq,
      at: r.at,
      actor: r.actor,
      action: r.action as StoredAuditEntry["action"],
      targetKind: r.target_kind as StoredAuditEntry["targetKind"],
      targetId: r.target_id,
      detail: JSON.parse(r.detail) as Record<string, unknown>,
    }));
  }

  // ---- reads ----------------------------------------------------------------------------------

  async get(id: string): Promise<MemoryRecord | null> {
    const row = this.st.byId!.get(id) as MemoryRow | undefined;
    return row ? this.hydrate(row) : null;
  }

  private mustGet(id: string): MemoryRecord {
    const row = this.st.byId!.get(id) as MemoryRow | undefined;
    if (!row) throw new StoreError("not_found", `memory ${id} not found`);
    return this.hydrate(row);
  }

  async findDuplicate(key: string, contentHash: string, now: number): Promise<MemoryRecord | null> {
    const row = this.st.dup!.get(key, contentHash, now) as MemoryRow | undefined;
    return row ? this.hydrate(row) : null;
  }

  async findByToolCall(threadId: string, toolCallId: string): Promise<MemoryRecord | null> {
    const row = this.st.byCall!.get(threadId, toolCallId) as MemoryRow | undefined;
    return row ? this.hydrate(row) : null;
  }

  async lineage(lineageId: string): Promise<MemoryRecord[]> {
    return this.hydrateAll(this.st.lineage!.all(lineageId) as MemoryRow[]);
  }

  /** The keys an owner's view covers, or null when there are too many to list. */
  private ownerKeys(v: { owner: string; project?: string | null }): string[] | null {
    // A person with more scopes than that is filtered by user id (and project) in either view, so
    // a project's view never checks more than MAX_OWNER_KEYS scopes for memories of the project.
    const all = this.st.ownerKeys!.all({ owner: v.owner }) as { vis_key: string }[];
    if (all.length > MAX_OWNER_KEYS) return null;
    if (!v.project) return all.map((r) => r.vis_key);
    return (this.st.ownerProjectKeys!.all({ owner: v.owner, project: v.project }) as { vis_key: string }[]).map((r) => r.vis_key);
  }

  private keysFor(v: Visibility): string[] | null {
    return "keys" in v ? v.keys : this.ownerKeys(v);
  }

  /** Shared WHERE clause over `m` for status, kinds, levels, flags, expiry and owner fallback. */
  private filters(
    q: Pick<SearchQuery, "kinds" | "levels" | "statuses" | "includeFlagged" | "now" | "visibility">,
    params: unknown[],
    keysInMatch: boolean,
    keys: string[] | null,
  ): string {
    const where: string[] = [];
    const statuses = q.statuses.filter((s) => s !== "expired");
    const wantExpired = q.statuses.includes("expired");
    const st = [...statuses, ...(wantExpired ? ["expired"] : [])];
    // Literal statuses: "pending" alone reads the partial indexes of migration 17.
    where.push(statusPredicate(st));
    if (!wantExpired) {
      where.push(`(m.expires_at IS NULL OR m.expires_at > ?)`);
      params.push(q.now);
    }
    // A flagged record reaches results only once a person confirmed it.
    if (!q.includeFlagged) where.push(`(m.flags = '' OR m.trust = 'user_confirmed')`);
    if (q.kinds && q.kinds.length > 0) {
      where.push(`m.kind IN (${q.kinds.map(() => "?").join(",")})`);
      params.push(...q.kinds);
    }
    if (q.levels && q.levels.length > 0) {
      where.push(`m.level IN (${q.levels.map(() => "?").join(",")})`);
      params.push(...q.levels);
    }
    if (!keysInMatch) {
      if (keys) {
        where.push(`m.vis_key IN (${keys.map(() => "?").join(",") || "NULL"})`);
        params.push(...keys);
      } else if (!("keys" in q.visibility)) {
        where.push(`m.user_id = ?`);
        params.push(q.visibility.owner);
        if (q.visibility.project) {
          where.push(`(m.project = ? OR m.level = 'user')`);
          params.push(q.visibility.project);
        }
      }
    }
    return where.join(" AND ");
  }

  /** The MATCH expression and the join's filters of a word read (channel, channelWithPeriod). */
  private wordRead(
    table: "memory_fts" | "memory_tri",
    textMatch: string,
    q: SearchQuery,
    keys: string[] | null,
    plan: Pick<WordPlan, "keysInMatch">,
  ): { match: string; where: string; filterParams: unknown[]; weights: string; keysInMatch: boolean } {
    const keysInMatch = keys !== null && plan.keysInMatch;
    const scoped = keys && keysInMatch ? `{vis_key}: ${orGroup(keys)} AND (${textMatch})` : textMatch;
    // a selective kind filter prunes inside the index too (the join below still applies it)
    const kinds = table === "memory_fts" && q.kinds && q.kinds.length > 0 ? q.kinds.map(kindToken) : null;
    const match = kinds && this.planner.kindsInMatch(kinds) ? `{vis_key}: ${orGroup(kinds)} AND (${scoped})` : scoped;
    const weights = table === "memory_fts" ? FTS_WEIGHTS : "1.0";
    const filterParams: unknown[] = [];
    const where = this.filters(q, filterParams, keysInMatch, keys);
    return { match, where, filterParams, weights, keysInMatch };
  }

  private channel(
    table: "memory_fts" | "memory_tri",
    textMatch: string,
    q: SearchQuery,
    keys: string[] | null,
    limit: number,
    plan: Pick<WordPlan, "keysInMatch" | "newest"> & { walk?: number } = { keysInMatch: true, newest: false },
  ): { row: PoolRow; rank: number }[] {
    if (keys && keys.length === 0) return [];
    const { match, where, filterParams, weights, keysInMatch } = this.wordRead(table, textMatch, q, keys, plan);
    const k = Math.max(1, Math.floor(limit));
    type Ranked = PoolRow & { rank: number };
    if (plan.newest) {
      // Every term is too common to rank by: the newest matches, walked newest first (cheap in
      // FTS5, where bm25 would first read the term's whole doclist for its IDF). They rank alike;
      // cues and neighbour spreading order them, ties stay newest first. CROSS JOIN keeps the walk
      // outermost (the planner would otherwise scan the scope and probe the walk).
      const sql = `SELECT ${POOL_COLS}, ${NEWEST_RANK} AS rank FROM (SELECT rowid FROM ${table} f WHERE ${table} MATCH ? ORDER BY rowid DESC
        LIMIT ${plan.walk ?? NEWEST_WALK_CAP}) c CROSS JOIN memories m ON m.rowid = c.rowid WHERE ${where} ORDER BY c.rowid DESC LIMIT ${k}`;
      return (this.prepared(sql).all(match, ...filterParams) as Ranked[]).map((r) => ({ row: r, rank: r.rank }));
    }
    if (!keysInMatch) {
      // Rank inside the index, then join and filter in rank order until k pass: only the best
      // candidates are joined when the filters pass most, and a selective filter (a rare kind)
      // costs no second scoring. The subquery keeps its order (the CROSS JOIN keeps it
      // outermost, its LIMIT keeps it from being flattened).
      const sql = `SELECT ${POOL_COLS}, c.rank AS rank FROM (SELECT rowid, bm25(${table}, ${weights}) AS rank FROM ${table} f WHERE ${table} MATCH ?
        ORDER BY rank LIMIT -1) c CROSS JOIN memories m ON m.rowid = c.rowid WHERE ${where} ORDER BY c.rank LIMIT ${k}`;
      return (this.prepared(sql).all(match, ...filterParams) as Ranked[]).map((r) => ({ row: r, rank: r.rank }));
    }
    const sql = `SELECT ${POOL_COLS}, bm25(${table}, ${weights}) AS rank FROM ${table} f JOIN memories m ON m.rowid = f.rowid
      WHERE ${table} MATCH ? AND ${where} ORDER BY rank LIMIT ${k}`;
    return (this.prepared(sql).all(match, ...filterParams) as Ranked[]).map((r) => ({ row: r, rank: r.rank }));
  }

  /**
   * [trigram] Memories holding one of these words (partial words, CJK runs) anywhere in their text.
   * The index keeps no positions (migration 19), so a word matches as all of its trigrams, in any
   * order; the rows are then checked for the word itself, so every hit holds it, as with a
   * positional index (ranked by bm25 over the trigrams, each counted once a row).
   */
  private trigramHits(words: string[], q: SearchQuery, keys: string[] | null, limit: number): { row: PoolRow; rank: number }[] {
    const hits = this.channel("memory_tri", trigramMatch(words), q, keys, limit * TRIGRAM_OVERREAD, TRIGRAM_PLAN);
    return hits.filter((h) => holdsAny(h.row.content, words)).slice(0, limit);
  }

  /**
   * The word read of a question naming a period: the best `limit` hits, and the best
   * `period.limit` of those dated inside the period's windows, from one scoring of the MATCH (a
   * second read scored it again: bm25 reads each word's whole posting list for its IDF).
   */
  private channelWithPeriod(
    textMatch: string,
    q: SearchQuery,
    keys: string[] | null,
    limit: number,
    plan: Pick<WordPlan, "keysInMatch">,
    period: { windows: readonly DateWindow[]; limit: number },
  ): { hits: { row: PoolRow; rank: number }[]; inPeriod: { row: PoolRow; rank: number }[] } {
    if (keys && keys.length === 0) return { hits: [], inPeriod: [] };
    const { match, where, filterParams, weights } = this.wordRead("memory_fts", textMatch, q, keys, plan);
    const inWindows = `(${period.windows.map(() => `(${DATED_AT} >= ? AND ${DATED_AT} < ?)`).join(" OR ")})`;
    const windowParams = period.windows.flatMap((w) => [w.from, w.to]);
    // Each branch walks the scored matches in rank order until its own k pass its filters.
    const branch = (extra: string, k: number, tag: number) =>
      `SELECT * FROM (SELECT ${POOL_COLS}, c.rank AS rank, ${tag} AS in_period FROM c CROSS JOIN memories m ON m.rowid = c.rowid
        WHERE ${where}${extra} ORDER BY c.rank LIMIT ${Math.max(1, Math.floor(k))})`;
    const sql = `WITH c AS MATERIALIZED (SELECT rowid, bm25(memory_fts, ${weights}) AS rank FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rank)
      ${branch("", limit, 0)} UNION ALL ${branch(` AND ${inWindows}`, period.limit, 1)}`;
    const hits: { row: PoolRow; rank: number }[] = [];
    const inPeriod: { row: PoolRow; rank: number }[] = [];
    for (const r of this.prepared(sql).all(match, ...filterParams, ...filterParams, ...windowParams) as (PoolRow & { rank: number; in_period: number })[]) {
      const { rank, in_period, ...row } = r;
      (in_period ? inPeriod : hits).push({ row, rank });
    }
    return { hits, inPeriod };
  }

  /** Whether any memory of these kinds (in any status but deleted) has one of these keys (null: any key). */
  private anyOfKinds(kinds: readonly string[], keys: string[] | null): boolean {
    if (keys && keys.length === 0) return false;
    const match = `{vis_key}: ${orGroup(kinds.map(kindToken))}${keys ? ` AND {vis_key}: ${orGroup(keys)}` : ""}`;
    return this.prepared(`SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? LIMIT 1`).get(match) !== undefined;
  }

  async search(q: SearchQuery): Promise<SearchHit[]> {
    // a purge after a forget merges between searches, not in the middle of one
    this.purge.hold();
    try {
      return await this.searchNow(q);
    } finally {
      this.purge.release();
    }
  }

  private async searchNow(q: SearchQuery): Promise<SearchHit[]> {
    const ch = this.channels;
    const keys = this.keysFor(q.visibility);
    const lex = q.query;
    const depth = Math.max(q.limit, 10);
    // A kind filter that no memory in view passes ends the search here, from the kind tokens beside
    // the scope keys in the word index, instead of each channel ranking its matches to drop them all.
    if (q.kinds && q.kinds.length > 0 && !this.anyOfKinds(q.kinds, keys)) return [];
    // [semantic channel] the scope's own word associations expand the query; started first, it
    // runs in its worker while this thread runs the word channels
    const semJob = ch.semantic && !q.wordsOnly && keys && keys.length > 0 && lex.terms.length > 0 ? this.semantic.score(keys, lex.terms.join(" "), depth * 2) : null;
    const plan = this.planner.plan(lex.terms, lex.cjk, keys);
    const wordParts: string[] = [];
    // Unranked (newest) matches must mention a word themselves: a neighbour's mention would rank alike.
    const cols = q.wordsOnly || !ch.context || plan.newest ? "{content tags}" : "{content tags context}";
    wordParts.push(...wordGroups(cols, plan));
    if (plan.cjk.length > 0) wordParts.push(`cjk: ${orGroup(plan.cjk)}`);
    const spreading = ch.neighbours && !q.wordsOnly;
    const deep = ch.session && !q.wordsOnly ? Math.max(depth, SESSION_DEPTH) : depth;
    // Question cues (speaker, dates, answer kind) re-order a deeper pool of word hits.
    const cues = ch.cues && !q.wordsOnly && q.text ? queryCues(q.text, lex.terms, q.now) : null;
    const pool = cues ? Math.max(deep, plan.pruned ? CUE_POOL : SMALL_STORE_CUE_POOL) : deep;
    // [cues] a question naming a period also reads the best word hits dated inside it (dates.ts),
    // from the same scoring as the word hits
    const period = cues && cues.windows.length > 0 && wordParts.length > 0 && !plan.newest ? { windows: cues.windows, limit: DATED_POOL } : null;
    const words = wordParts.join(" OR ");
    const first = period
      ? this.channelWithPeriod(words, q, keys, pool, plan, period)
      : { hits: wordParts.length > 0 ? this.channel("memory_fts", words, q, keys, pool, plan) : [], inPeriod: [] };
    const lexicalRaw = first.hits;
    // Lower-weight words: [categories] a question naming a kind of thing also finds turns naming
    // its members; an irregular verb's other forms ("go" → "went") find turns that tell in the past;
    // then a word's everyday near-synonyms ("girlfriend" → "gf") at a lower weight (added-words.ts)
    const added = q.wordsOnly ? [] : addedWords(q.text, lex.terms, ch.categories);
    let withMembers = lexicalRaw;
    for (const pass of added) withMembers = this.withAddedWords(withMembers, pass, q, keys, pool);
    // [semantic channel] memories the scope's word associations tie to the query rise in the pool
    const pooled = semJob ? this.withAssociations(withMembers, await semJob, q, keys, pool) : withMembers;
    const dated = period ? addMissing(pooled, first.inPeriod, "lower") : pooled;
    const lexicalDeep = cues ? applyCues(dated, cues, "lower") : dated;
    // Neighbour spreading re-scores the word channel: the turn after a matching question rises.
    const ranked = (spreading ? this.spreadNeighbours(lexicalDeep, q, keys, depth) : lexicalDeep).slice(0, depth);
    // Words left out as too common come back when the kept ones found too little in this scope
    // ("deploy pipeline zebrafish" where only another scope has a zebrafish): the newest memories
    // naming them in their own text follow the word hits.
    const spread = ranked.length < q.limit && plan.common.length > 0 ? this.withCommonWords(ranked, plan, q, keys, depth) : ranked;
    // [cues] a question naming a period that its words answer with fewer than asked for ("what did
    // we do yesterday?") also lists the period's memories, newest first, below every word hit
    const lexical =
      cues && cues.windows.length > 0 && spread.length < q.limit && keys && keys.length > 0
        ? [...spread, ...this.periodMemories(q, keys, cues.windows, q.limit - spread.length, new Set(spread.map((h) => h.row.rowid)))]
        : spread;
    const session = ch.session && !q.wordsOnly ? sessionChannel(lexicalDeep, this.threadsOf(lexicalDeep.map((h) => h.row.rowid)), depth) : [];
    // The trigram channel finds partial words (and CJK phrases) the word channel misses; it runs
    // when the word channel came up short. On a large store the words the index holds stay out of
    // it: those the word channel searched (their trigrams would mostly find the same rows, over
    // trigram postings that cover much of the corpus) and those it left out as too common (their
    // trigrams are commoner still: 48 ms per search at 100k, whenever a filter or a small scope
    // left the words few hits). Absent words (partial words, typos) and CJK runs go to it.
    const triWords = plan.pruned ? lex.trigrams.filter((t) => hasCjk(t) || (!plan.terms.includes(t) && !plan.common.includes(t))) : lex.trigrams;
    const needTri = ch.trigram && !q.wordsOnly && triWords.length > 0 && spread.length < Math.min(q.limit, TRIGRAM_WHEN_FEWER);
    const tri = needTri ? this.trigramHits(triWords, q, keys, depth) : [];
    const prf = ch.prf && !q.wordsOnly ? this.feedbackPass(spread, lexicalRaw, plan.terms, wordParts, cols, q, keys, depth) : [];
    // [vector channel] nearest memories by embedding, inside the viewer's keys
    const vec = this.vectors && !q.wordsOnly ? await this.vectorHits(q, keys, depth) : [];
    if (tri.length === 0 && prf.length === 0 && session.length === 0 && vec.length === 0 && !ch.proximity && !ch.mmr) {
      return this.results(lexical.slice(0, q.limit), (h) => h.row, q, keys).map(({ hit, record }) => ({ record, score: -hit.rank, channel: "lexical" }));
    }
    // Reciprocal-rank fusion across channels.
    const asList = (hs: { row: PoolRow }[]) => hs.map((h) => ({ key: h.row.rowid, item: h.row }));
    let fused = rrf([
      { name: "lexical", weight: 1, hits: asList(lexical) },
      { name: "trigram", weight: 1, hits: asList(tri) },
      { name: "prf", weight: PRF_WEIGHT, hits: asList(prf) },
      { name: "session", weight: SESSION_WEIGHT, hits: asList(session) },
      { name: "vector", weight: this.vectors?.weight ?? 0, hits: asList(vec) },
    ]).sort((a, b) => b.score - a.score || b.item.updated_at - a.item.updated_at);
    if (ch.proximity) fused = proximityRerank(fused, lex.terms);
    if (ch.mmr) fused = mmr(fused, q.limit);
    return this.results(fused.slice(0, q.limit), (h) => h.item, q, keys).map(({ hit: h, record }) => {
      const lexicalHit = h.from.has("lexical") || h.from.has("prf") || h.from.has("session");
      const triHit = h.from.has("trigram");
      if (!lexicalHit && !triHit) return { record, score: h.score, channel: "vector" };
      return { record, score: h.score, channel: lexicalHit && triHit ? "both" : lexicalHit ? "lexical" : "trigram" };
    });
  }

  /**
   * The search's results made whole, in order: their full rows read again with the search's
   * filters, so a memory forgotten or changed while the search awaited its worker or embedder
   * drops out instead of coming back as it was.
   */
  private results<T>(top: T[], rowOf: (hit: T) => PoolRow, q: SearchQuery, keys: string[] | null): { hit: T; record: MemoryRecord }[] {
    const full = this.rowsWhere(top.map((h) => rowOf(h).rowid), q, keys, true);
    const kept = top.filter((h) => full.has(rowOf(h).rowid));
    const recs = this.hydrateAll(kept.map((h) => full.get(rowOf(h).rowid)!));
    return kept.map((hit, i) => ({ hit, record: recs[i]! }));
  }

  /**
   * [vector channel] The nearest memories by embedding inside the viewer's keys (partition keys of
   * the KNN), then the same status/expiry/flag/kind/level filters as the word channels.
   */
  private async vectorHits(q: SearchQuery, keys: string[] | null, depth: number): Promise<{ row: PoolRow; rank: number }[]> {
    const text = q.text ?? [...q.query.terms, ...q.query.cjk].join(" ");
    // An owner's view over many keys reads the owner's partitions; the join below applies the project.
    const byOwner = "owner" in q.visibility && (keys === null || keys.length > VECTOR_MAX_KEYS);
    const scope = byOwner && "owner" in q.visibility ? { user: q.visibility.owner } : { keys: keys ?? [] };
    // Extra depth: status, expiry, flags, kinds, levels (and an owner's project) are filtered after the KNN.
    const near = await this.vectors!.nearest(text, scope, depth * (byOwner ? 4 : 2));
    if (near.length === 0) return [];
    const byRowid = this.rowsWhere(near.map((n) => n.rowid), q, keys);
    return near.flatMap((n) => (byRowid.has(n.rowid) ? [{ row: byRowid.get(n.rowid)!, rank: n.distance }] : [])).slice(0, depth);
  }

  /**
   * The word pool with one pass of added words' own-text matches (category members and verb forms,
   * or near-synonyms) added at the pass's weight of their bm25 (as if they were lower-weight query
   * words), its words planned within the pass's postings budget.
   */
  private withAddedWords(
    raw: { row: PoolRow; rank: number }[],
    pass: AddedWords,
    q: SearchQuery,
    keys: string[] | null,
    pool: number,
  ): { row: PoolRow; rank: number }[] {
    const plan = this.planner.plan(pass.words, [], keys, pass.budget);
    if (plan.newest || plan.terms.length === 0) return raw;
    const found = this.channel("memory_fts", `{content tags}: ${orGroup(plan.terms)}`, q, keys, pool, plan);
    return addRanks(raw, found, pass.weight, "lower");
  }

  /** The word hits, then the newest memories naming a word the plan left out as too common (own text and tags). */
  private withCommonWords(
    hits: { row: PoolRow; rank: number }[],
    plan: WordPlan,
    q: SearchQuery,
    keys: string[] | null,
    depth: number,
  ): { row: PoolRow; rank: number }[] {
    const have = new Set(hits.map((h) => h.row.rowid));
    const newest = this.channel("memory_fts", `{content tags}: ${orGroup(plan.common)}`, q, keys, depth, { keysInMatch: plan.keysInMatch, newest: true, walk: COMMON_WALK_CAP });
    return [...hits, ...newest.filter((h) => !have.has(h.row.rowid))].slice(0, depth);
  }

  /**
   * The newest `n` memories dated inside the windows (by what they are about, else when they were
   * written) that pass the search's filters and are not in `have`: one walk of memories_vis_dated
   * per key and window, ranked below every word hit (bm25 ranks are negative).
   */
  private periodMemories(
    q: SearchQuery,
    keys: string[],
    windows: readonly DateWindow[],
    n: number,
    have: Set<number>,
  ): { row: PoolRow; rank: number }[] {
    const found = new Map<number, PoolRow>();
    const filterParams: unknown[] = [];
    const where = this.filters(q, filterParams, true, keys);
    const walk = this.prepared(`SELECT ${POOL_COLS} FROM memories m INDEXED BY memories_vis_dated
      WHERE m.vis_key = ? AND ${DATED_AT} >= ? AND ${DATED_AT} < ? AND ${where} ORDER BY ${DATED_AT} DESC LIMIT ?`);
    for (const key of keys) {
      for (const w of windows) {
        for (const r of walk.all(key, w.from, w.to, ...filterParams, n + have.size) as PoolRow[]) if (!have.has(r.rowid)) found.set(r.rowid, r);
      }
    }
    return newestInPeriod(found.values(), n);
  }

  /** The word pool with the semantic channel's memories added (core/retrieval/fusion.ts addAssociationHits). */
  private withAssociations(
    pool: { row: PoolRow; rank: number }[],
    scored: SemanticHit[],
    q: SearchQuery,
    keys: string[] | null,
    depth: number,
  ): { row: PoolRow; rank: number }[] {
    if ((scored[0]?.score ?? 0) <= 0) return pool;
    const rows = this.rowsWhere(scored.map((h) => h.rowid), q, keys);
    return addAssociationHits(pool, scored, rows, depth, DEFAULT_ASSOCIATIONS.poolWeight, "lower");
  }

  /** These memories, where they pass the search's filters: the columns a search weighs, or `whole` rows. */
  private rowsWhere(rowids: number[], q: SearchQuery, keys: string[] | null): Map<number, PoolRow>;
  private rowsWhere(rowids: number[], q: SearchQuery, keys: string[] | null, whole: true): Map<number, MemoryRow>;
  private rowsWhere(rowids: number[], q: SearchQuery, keys: string[] | null, whole = false): Map<number, PoolRow> {
    const out = new Map<number, PoolRow>();
    if (rowids.length === 0) return out;
    const params: unknown[] = [...rowids];
    const where = this.filters(q, params, false, keys);
    // NOT INDEXED: by rowid, never by the scope index (the planner picks memories_vis_time for a
    // big scope and reads all of it: 7 ms at 100k memories instead of 0.2).
    const cols = whole ? "m.*" : POOL_COLS;
    for (const r of this.prepared(`SELECT ${cols} FROM memories m NOT INDEXED WHERE m.rowid IN (${rowids.map(() => "?").join(",")}) AND ${where}`).all(
      ...params,
    ) as PoolRow[]) {
      out.set(r.rowid, r);
    }
    return out;
  }

  /** The word hits after neighbour spreading; neighbours pass the same filters as any hit. */
  private spreadNeighbours(
    hits: { row: PoolRow; rank: number }[],
    q: SearchQuery,
    keys: string[] | null,
    depth: number,
  ): { row: PoolRow; rank: number }[] {
    if (hits.length === 0) return hits;
    const spread = this.spread.spread(hits.map((h) => ({ rowid: h.row.rowid, score: -h.rank, asks: asks(h.row.content) })));
    const rows = new Map(hits.map((h) => [h.row.rowid, h.row]));
    const missing = spread.slice(0, Math.max(hits.length, depth)).map((h) => h.rowid).filter((r) => !rows.has(r));
    for (const [r, row] of this.rowsWhere(missing, q, keys)) rows.set(r, row);
    const out: { row: PoolRow; rank: number }[] = [];
    for (const h of spread) {
      const row = rows.get(h.rowid);
      if (row) out.push({ row, rank: -h.score });
    }
    return out;
  }

  /** The first source conversation of each memory. */
  private threadsOf(rowids: number[]): Map<number, string> {
    const out = new Map<number, string>();
    if (rowids.length === 0) return out;
    const rows = this.prepared(
      `SELECT memory_rowid, thread_id FROM memory_sources WHERE memory_rowid IN (${rowids.map(() => "?").join(",")})
       AND thread_id IS NOT NULL ORDER BY id`,
    ).all(...rowids) as { memory_rowid: number; thread_id: string }[];
    for (const r of rows) if (!out.has(r.memory_rowid)) out.set(r.memory_rowid, r.thread_id);
    return out;
  }

  /**
   * Pseudo-relevance feedback: query again with the first pass's recurring rare words added. `raw`
   * is the first pass's own word ranking (before cues and spreading).
   */
  private feedbackPass(
    first: { row: PoolRow }[],
    raw: { row: PoolRow; rank: number }[],
    terms: string[],
    wordParts: string[],
    cols: string,
    q: SearchQuery,
    keys: string[] | null,
    depth: number,
  ): { row: PoolRow; rank: number }[] {
    if (first.length < DEFAULT_PRF.minDocs || terms.length === 0) return [];
    const qStems = new Set(this.planner.stems(terms).values());
    const { n } = this.planner.corpus();
    const extra = expansionTerms({
      texts: first.slice(0, DEFAULT_PRF.docs).map((h) => h.row.content),
      queryStems: qStems,
      stem: (ws) => this.planner.stems(ws),
      df: this.planner.dfReader(),
      n,
    });
    if (extra.length === 0) return [];
    const plan = this.planner.plan([...terms, ...extra], [], keys, PRF_POSTINGS_BUDGET);
    // every word too common to rank by: the newest mentions would be no feedback at all
    if (plan.newest) return [];
    // No feedback word within the budget: the pass would only repeat the first one's query, so
    // that query's word ranking stands in (the same vote, without a second FTS pass; dropping it
    // instead lost numbers: source memory in the top 10 for a bare number at 100k, 0.66 -> 0.52).
    if (!plan.terms.some((t) => extra.includes(t))) return raw.slice(0, depth);
    const parts = [...wordGroups(cols, plan), ...wordParts.filter((p) => p.startsWith("cjk:"))];
    return this.channel("memory_fts", parts.join(" OR "), q, keys, depth, plan);
  }

  async list(q: ListQuery): Promise<ListPage> {
    // A person's view lists their rows (in the project, or person-wide ones) by user id, in the
    // (user_id, updated_at) index order: its scope keys can number hundreds, and a read of them all
    // in time order sorted every matching row first (94 ms a page for 70k memories at 100k). A
    // project's few keys, or a thread's, are read one key at a time and merged (below).
    const v = q.visibility;
    const owner = "keys" in v ? null : v;
    const keys = "keys" in v ? v.keys : v.project ? this.ownerKeys(v) : null;
    const perKey = keys !== null && keys.length > 1 && keys.length <= LIST_KEY_BRANCHES;
    const cap = totalCapOf(q);
    const countParams: unknown[] = [];
    // (a person's view: filters by user id and project; a thread's: by its keys)
    const countWhere = this.filters(q, countParams, false, owner ? null : keys);
    const inKeys = owner && perKey ? ` AND m.vis_key IN (${keys.map(() => "?").join(",")})` : "";
    const counted = (this.prepared(`SELECT count(*) AS n FROM (SELECT 1 FROM memories m WHERE ${countWhere}${inKeys} LIMIT ${cap + 1})`).get(...countParams, ...(inKeys ? keys! : [])) as { n: number }).n;
    const after: unknown[] = [];
    let cursorSql = "";
    if (q.cursor) {
      const c = decodeCursor(q.cursor);
      cursorSql = q.order === "newest" ? ` AND (m.updated_at, m.rowid) < (?, ?)` : ` AND (m.updated_at, m.rowid) > (?, ?)`;
      after.push(c.t, c.r);
    }
    const dir = q.order === "newest" ? "DESC" : "ASC";
    const limit = Math.max(1, Math.floor(q.limit));
    // A few scope keys are read one key at a time, each in its (vis_key, updated_at) index order, and
    // merged: one read of them all in time order sorted every matching row first (0.7 s at a
    // thread's view of 490k memories, for a page of 20).
    const params: unknown[] = [];
    const where = this.filters(q, params, perKey && !owner, owner ? null : keys);
    const page1 = (keyed: string) =>
      `SELECT m.* FROM memories m WHERE ${where}${keyed}${cursorSql} ORDER BY m.updated_at ${dir}, m.rowid ${dir} LIMIT ${limit + 1}`;
    const rows = (
      perKey
        ? this.prepared(`${keys.map(() => `SELECT * FROM (${page1(" AND m.vis_key = ?")})`).join(" UNION ALL ")} ORDER BY updated_at ${dir}, rowid ${dir} LIMIT ${limit + 1}`).all(
            ...keys.flatMap((k) => [...params, k, ...after]),
          )
        : this.prepared(page1("")).all(...params, ...after)
    ) as MemoryRow[];
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      items: this.hydrateAll(page),
      nextCursor: more && last ? encodeCursor(last.updated_at, last.rowid) : null,
      ...cappedTotal(counted, cap),
    };
  }

  exportAll(visibility: Visibility): AsyncIterable<MemoryRecord> {
    return exportAllVia((q) => this.list(q), visibility);
  }

  /**
   * A server's warm-up, off this thread: [semantic channel] the indexes of the scopes written last,
   * in its worker; and the commonest words' counts for the planner, read now and again while the
   * memories change. Resolves with the scopes built once both are done.
   */
  warm(): Promise<string[]> {
    this.dfPrefill.keepFresh();
    const counts = this.dfPrefill.run();
    const scopes = this.channels.semantic ? this.semantic.warm() : Promise.resolve([]);
    return Promise.all([scopes, counts]).then(([built]) => built);
  }

  close(): void {
    this.dfPrefill.close();
    this.semantic.close();
    // its connection closes first: this one stays the last, which checkpoints and removes the log
    this.checkpoints.close();
    if (!this.db.open) return;
    // nothing of a forgotten memory stays in the file once the store is closed
    try {
      this.purge.finish();
    } finally {
      this.db.close();
    }
  }

  private prepared(sql: string): Statement {
    let st = this.cache.get(sql);
    if (!st) {
      if (this.cache.size > 256) this.cache.clear();
      st = this.db.prepare(sql);
      this.cache.set(sql, st);
    }
    return st;
  }

  private hydrate(row: MemoryRow): MemoryRecord {
    return this.hydrateAll([row])[0]!;
  }

  /** Rows → records with tags and sources, in three queries however many rows there are. */
  private hydrateAll(rows: MemoryRow[]): MemoryRecord[] {
    if (rows.length === 0) return [];
    const marks = rows.map(() => "?").join(",");
    const rowids = rows.map((r) => r.rowid);
    const tags = new Map<number, string[]>();
    for (const t of this.prepared(`SELECT memory_rowid, tag FROM memory_tags WHERE memory_rowid IN (${marks}) ORDER BY tag`).all(
      ...rowids,
    ) as { memory_rowid: number; tag: string }[]) {
      pushTo(tags, t.memory_rowid, t.tag);
    }
    const sourceRows = this.prepared(`SELECT * FROM memory_sources WHERE memory_rowid IN (${marks}) ORDER BY id`).all(...rowids) as SourceRow[];
    const msgs = new Map<number, string[]>();
    if (sourceRows.length > 0) {
      const sm = sourceRows.map(() => "?").join(",");
      for (const m of this.prepared(`SELECT source_id, message_id FROM memory_source_messages WHERE source_id IN (${sm}) ORDER BY source_id, ord`).all(
        ...sourceRows.map((x) => x.id),
      ) as { source_id: number; message_id: string }[]) {
        pushTo(msgs, m.source_id, m.message_id);
      }
    }
    const sources = sourcesByMemory(sourceRows, msgs);
    return rows.map((row) => recordOf(row, tags.get(row.rowid) ?? [], sources.get(row.rowid) ?? []));
  }
}




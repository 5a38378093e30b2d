// The memory tables' row shapes and their mapping to records, shared by the SQLite and PostgreSQL
// stores: both engines keep the same columns (so `migrate` can copy by name), and one mapping keeps
// what a record looks like identical on either.
import { MEMORY_STATUSES, type Actor, type MemoryKind, type MemoryRecord, type MemorySource, type MemoryStatus, type RecordScope, type SafetyFlag, type ScopeLevel, type Trust } from "../core/memory/record.js";
import { CoreError } from "../core/errors.js";
import { storedTime } from "../core/timestamps.js";
import { StoreError, type ListPage, type ListQuery, type Visibility } from "./traits.js";

/**
 * The date a memory is about, else when it was written (SQL, the same on both engines): what the
 * date cue, the dated pass and the period listing read; index memories_vis_dated covers it.
 */
export const DATED_AT = "coalesce(m.valid_from, m.created_at)";

/**
 * `m.status` against the asked statuses, written as literals (each checked against the closed set,
 * so nothing from a caller reaches the statement): "pending" alone then matches the small partial
 * indexes of pending memories on either engine, so a review list over a view of 490k active
 * memories does not read them all to find none pending. An unknown status is refused.
 */
export function statusPredicate(statuses: readonly string[]): string {
  for (const x of statuses) if (!(MEMORY_STATUSES as readonly string[]).includes(x)) throw new StoreError("constraint", `unknown memory status "${x}"`);
  if (statuses.length === 0) return "FALSE";
  return statuses.length === 1 ? `m.status = '${statuses[0]}'` : `m.status IN (${statuses.map((x) => `'${x}'`).join(",")})`;
}

/**
 * A forgotten row whose text is gone. A row deleted with its text still there was claimed by a
 * forget that has not purged it yet (MemoryStore.claimForget): the cascade, or its retry, still
 * needs that text.
 */
export function purgedRow(row: { status: string; content: string }): boolean {
  return row.status === "deleted" && row.content === "";
}

export interface MemoryRow {
  rowid: number;
  id: string;
  lineage_id: string;
  vis_key: string;
  level: string;
  user_id: string;
  project: string | null;
  session_id: string | null;
  thread_id: string | null;
  kind: string;
  content: string;
  trust: string;
  confidence: number;
  status: string;
  flags: string;
  version: number;
  supersedes: string | null;
  valid_from: number | null;
  valid_to: number | null;
  created_at: number;
  updated_at: number;
  expires_at: number | null;
  content_hash: string | null;
  /** the process holding a forget's claim on the row (claimForget), null otherwise */
  claimed_by?: string | null;
}

export interface SourceRow {
  id: number;
  memory_rowid: number;
  thread_id: string | null;
  tool_call_id: string | null;
  actor: string;
  at: number;
}

/** Push onto the list kept under `key`, creating it on first use. */
export function pushTo<K, V>(m: Map<K, V[]>, key: K, v: V): void {
  const list = m.get(key);
  if (list) list.push(v);
  else m.set(key, [v]);
}

/** Each memory's sources (by memory rowid), with the message ids of each source (by source id). */
export function sourcesByMemory(sourceRows: SourceRow[], messageIds: Map<number, string[]>): Map<number, MemorySource[]> {
  const out = new Map<number, MemorySource[]>();
  for (const s of sourceRows) {
    pushTo(out, s.memory_rowid, {
      threadId: s.thread_id,
      toolCallId: s.tool_call_id,
      actor: s.actor as Actor,
      at: s.at,
      messageIds: messageIds.get(s.id) ?? [],
    });
  }
  return out;
}

export function recordOf(row: MemoryRow, tags: string[], sources: MemorySource[]): MemoryRecord {
  return {
    id: row.id,
    lineageId: row.lineage_id,
    scope: {
      level: row.level as ScopeLevel,
      user: row.user_id,
      project: row.project,
      session: row.session_id,
      thread: row.thread_id,
    } satisfies RecordScope,
    kind: row.kind as MemoryKind,
    content: row.content,
    tags,
    trust: row.trust as Trust,
    confidence: row.confidence,
    status: row.status as MemoryStatus,
    flags: row.flags ? (row.flags.split(",") as SafetyFlag[]) : [],
    version: row.version,
    supersedes: row.supersedes,
    validFrom: storedTime(row.valid_from),
    validTo: row.valid_to,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: storedTime(row.expires_at),
    contentHash: row.content_hash ?? "",
    sources,
  };
}

/**
 * Memories a list page counts at most for its total. Counting reads every matching row: at a scope
 * of 490k memories (1M in all) that took ~0.7 s on every page, where the page itself takes well
 * under a millisecond. Past the cap a page says so (`totalCapped`; the tools print "10000+").
 */
export const LIST_TOTAL_CAP = 10_000;

/**
 * A list over at most this many scope keys (a thread's view) reads each key in its (vis_key,
 * updated_at) index order and merges them; more keys are read together and sorted.
 */
export const LIST_KEY_BRANCHES = 16;

/** The cap a list query counts up to (LIST_TOTAL_CAP unless it names one; never negative). */
export function totalCapOf(q: ListQuery): number {
  return Math.max(0, Math.floor(q.totalCap ?? LIST_TOTAL_CAP));
}

/** A list total as counted with `LIMIT cap + 1`: the total shown and whether more match. */
export function cappedTotal(counted: number, cap: number): { total: number; totalCapped: boolean } {
  return { total: Math.min(counted, cap), totalCapped: counted > cap };
}

/** List paging cursor: (time, rowid) of the last row returned. */
export function encodeCursor(t: number, r: number): string {
  return Buffer.from(`${t}:${r}`).toString("base64url");
}

export function decodeCursor(c: string): { t: number; r: number } {
  const [t, r] = Buffer.from(c, "base64url").toString().split(":").map(Number);
  if (!Number.isFinite(t) || !Number.isFinite(r)) {
    // the caller's argument, not a store failure: tools answer it as such, the admin API as a 400 on "cursor"
    throw Object.assign(new CoreError("invalid_argument", `"cursor" does not come from an earlier page; pass the cursor the previous page named, or leave it out for the first page`), { field: "cursor" });
  }
  return { t: t!, r: r! };
}

/**
 * Every record of a visibility (all statuses, flagged included), oldest first, read page by page
 * through a store's own `list`: both engines export this way.
 */
export async function* exportAllVia(list: (q: ListQuery) => Promise<ListPage>, visibility: Visibility): AsyncIterable<MemoryRecord> {
  let cursor: string | undefined;
  for (;;) {
    const page = await list({
      visibility,
      statuses: ["pending", "active", "superseded", "expired"],
      includeFlagged: true,
      now: 0,
      limit: 500,
      cursor,
      order: "oldest",
      // the walk needs no total: counting it on every page read the whole set again each time
      totalCap: 0,
    });
    for (const r of page.items) yield r;
    if (!page.nextCursor) return;
    cursor = page.nextCursor;
  }
}

// The word index row of a memory: its content, tags, CJK bigrams, a context column and its
// scope key. The context holds the neighbouring memories of the same conversation (the turns
// around it, same scope, current versions only) and the date the memory is about, so a question
// phrased with the words of the surrounding exchange ("when", "what did she say about it") can
// still find the turn; it is weighted low, and results still name the single best memory.
// The scope column holds the memory's scope key and a kind token, so scope and kind filters can be
// part of the MATCH expression. Rows are rebuilt whenever a neighbour appears, changes status or is
// forgotten.
import { cjkBigrams } from "../../core/retrieval/analyze.js";
import { dateWords } from "../../core/retrieval/dates.js";
import type { Db } from "./database.js";
import { WORD_TOKENIZE_OPTION } from "./word-tokenizer.js";

/** memories on each side that join a memory's context */
export const CONTEXT_NEIGHBOURS = 2;

/**
 * The token of a memory kind in the word index's scope column. Letters only, so the tokenizer keeps
 * it whole; scope keys are "k" and 20 hex digits, so no key can equal one.
 */
export function kindToken(kind: string): string {
  return `kind${kind.toLowerCase().replace(/[^a-z]/g, "")}`;
}

interface Base {
  rowid: number;
  content: string;
  vis_key: string;
  status: string;
  kind: string;
  valid_from: number | null;
  created_at: number;
}

const CURRENT = `('active','pending')`;
const CURRENT_SET = new Set(["active", "pending"]);

/** the word index, or the table a reindex is building beside it */
type WordTable = "memory_fts" | typeof REBUILD_TABLE;

function statements(db: Db, table: WordTable) {
  return {
    base: db.prepare(`SELECT rowid, content, vis_key, status, kind, valid_from, created_at FROM memories WHERE rowid = ?`),
    tags: db.prepare(`SELECT tag FROM memory_tags WHERE memory_rowid = ? ORDER BY tag`),
    threads: db.prepare(`SELECT DISTINCT thread_id FROM memory_sources WHERE memory_rowid = ? AND thread_id IS NOT NULL`),
    // Walks the (thread_id, memory_rowid) index from the memory outwards; a memory with two
    // sources in one thread appears twice, hence the wider limit and the de-duplication below.
    before: db.prepare(`SELECT m.rowid, m.content FROM memory_sources s JOIN memories m ON m.rowid = s.memory_rowid
      WHERE s.thread_id = ? AND s.memory_rowid < ? AND m.vis_key = ? AND m.status IN ${CURRENT}
      ORDER BY s.memory_rowid DESC LIMIT ${2 * CONTEXT_NEIGHBOURS}`),
    after: db.prepare(`SELECT m.rowid, m.content FROM memory_sources s JOIN memories m ON m.rowid = s.memory_rowid
      WHERE s.thread_id = ? AND s.memory_rowid > ? AND m.vis_key = ? AND m.status IN ${CURRENT}
      ORDER BY s.memory_rowid ASC LIMIT ${2 * CONTEXT_NEIGHBOURS}`),
    del: db.prepare(`DELETE FROM ${table} WHERE rowid = ?`),
    ins: db.prepare(`INSERT INTO ${table} (rowid, content, tags, cjk, context, vis_key) VALUES (?, ?, ?, ?, ?, ?)`),
  };
}

type Statements = ReturnType<typeof statements>;
const cache = new WeakMap<Db, Statements>();

function st(db: Db): Statements {
  let s = cache.get(db);
  if (!s) {
    s = statements(db, "memory_fts");
    cache.set(db, s);
  }
  return s;
}

interface Neighbour {
  rowid: number;
  content: string;
}

/**
 * The rows of one write batch by (conversation, scope key), current versions only, oldest first.
 * They are the newest rows of the database, so the turns after a batch row are exactly the later
 * batch rows of its group, and the turns before it are batch rows too once it has enough of them:
 * most neighbours are found here without a query.
 */
class BatchGroups {
  private readonly groups = new Map<string, Neighbour[]>();

  constructor(rows: FreshRow[]) {
    for (const r of [...rows].sort((a, b) => a.rowid - b.rowid)) {
      if (!CURRENT_SET.has(r.status)) continue;
      for (const t of r.threads) {
        const k = `${t}\u0000${r.vis_key}`;
        (this.groups.get(k) ?? this.groups.set(k, []).get(k)!).push({ rowid: r.rowid, content: r.content });
      }
    }
  }

  /** The nearest rows on one side (nearest first), or null when the database must be asked. */
  side(thread: string, key: string, rowid: number, before: boolean): Neighbour[] | null {
    const list = this.groups.get(`${thread}\u0000${key}`) ?? [];
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]!.rowid < rowid) lo = mid + 1;
      else hi = mid;
    }
    if (before) return lo >= CONTEXT_NEIGHBOURS ? list.slice(lo - CONTEXT_NEIGHBOURS, lo).reverse() : null;
    const start = list[lo]?.rowid === rowid ? lo + 1 : lo;
    return list.slice(start, start + CONTEXT_NEIGHBOURS);
  }
}

function around(s: Statements, rowid: number, b: Base, threads?: string[], batch?: BatchGroups): Neighbour[] {
  const out = new Map<number, Neighbour>();
  const ts = threads ?? (s.threads.all(rowid) as { thread_id: string }[]).map((t) => t.thread_id);
  for (const thread_id of ts) {
    for (const side of [s.before, s.after]) {
      // With one conversation nothing is taken twice, so the batch's nearest rows are the answer.
      const known = batch && ts.length === 1 ? batch.side(thread_id, b.vis_key, rowid, side === s.before) : null;
      let n = 0;
      for (const r of known ?? (side.all(thread_id, rowid, b.vis_key) as Neighbour[])) {
        if (out.has(r.rowid)) continue;
        out.set(r.rowid, r);
        if (++n === CONTEXT_NEIGHBOURS) break;
      }
    }
  }
  return [...out.values()];
}

/** The neighbours of a memory in each conversation it came from (current versions, same scope). */
export function neighbours(db: Db, rowid: number): number[] {
  const s = st(db);
  const b = s.base.get(rowid) as Base | undefined;
  return b ? around(s, rowid, b).map((n) => n.rowid) : [];
}

/** (Re)write a memory's word-index row; deleted memories get none. */
export function writeWordRow(db: Db, rowid: number, fresh = false): void {
  writeRow(st(db), rowid, fresh);
}

/**
 * Write one word row; returns the neighbours whose context holds this memory. `known`: the row,
 * tags and source threads as just inserted (saves reading them back).
 */
function writeRow(s: Statements, rowid: number, fresh: boolean, known?: FreshRow, batch?: BatchGroups): Neighbour[] {
  if (!fresh) s.del.run(rowid);
  const b = known ?? (s.base.get(rowid) as Base | undefined);
  if (!b || b.status === "deleted") return [];
  const tags = known ? [...known.tags].sort().join(" ") : (s.tags.all(rowid) as { tag: string }[]).map((t) => t.tag).join(" ");
  const near = around(s, rowid, b, known?.threads, batch);
  const ctx = near.map((n) => n.content);
  // the date the memory is about, else the day it was written (as DATED_AT dates it)
  ctx.push(dateWords(b.valid_from ?? b.created_at));
  s.ins.run(rowid, b.content, tags, cjkBigrams(b.content).join(" "), ctx.join(" "), `${b.vis_key} ${kindToken(b.kind)}`);
  return near;
}

/**
 * Word rows for memories just inserted (rows, tags and sources already written, no word row yet),
 * then a rewrite of each older neighbour whose context they join: every row is written once.
 */
export function indexNewRows(db: Db, rows: FreshRow[]): void {
  const s = st(db);
  const fresh = new Set(rows.map((r) => r.rowid));
  const stale = new Set<number>();
  const batch = new BatchGroups(rows);
  for (const r of rows) for (const n of writeRow(s, r.rowid, true, r, batch)) if (!fresh.has(n.rowid)) stale.add(n.rowid);
  for (const r of stale) writeRow(s, r, false);
}

/** A memory row as just inserted, with its tags and (distinct, non-null) source threads. */
export interface FreshRow extends Base {
  tags: string[];
  threads: string[];
}

/** Rewrite the rows of a memory's neighbours (after it appeared, changed status or was forgotten). */
export function refreshNeighbours(db: Db, rowids: Iterable<number>): void {
  for (const r of rowids) writeWordRow(db, r);
}

/** Fill the word index from the memories table (migrations 9 and 14). */
export function rebuildWordIndex(db: Db): void {
  for (const { rowid } of db.prepare(`SELECT rowid FROM memories WHERE status <> 'deleted' ORDER BY rowid`).all() as { rowid: number }[]) {
    writeWordRow(db, rowid, true);
  }
}

/**
 * FTS5 does not take deleted rows out of a contentless-delete table's running totals (row count,
 * tokens per column) that bm25() divides by, and every neighbour refresh is a delete plus an
 * insert, so those totals drift upward with use. The ratio of the index's row count to the live
 * rows says how far; `recreateWordIndex` starts the table afresh.
 */
export function wordIndexDrift(db: Db): number {
  const row = db.prepare(`SELECT block FROM memory_fts_data WHERE id = 1`).get() as { block: Buffer } | undefined;
  const live = (db.prepare(`SELECT count(*) AS n FROM memories WHERE status <> 'deleted'`).get() as { n: number }).n;
  if (!row || live === 0) return 1;
  // The averages record starts with the row count as an SQLite (big-endian) varint.
  let v = 0;
  for (const byte of row.block) {
    v = v * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) break;
  }
  return v / live;
}

function wordIndexDdl(table: WordTable): string {
  return `
CREATE VIRTUAL TABLE ${table} USING fts5(
  content, tags, cjk, context, vis_key,
  ${WORD_TOKENIZE_OPTION},
  content = '', contentless_delete = 1
);
INSERT INTO ${table} (${table}, rank) VALUES ('secure-delete', 1);`;
}

export const WORD_INDEX_DDL = wordIndexDdl("memory_fts");

// A reindex builds the new index beside the live one, a batch per transaction, so servers' writes
// go on between batches. Triggers (which fire in every process) note each memory whose word row
// may have changed meanwhile, and take a forgotten memory out of the new index in the forget's own
// transaction; the notes are replayed into the new index, and it replaces the live one, in one
// short transaction at the end. A reindex killed part-way leaves these behind; the next one
// removes them (forgets keep reaching the half-built table until then).
const REBUILD_TABLE = "memory_fts_rebuild";
const REBUILD_STATE = "memory_fts_rebuild_state";
const REBUILD_DIRTY = "memory_fts_rebuild_dirty";
const REBUILD_TRIGGERS: Record<string, string> = {
  memory_fts_rebuild_ins: `AFTER INSERT ON memories BEGIN INSERT OR IGNORE INTO ${REBUILD_DIRTY} VALUES (NEW.rowid); END`,
  memory_fts_rebuild_upd: `AFTER UPDATE OF content, status, vis_key, kind, valid_from, created_at ON memories BEGIN INSERT OR IGNORE INTO ${REBUILD_DIRTY} VALUES (NEW.rowid); END`,
  memory_fts_rebuild_forget: `AFTER UPDATE OF status ON memories WHEN NEW.status = 'deleted' BEGIN DELETE FROM ${REBUILD_TABLE} WHERE rowid = NEW.rowid; END`,
  memory_fts_rebuild_tag_ins: `AFTER INSERT ON memory_tags BEGIN INSERT OR IGNORE INTO ${REBUILD_DIRTY} VALUES (NEW.memory_rowid); END`,
  memory_fts_rebuild_tag_del: `AFTER DELETE ON memory_tags BEGIN INSERT OR IGNORE INTO ${REBUILD_DIRTY} VALUES (OLD.memory_rowid); END`,
  memory_fts_rebuild_src_ins: `AFTER INSERT ON memory_sources BEGIN INSERT OR IGNORE INTO ${REBUILD_DIRTY} VALUES (NEW.memory_rowid); END`,
  memory_fts_rebuild_src_upd: `AFTER UPDATE ON memory_sources BEGIN INSERT OR IGNORE INTO ${REBUILD_DIRTY} VALUES (OLD.memory_rowid); INSERT OR IGNORE INTO ${REBUILD_DIRTY} VALUES (NEW.memory_rowid); END`,
  memory_fts_rebuild_src_del: `AFTER DELETE ON memory_sources BEGIN INSERT OR IGNORE INTO ${REBUILD_DIRTY} VALUES (OLD.memory_rowid); END`,
};

/** memories per rebuild transaction: each holds the writers' lock for some tens of milliseconds */
export const REBUILD_BATCH = 500;

/** Remove a rebuild's table, notes and triggers (a backup's copy must not carry a running one's). */
export function dropRebuild(db: Db): void {
  for (const name of Object.keys(REBUILD_TRIGGERS)) db.exec(`DROP TRIGGER IF EXISTS ${name}`);
  db.exec(`DROP TABLE IF EXISTS ${REBUILD_DIRTY}; DROP TABLE IF EXISTS ${REBUILD_TABLE}; DROP TABLE IF EXISTS ${REBUILD_STATE}`);
}

/**
 * Whether the process that recorded `pid` (and, where it could read it, the pid's start time) is
 * gone: a pid another program has taken since no longer names it.
 */
export type RebuildGone = (pid: number, start: string | null) => boolean;

/** The pid of the reindex rebuilding this database's word index right now, or null. */
export function runningRebuild(db: Db, gone: RebuildGone): number | null {
  const owner = rebuildOwner(db);
  return owner && owner.pid && !gone(owner.pid, owner.start) ? owner.pid : null;
}

/**
 * The process a rebuild under way (or killed) recorded: pid 0 when it recorded none, start null
 * when it recorded no start time (a build before it did), null when there is no rebuild.
 */
function rebuildOwner(db: Db): { pid: number; start: string | null } | null {
  if (!db.prepare(`SELECT 1 FROM sqlite_schema WHERE name = ?`).get(REBUILD_STATE)) return null;
  const row = db.prepare(`SELECT * FROM ${REBUILD_STATE}`).get() as { pid: number; start?: string | null } | undefined;
  return { pid: row?.pid ?? 0, start: row?.start ?? null };
}

/**
 * What a reindex killed part-way left (its half-built index, notes and triggers), removed when its
 * process is gone: until then every write to the database also noted its row there. Returns the
 * dead reindex's pid, or null when there was nothing to remove (or its reindex still runs).
 */
export function dropKilledRebuild(db: Db, gone: RebuildGone): number | null {
  // looked at first without the write lock: a server asks every minute, and mostly there is none
  const seen = rebuildOwner(db);
  if (seen === null || (seen.pid && !gone(seen.pid, seen.start))) return null;
  return db.transaction(() => {
    const owner = rebuildOwner(db);
    if (owner === null || (owner.pid && !gone(owner.pid, owner.start))) return null;
    dropRebuild(db);
    return owner.pid;
  }).immediate();
}

/** Thrown when another process is rebuilding the word index of the same database. */
export class RebuildRunning extends Error {
  constructor(readonly pid: number) {
    super(`another memory reindex (pid ${pid}) is rebuilding the word index of this database; wait for it to finish`);
  }
}

export interface RecreateOptions {
  /** this process, recorded so a second reindex can tell a running rebuild from a killed one */
  pid: number;
  /** when this process started, recorded with its pid so a pid taken by another program since is told apart */
  start?: string | null;
  /** whether the rebuild's recorded process is gone (its half-built index is then removed) */
  gone: RebuildGone;
  batch?: number;
  /**
   * Between the rebuild's transactions. A writer in another process waits for the lock in
   * SQLite's busy handler, which tries again at most every 100 ms: a rebuild that took the lock
   * again at once would keep it from ever getting in, so the CLI sleeps here for longer than that.
   */
  pause?: () => void;
}

/**
 * Rebuild the word index from the memories table beside the live one and swap it in; the live
 * index answers searches and takes writes throughout, and no write waits for more than a batch.
 */
export function recreateWordIndex(db: Db, opts: RecreateOptions = { pid: process.pid, gone: () => false }): void {
  const batch = opts.batch ?? REBUILD_BATCH;
  const last = db.transaction(() => {
    const owner = rebuildOwner(db);
    if (owner && owner.pid && owner.pid !== opts.pid && !opts.gone(owner.pid, owner.start)) throw new RebuildRunning(owner.pid);
    dropRebuild(db); // what a killed reindex left
    db.exec(`${wordIndexDdl(REBUILD_TABLE)}
      CREATE TABLE ${REBUILD_STATE} (pid INTEGER NOT NULL, start TEXT); CREATE TABLE ${REBUILD_DIRTY} (rowid INTEGER PRIMARY KEY);`);
    db.prepare(`INSERT INTO ${REBUILD_STATE} (pid, start) VALUES (?, ?)`).run(opts.pid, opts.start ?? null);
    for (const [name, body] of Object.entries(REBUILD_TRIGGERS)) db.exec(`CREATE TRIGGER ${name} ${body}`);
    return (db.prepare(`SELECT coalesce(max(rowid), 0) AS n FROM memories`).get() as { n: number }).n;
  }).immediate();
  const s = statements(db, REBUILD_TABLE);
  const page = db.prepare(`SELECT rowid FROM memories WHERE rowid > ? AND rowid <= ? AND status <> 'deleted' ORDER BY rowid LIMIT ?`);
  try {
    // every memory there was at the start; later ones are in the notes
    for (let after = 0; ; ) {
      const n = db.transaction(() => {
        const rows = page.all(after, last, batch) as { rowid: number }[];
        for (const { rowid } of rows) writeRow(s, rowid, true);
        if (rows.length > 0) after = rows.at(-1)!.rowid;
        return rows.length;
      }).immediate();
      if (n === 0) break;
      opts.pause?.();
    }
    // the memories written or changed meanwhile, with the neighbours whose context they are in,
    // a batch at a time while there are more than a batch's worth, then the rest and the swap
    const take = db.prepare(`DELETE FROM ${REBUILD_DIRTY} WHERE rowid IN (SELECT rowid FROM ${REBUILD_DIRTY} ORDER BY rowid LIMIT ?) RETURNING rowid`);
    const replay = (limit: number): number => {
      const rows = take.all(limit) as { rowid: number }[];
      const again = new Set<number>();
      for (const { rowid } of rows) {
        again.add(rowid);
        for (const n of neighbours(db, rowid)) again.add(n);
      }
      for (const r of again) writeRow(s, r, false);
      return rows.length;
    };
    for (;;) {
      const n = db.transaction(() => replay(batch)).immediate();
      if (n < batch) break;
      opts.pause?.();
    }
    db.transaction(() => {
      while (replay(batch) > 0);
      for (const name of Object.keys(REBUILD_TRIGGERS)) db.exec(`DROP TRIGGER ${name}`);
      db.exec(`DROP TABLE ${REBUILD_DIRTY}; DROP TABLE ${REBUILD_STATE}; DROP TABLE memory_fts; ALTER TABLE ${REBUILD_TABLE} RENAME TO memory_fts`);
    }).immediate();
  } catch (e) {
    // an error (not a kill): nothing half-built stays behind
    try {
      db.transaction(() => dropRebuild(db)).immediate();
    } catch {
      // the next reindex removes it
    }
    throw e;
  }
  cache.delete(db);
}

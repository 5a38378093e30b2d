// SQLite session index: conversation messages copied from an Infinity store, searchable by the
// user who owns the session. A user's key is matched inside the FTS expression, as for memories.
import { forgetNeedles, MAX_PARENT_HOPS, needleWords } from "../../core/sessions/forget-needles.js";
import type { Statement } from "better-sqlite3";
import { visibilityKey } from "../../core/memory/scope.js";
import { cjkBigrams } from "../../core/retrieval/analyze.js";
import type {
  IndexedMessage,
  LexicalQuery,
  MessageRef,
  SessionHit,
  SessionIndexStore,
  SessionThreadState,
  SkippedMessages,
  ThreadParent,
} from "../traits.js";
import type { Db } from "./database.js";
import { ftsPurge } from "./fts-purge.js";

interface Row {
  rowid: number;
  source_id: number;
  thread_id: string;
  root_thread_id: string;
  ord: number;
  message_id: string;
  role: string;
  text: string;
  at: number;
}

/** A session belongs to one user; its messages carry that user's visibility key. */
function userKeyOf(user: string): string {
  return visibilityKey({ level: "user", user, project: null, session: null, thread: null });
}

/** A message counts as quoted when this much of its (normalised) start appears elsewhere. */
const QUOTE_CHARS = 120;
const MIN_QUOTE_CHARS = 24;

const quote = (t: string) => `"${t.replace(/"/g, '""')}"`;

/** The SQL (and its parameters, pushed onto `params`) keeping or leaving out one session's messages. */
function sessionFilter(q: { rootThreadId?: string | undefined; excludeRootThreadId?: string | undefined }, params: unknown[]): string {
  let extra = "";
  if (q.rootThreadId) {
    extra += " AND m.root_thread_id = ?";
    params.push(q.rootThreadId);
  }
  if (q.excludeRootThreadId) {
    extra += " AND m.root_thread_id <> ?";
    params.push(q.excludeRootThreadId);
  }
  return extra;
}

function toHit(r: Row & { rank?: number }): SessionHit {
  return {
    sourceId: r.source_id,
    threadId: r.thread_id,
    rootThreadId: r.root_thread_id,
    ord: r.ord,
    messageId: r.message_id,
    role: r.role,
    text: r.text,
    at: r.at,
    score: r.rank === undefined ? 0 : -r.rank,
  };
}

export class SqliteSessionIndex implements SessionIndexStore {
  private readonly st: Record<string, Statement>;

  constructor(private readonly db: Db) {
    const p = (s: string) => db.prepare(s);
    this.st = {
      source: p(`INSERT INTO session_sources (kind, location) VALUES (?, ?) ON CONFLICT (kind, location) DO UPDATE SET kind = kind RETURNING id`),
      renameSource: p(`UPDATE session_sources SET location = @location WHERE kind = @kind AND location = @former
        AND NOT EXISTS (SELECT 1 FROM session_sources WHERE kind = @kind AND location = @location)`),
      state: p(`SELECT indexed_count, fingerprint, user_id, skipped_from, skipped_format FROM session_threads WHERE source_id = ? AND thread_id = ?`),
      upsertThread: p(`INSERT INTO session_threads (source_id, thread_id, root_thread_id, user_id, cwd, indexed_count, fingerprint, updated_at, parent_thread_id, spawn_order, skipped_from, skipped_format)
        VALUES (@source, @thread, @root, @user, @cwd, @count, @fp, @at, @parent, @spawn, @skippedFrom, @skippedFormat)
        ON CONFLICT (source_id, thread_id) DO UPDATE SET root_thread_id = excluded.root_thread_id, user_id = excluded.user_id,
          cwd = excluded.cwd, indexed_count = excluded.indexed_count, fingerprint = excluded.fingerprint, updated_at = excluded.updated_at,
          parent_thread_id = excluded.parent_thread_id, spawn_order = excluded.spawn_order,
          skipped_from = excluded.skipped_from, skipped_format = excluded.skipped_format`),
      parentOf: p(`SELECT parent_thread_id, spawn_order FROM session_threads WHERE source_id = ? AND thread_id = ?`),
      suppressed: p(`SELECT 1 FROM session_suppressed WHERE source_id = ? AND thread_id = ? AND message_id = ?`),
      insert: p(`INSERT OR IGNORE INTO session_messages (source_id, thread_id, root_thread_id, ord, message_id, role, text, vis_key, at)
        VALUES (@source, @thread, @root, @ord, @mid, @role, @text, @key, @at)`),
      insertFts: p(`INSERT INTO session_fts (rowid, text, cjk, vis_key) VALUES (?, ?, ?, ?)`),
      rowsOfThread: p(`SELECT rowid FROM session_messages WHERE source_id = ? AND thread_id = ?`),
      deleteRow: p(`DELETE FROM session_messages WHERE rowid = ?`),
      deleteFts: p(`DELETE FROM session_fts WHERE rowid = ?`),
      deleteThread: p(`DELETE FROM session_threads WHERE source_id = ? AND thread_id = ?`),
      threadsOf: p(`SELECT thread_id FROM session_threads WHERE source_id = ?`),
      window: p(`SELECT * FROM session_messages WHERE source_id = ? AND thread_id = ? AND ord BETWEEN ? AND ? ORDER BY ord`),
      byOrd: p(`SELECT * FROM session_messages WHERE (? IS NULL OR source_id = ?) AND thread_id = ? AND ord = ? AND vis_key = ? LIMIT 1`),
      byMid: p(`SELECT * FROM session_messages WHERE (? IS NULL OR source_id = ?) AND thread_id = ? AND message_id = ? AND vis_key = ? LIMIT 1`),
      suppress: p(`INSERT OR IGNORE INTO session_suppressed (source_id, thread_id, message_id) VALUES (?, ?, ?)`),
      // a small table (purged messages only): no index of its own on the thread
      forgotten: p(`SELECT message_id FROM session_suppressed WHERE thread_id = ?`),
      candidates: p(`SELECT m.* FROM session_fts f JOIN session_messages m ON m.rowid = f.rowid WHERE session_fts MATCH ?`),
      // a forget's needle with nothing to look up by (a lone CJK character): every message of the user
      ofUser: p(`SELECT * FROM session_messages WHERE vis_key = ?`),
      ofMessage: p(`SELECT m.* FROM session_sources s JOIN session_messages m ON m.source_id = s.id AND m.thread_id = @thread
        WHERE m.message_id = @message AND m.vis_key = @key`),
      previousUser: p(`SELECT * FROM session_messages WHERE source_id = ? AND thread_id = ? AND ord < ? AND role = 'user' ORDER BY ord DESC LIMIT 1`),
      sourcesOf: p(`SELECT id, location FROM session_sources WHERE kind = ?`),
      moveSuppressed: p(`INSERT OR IGNORE INTO session_suppressed (source_id, thread_id, message_id) SELECT ?, thread_id, message_id FROM session_suppressed WHERE source_id = ?`),
      suppressedRows: p(`SELECT m.rowid FROM session_messages m JOIN session_suppressed s
        ON s.source_id = m.source_id AND s.thread_id = m.thread_id AND s.message_id = m.message_id WHERE m.source_id = ?`),
      rowsOfSource: p(`SELECT rowid FROM session_messages WHERE source_id = ?`),
      dropSourceThreads: p(`DELETE FROM session_threads WHERE source_id = ?`),
      counts: p(`SELECT (SELECT count(*) FROM session_threads) AS threads, (SELECT count(*) FROM session_messages) AS messages`),
    };
  }

  async sourceId(kind: "infinity-files" | "sqlite" | "postgres", location: string, formerLocation?: string): Promise<number> {
    return this.db.transaction(() => {
      if (formerLocation !== undefined && formerLocation !== location) this.st.renameSource!.run({ kind, location, former: formerLocation });
      return (this.st.source!.get(kind, location) as { id: number }).id;
    }).immediate();
  }

  async threadState(sourceId: number, threadId: string): Promise<SessionThreadState | null> {
    const r = this.st.state!.get(sourceId, threadId) as
      | { indexed_count: number; fingerprint: string | null; user_id: string; skipped_from: number | null; skipped_format: string | null }
      | undefined;
    if (!r) return null;
    const skipped = r.skipped_from === null ? null : { from: r.skipped_from, format: r.skipped_format ?? "" };
    return { indexedCount: r.indexed_count, fingerprint: r.fingerprint, user: r.user_id, skipped };
  }

  async append(
    sourceId: number,
    thread: { threadId: string; rootThreadId: string; user: string; cwd: string | null; parent?: ThreadParent | null; skipped?: SkippedMessages | null },
    messages: IndexedMessage[],
    indexedCount: number,
    fingerprint: string | null,
    at: number,
  ): Promise<number> {
    const key = userKeyOf(thread.user);
    let added = 0;
    this.db.transaction(() => {
      for (const m of messages) {
        if (this.st.suppressed!.get(sourceId, thread.threadId, m.messageId)) continue;
        if (m.text.trim().length === 0) continue;
        const info = this.st.insert!.run({
          source: sourceId,
          thread: thread.threadId,
          root: thread.rootThreadId,
          ord: m.ord,
          mid: m.messageId,
          role: m.role,
          text: m.text,
          key,
          at,
        });
        if (info.changes === 1) {
          this.st.insertFts!.run(Number(info.lastInsertRowid), m.text, cjkBigrams(m.text).join(" "), key);
          added++;
        }
      }
      this.st.upsertThread!.run({
        source: sourceId,
        thread: thread.threadId,
        root: thread.rootThreadId,
        user: thread.user,
        cwd: thread.cwd,
        count: indexedCount,
        fp: fingerprint,
        at,
        parent: thread.parent?.threadId ?? null,
        spawn: thread.parent?.spawnOrder ?? null,
        skippedFrom: thread.skipped?.from ?? null,
        skippedFormat: thread.skipped?.format ?? null,
      });
    }).immediate();
    return added;
  }

  async resetThread(sourceId: number, threadId: string): Promise<void> {
    this.db.transaction(() => {
      for (const r of this.st.rowsOfThread!.all(sourceId, threadId) as { rowid: number }[]) {
        this.st.deleteFts!.run(r.rowid);
        this.st.deleteRow!.run(r.rowid);
      }
      this.st.deleteThread!.run(sourceId, threadId);
    }).immediate();
  }

  async indexedThreads(sourceId: number): Promise<string[]> {
    return this.st.threadsOf!.pluck().all(sourceId) as string[];
  }

  async sources(kind: "infinity-files" | "sqlite" | "postgres"): Promise<{ id: number; location: string }[]> {
    return this.st.sourcesOf!.all(kind) as { id: number; location: string }[];
  }

  async mergeSource(fromId: number, intoId: number): Promise<void> {
    if (fromId === intoId) return;
    let forgotten = 0;
    this.db.transaction(() => {
      this.st.moveSuppressed!.run(intoId, fromId);
      const drop = (rows: { rowid: number }[]) => {
        for (const r of rows) {
          this.st.deleteFts!.run(r.rowid);
          this.st.deleteRow!.run(r.rowid);
        }
        return rows.length;
      };
      // what a forget purged under the old location and the new one indexed again
      forgotten = drop(this.st.suppressedRows!.all(intoId) as { rowid: number }[]);
      drop(this.st.rowsOfSource!.all(fromId) as { rowid: number }[]);
      this.st.dropSourceThreads!.run(fromId);
      if (forgotten > 0) ftsPurge(this.db).mark("session_fts");
    }).immediate();
    if (forgotten > 0) void ftsPurge(this.db).run();
  }

  async search(q: {
    user: string;
    query: LexicalQuery;
    rootThreadId?: string | undefined;
    excludeRootThreadId?: string | undefined;
    limit: number;
  }): Promise<SessionHit[]> {
    const parts: string[] = [];
    if (q.query.terms.length > 0) parts.push(`text: (${q.query.terms.map(quote).join(" OR ")})`);
    if (q.query.cjk.length > 0) parts.push(`cjk: (${q.query.cjk.map(quote).join(" OR ")})`);
    if (parts.length === 0) return [];
    const match = `vis_key: ${quote(userKeyOf(q.user))} AND (${parts.join(" OR ")})`;
    const params: unknown[] = [match];
    const extra = sessionFilter(q, params);
    const rows = this.db
      .prepare(
        `SELECT m.*, bm25(session_fts, 1.0, 1.0, 0.0) AS rank FROM session_fts f JOIN session_messages m ON m.rowid = f.rowid
         WHERE session_fts MATCH ?${extra} ORDER BY rank LIMIT ${Math.max(1, Math.floor(q.limit))}`,
      )
      .all(...params) as (Row & { rank: number })[];
    return [...rows, ...this.loneCjk(q, rows)].map(toHit);
  }

  /**
   * A query's lone CJK character ("猫") is a word of its own, but the index holds CJK as pairs and
   * whole runs, so it matched only a message where it stood alone: such a character is looked for
   * in the text of the user's messages, after the ranked hits, newest first.
   */
  private loneCjk(q: { user: string; query: LexicalQuery; rootThreadId?: string | undefined; excludeRootThreadId?: string | undefined; limit: number }, found: Row[]): Row[] {
    const chars = q.query.cjk.filter((c) => [...c].length === 1);
    const want = Math.max(1, Math.floor(q.limit)) - found.length;
    if (chars.length === 0 || want <= 0) return [];
    const params: unknown[] = [userKeyOf(q.user), ...chars];
    const extra = sessionFilter(q, params);
    const seen = new Set(found.map((r) => r.rowid));
    return (
      this.db
        .prepare(
          `SELECT m.* FROM session_messages m WHERE m.vis_key = ? AND (${chars.map(() => "instr(m.text, ?) > 0").join(" OR ")})${extra}
           ORDER BY m.rowid DESC LIMIT ${want + found.length}`,
        )
        .all(...params) as Row[]
    )
      .filter((r) => !seen.has(r.rowid))
      .slice(0, want);
  }

  async window(sourceId: number, threadId: string, fromOrd: number, toOrd: number): Promise<SessionHit[]> {
    return (this.st.window!.all(sourceId, threadId, fromOrd, toOrd) as Row[]).map(toHit);
  }

  async find(sourceId: number | null, threadId: string, ref: { ord?: number; messageId?: string }, user: string): Promise<SessionHit | null> {
    const userKey = userKeyOf(user);
    const r =
      ref.messageId !== undefined
        ? (this.st.byMid!.get(sourceId, sourceId, threadId, ref.messageId, userKey) as Row | undefined)
        : (this.st.byOrd!.get(sourceId, sourceId, threadId, ref.ord ?? 0, userKey) as Row | undefined);
    return r ? toHit(r) : null;
  }

  async purgeContaining(user: string, texts: string[], madeFrom: MessageRef[] = []): Promise<number> {
    const userKey = userKeyOf(user);
    const purged: Row[] = [];
    const norm = (t: string) => t.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
    const purgeRow = (r: Row) => {
      this.st.deleteFts!.run(r.rowid);
      this.st.deleteRow!.run(r.rowid);
      this.st.suppress!.run(r.source_id, r.thread_id, r.message_id);
      purged.push(r);
    };
    const round = (needles: string[]): Row[] => {
      const found: Row[] = [];
      for (const raw of needles) {
        const needle = norm(raw);
        if (needle.length === 0) continue;
        // Candidates share the text's words; the exact check is a normalised substring test.
        const cjk = cjkBigrams(needle).filter((b) => [...b].length === 2).slice(0, 8);
        const { words, scanAll } = needleWords(needle, cjk);
        const parts = [...(words.length ? [`text: (${words.map(quote).join(" AND ")})`] : []), ...(cjk.length ? [`cjk: (${cjk.map(quote).join(" AND ")})`] : [])];
        if (parts.length === 0 && !scanAll) continue;
        const rows = (scanAll ? this.st.ofUser!.all(userKey) : this.st.candidates!.all(`vis_key: ${quote(userKey)} AND (${parts.join(" OR ")})`)) as Row[];
        for (const r of rows) {
          if (purged.some((p) => p.rowid === r.rowid) || !norm(r.text).includes(needle)) continue;
          purgeRow(r);
          found.push(r);
        }
      }
      return found;
    };
    this.db.transaction(() => {
      // 0. the messages the memories were made from (a learning candidate's user turn)
      for (const ref of madeFrom) {
        for (const r of this.st.ofMessage!.all({ thread: ref.threadId, message: ref.messageId, key: userKey }) as Row[]) {
          if (!purged.some((p) => p.rowid === r.rowid)) purgeRow(r);
        }
      }
      // 1. messages that carry the forgotten text (the remember call, results that echoed it)
      const first = round(forgetNeedles(texts));
      // 2. the user turn that led to a remember call: what the memory was made from; in a child
      // thread with none of its own, the parent's last one before the child was spawned
      for (const r of first.filter((x) => x.role === "tool_call")) {
        let prev = this.st.previousUser!.get(r.source_id, r.thread_id, r.ord) as Row | undefined;
        let thread = r.thread_id;
        for (let depth = 0; !prev && depth < MAX_PARENT_HOPS; depth++) {
          const up = this.st.parentOf!.get(r.source_id, thread) as { parent_thread_id: string | null; spawn_order: number | null } | undefined;
          if (!up?.parent_thread_id || up.spawn_order === null) break;
          thread = up.parent_thread_id;
          prev = this.st.previousUser!.get(r.source_id, thread, up.spawn_order) as Row | undefined;
        }
        if (prev && !purged.some((p) => p.rowid === prev.rowid)) purgeRow(prev);
      }
      // 3. messages that quote a purged message (e.g. an earlier session_search result)
      round(purged.map((r) => norm(r.text).slice(0, QUOTE_CHARS)).filter((t) => t.length >= MIN_QUOTE_CHARS));
      // The deletes left tombstones: the rows' postings stay in their segments until merged.
      if (purged.length > 0) ftsPurge(this.db).mark("session_fts");
    }).immediate();
    // merged away in the background (fts-purge.ts); closing the store finishes it
    if (purged.length > 0) void ftsPurge(this.db).run();
    return purged.length;
  }

  async forgottenMessages(threadId: string): Promise<Set<string>> {
    return new Set(this.st.forgotten!.pluck().all(threadId) as string[]);
  }

  async counts(): Promise<{ threads: number; messages: number }> {
    return this.st.counts!.get() as { threads: number; messages: number };
  }
}

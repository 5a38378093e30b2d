// SQLite store of trace events (table trace_events). Ingestion is idempotent: a second event with
// the same dedup key (a retried or replayed model call) is dropped by the UNIQUE constraint.
import type Database from "better-sqlite3";
import type { StoredTraceEvent, TraceEvent, TraceSource, TraceStore } from "../traits.js";
import type { Db } from "./database.js";

interface Row {
  id: number;
  source: TraceSource;
  dedup_key: string;
  thread_id: string | null;
  root_thread_id: string | null;
  kind: string;
  body: string;
  at: number;
}

const DEFAULT_LIST_LIMIT = 100;
/** events per page of a forget's scan (~5 ms of reading) */
const SCAN_PAGE = 2000;

export class SqliteTraceStore implements TraceStore {
  private readonly insert: Database.Statement;
  private readonly byThread: Database.Statement;
  private readonly pageEnd: Database.Statement;
  private readonly mentioning: Database.Statement;
  private readonly remove: Database.Statement;
  private readonly forgetTx: Database.Transaction<(ids: number[]) => void>;

  constructor(db: Db) {
    this.insert = db.prepare(
      `INSERT INTO trace_events (source, dedup_key, thread_id, root_thread_id, kind, body, at)
       VALUES (@source, @dedupKey, @threadId, @rootThreadId, @kind, @body, @at)
       ON CONFLICT (dedup_key) DO NOTHING`,
    );
    this.byThread = db.prepare(
      `SELECT * FROM trace_events WHERE thread_id = ? AND id > ? ORDER BY id LIMIT ?`,
    );
    // a forget's scan, a page at a time; LIKE ignores ASCII case, and a probe is ASCII letters
    // and digits: nothing to escape
    this.pageEnd = db.prepare(`SELECT max(id) FROM (SELECT id FROM trace_events WHERE id > ? ORDER BY id LIMIT ?)`).pluck();
    this.mentioning = db.prepare(
      `SELECT id, thread_id, root_thread_id, body FROM trace_events WHERE id > @after AND id <= @upto
         AND EXISTS (SELECT 1 FROM json_each(@likes) WHERE body LIKE value)`,
    );
    this.remove = db.prepare(`DELETE FROM trace_events WHERE id = ?`);
    this.forgetTx = db.transaction((ids: number[]) => {
      for (const id of ids) this.remove.run(id);
    });
  }

  async record(e: TraceEvent): Promise<boolean> {
    const info = this.insert.run({
      source: e.source,
      dedupKey: e.dedupKey,
      threadId: e.threadId,
      rootThreadId: e.rootThreadId,
      kind: e.kind,
      body: JSON.stringify(e.body),
      at: e.at,
    });
    return info.changes === 1;
  }

  async eventsMentioning(probes: string[]) {
    const likes = JSON.stringify(probes.map((p) => `%${p}%`));
    const found: { id: number; threadId: string | null; rootThreadId: string | null; text: string }[] = [];
    // a page at a time, giving way in between: the scan reads every body recorded
    for (let after = 0; ; ) {
      const upto = this.pageEnd.get(after, SCAN_PAGE) as number | null;
      if (upto === null) break;
      for (const r of this.mentioning.all({ after, upto, likes }) as Pick<Row, "id" | "thread_id" | "root_thread_id" | "body">[]) {
        found.push({ id: r.id, threadId: r.thread_id, rootThreadId: r.root_thread_id, text: r.body });
      }
      after = upto;
      await new Promise<void>((r) => setImmediate(r));
    }
    return found;
  }

  async forgetEvents(ids: number[]): Promise<void> {
    this.forgetTx.immediate(ids);
  }

  async listByThread(threadId: string, opts: { afterId?: number; limit?: number } = {}): Promise<StoredTraceEvent[]> {
    const rows = this.byThread.all(threadId, opts.afterId ?? 0, opts.limit ?? DEFAULT_LIST_LIMIT) as Row[];
    return rows.map((r) => ({
      id: r.id,
      source: r.source,
      dedupKey: r.dedup_key,
      threadId: r.thread_id,
      rootThreadId: r.root_thread_id,
      kind: r.kind,
      body: JSON.parse(r.body) as Record<string, unknown>,
      at: r.at,
    }));
  }
}

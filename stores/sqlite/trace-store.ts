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

export class SqliteTraceStore implements TraceStore {
  private readonly insert: Database.Statement;
  private readonly byThread: Database.Statement;

  constructor(db: Db) {
    this.insert = db.prepare(
      `INSERT INTO trace_events (source, dedup_key, thread_id, root_thread_id, kind, body, at)
       VALUES (@source, @dedupKey, @threadId, @rootThreadId, @kind, @body, @at)
       ON CONFLICT (dedup_key) DO NOTHING`,
    );
    this.byThread = db.prepare(
      `SELECT * FROM trace_events WHERE thread_id = ? AND id > ? ORDER BY id LIMIT ?`,
    );
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

// Which threads have new trace events (table trace_events, migration 5), read in id order so the
// learning worker's cursor only moves forward.
import type Database from "better-sqlite3";
import type { TraceFeed, TraceSource } from "../traits.js";
import type { Db } from "./database.js";

export class SqliteTraceFeed implements TraceFeed {
  private readonly after: Database.Statement;

  constructor(db: Db) {
    this.after = db.prepare(
      `SELECT id, source, thread_id, root_thread_id FROM trace_events WHERE id > ? AND thread_id IS NOT NULL ORDER BY id LIMIT ?`,
    );
  }

  async threadsAfter(afterId: number, limit: number) {
    const rows = this.after.all(afterId, limit) as { id: number; source: TraceSource; thread_id: string; root_thread_id: string | null }[];
    const seen = new Map<string, { source: TraceSource; threadId: string; rootThreadId: string | null }>();
    for (const r of rows) seen.set(`${r.source}\0${r.thread_id}`, { source: r.source, threadId: r.thread_id, rootThreadId: r.root_thread_id });
    return { lastId: rows.at(-1)?.id ?? afterId, threads: [...seen.values()] };
  }
}

// Which threads have new trace events, read in id order so the learning worker's cursor only
// moves forward (ids commit in order; see trace-store.ts).
import type { Pool } from "pg";
import type { TraceFeed, TraceSource } from "../traits.js";
import { num } from "./rows.js";

export class PgTraceFeed implements TraceFeed {
  constructor(private readonly pool: Pool) {}

  async threadsAfter(afterId: number, limit: number) {
    const r = await this.pool.query<{ id: string; source: TraceSource; thread_id: string; root_thread_id: string | null }>(
      `SELECT id, source, thread_id, root_thread_id FROM trace_events WHERE id > $1 AND thread_id IS NOT NULL ORDER BY id LIMIT $2`,
      [afterId, limit],
    );
    const seen = new Map<string, { source: TraceSource; threadId: string; rootThreadId: string | null }>();
    for (const x of r.rows) seen.set(`${x.source}\0${x.thread_id}`, { source: x.source, threadId: x.thread_id, rootThreadId: x.root_thread_id });
    const last = r.rows.at(-1);
    return { lastId: last ? num(last.id) : afterId, threads: [...seen.values()] };
  }
}

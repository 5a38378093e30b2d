// PostgreSQL trace events (table trace_events). Ingestion is idempotent through the unique dedup
// key. Inserts take a transaction-scoped advisory lock so ids commit in id order: the learning
// worker's feed reads "ids after my cursor", and with concurrent writers a lower id committing
// after a higher one would otherwise be skipped for good.
import type { Pool } from "pg";
import type { StoredTraceEvent, TraceEvent, TraceSource, TraceStore } from "../traits.js";
import { num, parseJson, POSTGRES_FLAVOR, retryIdClash, type PgFlavor } from "./rows.js";

/** advisory lock key serialising trace_events inserts (arbitrary, fixed) */
export const TRACE_INSERT_LOCK = 7_301_005;

interface Row {
  id: string | number;
  source: TraceSource;
  dedup_key: string;
  thread_id: string | null;
  root_thread_id: string | null;
  kind: string;
  body: string;
  at: string | number;
}

const DEFAULT_LIST_LIMIT = 100;

export class PgTraceStore implements TraceStore {
  constructor(
    private readonly pool: Pool,
    private readonly f: PgFlavor = POSTGRES_FLAVOR,
  ) {}

  async record(e: TraceEvent): Promise<boolean> {
    if (this.f.dsql) {
      // No advisory locks on DSQL: ids are time-ordered per process (RowIds), so a concurrent
      // writer's event can land below a reader's cursor (see stores/postgres/README.md).
      const r = await retryIdClash(() => this.pool.query(
        `INSERT INTO trace_events (id, source, dedup_key, thread_id, root_thread_id, kind, body, at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (dedup_key) DO NOTHING`,
        [this.f.ids.next(), e.source, e.dedupKey, e.threadId, e.rootThreadId, e.kind, JSON.stringify(e.body), e.at],
      ));
      return r.rowCount === 1;
    }
    // One autocommit statement: the CTE takes the lock before the row (and its id) exists, and
    // the lock is held until the statement's transaction commits.
    const r = await this.pool.query(
      `WITH l AS (SELECT pg_advisory_xact_lock(${TRACE_INSERT_LOCK}))
       INSERT INTO trace_events (source, dedup_key, thread_id, root_thread_id, kind, body, at)
       SELECT $1, $2, $3, $4, $5, $6, $7 FROM l
       ON CONFLICT (dedup_key) DO NOTHING`,
      [e.source, e.dedupKey, e.threadId, e.rootThreadId, e.kind, JSON.stringify(e.body), e.at],
    );
    return r.rowCount === 1;
  }

  async eventsMentioning(probes: string[]) {
    const r = await this.pool.query<Pick<Row, "id" | "thread_id" | "root_thread_id" | "body">>(
      `SELECT id, thread_id, root_thread_id, body FROM trace_events
       WHERE EXISTS (SELECT 1 FROM unnest($1::text[]) AS p WHERE strpos(lower(body), p) > 0)`,
      [probes],
    );
    return r.rows.map((x) => ({ id: num(x.id), threadId: x.thread_id, rootThreadId: x.root_thread_id, text: x.body }));
  }

  async forgetEvents(ids: number[]): Promise<void> {
    await this.pool.query(`DELETE FROM trace_events WHERE id = ANY($1::bigint[])`, [ids]);
  }

  async listByThread(threadId: string, opts: { afterId?: number; limit?: number } = {}): Promise<StoredTraceEvent[]> {
    const r = await this.pool.query<Row>(
      `SELECT * FROM trace_events WHERE thread_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
      [threadId, opts.afterId ?? 0, opts.limit ?? DEFAULT_LIST_LIMIT],
    );
    return r.rows.map((x) => ({
      id: num(x.id),
      source: x.source,
      dedupKey: x.dedup_key,
      threadId: x.thread_id,
      rootThreadId: x.root_thread_id,
      kind: x.kind,
      body: parseJson<Record<string, unknown>>(x.body),
      at: num(x.at),
    }));
  }
}

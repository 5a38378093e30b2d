// PostgreSQL invocation journal (table rap_invocations). Every operation is one statement, so a
// result is enqueued and its call closed atomically without an explicit transaction (on DSQL,
// which has no sequences and is not relied on for data-modifying CTEs, a two-statement one).
import type { Pool } from "pg";
import type { RapCallKey, RapInvocationStatus, RapJournalEntry, RapJournalStore, RapOutboxEntry } from "../traits.js";
import { inTx, num, numOrNull, POSTGRES_FLAVOR, type PgFlavor } from "./rows.js";

interface Row {
  toolset: string;
  group_id: string;
  call_id: string;
  body: string | null;
  status: RapInvocationStatus;
  owner: string;
  received_at: string | number;
  finished_at: string | number | null;
}

const KEY = "toolset = $1 AND group_id = $2 AND call_id = $3";

function toEntry(r: Row): RapJournalEntry {
  return {
    toolset: r.toolset,
    groupId: r.group_id,
    callId: r.call_id,
    body: r.body,
    status: r.status,
    owner: r.owner,
    receivedAt: num(r.received_at),
    finishedAt: numOrNull(r.finished_at),
  };
}

const keyArgs = (k: RapCallKey) => [k.toolset, k.groupId, k.callId];

export class PgRapJournal implements RapJournalStore {
  constructor(
    private readonly pool: Pool,
    private readonly f: PgFlavor = POSTGRES_FLAVOR,
  ) {}

  async record(key: RapCallKey, body: string, owner: string, at: number): Promise<boolean> {
    const r = this.f.dsql
      ? await this.pool.query(
          `INSERT INTO rap_invocations (toolset, group_id, call_id, body, status, owner, received_at, seq)
           VALUES ($1, $2, $3, $4, 'received', $5, $6, $7)
           ON CONFLICT (toolset, group_id, call_id) DO NOTHING`,
          [...keyArgs(key), body, owner, at, this.f.ids.next()],
        )
      : await this.pool.query(
          `INSERT INTO rap_invocations (toolset, group_id, call_id, body, status, owner, received_at)
           VALUES ($1, $2, $3, $4, 'received', $5, $6)
           ON CONFLICT (toolset, group_id, call_id) DO NOTHING`,
          [...keyArgs(key), body, owner, at],
        );
    return r.rowCount === 1;
  }

  async get(key: RapCallKey): Promise<RapJournalEntry | null> {
    const r = await this.pool.query<Row>(`SELECT * FROM rap_invocations WHERE ${KEY}`, keyArgs(key));
    return r.rows[0] ? toEntry(r.rows[0]) : null;
  }

  async complete(key: RapCallKey, owner: string, result: RapOutboxEntry, at: number): Promise<boolean> {
    if (this.f.dsql) {
      return inTx(
        this.pool,
        async (c) => {
          const closed = await c.query(
            `UPDATE rap_invocations SET status = 'done', body = NULL, finished_at = $5
             WHERE ${KEY} AND status = 'received' AND owner = $4`,
            [...keyArgs(key), owner, at],
          );
          if (closed.rowCount !== 1) return false;
          await c.query(
            `INSERT INTO rap_outbox (id, toolset, group_id, call_id, callback_url, body, status, next_attempt_at, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $7)`,
            [this.f.ids.next(), result.toolset, result.groupId, result.callId, result.callbackUrl, result.body, at],
          );
          return true;
        },
        { serializable: true },
      );
    }
    // One statement: the outbox row exists exactly when the close matched (still open, same owner).
    const r = await this.pool.query(
      `WITH closed AS (
         UPDATE rap_invocations SET status = 'done', body = NULL, finished_at = $5
         WHERE ${KEY} AND status = 'received' AND owner = $4
         RETURNING 1)
       INSERT INTO rap_outbox (toolset, group_id, call_id, callback_url, body, status, next_attempt_at, created_at)
       SELECT $6, $7, $8, $9, $10, 'pending', $5, $5 FROM closed`,
      [...keyArgs(key), owner, at, result.toolset, result.groupId, result.callId, result.callbackUrl, result.body],
    );
    return r.rowCount === 1;
  }

  async fail(key: RapCallKey, owner: string, at: number): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE rap_invocations SET status = 'failed', body = NULL, finished_at = $5
       WHERE ${KEY} AND status = 'received' AND owner = $4`,
      [...keyArgs(key), owner, at],
    );
    return r.rowCount === 1;
  }

  async cancel(key: RapCallKey, at: number): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE rap_invocations SET status = 'cancelled', body = NULL, finished_at = $4
       WHERE ${KEY} AND status = 'received'`,
      [...keyArgs(key), at],
    );
    return r.rowCount === 1;
  }

  async open(toolset: string): Promise<RapJournalEntry[]> {
    const r = await this.pool.query<Row>(
      `SELECT * FROM rap_invocations WHERE status = 'received' AND toolset = $1 ORDER BY received_at, seq`,
      [toolset],
    );
    return r.rows.map(toEntry);
  }

  async takeOver(key: RapCallKey, from: string, to: string): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE rap_invocations SET owner = $5 WHERE ${KEY} AND status = 'received' AND owner = $4`,
      [...keyArgs(key), from, to],
    );
    return r.rowCount === 1;
  }
}

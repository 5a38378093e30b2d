// PostgreSQL callback outbox (table rap_outbox). A claim leases due rows with FOR UPDATE SKIP
// LOCKED in one statement: two servers claiming at once never get the same row, and a row whose
// lease another server set meanwhile is re-checked against the new lease and skipped.
import type { Pool } from "pg";
import type { PoolClient } from "pg";
import type { RapClaimSpread, RapOutboxEntry, RapOutboxRow, RapOutboxStats, RapOutboxStore } from "../traits.js";
import { inTx, num, numOrNull, POSTGRES_FLAVOR, retryIdClash, type PgFlavor } from "./rows.js";

interface Row {
  id: string | number;
  toolset: string;
  group_id: string;
  call_id: string;
  callback_url: string;
  body: string | null;
  attempts: number;
  created_at: string | number;
  next_attempt_at: string | number;
}

type DueRow = { id: string; callback_url: string; next_attempt_at: string };

export class PgRapOutbox implements RapOutboxStore {
  constructor(
    private readonly pool: Pool,
    private readonly f: PgFlavor = POSTGRES_FLAVOR,
  ) {}

  async enqueue(entry: RapOutboxEntry, at: number): Promise<number> {
    if (this.f.dsql) {
      return retryIdClash(async () => {
        const id = this.f.ids.next();
        await this.pool.query(
          `INSERT INTO rap_outbox (id, toolset, group_id, call_id, callback_url, body, status, next_attempt_at, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $7)`,
          [id, entry.toolset, entry.groupId, entry.callId, entry.callbackUrl, entry.body, at],
        );
        return id;
      });
    }
    const r = await this.pool.query<{ id: string }>(
      `INSERT INTO rap_outbox (toolset, group_id, call_id, callback_url, body, status, next_attempt_at, created_at)
       VALUES ($1, $2, $3, $4, $5, 'pending', $6, $6) RETURNING id`,
      [entry.toolset, entry.groupId, entry.callId, entry.callbackUrl, entry.body, at],
    );
    return num(r.rows[0]!.id);
  }

  async claimDue(now: number, leaseMs: number, limit: number, spread?: RapClaimSpread): Promise<RapOutboxRow[]> {
    // Callbacks of one call go out in order: a row waits while an older row of its call is pending.
    const due = (limit: string, after = "") => `SELECT o.id, o.callback_url, o.next_attempt_at FROM rap_outbox o
         WHERE o.status = 'pending' AND o.next_attempt_at <= $1
           AND (o.lease_until IS NULL OR o.lease_until < $1) ${after}
           AND NOT EXISTS (
             SELECT 1 FROM rap_outbox p
             WHERE p.status = 'pending' AND p.id < o.id
               AND p.toolset = o.toolset AND p.group_id = o.group_id AND p.call_id = o.call_id)
         ORDER BY o.next_attempt_at, o.id
         LIMIT ${limit}`;
    const returning = `RETURNING rap_outbox.id, rap_outbox.toolset, rap_outbox.group_id, rap_outbox.call_id, rap_outbox.callback_url,
      rap_outbox.body, rap_outbox.attempts, rap_outbox.created_at, rap_outbox.next_attempt_at`;
    const lease = async (c: PoolClient | Pool, ids: number[]) =>
      ids.length === 0
        ? []
        : (
            await c.query<Row>(
              `UPDATE rap_outbox SET lease_until = $2 WHERE id = ANY($3::bigint[]) AND status = 'pending'
                 AND (lease_until IS NULL OR lease_until < $1) ${returning}`,
              [now, now + leaseMs, ids],
            )
          ).rows;
    // With a spread, due rows are read a page at a time (in claim order) and those whose receiver
    // has no room left are passed over, so the claim reaches the rows behind a hung receiver's.
    const spreadIds = async (c: PoolClient, lock: string) => {
      const picked: number[] = [];
      const taken = new Map<string, number>();
      const page = Math.max(500, limit * 4);
      for (let last: [number, number] | null = null; picked.length < limit; ) {
        const after: string = last ? "AND (o.next_attempt_at, o.id) > ($3, $4)" : "";
        const r: { rows: DueRow[] } = await c.query<DueRow>(
          `${due("$2", after)} ${lock}`,
          last ? [now, page, ...last] : [now, page],
        );
        for (const x of r.rows) {
          const key = spread!.key(x.callback_url);
          const n = taken.get(key) ?? 0;
          if (n >= spread!.room(key)) continue;
          taken.set(key, n + 1);
          picked.push(num(x.id));
          if (picked.length >= limit) break;
        }
        if (r.rows.length < page) break;
        const end: DueRow = r.rows[r.rows.length - 1]!;
        last = [num(end.next_attempt_at), num(end.id)];
      }
      return picked;
    };
    const rows = this.f.dsql
      ? // DSQL has no SKIP LOCKED: two servers claiming the same row conflict at commit and the
        // loser retries from a fresh snapshot, where the lease excludes the row.
        await inTx(
          this.pool,
          async (c) =>
            lease(c, spread ? await spreadIds(c, "") : (await c.query<{ id: string }>(due("$2"), [now, limit])).rows.map((x) => num(x.id))),
          { serializable: true },
        )
      : spread
        ? // the rows read are locked until the lease is written; another server skips them
          await inTx(this.pool, async (c) => lease(c, await spreadIds(c, "FOR UPDATE OF o SKIP LOCKED")))
        : (
            await this.pool.query<Row>(
              `WITH due AS (${due("$3")} FOR UPDATE SKIP LOCKED)
               UPDATE rap_outbox SET lease_until = $2 FROM due
               WHERE rap_outbox.id = due.id AND rap_outbox.status = 'pending'
               ${returning}`,
              [now, now + leaseMs, limit],
            )
          ).rows;
    return rows
      .filter((x) => x.body !== null)
      .sort((a, b) => num(a.next_attempt_at) - num(b.next_attempt_at) || num(a.id) - num(b.id))
      .map((x) => ({
        id: num(x.id),
        toolset: x.toolset,
        groupId: x.group_id,
        callId: x.call_id,
        callbackUrl: x.callback_url,
        body: x.body!,
        attempts: x.attempts,
        createdAt: num(x.created_at),
      }));
  }

  async markDelivered(id: number, at: number): Promise<void> {
    await this.pool.query(
      `UPDATE rap_outbox SET status = 'delivered', body = NULL, attempts = attempts + 1,
         lease_until = NULL, last_error = NULL, finished_at = $2
       WHERE id = $1 AND status = 'pending'`,
      [id, at],
    );
  }

  async markRejected(id: number, at: number, error: string): Promise<void> {
    await this.pool.query(
      `UPDATE rap_outbox SET status = 'rejected', body = NULL, attempts = attempts + 1,
         lease_until = NULL, last_error = $3, finished_at = $2
       WHERE id = $1 AND status = 'pending'`,
      [id, at, error],
    );
  }

  async retryAt(id: number, nextAttemptAt: number, error: string): Promise<void> {
    await this.pool.query(
      `UPDATE rap_outbox SET attempts = attempts + 1, next_attempt_at = $2, lease_until = NULL, last_error = $3
       WHERE id = $1 AND status = 'pending'`,
      [id, nextAttemptAt, error],
    );
  }

  async expire(createdBefore: number, now: number): Promise<number> {
    const r = await this.pool.query(
      `UPDATE rap_outbox SET status = 'dead', body = NULL, lease_until = NULL, finished_at = $2
       WHERE status = 'pending' AND created_at < $1 AND (lease_until IS NULL OR lease_until < $2)`,
      [createdBefore, now],
    );
    return r.rowCount ?? 0;
  }

  async nextDueAt(): Promise<number | null> {
    const r = await this.pool.query<{ due: string | null }>(
      `SELECT min(greatest(next_attempt_at, coalesce(lease_until + 1, 0))) AS due FROM rap_outbox WHERE status = 'pending'`,
    );
    return numOrNull(r.rows[0]!.due);
  }

  async pendingCount(): Promise<number> {
    const r = await this.pool.query<{ n: string }>(`SELECT count(*) AS n FROM rap_outbox WHERE status = 'pending'`);
    return num(r.rows[0]!.n);
  }

  async pendingMentioning(probes: string[]): Promise<{ id: number; body: string }[]> {
    const r = await this.pool.query<{ id: string | number; body: string }>(
      `SELECT id, body FROM rap_outbox WHERE status = 'pending' AND body IS NOT NULL
         AND EXISTS (SELECT 1 FROM unnest($1::text[]) AS p WHERE strpos(lower(body), p) > 0)`,
      [probes],
    );
    return r.rows.map((x) => ({ id: num(x.id), body: x.body }));
  }

  async replacePending(id: number, body: string): Promise<boolean> {
    const r = await this.pool.query(`UPDATE rap_outbox SET body = $2 WHERE id = $1 AND status = 'pending'`, [id, body]);
    return r.rowCount === 1;
  }

  async stats(): Promise<RapOutboxStats> {
    const s: RapOutboxStats = { pending: 0, delivered: 0, rejected: 0, dead: 0, pendingAttempts: 0 };
    const r = await this.pool.query<{ status: keyof RapOutboxStats; n: string; attempts: string }>(
      `SELECT status, count(*) AS n, sum(attempts) AS attempts FROM rap_outbox GROUP BY status`,
    );
    for (const x of r.rows) {
      s[x.status] = num(x.n);
      if (x.status === "pending") s.pendingAttempts = num(x.attempts);
    }
    return s;
  }
}

// SQLite callback outbox (table rap_outbox). Rows are leased before sending so that several
// processes sharing one file never POST the same callback at the same time; a finished row keeps
// its bookkeeping but not its body.
import type Database from "better-sqlite3";
import type { RapClaimSpread, RapOutboxEntry, RapOutboxRow, RapOutboxStats, RapOutboxStore } from "../traits.js";
import type { Db } from "./database.js";

interface Row {
  id: number;
  toolset: string;
  group_id: string;
  call_id: string;
  callback_url: string;
  body: string | null;
  attempts: number;
  created_at: number;
}

export class SqliteRapOutbox implements RapOutboxStore {
  private readonly insert: Database.Statement;
  private readonly due: Database.Statement;
  private readonly pendingAll: Database.Statement;
  private readonly lease: Database.Statement;
  private readonly delivered: Database.Statement;
  private readonly rejected: Database.Statement;
  private readonly retry: Database.Statement;
  private readonly expireOld: Database.Statement;
  private readonly nextDue: Database.Statement;
  private readonly pending: Database.Statement;
  private readonly counts: Database.Statement;
  private readonly mentioning: Database.Statement;
  private readonly replace: Database.Statement;
  private readonly claimTx: Database.Transaction<(now: number, leaseMs: number, limit: number, spread?: RapClaimSpread) => RapOutboxRow[]>;

  constructor(db: Db) {
    this.insert = db.prepare(
      `INSERT INTO rap_outbox (toolset, group_id, call_id, callback_url, body, status, next_attempt_at, created_at)
       VALUES (@toolset, @groupId, @callId, @callbackUrl, @body, 'pending', @at, @at)`,
    );
    // Callbacks of one call go out in order (a subscription's tool_result before its events):
    // a row waits while an older row of the same call is pending. The subquery walks the
    // partial index of pending rows, which stays small, rather than the whole table.
    this.due = db.prepare(
      `SELECT id, callback_url FROM rap_outbox AS o INDEXED BY rap_outbox_due
       WHERE o.status = 'pending' AND o.next_attempt_at <= @now
         AND (o.lease_until IS NULL OR o.lease_until < @now)
         AND NOT EXISTS (
           SELECT 1 FROM rap_outbox AS p INDEXED BY rap_outbox_due
           WHERE p.status = 'pending' AND p.id < o.id
             AND p.call_id = o.call_id AND p.group_id = o.group_id AND p.toolset = o.toolset)
       ORDER BY o.next_attempt_at, o.id
       LIMIT @limit`,
    );
    this.pendingAll = db.prepare(
      `SELECT id, toolset, group_id, call_id, callback_url,
         (next_attempt_at <= @now AND (lease_until IS NULL OR lease_until < @now)) AS due
       FROM rap_outbox INDEXED BY rap_outbox_due WHERE status = 'pending'
       ORDER BY next_attempt_at, id`,
    );
    this.lease = db.prepare(
      `UPDATE rap_outbox SET lease_until = @until
       WHERE id = @id AND status = 'pending' AND (lease_until IS NULL OR lease_until < @now)
       RETURNING id, toolset, group_id, call_id, callback_url, body, attempts, created_at`,
    );
    this.delivered = db.prepare(
      `UPDATE rap_outbox SET status = 'delivered', body = NULL, attempts = attempts + 1,
         lease_until = NULL, last_error = NULL, finished_at = @at
       WHERE id = @id AND status = 'pending'`,
    );
    this.rejected = db.prepare(
      `UPDATE rap_outbox SET status = 'rejected', body = NULL, attempts = attempts + 1,
         lease_until = NULL, last_error = @error, finished_at = @at
       WHERE id = @id AND status = 'pending'`,
    );
    this.retry = db.prepare(
      `UPDATE rap_outbox SET attempts = attempts + 1, next_attempt_at = @next, lease_until = NULL,
         last_error = @error
       WHERE id = @id AND status = 'pending'`,
    );
    this.expireOld = db.prepare(
      `UPDATE rap_outbox SET status = 'dead', body = NULL, lease_until = NULL, finished_at = @now
       WHERE status = 'pending' AND created_at < @before
         AND (lease_until IS NULL OR lease_until < @now)`,
    );
    this.nextDue = db.prepare(
      `SELECT min(max(next_attempt_at, coalesce(lease_until + 1, 0))) AS due
       FROM rap_outbox WHERE status = 'pending'`,
    );
    this.pending = db.prepare(`SELECT count(*) AS n FROM rap_outbox WHERE status = 'pending'`);
    this.counts = db.prepare(
      `SELECT status, count(*) AS n, sum(attempts) AS attempts FROM rap_outbox GROUP BY status`,
    );
    // pending rows are few (a partial index holds them); LIKE ignores ASCII case, and a probe is
    // ASCII letters and digits: nothing to escape
    this.mentioning = db.prepare(
      `SELECT id, body FROM rap_outbox INDEXED BY rap_outbox_due WHERE status = 'pending' AND body IS NOT NULL
         AND EXISTS (SELECT 1 FROM json_each(@likes) WHERE body LIKE value)`,
    );
    this.replace = db.prepare(`UPDATE rap_outbox SET body = @body WHERE id = @id AND status = 'pending'`);
    this.claimTx = db.transaction((now: number, leaseMs: number, limit: number, spread?: RapClaimSpread) => {
      const ids = spread ? this.spreadDue(now, limit, spread) : (this.due.all({ now, limit }) as { id: number }[]);
      const rows: RapOutboxRow[] = [];
      for (const { id } of ids) {
        const r = this.lease.get({ id, now, until: now + leaseMs }) as Row | undefined;
        if (r && r.body !== null) rows.push(toRow(r, r.body));
      }
      return rows;
    });
  }

  async enqueue(entry: RapOutboxEntry, at: number): Promise<number> {
    const { toolset, groupId, callId, callbackUrl, body } = entry;
    return Number(this.insert.run({ toolset, groupId, callId, callbackUrl, body, at }).lastInsertRowid);
  }

  async claimDue(now: number, leaseMs: number, limit: number, spread?: RapClaimSpread): Promise<RapOutboxRow[]> {
    // IMMEDIATE: take the write lock before reading, so two processes never lease the same row.
    return this.claimTx.immediate(now, leaseMs, limit, spread);
  }

  /**
   * Due rows in claim order, passing over those whose receiver has no room left. One walk of the
   * pending rows, the call order checked here: the per-row subquery of `due`, run for each of
   * thousands of rows waiting on a hung receiver, took seconds under the write lock.
   */
  private spreadDue(now: number, limit: number, spread: RapClaimSpread): { id: number }[] {
    // the usual case: the oldest due rows fit their receivers' room as they are
    const oldest = this.due.all({ now, limit }) as { id: number; callback_url: string }[];
    const count = new Map<string, number>();
    for (const r of oldest) count.set(spread.key(r.callback_url), (count.get(spread.key(r.callback_url)) ?? 0) + 1);
    if ([...count].every(([key, n]) => n <= spread.room(key))) return oldest;
    const rows = this.pendingAll.all({ now }) as { id: number; toolset: string; group_id: string; call_id: string; callback_url: string; due: number }[];
    // ids never hold a NUL (the server refuses such an invocation), so it can join them
    const calls = rows.map((r) => `${r.toolset}\u0000${r.group_id}\u0000${r.call_id}`);
    const first = new Map<string, number>();
    rows.forEach((r, i) => {
      if (r.id < (first.get(calls[i]!) ?? Infinity)) first.set(calls[i]!, r.id);
    });
    const picked: { id: number }[] = [];
    const taken = new Map<string, number>();
    for (const [i, r] of rows.entries()) {
      if (!r.due || first.get(calls[i]!) !== r.id) continue;
      const key = spread.key(r.callback_url);
      const n = taken.get(key) ?? 0;
      if (n >= spread.room(key)) continue;
      taken.set(key, n + 1);
      picked.push({ id: r.id });
      if (picked.length >= limit) break;
    }
    return picked;
  }

  async markDelivered(id: number, at: number): Promise<void> {
    this.delivered.run({ id, at });
  }

  async markRejected(id: number, at: number, error: string): Promise<void> {
    this.rejected.run({ id, at, error });
  }

  async retryAt(id: number, nextAttemptAt: number, error: string): Promise<void> {
    this.retry.run({ id, next: nextAttemptAt, error });
  }

  async expire(createdBefore: number, now: number): Promise<number> {
    return this.expireOld.run({ before: createdBefore, now }).changes;
  }

  async nextDueAt(): Promise<number | null> {
    return (this.nextDue.get() as { due: number | null }).due;
  }

  async pendingCount(): Promise<number> {
    return (this.pending.get() as { n: number }).n;
  }

  async pendingMentioning(probes: string[]): Promise<{ id: number; body: string }[]> {
    return this.mentioning.all({ likes: JSON.stringify(probes.map((p) => `%${p}%`)) }) as { id: number; body: string }[];
  }

  async replacePending(id: number, body: string): Promise<boolean> {
    return this.replace.run({ id, body }).changes === 1;
  }

  async stats(): Promise<RapOutboxStats> {
    const s: RapOutboxStats = { pending: 0, delivered: 0, rejected: 0, dead: 0, pendingAttempts: 0 };
    for (const r of this.counts.all() as { status: keyof RapOutboxStats; n: number; attempts: number }[]) {
      s[r.status] = r.n;
      if (r.status === "pending") s.pendingAttempts = r.attempts;
    }
    return s;
  }
}

function toRow(r: Row, body: string): RapOutboxRow {
  return {
    id: r.id,
    toolset: r.toolset,
    groupId: r.group_id,
    callId: r.call_id,
    callbackUrl: r.callback_url,
    body,
    attempts: r.attempts,
    createdAt: r.created_at,
  };
}

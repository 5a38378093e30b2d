// SQLite invocation journal (table rap_invocations). An acknowledged invocation is written here
// before the ack, so a crash between ack and result leaves it open for the next process to re-run.
import type Database from "better-sqlite3";
import type {
  RapCallKey,
  RapInvocationStatus,
  RapJournalEntry,
  RapJournalStore,
  RapOutboxEntry,
} from "../traits.js";
import type { Db } from "./database.js";

interface Row {
  toolset: string;
  group_id: string;
  call_id: string;
  body: string | null;
  status: RapInvocationStatus;
  owner: string;
  received_at: number;
  finished_at: number | null;
}

const KEY = "toolset = @toolset AND group_id = @groupId AND call_id = @callId";

function toEntry(r: Row): RapJournalEntry {
  return {
    toolset: r.toolset,
    groupId: r.group_id,
    callId: r.call_id,
    body: r.body,
    status: r.status,
    owner: r.owner,
    receivedAt: r.received_at,
    finishedAt: r.finished_at,
  };
}

function keyParams(k: RapCallKey) {
  return { toolset: k.toolset, groupId: k.groupId, callId: k.callId };
}

export class SqliteRapJournal implements RapJournalStore {
  private readonly insert: Database.Statement;
  private readonly select: Database.Statement;
  private readonly close: Database.Statement;
  private readonly cancelOpen: Database.Statement;
  private readonly selectOpen: Database.Statement;
  private readonly reassign: Database.Statement;
  private readonly enqueue: Database.Statement;
  private readonly completeTx: Database.Transaction<
    (key: RapCallKey, owner: string, result: RapOutboxEntry, at: number) => boolean
  >;

  private readonly insertMany: Database.Transaction<(rows: Record<string, unknown>[]) => boolean[]>;
  private pending: { params: Record<string, unknown>; resolve(fresh: boolean): void; reject(e: unknown): void }[] = [];

  constructor(db: Db) {
    this.insert = db.prepare(
      `INSERT INTO rap_invocations (toolset, group_id, call_id, body, status, owner, received_at)
       VALUES (@toolset, @groupId, @callId, @body, 'received', @owner, @at)
       ON CONFLICT (toolset, group_id, call_id) DO NOTHING`,
    );
    this.select = db.prepare(`SELECT * FROM rap_invocations WHERE ${KEY}`);
    this.close = db.prepare(
      `UPDATE rap_invocations SET status = @status, body = NULL, finished_at = @at
       WHERE ${KEY} AND status = 'received' AND owner = @owner`,
    );
    this.cancelOpen = db.prepare(
      `UPDATE rap_invocations SET status = 'cancelled', body = NULL, finished_at = @at
       WHERE ${KEY} AND status = 'received'`,
    );
    this.selectOpen = db.prepare(
      `SELECT * FROM rap_invocations WHERE status = 'received' AND toolset = ? ORDER BY received_at, rowid`,
    );
    this.reassign = db.prepare(
      `UPDATE rap_invocations SET owner = @to WHERE ${KEY} AND status = 'received' AND owner = @from`,
    );
    this.enqueue = db.prepare(
      `INSERT INTO rap_outbox (toolset, group_id, call_id, callback_url, body, status, next_attempt_at, created_at)
       VALUES (@toolset, @groupId, @callId, @callbackUrl, @body, 'pending', @at, @at)`,
    );
    this.insertMany = db.transaction((rows: Record<string, unknown>[]) => rows.map((r) => this.insert.run(r).changes === 1));
    // One transaction, so a result is either enqueued and the call closed, or neither.
    this.completeTx = db.transaction((key: RapCallKey, owner: string, result: RapOutboxEntry, at: number) => {
      const closed = this.close.run({ ...keyParams(key), owner, at, status: "done" }).changes === 1;
      const { toolset, groupId, callId, callbackUrl, body } = result;
      if (closed) this.enqueue.run({ toolset, groupId, callId, callbackUrl, body, at });
      return closed;
    });
  }

  /**
   * Group commit: invocations that arrive in the same event-loop turn are journaled in one
   * transaction, so a burst costs one commit instead of one per call. Each caller still gets its
   * own answer only after the commit.
   */
  record(key: RapCallKey, body: string, owner: string, at: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ params: { ...keyParams(key), body, owner, at }, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const batch = this.pending.splice(0);
    let fresh: boolean[];
    try {
      fresh = this.insertMany(batch.map((p) => p.params));
    } catch (e) {
      for (const p of batch) p.reject(e);
      return;
    }
    batch.forEach((p, i) => p.resolve(fresh[i]!));
  }

  async get(key: RapCallKey): Promise<RapJournalEntry | null> {
    const row = this.select.get(keyParams(key)) as Row | undefined;
    return row ? toEntry(row) : null;
  }

  async complete(key: RapCallKey, owner: string, result: RapOutboxEntry, at: number): Promise<boolean> {
    return this.completeTx.immediate(key, owner, result, at);
  }

  async fail(key: RapCallKey, owner: string, at: number): Promise<boolean> {
    return this.close.run({ ...keyParams(key), owner, at, status: "failed" }).changes === 1;
  }

  async cancel(key: RapCallKey, at: number): Promise<boolean> {
    return this.cancelOpen.run({ ...keyParams(key), at }).changes === 1;
  }

  async open(toolset: string): Promise<RapJournalEntry[]> {
    return (this.selectOpen.all(toolset) as Row[]).map(toEntry);
  }

  async takeOver(key: RapCallKey, from: string, to: string): Promise<boolean> {
    return this.reassign.run({ ...keyParams(key), from, to }).changes === 1;
  }
}

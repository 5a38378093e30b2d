// PostgreSQL ConversationStore + StateStore (tables conv_* and state_*), with the reference
// semantics of the SQLite twins (stores/sqlite/conversation-store.ts, state-store.ts). Message
// bodies are the daemon's JSON as text, so a thread compares byte for byte with the daemon's files.
import type pg from "pg";
import { historySlice, loadHistoryWithAncestors } from "../infinity/history.js";
import { uuidThreadIds, type ThreadIdSource } from "../infinity/ids.js";
import type { InfinityMessage, ThreadInfo, UserChoice } from "../infinity/messages.js";
import {
  InfinityStoreError,
  type AncestorLink,
  type ConversationReader,
  type ConversationStore,
  type HistoryWithAncestors,
  type Json,
  type StateStore,
} from "../infinity/traits.js";
import { checkMessages, checkOptionalOrder, checkOrder, checkUserChoice, jsonValue } from "../infinity/validate.js";
import type { PgDb, Q } from "./pool.js";

interface ThreadRow {
  thread_id: string;
  parent_thread_id: string | null;
  root_thread_id: string;
  spawn_message_order: number | null;
  spawn_tool_call_id: string | null;
  closed: number;
  is_subscription_event: number;
  is_compaction: number;
}

/** Database failures as the Infinity stores' error class (validation errors pass through). */
async function io<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof InfinityStoreError) throw e;
    throw new InfinityStoreError("io", (e as Error).message);
  }
}

export interface PgConversationStoreOptions {
  newThreadId?: ThreadIdSource;
}

export class PgConversationStore implements ConversationStore, ConversationReader {
  private readonly newThreadId: ThreadIdSource;

  constructor(
    private readonly db: PgDb,
    opts: PgConversationStoreOptions = {},
  ) {
    this.newThreadId = opts.newThreadId ?? uuidThreadIds;
  }

  private async thread(threadId: string, c?: Q): Promise<ThreadRow | undefined> {
    const sql = `SELECT * FROM conv_threads WHERE thread_id = $1`;
    return c ? (await c.query<ThreadRow>(sql, [threadId])).rows[0] : (await this.db.query<ThreadRow>(sql, [threadId]))[0];
  }

  private async count(c: Q, threadId: string): Promise<number> {
    // ords are dense from 0, so max+1 is the count, read from the primary key
    return (await c.query<{ n: number }>(`SELECT COALESCE(MAX(ord) + 1, 0)::int AS n FROM conv_messages WHERE thread_id = $1`, [threadId])).rows[0]!.n;
  }

  /** Serialises writers of one thread's history (the next ord is read, then written). */
  private async lockThread(c: pg.PoolClient, threadId: string): Promise<void> {
    // DSQL has no advisory locks; there a concurrent append conflicts at commit and is retried.
    if (this.db.profile === "postgres") await c.query(`SELECT pg_advisory_xact_lock(hashtext('conv:' || $1))`, [threadId]);
  }

  async ensureRootThread(threadId: string): Promise<void> {
    await io(() =>
      this.db.query(
        `INSERT INTO conv_threads (thread_id, parent_thread_id, root_thread_id, spawn_message_order, spawn_tool_call_id,
           closed, is_subscription_event, is_compaction) VALUES ($1, NULL, $1, NULL, NULL, 0, 0, 0)
         ON CONFLICT (thread_id) DO NOTHING`,
        [threadId],
      ),
    );
  }

  async threadExists(threadId: string): Promise<boolean> {
    return io(async () => (await this.thread(threadId)) !== undefined);
  }

  async loadHistoryUpTo(threadId: string, startFrom?: number | null, upTo?: number | null): Promise<InfinityMessage[]> {
    return (await this.loadMessagesWithIds(threadId, startFrom, upTo)).map(([m]) => m);
  }

  async loadHistoryWithAncestors(threadId: string): Promise<HistoryWithAncestors> {
    return loadHistoryWithAncestors(this, threadId);
  }

  async appendMessages(threadId: string, messages: ReadonlyArray<readonly [InfinityMessage, string]>): Promise<void> {
    const rows = checkMessages(threadId, messages);
    if (rows.length === 0) return;
    await io(() =>
      this.db.tx(async (c) => {
        await this.lockThread(c, threadId);
        const start = await this.count(c, threadId);
        await c.query(
          `INSERT INTO conv_messages (thread_id, ord, message_id, kind, body)
           SELECT $1, $2 + o - 1, id, kind, body FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(id, kind, body, o)`,
          [threadId, start, rows.map(([, id]) => id), rows.map(([m]) => m.kind), rows.map(([m]) => JSON.stringify(m))],
        );
      }),
    );
  }

  async spawnThread(parentThreadId: string, spawnToolCallId: string, isForSubscriptionEvent: boolean, spawnOrderOverride?: number | null): Promise<string> {
    const override = checkOptionalOrder("spawnOrderOverride", spawnOrderOverride);
    const id = this.newThreadId();
    await io(() =>
      this.db.tx(async (c) => {
        // the parent's count and the child's insert see the same history
        await this.lockThread(c, parentThreadId);
        const parent = await this.thread(parentThreadId, c);
        const order = override ?? (await this.count(c, parentThreadId));
        await c.query(
          `INSERT INTO conv_threads (thread_id, parent_thread_id, root_thread_id, spawn_message_order, spawn_tool_call_id,
             closed, is_subscription_event, is_compaction) VALUES ($1, $2, $3, $4, $5, 0, $6, 0)
           ON CONFLICT (thread_id) DO NOTHING`,
          [id, parentThreadId, parent?.root_thread_id ?? parentThreadId, order, spawnToolCallId, isForSubscriptionEvent ? 1 : 0],
        );
      }),
    );
    return id;
  }

  async isThreadClosed(threadId: string): Promise<boolean> {
    return io(async () => (await this.thread(threadId))?.closed === 1);
  }

  async closeThread(threadId: string): Promise<void> {
    await io(() => this.db.query(`UPDATE conv_threads SET closed = 1 WHERE thread_id = $1`, [threadId]));
  }

  async isSubscriptionEventThread(threadId: string): Promise<boolean> {
    return io(async () => (await this.thread(threadId))?.is_subscription_event === 1);
  }

  async getThreadParentInfo(threadId: string): Promise<[string, string] | null> {
    const t = await io(() => this.thread(threadId));
    if (!t || t.parent_thread_id === null || t.spawn_tool_call_id === null) return null;
    return [t.parent_thread_id, t.spawn_tool_call_id];
  }

  async getAncestorChain(threadId: string): Promise<AncestorLink[]> {
    return io(async () => {
      const chain: AncestorLink[] = [];
      const seen = new Set([threadId]);
      for (let t = await this.thread(threadId); t?.parent_thread_id != null; ) {
        const parent: string = t.parent_thread_id;
        if (seen.has(parent)) break; // only corrupt data can loop; stop instead of spinning
        seen.add(parent);
        chain.push([parent, t.spawn_message_order ?? 0]);
        t = await this.thread(parent);
      }
      return chain.reverse();
    });
  }

  async markThreadAsCompaction(threadId: string): Promise<void> {
    await io(() => this.db.query(`UPDATE conv_threads SET is_compaction = 1 WHERE thread_id = $1`, [threadId]));
  }

  async isCompactionThread(threadId: string): Promise<boolean> {
    return io(async () => (await this.thread(threadId))?.is_compaction === 1);
  }

  async getThreadSpawnOrder(threadId: string): Promise<number | null> {
    return io(async () => (await this.thread(threadId))?.spawn_message_order ?? null);
  }

  async saveCompactionSummary(threadId: string, summary: string, upToOrder: number): Promise<void> {
    const upTo = checkOrder("upToOrder", upToOrder);
    await io(() =>
      this.db.tx(async (c) => {
        await this.lockThread(c, `compaction:${threadId}`);
        await c.query(
          `INSERT INTO conv_compactions (thread_id, seq, summary, up_to_order)
           VALUES ($1, (SELECT COALESCE(MAX(seq) + 1, 0) FROM conv_compactions WHERE thread_id = $1), $2, $3)`,
          [threadId, summary, upTo],
        );
      }),
    );
  }

  async loadLatestCompactionSummaryUpTo(threadId: string, upToOrder?: number | null): Promise<[string, number] | null> {
    const row = (
      await io(() =>
        this.db.query<{ summary: string; up_to_order: number }>(
          `SELECT summary, up_to_order FROM conv_compactions
           WHERE thread_id = $1 AND ($2::bigint IS NULL OR up_to_order <= $2::bigint) ORDER BY seq DESC LIMIT 1`,
          [threadId, upToOrder ?? null],
        ),
      )
    )[0];
    return row ? [row.summary, row.up_to_order] : null;
  }

  // ---- ConversationReader ----

  async listThreads(): Promise<string[]> {
    return (
      await io(() =>
        this.db.query<{ thread_id: string }>(
          `SELECT thread_id FROM (SELECT thread_id FROM conv_threads UNION SELECT thread_id FROM conv_messages) t ORDER BY thread_id COLLATE "C"`,
        ),
      )
    ).map((r) => r.thread_id);
  }

  async getRootThreadId(threadId: string): Promise<string> {
    return (await io(() => this.thread(threadId)))?.root_thread_id ?? threadId;
  }

  async loadMessagesWithIds(threadId: string, startFrom?: number | null, upTo?: number | null): Promise<[InfinityMessage, string][]> {
    // the ord range clamps to the stored length by itself, so no count query is needed
    const [start, end] = historySlice(Number.MAX_SAFE_INTEGER, startFrom, upTo);
    if (start >= end) return [];
    const rows = await io(() =>
      this.db.query<{ message_id: string; body: string }>(
        // bigint: a bound is a Rust usize, and one past the integer column's range is no error
        `SELECT message_id, body FROM conv_messages WHERE thread_id = $1 AND ord >= $2::bigint AND ord < $3::bigint ORDER BY ord`,
        [threadId, start, end],
      ),
    );
    return rows.map((r) => [JSON.parse(r.body) as InfinityMessage, r.message_id]);
  }

  async threadInfo(threadId: string): Promise<ThreadInfo | null> {
    const t = await io(() => this.thread(threadId));
    if (!t) return null;
    return {
      parent_thread_id: t.parent_thread_id,
      root_thread_id: t.root_thread_id,
      spawn_message_order: t.spawn_message_order,
      spawn_tool_call_id: t.spawn_tool_call_id,
      closed: t.closed === 1,
      is_subscription_event: t.is_subscription_event === 1,
      is_compaction: t.is_compaction === 1,
    };
  }

  async messageCount(threadId: string): Promise<number> {
    return io(() => this.db.tx((c) => this.count(c, threadId)));
  }
}

type IdKind = "message" | "tool_call";

export class PgStateStore implements StateStore {
  constructor(private readonly db: PgDb) {}

  async getProcessedIds(threadId: string): Promise<[Set<string>, Set<string>]> {
    const messages = new Set<string>();
    const toolCalls = new Set<string>();
    const rows = await io(() => this.db.query<{ kind: IdKind; id: string }>(`SELECT kind, id FROM state_processed_ids WHERE thread_id = $1`, [threadId]));
    for (const r of rows) (r.kind === "message" ? messages : toolCalls).add(r.id);
    return [messages, toolCalls];
  }

  private async addIds(threadId: string, kind: IdKind, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await io(() =>
      this.db.query(
        `INSERT INTO state_processed_ids (thread_id, kind, id) SELECT $1, $2, x FROM unnest($3::text[]) x ON CONFLICT DO NOTHING`,
        [threadId, kind, [...ids]],
      ),
    );
  }

  async addProcessedMessageIds(threadId: string, ids: readonly string[]): Promise<void> {
    await this.addIds(threadId, "message", ids);
  }

  async addProcessedToolCalls(threadId: string, ids: readonly string[]): Promise<void> {
    await this.addIds(threadId, "tool_call", ids);
  }

  async getMetadata(rootThreadId: string): Promise<Json | null> {
    const r = (await io(() => this.db.query<{ value: string }>(`SELECT value FROM state_metadata WHERE root_thread_id = $1`, [rootThreadId])))[0];
    return r === undefined ? null : (JSON.parse(r.value) as Json);
  }

  async setMetadata(rootThreadId: string, metadata: Json): Promise<void> {
    const value = jsonValue(metadata);
    await io(() =>
      this.db.query(
        `INSERT INTO state_metadata (root_thread_id, value) VALUES ($1, $2) ON CONFLICT (root_thread_id) DO UPDATE SET value = excluded.value`,
        [rootThreadId, value],
      ),
    );
  }

  async getActiveSubscriptions(threadId: string): Promise<string[]> {
    return (
      await io(() => this.db.query<{ tool_call_id: string }>(`SELECT tool_call_id FROM state_subscriptions WHERE thread_id = $1 ORDER BY seq`, [threadId]))
    ).map((r) => r.tool_call_id);
  }

  async addActiveSubscription(threadId: string, toolCallId: string): Promise<void> {
    // a repeated subscription keeps its first position, like inserting into an ordered set
    await io(() =>
      this.db.tx(async (c) => {
        if (this.db.profile === "postgres") await c.query(`SELECT pg_advisory_xact_lock(hashtext('subs:' || $1))`, [threadId]);
        await c.query(
          `INSERT INTO state_subscriptions (thread_id, tool_call_id, seq)
           VALUES ($1, $2, (SELECT COALESCE(MAX(seq) + 1, 0) FROM state_subscriptions WHERE thread_id = $1)) ON CONFLICT DO NOTHING`,
          [threadId, toolCallId],
        );
      }),
    );
  }

  async removeActiveSubscription(threadId: string, toolCallId: string): Promise<void> {
    await io(() => this.db.query(`DELETE FROM state_subscriptions WHERE thread_id = $1 AND tool_call_id = $2`, [threadId, toolCallId]));
  }

  async addPendingUserChoice(threadId: string, choice: UserChoice): Promise<void> {
    const c = checkUserChoice(threadId, choice);
    await io(() =>
      this.db.tx(async (q) => {
        if (this.db.profile === "postgres") await q.query(`SELECT pg_advisory_xact_lock(hashtext('choices:' || $1))`, [threadId]);
        // an upsert by choice id keeps seq, so a replaced choice keeps its place in the list
        await q.query(
          `INSERT INTO state_user_choices (thread_id, choice_id, seq, body)
           VALUES ($1, $2, (SELECT COALESCE(MAX(seq) + 1, 0) FROM state_user_choices WHERE thread_id = $1), $3)
           ON CONFLICT (thread_id, choice_id) DO UPDATE SET body = excluded.body`,
          [threadId, c.id, JSON.stringify(c)],
        );
      }),
    );
  }

  async removePendingUserChoice(threadId: string, choiceId: string): Promise<void> {
    await io(() => this.db.query(`DELETE FROM state_user_choices WHERE thread_id = $1 AND choice_id = $2`, [threadId, choiceId]));
  }

  async getPendingUserChoices(threadId: string): Promise<UserChoice[]> {
    return (await io(() => this.db.query<{ body: string }>(`SELECT body FROM state_user_choices WHERE thread_id = $1 ORDER BY seq`, [threadId]))).map(
      (r) => JSON.parse(r.body) as UserChoice,
    );
  }

  /** no stop policy in this store: the trait's provided default */
  async isThreadStopped(_threadId: string): Promise<boolean> {
    return false;
  }
}

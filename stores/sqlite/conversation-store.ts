// SQLite ConversationStore (tables conv_threads, conv_messages, conv_compactions; migration 3)
// with the reference semantics of `infinity-agent-core/src/stores.rs`. Message bodies are the
// daemon's JSON, so a thread can be exported to or compared with the daemon's files as is.
import type Database from "better-sqlite3";
import { loadHistoryWithAncestors, historySlice } from "../infinity/history.js";
import { uuidThreadIds, type ThreadIdSource } from "../infinity/ids.js";
import type { InfinityMessage, ThreadInfo } from "../infinity/messages.js";
import type {
  AncestorLink,
  ConversationReader,
  ConversationStore,
  HistoryWithAncestors,
} from "../infinity/traits.js";
import { checkMessages, checkOptionalOrder, checkOrder } from "../infinity/validate.js";
import type { Db } from "./database.js";

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

export interface SqliteConversationStoreOptions {
  newThreadId?: ThreadIdSource;
}

export class SqliteConversationStore implements ConversationStore, ConversationReader {
  private readonly newThreadId: ThreadIdSource;
  private readonly insertThread: Database.Statement;
  private readonly selectThread: Database.Statement;
  private readonly nextOrd: Database.Statement;
  private readonly selectSlice: Database.Statement;
  private readonly insertMessage: Database.Statement;
  private readonly setClosed: Database.Statement;
  private readonly setCompaction: Database.Statement;
  private readonly insertSummary: Database.Statement;
  private readonly latestSummary: Database.Statement;
  private readonly allThreads: Database.Statement;
  private readonly appendTx: Database.Transaction<(threadId: string, rows: [InfinityMessage, string][]) => void>;
  private readonly spawnTx: Database.Transaction<(row: ThreadRow, override: number | null) => void>;

  constructor(
    private readonly db: Db,
    opts: SqliteConversationStoreOptions = {},
  ) {
    this.newThreadId = opts.newThreadId ?? uuidThreadIds;
    this.insertThread = db.prepare(
      `INSERT INTO conv_threads (thread_id, parent_thread_id, root_thread_id, spawn_message_order,
         spawn_tool_call_id, closed, is_subscription_event, is_compaction)
       VALUES (@thread_id, @parent_thread_id, @root_thread_id, @spawn_message_order,
         @spawn_tool_call_id, @closed, @is_subscription_event, @is_compaction)
       ON CONFLICT (thread_id) DO NOTHING`,
    );
    this.selectThread = db.prepare(`SELECT * FROM conv_threads WHERE thread_id = ?`);
    // ords are dense from 0, so max+1 is the count, read from the primary key without a scan
    this.nextOrd = db
      .prepare(`SELECT COALESCE(MAX(ord) + 1, 0) FROM conv_messages WHERE thread_id = ?`)
      .pluck();
    this.selectSlice = db.prepare(
      `SELECT message_id, body FROM conv_messages WHERE thread_id = ? AND ord >= ? AND ord < ? ORDER BY ord`,
    );
    this.insertMessage = db.prepare(
      `INSERT INTO conv_messages (thread_id, ord, message_id, kind, body) VALUES (?, ?, ?, ?, ?)`,
    );
    this.setClosed = db.prepare(`UPDATE conv_threads SET closed = 1 WHERE thread_id = ?`);
    this.setCompaction = db.prepare(`UPDATE conv_threads SET is_compaction = 1 WHERE thread_id = ?`);
    this.insertSummary = db.prepare(
      `INSERT INTO conv_compactions (thread_id, seq, summary, up_to_order)
       VALUES (@threadId, (SELECT COALESCE(MAX(seq) + 1, 0) FROM conv_compactions WHERE thread_id = @threadId),
         @summary, @upTo)`,
    );
    this.latestSummary = db.prepare(
      `SELECT summary, up_to_order FROM conv_compactions
       WHERE thread_id = @threadId AND (@upTo IS NULL OR up_to_order <= @upTo)
       ORDER BY seq DESC LIMIT 1`,
    );
    this.allThreads = db
      .prepare(`SELECT thread_id FROM conv_threads UNION SELECT thread_id FROM conv_messages ORDER BY 1`)
      .pluck();

    this.appendTx = db.transaction((threadId: string, rows: [InfinityMessage, string][]) => {
      let ord = this.nextOrd.get(threadId) as number;
      for (const [m, id] of rows) this.insertMessage.run(threadId, ord++, id, m.kind, JSON.stringify(m));
    });
    // the parent's count and the child's insert must see the same history
    this.spawnTx = db.transaction((row: ThreadRow, override: number | null) => {
      const parent = this.thread(row.parent_thread_id!);
      row.root_thread_id = parent?.root_thread_id ?? row.parent_thread_id!;
      row.spawn_message_order = override ?? (this.nextOrd.get(row.parent_thread_id) as number);
      this.insertThread.run(row);
    });
  }

  async ensureRootThread(threadId: string): Promise<void> {
    this.insertThread.run({
      thread_id: threadId,
      parent_thread_id: null,
      root_thread_id: threadId,
      spawn_message_order: null,
      spawn_tool_call_id: null,
      closed: 0,
      is_subscription_event: 0,
      is_compaction: 0,
    });
  }

  async threadExists(threadId: string): Promise<boolean> {
    return this.thread(threadId) !== undefined;
  }

  async loadHistoryUpTo(threadId: string, startFrom?: number | null, upTo?: number | null): Promise<InfinityMessage[]> {
    return (await this.loadMessagesWithIds(threadId, startFrom, upTo)).map(([m]) => m);
  }

  async loadHistoryWithAncestors(threadId: string): Promise<HistoryWithAncestors> {
    return loadHistoryWithAncestors(this, threadId);
  }

  async appendMessages(threadId: string, messages: ReadonlyArray<readonly [InfinityMessage, string]>): Promise<void> {
    const rows = checkMessages(threadId, messages);
    if (rows.length > 0) this.appendTx.immediate(threadId, rows);
  }

  async spawnThread(
    parentThreadId: string,
    spawnToolCallId: string,
    isForSubscriptionEvent: boolean,
    spawnOrderOverride?: number | null,
  ): Promise<string> {
    const override = checkOptionalOrder("spawnOrderOverride", spawnOrderOverride);
    const id = this.newThreadId();
    this.spawnTx.immediate(
      {
        thread_id: id,
        parent_thread_id: parentThreadId,
        root_thread_id: parentThreadId,
        spawn_message_order: null,
        spawn_tool_call_id: spawnToolCallId,
        closed: 0,
        is_subscription_event: isForSubscriptionEvent ? 1 : 0,
        is_compaction: 0,
      },
      override,
    );
    return id;
  }

  async isThreadClosed(threadId: string): Promise<boolean> {
    return this.thread(threadId)?.closed === 1;
  }

  async closeThread(threadId: string): Promise<void> {
    this.setClosed.run(threadId);
  }

  async isSubscriptionEventThread(threadId: string): Promise<boolean> {
    return this.thread(threadId)?.is_subscription_event === 1;
  }

  async getThreadParentInfo(threadId: string): Promise<[string, string] | null> {
    const t = this.thread(threadId);
    if (!t || t.parent_thread_id === null || t.spawn_tool_call_id === null) return null;
    return [t.parent_thread_id, t.spawn_tool_call_id];
  }

  async getAncestorChain(threadId: string): Promise<AncestorLink[]> {
    const chain: AncestorLink[] = [];
    const seen = new Set([threadId]);
    for (let t = this.thread(threadId); t?.parent_thread_id != null; ) {
      const parent: string = t.parent_thread_id;
      if (seen.has(parent)) break; // only corrupt data can loop; stop instead of spinning
      seen.add(parent);
      chain.push([parent, t.spawn_message_order ?? 0]);
      t = this.thread(parent);
    }
    return chain.reverse();
  }

  async markThreadAsCompaction(threadId: string): Promise<void> {
    this.setCompaction.run(threadId);
  }

  async isCompactionThread(threadId: string): Promise<boolean> {
    return this.thread(threadId)?.is_compaction === 1;
  }

  async getThreadSpawnOrder(threadId: string): Promise<number | null> {
    return this.thread(threadId)?.spawn_message_order ?? null;
  }

  async saveCompactionSummary(threadId: string, summary: string, upToOrder: number): Promise<void> {
    this.insertSummary.run({ threadId, summary, upTo: checkOrder("upToOrder", upToOrder) });
  }

  async loadLatestCompactionSummaryUpTo(threadId: string, upToOrder?: number | null): Promise<[string, number] | null> {
    const row = this.latestSummary.get({ threadId, upTo: upToOrder ?? null }) as
      | { summary: string; up_to_order: number }
      | undefined;
    return row ? [row.summary, row.up_to_order] : null;
  }

  // ---- ConversationReader ----

  async listThreads(): Promise<string[]> {
    return this.allThreads.all() as string[];
  }

  async getRootThreadId(threadId: string): Promise<string> {
    return this.thread(threadId)?.root_thread_id ?? threadId;
  }

  async loadMessagesWithIds(
    threadId: string,
    startFrom?: number | null,
    upTo?: number | null,
  ): Promise<[InfinityMessage, string][]> {
    // the ord range clamps to the stored length by itself, so no count query is needed
    const [start, end] = historySlice(Number.MAX_SAFE_INTEGER, startFrom, upTo);
    if (start >= end) return [];
    const rows = this.selectSlice.all(threadId, start, end) as { message_id: string; body: string }[];
    return rows.map((r) => [JSON.parse(r.body) as InfinityMessage, r.message_id]);
  }

  async threadInfo(threadId: string): Promise<ThreadInfo | null> {
    const t = this.thread(threadId);
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
    return this.nextOrd.get(threadId) as number;
  }

  private thread(threadId: string): ThreadRow | undefined {
    return this.selectThread.get(threadId) as ThreadRow | undefined;
  }
}

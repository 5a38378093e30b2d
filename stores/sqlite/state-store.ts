// SQLite StateStore (tables state_processed_ids, state_metadata, state_subscriptions,
// state_user_choices; migration 3) with the reference semantics of the in-memory StateStore.
import type Database from "better-sqlite3";
import type { UserChoice } from "../infinity/messages.js";
import type { Json, StateStore } from "../infinity/traits.js";
import { checkUserChoice, jsonValue } from "../infinity/validate.js";
import type { Db } from "./database.js";

type IdKind = "message" | "tool_call";

export class SqliteStateStore implements StateStore {
  private readonly selectIds: Database.Statement;
  private readonly insertId: Database.Statement;
  private readonly selectMeta: Database.Statement;
  private readonly upsertMeta: Database.Statement;
  private readonly selectSubs: Database.Statement;
  private readonly insertSub: Database.Statement;
  private readonly deleteSub: Database.Statement;
  private readonly selectChoices: Database.Statement;
  private readonly upsertChoice: Database.Statement;
  private readonly deleteChoice: Database.Statement;
  private readonly addIdsTx: Database.Transaction<(threadId: string, kind: IdKind, ids: readonly string[]) => void>;

  constructor(db: Db) {
    this.selectIds = db.prepare(`SELECT kind, id FROM state_processed_ids WHERE thread_id = ?`);
    this.insertId = db.prepare(
      `INSERT INTO state_processed_ids (thread_id, kind, id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
    );
    this.selectMeta = db.prepare(`SELECT value FROM state_metadata WHERE root_thread_id = ?`).pluck();
    this.upsertMeta = db.prepare(
      `INSERT INTO state_metadata (root_thread_id, value) VALUES (?, ?)
       ON CONFLICT (root_thread_id) DO UPDATE SET value = excluded.value`,
    );
    this.selectSubs = db
      .prepare(`SELECT tool_call_id FROM state_subscriptions WHERE thread_id = ? ORDER BY seq`)
      .pluck();
    // a repeated subscription keeps its first position, like inserting into an ordered set
    this.insertSub = db.prepare(
      `INSERT INTO state_subscriptions (thread_id, tool_call_id, seq)
       VALUES (@threadId, @toolCallId, (SELECT COALESCE(MAX(seq) + 1, 0) FROM state_subscriptions WHERE thread_id = @threadId))
       ON CONFLICT DO NOTHING`,
    );
    this.deleteSub = db.prepare(`DELETE FROM state_subscriptions WHERE thread_id = ? AND tool_call_id = ?`);
    this.selectChoices = db
      .prepare(`SELECT body FROM state_user_choices WHERE thread_id = ? ORDER BY seq`)
      .pluck();
    this.upsertChoice = db.prepare(
      `INSERT INTO state_user_choices (thread_id, choice_id, seq, body)
       VALUES (@threadId, @choiceId, (SELECT COALESCE(MAX(seq) + 1, 0) FROM state_user_choices WHERE thread_id = @threadId), @body)
       ON CONFLICT (thread_id, choice_id) DO UPDATE SET body = excluded.body`,
    );
    this.deleteChoice = db.prepare(`DELETE FROM state_user_choices WHERE thread_id = ? AND choice_id = ?`);
    this.addIdsTx = db.transaction((threadId: string, kind: IdKind, ids: readonly string[]) => {
      for (const id of ids) this.insertId.run(threadId, kind, id);
    });
  }

  async getProcessedIds(threadId: string): Promise<[Set<string>, Set<string>]> {
    const messages = new Set<string>();
    const toolCalls = new Set<string>();
    for (const r of this.selectIds.all(threadId) as { kind: IdKind; id: string }[]) {
      (r.kind === "message" ? messages : toolCalls).add(r.id);
    }
    return [messages, toolCalls];
  }

  async addProcessedMessageIds(threadId: string, ids: readonly string[]): Promise<void> {
    if (ids.length > 0) this.addIdsTx.immediate(threadId, "message", ids);
  }

  async addProcessedToolCalls(threadId: string, ids: readonly string[]): Promise<void> {
    if (ids.length > 0) this.addIdsTx.immediate(threadId, "tool_call", ids);
  }

  async getMetadata(rootThreadId: string): Promise<Json | null> {
    const text = this.selectMeta.get(rootThreadId) as string | undefined;
    return text === undefined ? null : (JSON.parse(text) as Json);
  }

  async setMetadata(rootThreadId: string, metadata: Json): Promise<void> {
    this.upsertMeta.run(rootThreadId, jsonValue(metadata));
  }

  async getActiveSubscriptions(threadId: string): Promise<string[]> {
    return this.selectSubs.all(threadId) as string[];
  }

  async addActiveSubscription(threadId: string, toolCallId: string): Promise<void> {
    this.insertSub.run({ threadId, toolCallId });
  }

  async removeActiveSubscription(threadId: string, toolCallId: string): Promise<void> {
    this.deleteSub.run(threadId, toolCallId);
  }

  async addPendingUserChoice(threadId: string, choice: UserChoice): Promise<void> {
    const c = checkUserChoice(threadId, choice);
    this.upsertChoice.run({ threadId, choiceId: c.id, body: JSON.stringify(c) });
  }

  async removePendingUserChoice(threadId: string, choiceId: string): Promise<void> {
    this.deleteChoice.run(threadId, choiceId);
  }

  async getPendingUserChoices(threadId: string): Promise<UserChoice[]> {
    return (this.selectChoices.all(threadId) as string[]).map((b) => JSON.parse(b) as UserChoice);
  }

  /** no stop policy in this store: the trait's provided default */
  async isThreadStopped(_threadId: string): Promise<boolean> {
    return false;
  }
}

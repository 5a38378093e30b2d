// In-memory ConversationStore and StateStore with the reference semantics of
// `infinity-agent-core/src/stores.rs` (the mock harness and tests use these). Data is copied in
// and out so callers never alias stored history, as with a real database.
import { loadHistoryWithAncestors, historySlice } from "./history.js";
import { uuidThreadIds, type ThreadIdSource } from "./ids.js";
import type { CompactionSummary, InfinityMessage, ThreadInfo, UserChoice } from "./messages.js";
import type {
  AncestorLink,
  ConversationReader,
  ConversationStore,
  HistoryWithAncestors,
  Json,
  StateStore,
} from "./traits.js";
import { checkMessages, checkOptionalOrder, checkOrder, checkUserChoice, jsonValue } from "./validate.js";

export interface MemoryConversationStoreOptions {
  newThreadId?: ThreadIdSource;
}

export class MemoryConversationStore implements ConversationStore, ConversationReader {
  private readonly threads = new Map<string, ThreadInfo>();
  private readonly messages = new Map<string, [InfinityMessage, string][]>();
  private readonly summaries = new Map<string, CompactionSummary[]>();
  private readonly newThreadId: ThreadIdSource;

  constructor(opts: MemoryConversationStoreOptions = {}) {
    this.newThreadId = opts.newThreadId ?? uuidThreadIds;
  }

  async ensureRootThread(threadId: string): Promise<void> {
    if (this.threads.has(threadId)) return;
    this.threads.set(threadId, {
      parent_thread_id: null,
      root_thread_id: threadId,
      spawn_message_order: null,
      spawn_tool_call_id: null,
      closed: false,
      is_subscription_event: false,
      is_compaction: false,
    });
  }

  async threadExists(threadId: string): Promise<boolean> {
    return this.threads.has(threadId);
  }

  async loadHistoryUpTo(threadId: string, startFrom?: number | null, upTo?: number | null): Promise<InfinityMessage[]> {
    return (await this.loadMessagesWithIds(threadId, startFrom, upTo)).map(([m]) => m);
  }

  async loadHistoryWithAncestors(threadId: string): Promise<HistoryWithAncestors> {
    return loadHistoryWithAncestors(this, threadId);
  }

  async appendMessages(threadId: string, messages: ReadonlyArray<readonly [InfinityMessage, string]>): Promise<void> {
    const checked = structuredClone(checkMessages(threadId, messages));
    const list = this.messages.get(threadId);
    if (list) list.push(...checked);
    else this.messages.set(threadId, checked);
  }

  async spawnThread(
    parentThreadId: string,
    spawnToolCallId: string,
    isForSubscriptionEvent: boolean,
    spawnOrderOverride?: number | null,
  ): Promise<string> {
    const override = checkOptionalOrder("spawnOrderOverride", spawnOrderOverride);
    const id = this.newThreadId();
    this.threads.set(id, {
      parent_thread_id: parentThreadId,
      root_thread_id: this.threads.get(parentThreadId)?.root_thread_id ?? parentThreadId,
      spawn_message_order: override ?? this.messages.get(parentThreadId)?.length ?? 0,
      spawn_tool_call_id: spawnToolCallId,
      closed: false,
      is_subscription_event: isForSubscriptionEvent,
      is_compaction: false,
    });
    return id;
  }

  async isThreadClosed(threadId: string): Promise<boolean> {
    return this.threads.get(threadId)?.closed ?? false;
  }

  async closeThread(threadId: string): Promise<void> {
    const t = this.threads.get(threadId);
    if (t) t.closed = true;
  }

  async isSubscriptionEventThread(threadId: string): Promise<boolean> {
    return this.threads.get(threadId)?.is_subscription_event ?? false;
  }

  async getThreadParentInfo(threadId: string): Promise<[string, string] | null> {
    const t = this.threads.get(threadId);
    if (!t || t.parent_thread_id === null || t.spawn_tool_call_id === null) return null;
    return [t.parent_thread_id, t.spawn_tool_call_id];
  }

  async getAncestorChain(threadId: string): Promise<AncestorLink[]> {
    const chain: AncestorLink[] = [];
    const seen = new Set([threadId]);
    for (let t = this.threads.get(threadId); t?.parent_thread_id != null; ) {
      const parent: string = t.parent_thread_id;
      if (seen.has(parent)) break; // a cycle can only come from corrupt data; stop instead of spinning
      seen.add(parent);
      chain.push([parent, t.spawn_message_order ?? 0]);
      t = this.threads.get(parent);
    }
    return chain.reverse();
  }

  async markThreadAsCompaction(threadId: string): Promise<void> {
    const t = this.threads.get(threadId);
    if (t) t.is_compaction = true;
  }

  async isCompactionThread(threadId: string): Promise<boolean> {
    return this.threads.get(threadId)?.is_compaction ?? false;
  }

  async getThreadSpawnOrder(threadId: string): Promise<number | null> {
    return this.threads.get(threadId)?.spawn_message_order ?? null;
  }

  async saveCompactionSummary(threadId: string, summary: string, upToOrder: number): Promise<void> {
    const entry = { summary, up_to_order: checkOrder("upToOrder", upToOrder) };
    const list = this.summaries.get(threadId);
    if (list) list.push(entry);
    else this.summaries.set(threadId, [entry]);
  }

  async loadLatestCompactionSummaryUpTo(threadId: string, upToOrder?: number | null): Promise<[string, number] | null> {
    const list = this.summaries.get(threadId) ?? [];
    for (let i = list.length - 1; i >= 0; i--) {
      const s = list[i]!;
      if (upToOrder == null || s.up_to_order <= upToOrder) return [s.summary, s.up_to_order];
    }
    return null;
  }

  // ---- ConversationReader ----

  async listThreads(): Promise<string[]> {
    return [...new Set([...this.threads.keys(), ...this.messages.keys()])];
  }

  async getRootThreadId(threadId: string): Promise<string> {
    return this.threads.get(threadId)?.root_thread_id ?? threadId;
  }

  async loadMessagesWithIds(
    threadId: string,
    startFrom?: number | null,
    upTo?: number | null,
  ): Promise<[InfinityMessage, string][]> {
    const list = this.messages.get(threadId) ?? [];
    const [start, end] = historySlice(list.length, startFrom, upTo);
    return structuredClone(list.slice(start, end));
  }

  async threadInfo(threadId: string): Promise<ThreadInfo | null> {
    const t = this.threads.get(threadId);
    return t ? { ...t } : null;
  }

  async messageCount(threadId: string): Promise<number> {
    return this.messages.get(threadId)?.length ?? 0;
  }
}

export class MemoryStateStore implements StateStore {
  private readonly messageIds = new Map<string, Set<string>>();
  private readonly toolCallIds = new Map<string, Set<string>>();
  /** JSON text, so every read hands out a fresh value */
  private readonly metadata = new Map<string, string>();
  /** a Set keeps insertion order: oldest subscription first */
  private readonly subscriptions = new Map<string, Set<string>>();
  private readonly choices = new Map<string, UserChoice[]>();

  async getProcessedIds(threadId: string): Promise<[Set<string>, Set<string>]> {
    return [new Set(this.messageIds.get(threadId)), new Set(this.toolCallIds.get(threadId))];
  }

  async addProcessedMessageIds(threadId: string, ids: readonly string[]): Promise<void> {
    addAll(this.messageIds, threadId, ids);
  }

  async addProcessedToolCalls(threadId: string, ids: readonly string[]): Promise<void> {
    addAll(this.toolCallIds, threadId, ids);
  }

  async getMetadata(rootThreadId: string): Promise<Json | null> {
    const text = this.metadata.get(rootThreadId);
    return text === undefined ? null : (JSON.parse(text) as Json);
  }

  async setMetadata(rootThreadId: string, metadata: Json): Promise<void> {
    this.metadata.set(rootThreadId, jsonValue(metadata));
  }

  async getActiveSubscriptions(threadId: string): Promise<string[]> {
    return [...(this.subscriptions.get(threadId) ?? [])];
  }

  async addActiveSubscription(threadId: string, toolCallId: string): Promise<void> {
    addAll(this.subscriptions, threadId, [toolCallId]);
  }

  async removeActiveSubscription(threadId: string, toolCallId: string): Promise<void> {
    this.subscriptions.get(threadId)?.delete(toolCallId);
  }

  async addPendingUserChoice(threadId: string, choice: UserChoice): Promise<void> {
    const c = checkUserChoice(threadId, choice);
    const list = this.choices.get(threadId) ?? [];
    const at = list.findIndex((x) => x.id === c.id);
    if (at >= 0) list[at] = c;
    else list.push(c);
    this.choices.set(threadId, list);
  }

  async removePendingUserChoice(threadId: string, choiceId: string): Promise<void> {
    const list = this.choices.get(threadId);
    if (list) this.choices.set(threadId, list.filter((c) => c.id !== choiceId));
  }

  async getPendingUserChoices(threadId: string): Promise<UserChoice[]> {
    return structuredClone(this.choices.get(threadId) ?? []);
  }

  async isThreadStopped(_threadId: string): Promise<boolean> {
    return false;
  }
}

function addAll(map: Map<string, Set<string>>, key: string, ids: readonly string[]): void {
  const set = map.get(key) ?? new Set<string>();
  for (const id of ids) set.add(id);
  map.set(key, set);
}

// Infinity's store traits (`infinity-agent-core/src/traits.rs`, reference §3.1 and §3.6) in
// TypeScript: same methods, camelCase, Promises; a Rust `Err` is a rejected Promise carrying an
// InfinityStoreError. Plus ConversationReader, the read side our session search needs.
import type {
  InfinityMessage,
  InputMessage,
  ThreadInfo,
  UserChoice,
} from "./messages.js";

export { InfinityStoreError, isInfinityStoreError, type InfinityStoreErrorCode } from "./errors.js";
export type {
  CompactionSummary,
  InfinityMessage,
  InputMessage,
  InputMessageInit,
  ThreadInfo,
  ThreadState,
  UserChoice,
} from "./messages.js";

/** any JSON value */
export type Json = unknown;

/** `(history, leaf_compacted_up_to, ancestor_prefix_len)`, see history.ts */
export type HistoryWithAncestors = [
  history: InfinityMessage[],
  leafCompactedUpTo: number | null,
  ancestorPrefixLen: number,
];

/** an ancestor and how many of its messages the path below it inherits */
export type AncestorLink = [ancestorId: string, cutoff: number];

/** Durable history and the thread tree. */
export interface ConversationStore {
  /** create a root thread record if absent (idempotent) */
  ensureRootThread(threadId: string): Promise<void>;
  /** whether a root or child record exists; never creates one */
  threadExists(threadId: string): Promise<boolean>;
  /** the slice `[startFrom ?? 0, min(upTo ?? len, len))` of the thread's own messages */
  loadHistoryUpTo(threadId: string, startFrom?: number | null, upTo?: number | null): Promise<InfinityMessage[]>;
  /** ancestors' inherited prefix (or the latest summary) plus the thread's own messages */
  loadHistoryWithAncestors(threadId: string): Promise<HistoryWithAncestors>;
  /** append in order; each message carries its dedup id */
  appendMessages(threadId: string, messages: ReadonlyArray<readonly [InfinityMessage, string]>): Promise<void>;
  /**
   * Create a child; returns its new UUIDv4. It inherits `spawnOrderOverride ?? parent's current
   * message count` messages; its root is the parent's root (or the parent itself when unknown).
   */
  spawnThread(
    parentThreadId: string,
    spawnToolCallId: string,
    isForSubscriptionEvent: boolean,
    spawnOrderOverride?: number | null,
  ): Promise<string>;
  /** false for unknown ids */
  isThreadClosed(threadId: string): Promise<boolean>;
  /** no-op for unknown ids */
  closeThread(threadId: string): Promise<void>;
  isSubscriptionEventThread(threadId: string): Promise<boolean>;
  /** null for roots and unknown ids */
  getThreadParentInfo(threadId: string): Promise<[parentId: string, spawnToolCallId: string] | null>;
  /** `[(root, c0), …, (parent, cn)]`: root first; empty for roots */
  getAncestorChain(threadId: string): Promise<AncestorLink[]>;
  markThreadAsCompaction(threadId: string): Promise<void>;
  isCompactionThread(threadId: string): Promise<boolean>;
  getThreadSpawnOrder(threadId: string): Promise<number | null>;
  /** push a summary covering the thread's messages `[0, upToOrder)` */
  saveCompactionSummary(threadId: string, summary: string, upToOrder: number): Promise<void>;
  /** the latest pushed summary with `up_to_order <= upToOrder` (any when null) */
  loadLatestCompactionSummaryUpTo(
    threadId: string,
    upToOrder?: number | null,
  ): Promise<[summary: string, upToOrder: number] | null>;
}

/** Dedup sets, session metadata, subscriptions and pending choices. */
export interface StateStore {
  /** `[message ids, tool call ids]` already handled in this thread */
  getProcessedIds(threadId: string): Promise<[messageIds: Set<string>, toolCallIds: Set<string>]>;
  addProcessedMessageIds(threadId: string, ids: readonly string[]): Promise<void>;
  addProcessedToolCalls(threadId: string, ids: readonly string[]): Promise<void>;
  /** keyed by the ROOT thread id; null when never set */
  getMetadata(rootThreadId: string): Promise<Json | null>;
  /** replaces the whole value */
  setMetadata(rootThreadId: string, metadata: Json): Promise<void>;
  /** the thread's own active subscription tool call ids, oldest first */
  getActiveSubscriptions(threadId: string): Promise<string[]>;
  addActiveSubscription(threadId: string, toolCallId: string): Promise<void>;
  removeActiveSubscription(threadId: string, toolCallId: string): Promise<void>;
  /** replace the choice with the same id in place, else append */
  addPendingUserChoice(threadId: string, choice: UserChoice): Promise<void>;
  removePendingUserChoice(threadId: string, choiceId: string): Promise<void>;
  getPendingUserChoices(threadId: string): Promise<UserChoice[]>;
  /** Rust's provided default answers false; the daemon answers its session's shut_down flag */
  isThreadStopped(threadId: string): Promise<boolean>;
}

/** Delivery into a thread's input queue; routing uses `message.group_id`. */
export interface InputSender {
  sendToInputQueue(message: InputMessage, dedupId: string): Promise<void>;
}

/** Read access beyond the traits, for session search and tooling. */
export interface ConversationReader {
  /** every thread id with a record or with messages */
  listThreads(): Promise<string[]>;
  /** the thread's root (the session id); the id itself when unknown */
  getRootThreadId(threadId: string): Promise<string>;
  /** like loadHistoryUpTo, each message with its id */
  loadMessagesWithIds(
    threadId: string,
    startFrom?: number | null,
    upTo?: number | null,
  ): Promise<[InfinityMessage, string][]>;
  threadInfo(threadId: string): Promise<ThreadInfo | null>;
  /** how many messages the thread itself holds */
  messageCount(threadId: string): Promise<number>;
  /**
   * Optional, for sources a newer writer may have filled (the daemon's files): like
   * loadMessagesWithIds, but a message of a kind this version does not know comes as
   * `[null, id, kind]` in its place instead of failing the whole read.
   */
  loadMessagesTolerant?(threadId: string, startFrom?: number | null, upTo?: number | null): Promise<ToleratedEntry[]>;
  /**
   * With loadMessagesTolerant: names the message forms this version reads (it changes when a
   * version learns a kind or a form), so what an older version left out is read again after an
   * upgrade, and only then.
   */
  messageFormat?(): string;
}

/** a history entry as a tolerant read gives it: the message, or null and the kind it did not know */
export type ToleratedEntry = [message: InfinityMessage, id: string] | [message: null, id: string, unknownKind: string];

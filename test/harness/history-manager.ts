// A thread's in-memory history and dedup state (reference §3.3; core
// `event_processor::HistoryManager`): incoming content is checked against processed message
// and tool-call ids and against the last entry (a result must answer the pending call), the
// streamed assistant turn is buffered until a tool call or Final, and `sync()` commits the
// pending items to the stores.
import { COMPACTION_SUMMARY_HEADER } from "../../stores/infinity/history.js";
import type { InfinityMessage, ToolCall, ToolResult } from "../../stores/infinity/messages.js";
import type { ConversationStore, StateStore } from "../../stores/infinity/traits.js";
import type { RigMessage, RigToolCall } from "./model.js";

export const IMAGE_OMITTED_PLACEHOLDER = "[image omitted: the current model does not support image inputs]";

interface PendingItem {
  message: InfinityMessage;
  messageId: string;
}

/** A streamed item the turn buffer accepts. */
export type CompletionContent = { kind: "text"; text: string } | { kind: "tool_call"; call: RigToolCall };

/** `InfinityMessage::into_messages` as rig Message JSON. */
export function intoMessages(m: InfinityMessage): RigMessage[] {
  switch (m.kind) {
    case "user":
      return [{ role: "user", content: [m.content as RigMessage["content"][number] & object] } as RigMessage];
    case "assistant":
      return [{ role: "assistant", id: null, content: [m.content as Record<string, unknown>] }];
    case "tool_call":
      return [{ role: "assistant", id: null, content: [m.call as Record<string, unknown>] }];
    case "tool_result":
      return [{ role: "user", content: [{ type: "toolresult", ...m.result }] } as RigMessage];
    case "subscription_event": {
      const out: RigMessage[] = [];
      if (m.invocation) out.push({ role: "assistant", id: null, content: [m.invocation as Record<string, unknown>] });
      out.push({ role: "user", content: [{ type: "toolresult", ...m.result }] } as RigMessage);
      return out;
    }
  }
}

function stripImages(msg: RigMessage): RigMessage {
  if (msg.role !== "user") return msg;
  return {
    role: "user",
    content: msg.content.map((c) => {
      if (c.type !== "toolresult") return c;
      const tr = c as { content: { type: string }[] };
      return { ...c, content: tr.content.map((item) => (item.type === "image" ? { type: "text", text: IMAGE_OMITTED_PLACEHOLDER } : item)) };
    }),
  } as RigMessage;
}

function resultOf(m: InfinityMessage): ToolResult | null {
  return m.kind === "tool_result" || m.kind === "subscription_event" ? m.result : null;
}

export class HistoryManager {
  history: InfinityMessage[];
  private readonly processedMessageIds: Set<string>;
  private readonly processedToolCalls: Set<string>;
  private metadata: unknown;
  private pendingItems: PendingItem[] = [];
  private turnBuffer: PendingItem[] = [];
  private pendingCompleteToolCalls = new Set<string>();
  private interruptedToolCalls: string[] = [];
  private compactedUpTo: number | null;
  private ancestorPrefixLen: number;

  private constructor(
    private readonly conv: ConversationStore,
    private readonly state: StateStore,
    readonly threadId: string,
    readonly rootThreadId: string,
    private readonly ancestorChain: string[],
    loaded: { history: InfinityMessage[]; compactedUpTo: number | null; prefixLen: number; metadata: unknown; messageIds: Set<string>; toolCalls: Set<string> },
  ) {
    this.history = loaded.history;
    this.compactedUpTo = loaded.compactedUpTo;
    this.ancestorPrefixLen = loaded.prefixLen;
    this.metadata = loaded.metadata;
    this.processedMessageIds = loaded.messageIds;
    this.processedToolCalls = loaded.toolCalls;
  }

  /** `new_with_history` */
  static async load(conv: ConversationStore, state: StateStore, threadId: string): Promise<HistoryManager> {
    await conv.ensureRootThread(threadId).catch(() => undefined);
    const chain = await conv.getAncestorChain(threadId).then(
      (links) => links.map(([id]) => id),
      () => [] as string[],
    );
    const root = chain[0] ?? threadId;
    const [history, compactedUpTo, prefixLen] = await conv.loadHistoryWithAncestors(threadId);
    const metadata = await state.getMetadata(root).catch(() => null);
    const [messageIds, toolCalls] = await state.getProcessedIds(threadId).catch(() => [new Set<string>(), new Set<string>()] as const);
    return new HistoryManager(conv, state, threadId, root, chain, {
      history,
      compactedUpTo,
      prefixLen,
      metadata,
      messageIds: new Set(messageIds),
      toolCalls: new Set(toolCalls),
    });
  }

  /** `handle_content`: false when the content was a duplicate or answered the wrong call. */
  async handleContent(message: InfinityMessage, messageId: string): Promise<boolean> {
    if (this.processedMessageIds.has(messageId)) return false;
    const selfContained = message.kind === "subscription_event" && message.invocation !== null && message.invocation !== undefined;
    const result = resultOf(message);
    if (!selfContained && result) {
      if (this.processedToolCalls.has(result.id)) {
        this.processedMessageIds.add(messageId);
        await this.state.addProcessedMessageIds(this.threadId, [messageId]).catch(() => undefined);
        return false;
      }
      const last = this.history[this.history.length - 1];
      if (!(last?.kind === "tool_call" && last.call.id === result.id)) return false;
    } else {
      this.interruptPendingToolCall();
    }
    this.appendPending(message, messageId);
    this.processedMessageIds.add(messageId);
    return true;
  }

  /** An unanswered trailing call gets "Tool call interrupted by user" (id `{call}-interrupted`). */
  private interruptPendingToolCall(): void {
    const last = this.history[this.history.length - 1];
    if (last?.kind !== "tool_call" || this.processedToolCalls.has(last.call.id)) return;
    const call = last.call;
    this.interruptedToolCalls.push(call.id);
    const result: ToolResult =
      call.call_id === null || call.call_id === undefined
        ? { id: call.id, content: [{ type: "text", text: "Tool call interrupted by user" }] }
        : { id: call.id, call_id: call.call_id, content: [{ type: "text", text: "Tool call interrupted by user" }] };
    this.appendPending({ kind: "tool_result", result }, `${call.id}-interrupted`);
    this.markToolCallComplete(call.id);
  }

  /** Buffer a streamed chunk of the current turn (consecutive text is coalesced). */
  handleCompletion(chunk: CompletionContent, completionId: string, displayAs: string | null): void {
    if (this.processedMessageIds.has(completionId)) return;
    if (chunk.kind === "text") {
      const last = this.turnBuffer[this.turnBuffer.length - 1];
      if (last?.message.kind === "assistant" && typeof (last.message.content as { text?: unknown }).text === "string" && !("function" in last.message.content)) {
        (last.message.content as { text: string }).text += chunk.text;
        return;
      }
      this.turnBuffer.push({ message: { kind: "assistant", content: { text: chunk.text } }, messageId: completionId });
      return;
    }
    const message: InfinityMessage = displayAs === null ? { kind: "tool_call", call: chunk.call as ToolCall } : { kind: "tool_call", call: chunk.call as ToolCall, display_as: displayAs };
    this.turnBuffer.push({ message, messageId: completionId });
  }

  flushTurn(): void {
    const drained = this.turnBuffer;
    this.turnBuffer = [];
    for (const item of drained) this.appendPending(item.message, item.messageId);
  }

  /** Drop trailing reasoning and blank text before flushing (the next message is a user turn). */
  flushTurnTrimmingReasoning(): void {
    for (;;) {
      const last = this.turnBuffer[this.turnBuffer.length - 1];
      if (last?.message.kind !== "assistant") break;
      const c = last.message.content as { text?: unknown; function?: unknown };
      const isReasoning = typeof c.text !== "string" && c.function === undefined && !("data" in c);
      const blank = typeof c.text === "string" && c.text.trim() === "";
      if (!isReasoning && !blank) break;
      this.turnBuffer.pop();
    }
    this.flushTurn();
  }

  discardTurn(): void {
    this.turnBuffer = [];
  }

  turnBufferIsEmpty(): boolean {
    return this.turnBuffer.length === 0;
  }

  private appendPending(message: InfinityMessage, messageId: string): void {
    if (this.turnBuffer.length > 0) throw new Error("bug: append_pending called with un-flushed turn_buffer content");
    this.history.push(message);
    const result = resultOf(message);
    if (result) this.markToolCallComplete(result.id);
    this.pendingItems.push({ message, messageId });
  }

  private markToolCallComplete(id: string): void {
    this.processedToolCalls.add(id);
    this.pendingCompleteToolCalls.add(id);
  }

  /** Commit: append the pending messages, then record processed ids (those errors are ignored). */
  async sync(): Promise<void> {
    if (this.turnBuffer.length > 0) throw new Error("bug: sync() called with un-flushed turn_buffer content");
    const items = this.pendingItems;
    const toolCalls = [...this.pendingCompleteToolCalls];
    this.pendingItems = [];
    this.pendingCompleteToolCalls = new Set();
    if (items.length === 0 && toolCalls.length === 0) return;
    if (items.length > 0) await this.conv.appendMessages(this.threadId, items.map((i) => [i.message, i.messageId] as const));
    if (items.length > 0) await this.state.addProcessedMessageIds(this.threadId, items.map((i) => i.messageId)).catch(() => undefined);
    if (toolCalls.length > 0) await this.state.addProcessedToolCalls(this.threadId, toolCalls).catch(() => undefined);
  }

  async updateMetadata(metadata: unknown): Promise<void> {
    this.metadata = metadata;
    await this.state.setMetadata(this.rootThreadId, metadata);
  }

  getMetadata(): unknown {
    return this.metadata;
  }

  /** The model-facing chat history (a fresh JSON copy: what goes over the wire). */
  getHistory(supportsImageInput: boolean): RigMessage[] {
    const msgs = this.history.flatMap(intoMessages).map((m) => (supportsImageInput ? m : stripImages(m)));
    return JSON.parse(JSON.stringify(msgs)) as RigMessage[];
  }

  /** `[root, …ancestors, current]` */
  getThreadStack(): string[] {
    return [...this.ancestorChain, this.threadId];
  }

  /** In-memory offset of a previous compaction (`prev - 1`; the summary occupies slot 0). */
  private compactionOffset(): number {
    const prev = this.compactedUpTo;
    return prev === null ? 0 : prev - 1;
  }

  /** After `compaction_complete`: replace the covered prefix with the latest summary. */
  async applyCompaction(): Promise<boolean> {
    let found: [string, number] | null = null;
    try {
      found = await this.conv.loadLatestCompactionSummaryUpTo(this.threadId, null);
    } catch {
      found = null;
    }
    if (!found) return false;
    const [summary, upToOrder] = found;
    const upTo = Math.max(upToOrder - this.compactionOffset(), 0) + this.ancestorPrefixLen;
    if (upTo > this.history.length) return false;
    const remaining = this.history.slice(upTo);
    this.history = [{ kind: "assistant", content: { text: COMPACTION_SUMMARY_HEADER + summary } }, ...remaining];
    this.compactedUpTo = upToOrder;
    this.ancestorPrefixLen = 0;
    return true;
  }

  takeInterruptedToolCalls(): string[] {
    const out = this.interruptedToolCalls;
    this.interruptedToolCalls = [];
    return out;
  }

  /** Absolute store index after the last message that is not an unanswered tool call. */
  safeSpawnPoint(): number {
    let safe = 0;
    for (let i = this.history.length - 1; i >= 0; i--) {
      const m = this.history[i]!;
      if (m.kind !== "tool_call" || this.processedToolCalls.has(m.call.id)) {
        safe = i + 1;
        break;
      }
    }
    return Math.max(safe - this.ancestorPrefixLen, 0) + this.compactionOffset();
  }

  async trackSubscription(toolCallId: string): Promise<void> {
    await this.state.addActiveSubscription(this.threadId, toolCallId);
  }

  async removeSubscription(toolCallId: string): Promise<void> {
    await this.state.removeActiveSubscription(this.threadId, toolCallId);
  }
}

// One step's building blocks (reference §1.5, §3.3, §4.1; core `event_processor.rs`):
// prepareInput folds an input into history (closed threads, compaction, metadata, OAuth, user
// choices, synthetic events inline or in a spawned child), runCompletion streams one round from
// the model (only the first tool call counts; sync tools and unknown tools loop back), and the
// ToolCall is dispatched by the caller after the commit.
import type { InfinityMessage, InputMessage, ToolCall, ToolResult, UserChoice } from "../../stores/infinity/messages.js";
import type { ConversationStore, InputSender } from "../../stores/infinity/traits.js";
import { sortKeysDeep } from "../../toolsets/rap/wire-json.js";
import type { DisplaySegment } from "../../toolsets/rap/wire.js";
import { evalDisplayScript } from "./display-script.js";
import { buildDisplaySegments, type AgentEvent } from "./events.js";
import type { HistoryManager } from "./history-manager.js";
import type { ModelRound, RigToolCall, ScriptedModel, ToolDefinition, Usage } from "./model.js";
import { textToolResult, toolResultInput, type Tool, type ToolContext } from "./tools.js";

export type PrepareResult =
  | { kind: "ready" }
  | { kind: "handled" }
  | { kind: "compaction_applied" }
  | { kind: "oauth_required"; authUrl: string }
  | { kind: "user_choice_required"; choice: UserChoice };

type Synthetic = NonNullable<InputMessage["synthetic"]>;

/** `SyntheticKind::tool_call_id` (a bare string is the legacy subscription-event form) */
export function syntheticToolCallId(s: Synthetic): string {
  if (typeof s === "string") return s;
  return "tool_call_id" in s && typeof s.tool_call_id === "string" ? s.tool_call_id : "";
}
const isType = (s: Synthetic | null | undefined, t: string): boolean => s !== null && s !== undefined && typeof s !== "string" && s.type === t;
const isAssociative = (s: Synthetic): boolean => isType(s, "subscription_event") && (s as { associative?: boolean }).associative === true;
const isFinal = (s: Synthetic): boolean => isType(s, "subscription_event") && (s as { final?: boolean }).final === true;

export function isCompactionComplete(m: InputMessage): boolean {
  return isType(m.synthetic, "compaction_complete");
}

/** Plain user text (no synthetic kind): creates threads, interrupts pending work. */
export function isUserTextInput(m: InputMessage): boolean {
  return (m.synthetic === null || m.synthetic === undefined) && (m.content as { type?: unknown }).type === "text";
}

/** Subscription events, thread reports and parent messages wait while an active call is pending. */
export function isDeferrableSyntheticEvent(m: InputMessage): boolean {
  const s = m.synthetic;
  if (s === null || s === undefined) return false;
  return typeof s === "string" || s.type === "subscription_event" || s.type === "thread_report" || s.type === "parent_message";
}

function call(id: string, name: string, args: unknown): ToolCall {
  return { id, call_id: null, function: { name, arguments: sortKeysDeep(args) }, signature: null, additional_params: null };
}

function receiveEventArgs(original: ToolCall, originalId: string): unknown {
  return { original_tool_name: original.function.name, original_tool_call_id: originalId, original_args: original.function.arguments };
}

export interface PrepareDeps {
  conv: ConversationStore;
  sender: InputSender;
  newId: () => string;
}

/** `prepare_input` */
export async function prepareInput(input: InputMessage, messageId: string, h: HistoryManager, d: PrepareDeps): Promise<PrepareResult> {
  if (await d.conv.isThreadClosed(input.group_id).catch(() => false)) return { kind: "handled" };

  if (isType(input.synthetic, "compaction_complete")) {
    await h.applyCompaction();
    return { kind: "compaction_applied" };
  }

  if (isType(input.synthetic, "compaction")) {
    const spawnCallId = d.newId();
    const safePoint = h.safeSpawnPoint();
    const child = await d.conv.spawnThread(input.group_id, spawnCallId, false, safePoint);
    await d.conv.markThreadAsCompaction(child);
    await d.conv.appendMessages(child, [[{ kind: "tool_call", call: call(spawnCallId, "__harness_begin_compaction__", {}) }, `${spawnCallId}-compaction-call`]]);
    const seed = textToolResult(
      spawnCallId,
      null,
      `This tool call was synthetically injected by the harness. You are now INSIDE a compaction thread. You can see the full conversation history inherited from your parent thread, including all ancestor thread context. Summarize ALL of this content into a concise but comprehensive summary that preserves: all important context, decisions made, current task progress, relevant code changes and file paths, and any pending work. Then call close_thread with your thread ID (${child}) and include the summary in report_to_parent.`,
    );
    await d.sender.sendToInputQueue(toolResultInput(child, seed), spawnCallId);
    return { kind: "handled" };
  }

  if (input.metadata !== null && input.metadata !== undefined) await h.updateMetadata(input.metadata);

  const content = input.content as { type: string } & Record<string, unknown>;
  if (content.type === "oauth_required") return { kind: "oauth_required", authUrl: String(content.auth_url) };
  if (content.type === "user_choice_required") {
    const c = content as unknown as UserChoice;
    return { kind: "user_choice_required", choice: { id: c.id, prompt: c.prompt, choices: [...c.choices], default: c.default, response_url: c.response_url } };
  }

  const synthetic = input.synthetic ?? null;
  const inlineMeta =
    synthetic !== null && (isType(synthetic, "thread_report") || isAssociative(synthetic) || isType(synthetic, "parent_message"))
      ? { toolCallId: syntheticToolCallId(synthetic), childThreadId: isType(synthetic, "thread_report") ? (synthetic as { child_thread_id: string }).child_thread_id : null }
      : null;

  let userContent = content;
  let invocation: ToolCall | null = null;

  if (synthetic !== null) {
    const originalId = syntheticToolCallId(synthetic);
    const original = h.history.find((m): m is Extract<InfinityMessage, { kind: "tool_call" }> => m.kind === "tool_call" && m.call.id === originalId)?.call;
    if (!original) return { kind: "handled" };
    if (content.type !== "toolresult") throw new Error("Synthetic message is not a tool result");

    if (inlineMeta) {
      const newId = d.newId();
      invocation = call(newId, "receive_event__injected", receiveEventArgs(original, originalId));
      userContent = { ...content, id: newId };
      if (isFinal(synthetic)) await h.removeSubscription(originalId).catch(() => undefined);
    } else {
      // A non-associative subscription event runs in a child thread of its own.
      const safePoint = h.safeSpawnPoint();
      const child = await d.conv.spawnThread(input.group_id, originalId, true, safePoint);
      const eventCallId = d.newId();
      const spawnCallId = d.newId();
      const spawnResult: ToolResult = textToolResult(
        spawnCallId,
        null,
        `You are now INSIDE the thread for processing the single event above. Your thread ID is ${child}, the parent which is still subscribing is ${input.group_id}. Process the single subscription event above, report to the parent if appropriate, then close the thread after processing this event. Your outputs are NOT VISIBLE to the user, if you want to show them something, send a report to your parent.`,
      );
      await d.conv.appendMessages(child, [
        [{ kind: "tool_call", call: call(spawnCallId, "spawn_thread", { instructions: "Spawning thread to process incoming event." }) }, `${spawnCallId}-spawn-call`],
        [{ kind: "tool_result", result: spawnResult }, `${spawnCallId}-spawn-result`],
        [{ kind: "tool_call", call: call(eventCallId, "receive_event__injected", receiveEventArgs(original, originalId)) }, `${eventCallId}-event-call`],
      ]);
      // the event's result answers the injected call: new id, no provider call id
      await d.sender.sendToInputQueue(toolResultInput(child, { id: eventCallId, content: content.content as ToolResult["content"] }), eventCallId);
      if (isFinal(synthetic)) await h.removeSubscription(originalId).catch(() => undefined);
      return { kind: "handled" };
    }
  }

  const subscriptionToolCallId = input.subscription && userContent.type === "toolresult" ? String(userContent.id) : null;

  let message: InfinityMessage;
  const { type: _t, ...resultFields } = userContent;
  if (inlineMeta && userContent.type === "toolresult") {
    const ev: Record<string, unknown> = { kind: "subscription_event", result: resultFields, tool_call_id: inlineMeta.toolCallId };
    if (inlineMeta.childThreadId !== null) ev.child_thread_id = inlineMeta.childThreadId;
    if (invocation) ev.invocation = invocation;
    message = ev as InfinityMessage;
  } else if (userContent.type === "toolresult") {
    message = (input.display_as === null || input.display_as === undefined
      ? { kind: "tool_result", result: resultFields }
      : { kind: "tool_result", result: resultFields, display_segments: input.display_as }) as InfinityMessage;
  } else {
    message = { kind: "user", content: userContent } as InfinityMessage;
  }

  if (!(await h.handleContent(message, messageId))) return { kind: "handled" };
  if (subscriptionToolCallId !== null) await h.trackSubscription(subscriptionToolCallId);
  return { kind: "ready" };
}

/** `input_event`: the event that echoes an accepted input. */
export function inputEvent(h: HistoryManager, input: InputMessage): AgentEvent | null {
  const content = input.content as { type: string } & Record<string, unknown>;
  const firstText = (): string | null => {
    if (content.type !== "toolresult") return null;
    const first = (content.content as { type: string; text?: string }[])[0];
    return first?.type === "text" && typeof first.text === "string" ? first.text : null;
  };
  const synthetic = input.synthetic ?? null;
  if (synthetic !== null) {
    const text = firstText();
    if (text === null) return null;
    const id = syntheticToolCallId(synthetic);
    for (const m of h.getHistory(true)) {
      if (m.role !== "assistant") continue;
      const c = m.content[0] as Partial<RigToolCall> | undefined;
      if (!c?.function || c.id !== id) continue;
      const name = isType(synthetic, "thread_report")
        ? `Report from child thread ${(synthetic as { child_thread_id: string }).child_thread_id}`
        : `${c.function.name}(${JSON.stringify(sortKeysDeep(c.function.arguments ?? null))})`;
      return { type: "SubscriptionEvent", name, text };
    }
    return null;
  }
  const text = firstText();
  if (text !== null) return { type: "ToolResult", segments: buildDisplaySegments(input.display_as as DisplaySegment[] | null, text) };
  if (content.type === "text") {
    const t = String(content.text);
    return { type: "UserInput", text: t.startsWith("<interrupt>") ? t.slice("<interrupt>".length) : t };
  }
  return null;
}

// ---- run_completion ----

export type CompletionEvent =
  | { type: "Info"; text: string }
  | { type: "TextChunk"; text: string }
  | { type: "ThinkingStart" }
  | { type: "ThinkingEnd" }
  | { type: "ThinkingChunk"; text: string }
  | { type: "SyncToolCall"; name: string; args: unknown; displayAs: string | null }
  | { type: "SyncToolResult"; result: ToolResult }
  | { type: "Done"; usage: Usage | null }
  | { type: "ExecuteToolCall"; name: string; args: unknown; toolCallId: string; callId: string | null; displayAs: string | null };

/** Cancellation of an in-flight step (user text arrived). */
export class CancelSignal {
  cancelled = false;
  private fire!: () => void;
  readonly promise = new Promise<"cancelled">((r) => (this.fire = () => r("cancelled")));
  cancel(): void {
    this.cancelled = true;
    this.fire();
  }
}

export interface CompletionParams {
  model: ScriptedModel;
  supportsImageInput: boolean;
  history: HistoryManager;
  toolNames: Set<string>;
  tools: ToolDefinition[];
  registry: Map<string, Tool>;
  ctx: ToolContext;
  groupId: string;
  messageId: string;
  preamble: string;
  cancel: CancelSignal;
  retryDelayMs: number;
  emit: (e: CompletionEvent) => void;
  /** the round currently streaming, for the driver's bookkeeping */
  onRound?: (r: ModelRound) => void;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const MAX_RETRIES = 10;

function retryable(message: string): boolean {
  return message.includes("unexpected end of stream") || message.includes("unexpected error when processing the request");
}

/** `run_completion`: stream rounds until one ends without a loop-back. Throws on a fatal stream error. */
export async function runCompletion(p: CompletionParams): Promise<void> {
  const { history: h, emit } = p;
  let counter = 0;
  let thinking = false;
  let retries = 0;
  const endThinking = () => {
    if (thinking) {
      thinking = false;
      emit({ type: "ThinkingEnd" });
    }
  };
  outer: for (;;) {
    if (!h.turnBufferIsEmpty()) throw new Error("bug: entered completion loop with un-flushed turn buffer");
    const round = p.model.stream(
      {
        model: null,
        preamble: p.preamble,
        chat_history: h.getHistory(p.supportsImageInput),
        documents: [],
        tools: JSON.parse(JSON.stringify(p.tools)) as ToolDefinition[],
        temperature: null,
        max_tokens: null,
        tool_choice: null,
        additional_params: null,
        output_schema: null,
      },
      p.groupId,
    );
    p.onRound?.(round);
    let emittedToolCall = false;
    let loopBack = false;
    for (;;) {
      const next = p.cancel.cancelled ? "cancelled" : await Promise.race([round.pull(), p.cancel.promise]);
      if (next === "cancelled") {
        round.cancelled = true;
        h.flushTurnTrimmingReasoning();
        if (thinking) emit({ type: "ThinkingEnd" });
        return;
      }
      if (next === null) {
        endThinking();
        if (retries < MAX_RETRIES) {
          h.discardTurn();
          emit({ type: "Info", text: "Stream error (unexpected end), retrying..." });
          await sleep(p.retryDelayMs);
          retries++;
          continue outer;
        }
        h.flushTurnTrimmingReasoning();
        throw new Error("Stream timed out");
      }
      if (next.kind === "error") {
        endThinking();
        if (retryable(next.message) && retries < MAX_RETRIES) {
          h.discardTurn();
          emit({ type: "Info", text: "Stream error (unexpected end), retrying..." });
          await sleep(p.retryDelayMs);
          retries++;
          continue outer;
        }
        h.flushTurnTrimmingReasoning();
        throw new Error(next.message);
      }
      retries = 0;
      const completionId = `${p.groupId}-${p.messageId}-completion-${counter}`;
      counter++;
      // Only the first tool call of a round runs; everything after it but Final is dropped.
      if (emittedToolCall && next.kind !== "final") continue;
      switch (next.kind) {
        case "text":
          h.handleCompletion({ kind: "text", text: next.text }, completionId, null);
          endThinking();
          emit({ type: "TextChunk", text: next.text });
          break;
        case "thinking":
          if (!thinking) {
            thinking = true;
            emit({ type: "ThinkingStart" });
          }
          emit({ type: "ThinkingChunk", text: next.text });
          break;
        case "tool_call": {
          const tc: RigToolCall = { ...next.call, function: { name: next.call.function.name, arguments: sortKeysDeep(next.call.function.arguments) } };
          const name = tc.function.name;
          const displayAs = evalDisplayScript(p.registry.get(name)?.displayScript() ?? null, tc.function.arguments);
          h.handleCompletion({ kind: "tool_call", call: tc }, completionId, displayAs);
          endThinking();
          emittedToolCall = true;
          h.flushTurn();
          if (name === "receive_event__injected" || !p.toolNames.has(name)) {
            const text =
              name === "receive_event__injected"
                ? `Error: you cannot directly invoke ${name}, invocations will automatically be injected when events arrive.`
                : `Error: tool '${name}' does not exist`;
            await h.handleContent({ kind: "tool_result", result: textToolResult(tc.id, tc.call_id, text) }, `${tc.id}-unknown-tool`);
            loopBack = true;
            break;
          }
          const tool = p.registry.get(name)!;
          if (tool.supportsSync()) {
            // committed first, so a spawned child inherits the spawn call
            await h.sync();
            const res = await tool.executeSynchronous(tc.function.arguments, tc.id, tc.call_id, p.ctx);
            if (!res) throw new Error("bug: synchronous tool execution failed");
            emit({ type: "SyncToolCall", name, args: tc.function.arguments, displayAs });
            emit({ type: "SyncToolResult", result: res });
            const syncId = `${tc.id}-sync-result-${counter}`;
            counter++;
            await h.handleContent({ kind: "tool_result", result: res }, syncId);
            loopBack = true;
          } else {
            emit({ type: "ExecuteToolCall", name, args: tc.function.arguments, toolCallId: tc.id, callId: tc.call_id, displayAs });
          }
          break;
        }
        case "final":
          if (thinking) emit({ type: "ThinkingEnd" });
          thinking = false;
          h.flushTurn();
          emit({ type: "Done", usage: next.usage });
          if (loopBack) continue outer;
          return;
      }
    }
  }
}

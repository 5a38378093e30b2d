// One thread's step (reference §1.4, §4.1; core `system/thread.rs`): fold a batch of inputs into
// history, run at most one completion (the preamble built as the daemon does, with the optional
// promptPrefix seam), commit durably, THEN dispatch at most one asynchronous tool call.
import type { InfinityMessage, InputMessage, UserChoice } from "../../stores/infinity/messages.js";
import type { ConversationStore, InputSender, StateStore } from "../../stores/infinity/traits.js";
import { inputEvent, isUserTextInput, isDeferrableSyntheticEvent, prepareInput, runCompletion, CancelSignal, type CompletionEvent } from "./event-processor.js";
import type { AgentEvent, HarnessEvent } from "./events.js";
import { HistoryManager } from "./history-manager.js";
import type { ScriptedModel, Usage } from "./model.js";
import { buildPreamble } from "./preamble.js";
import {
  CancelSubscriptionTool,
  CloseThreadTool,
  ReportToParentTool,
  SendMessageToChildTool,
  sendToolError,
  SleepTool,
  SleepUntilEventOrInputTool,
  SleepUntilTool,
  SpawnThreadTool,
  toolDefinition,
  type ThreadConfig,
  type Timers,
  type Tool,
  type ToolContext,
} from "./tools.js";

/** What the prefix hook is told about the model (proposal §4.4 passes `model.context_window`). */
export interface PromptBudget {
  contextWindow: number;
}

/** The §4.4 seam: text to put before the daemon's preamble for this step, or null for none. */
export type PromptPrefix = (threadId: string, history: readonly InfinityMessage[], budget: PromptBudget) => string | null | undefined | Promise<string | null | undefined>;

/** Everything a thread needs from the system (core `SystemInner`). */
export interface SystemInner {
  conv: ConversationStore;
  state: StateStore;
  sender: InputSender;
  /** `ThreadConfigSource::resolve` (the daemon's session toolset, after any per-thread filter) */
  resolveConfig: (threadId: string) => Promise<ThreadConfig>;
  model: ScriptedModel;
  callbackUrl: string;
  builtinTools: boolean;
  sleepTools: boolean;
  timers: Timers;
  defaultPrompt: string;
  promptPrefix: PromptPrefix | null;
  retryDelayMs: number;
  newId: () => string;
  record: (e: HarnessEvent) => void;
}

export type StepOutcome = { kind: "skipped" } | { kind: "completed"; usage: Usage | null; contextWindow: number };

/** Deferred inputs (`InMemoryDeferQueue`). */
export type DeferQueue = [InputMessage, string][];

const CLOSE_THREAD_TOOL = "close_thread";

export class Thread {
  private config: ThreadConfig | null = null;
  private constructor(
    private readonly inner: SystemInner,
    readonly history: HistoryManager,
    private pendingChoices: UserChoice[],
  ) {}

  static async load(inner: SystemInner, threadId: string): Promise<Thread> {
    const history = await HistoryManager.load(inner.conv, inner.state, threadId);
    const choices = await inner.state.getPendingUserChoices(threadId);
    return new Thread(inner, history, choices);
  }

  get threadId(): string {
    return this.history.threadId;
  }

  private emit(event: AgentEvent): void {
    this.inner.record({ type: "agent", threadId: this.threadId, event });
  }

  /** Resolved once per Thread object (the daemon: once per driver spawn), built-ins appended. */
  async resolvedConfig(): Promise<ThreadConfig> {
    if (this.config) return this.config;
    const base = await this.inner.resolveConfig(this.threadId);
    const tools: Tool[] = [...base.tools];
    const i = this.inner;
    if (i.builtinTools) {
      tools.push(
        new SpawnThreadTool(i.conv),
        new ReportToParentTool(i.conv),
        new CloseThreadTool(i.conv, base.rapNotifier),
        new SendMessageToChildTool(i.conv),
        new CancelSubscriptionTool(i.state, base.rapNotifier),
        new SleepUntilEventOrInputTool(),
      );
    }
    if (i.sleepTools) tools.push(new SleepTool(i.timers), new SleepUntilTool(i.timers));
    this.config = { tools, extraSystemPrompt: base.extraSystemPrompt, rapNotifier: base.rapNotifier };
    return this.config;
  }

  /** The trailing unanswered call, if any: `[id, name]`. */
  pendingToolCall(): [string, string] | null {
    const last = this.history.history[this.history.history.length - 1];
    return last?.kind === "tool_call" ? [last.call.id, last.call.function.name] : null;
  }

  /** A pending call that is real work (not a passive sleep); unresolved config counts as active. */
  pendingActiveToolCall(): string | null {
    const p = this.pendingToolCall();
    if (!p) return null;
    const passive = this.config?.tools.find((t) => t.name === p[1])?.isPassive() ?? false;
    return passive ? null : p[0];
  }

  /** The driver stays resident while a result is still to come (close_thread's never comes). */
  awaitingToolResult(): boolean {
    const p = this.pendingToolCall();
    return p !== null && p[1] !== CLOSE_THREAD_TOOL;
  }

  /** Hold back synthetic events while an active call is pending, unless the batch settles it. */
  async filterDeferrable(inputs: [InputMessage, string][], defer: DeferQueue): Promise<[InputMessage, string][]> {
    await this.resolvedConfig();
    const pending = this.pendingActiveToolCall();
    if (pending === null) return [...inputs, ...defer.splice(0)];
    const settles = inputs.some(
      ([m]) =>
        isUserTextInput(m) ||
        ((m.synthetic === null || m.synthetic === undefined) && (m.content as { type?: string; id?: string }).type === "toolresult" && (m.content as { id?: string }).id === pending),
    );
    if (settles) return [...inputs, ...defer.splice(0)];
    const batch: [InputMessage, string][] = [];
    for (const item of inputs) {
      if (isDeferrableSyntheticEvent(item[0])) defer.push(item);
      else batch.push(item);
    }
    return batch;
  }

  private async prepareOne(input: InputMessage, messageId: string): Promise<boolean> {
    let res;
    try {
      res = await prepareInput(input, messageId, this.history, { conv: this.inner.conv, sender: this.inner.sender, newId: this.inner.newId });
    } catch (e) {
      this.emit({ type: "Info", text: `Error: ${(e as Error).message}` });
      return false;
    }
    switch (res.kind) {
      case "handled":
        return false;
      case "compaction_applied":
        this.emit({ type: "CompactionApplied" });
        return false;
      case "oauth_required":
        this.emit({ type: "OAuthRequired", auth_url: res.authUrl });
        return false;
      case "user_choice_required": {
        await this.inner.state.addPendingUserChoice(this.threadId, res.choice);
        const at = this.pendingChoices.findIndex((c) => c.id === res.choice.id);
        if (at >= 0) this.pendingChoices[at] = res.choice;
        else this.pendingChoices.push(res.choice);
        this.emit({ type: "UserChoiceRequired", choice: res.choice });
        return false;
      }
      case "ready": {
        const ev = inputEvent(this.history, input);
        if (ev) this.emit(ev);
        const content = input.content as { type?: string; id?: string };
        if (content.type === "toolresult" && this.pendingChoices.some((c) => c.id === content.id)) {
          // a result for the call that asked: its question is settled
          await this.inner.state.removePendingUserChoice(this.threadId, content.id!);
          this.pendingChoices = this.pendingChoices.filter((c) => c.id !== content.id);
          this.emit({ type: "UserChoiceDismissed", choice_id: content.id! });
        }
        return true;
      }
    }
  }

  /** One step over an already-filtered batch. */
  async stepNoDefer(inputs: [InputMessage, string][], cancel: CancelSignal): Promise<StepOutcome> {
    const threadId = this.threadId;
    const config = await this.resolvedConfig();

    let anyReady = false;
    let lastMessageId = "";
    for (const [input, id] of inputs) {
      if (await this.prepareOne(input, id)) {
        anyReady = true;
        lastMessageId = id;
      }
    }

    const interrupted = this.history.takeInterruptedToolCalls();
    if (interrupted.length > 0) {
      // Sequentially, to every server that was up when this thread's config was resolved.
      for (const callId of interrupted) await config.rapNotifier?.notifyToolCancelled(threadId, callId);
      for (const callId of interrupted) {
        await this.inner.state.removePendingUserChoice(threadId, callId);
        this.pendingChoices = this.pendingChoices.filter((c) => c.id !== callId);
        this.emit({ type: "UserChoiceDismissed", choice_id: callId });
      }
    }

    if (!anyReady) {
      await this.history.sync();
      return { kind: "skipped" };
    }

    const entry = this.inner.model.entry;
    const registry = new Map<string, Tool>();
    for (const t of config.tools) registry.set(t.name, t);
    const meta = this.history.getMetadata();
    const userId =
      meta !== null && typeof meta === "object" && typeof (meta as { user_id?: unknown }).user_id === "string" ? (meta as { user_id: string }).user_id : null;
    const ctx: ToolContext = {
      sender: this.inner.sender,
      groupId: threadId,
      callbackUrl: this.inner.callbackUrl,
      userId,
      threadStack: this.history.getThreadStack(),
    };

    this.emit({ type: "CompletionStarted" });

    let prefix: string | null = null;
    if (this.inner.promptPrefix) {
      try {
        prefix = (await this.inner.promptPrefix(threadId, [...this.history.history], { contextWindow: entry.context_window })) ?? null;
      } catch (e) {
        this.emit({ type: "Info", text: `Warning: prompt prefix failed, using the plain preamble: ${(e as Error).message}` });
      }
    }
    const preamble = buildPreamble({
      defaultPrompt: this.inner.defaultPrompt,
      threadId,
      rootThreadId: this.history.rootThreadId,
      extraSystemPrompt: config.extraSystemPrompt,
      prefix,
    });

    let action: Extract<CompletionEvent, { type: "ExecuteToolCall" }> | null = null;
    let usage: Usage | null = null;
    try {
      await runCompletion({
        model: this.inner.model,
        supportsImageInput: entry.supports_image_input,
        history: this.history,
        toolNames: new Set(config.tools.map((t) => t.name)),
        tools: config.tools.map(toolDefinition),
        registry,
        ctx,
        groupId: threadId,
        messageId: lastMessageId,
        preamble,
        cancel,
        retryDelayMs: this.inner.retryDelayMs,
        emit: (e) => {
          switch (e.type) {
            case "Info":
              this.emit({ type: "Info", text: e.text });
              break;
            case "TextChunk":
              this.emit({ type: "TextChunk", text: e.text });
              break;
            case "ThinkingStart":
              this.emit({ type: "ThinkingStarted" });
              break;
            case "ThinkingEnd":
              this.emit({ type: "ThinkingEnded" });
              break;
            case "ThinkingChunk":
              this.emit({ type: "ThinkingChunk", text: e.text });
              break;
            case "SyncToolCall":
              this.emit({ type: "ToolCall", name: e.name, args: e.args, display_as: e.displayAs });
              break;
            case "SyncToolResult": {
              const first = e.result.content[0];
              if (first?.type === "text") this.emit({ type: "ToolResult", segments: [{ type: "text", content: first.text }] });
              break;
            }
            case "Done":
              if (e.usage) usage = e.usage;
              break;
            case "ExecuteToolCall":
              this.emit({ type: "ToolCall", name: e.name, args: e.args, display_as: e.displayAs });
              if (action) throw new Error("bug: multiple terminal actions");
              action = e;
              break;
          }
        },
      });
    } catch (e) {
      this.emit({ type: "Info", text: `Error: ${(e as Error).message}` });
    }

    // Commit before dispatch: the call is durable before its result can possibly arrive.
    await this.history.sync();
    this.emit({ type: "CompletionFinished", usage });

    const act = action as Extract<CompletionEvent, { type: "ExecuteToolCall" }> | null;
    if (act) {
      try {
        await registry.get(act.name)!.execute(act.args, act.toolCallId, act.callId, ctx);
      } catch (e) {
        await sendToolError(ctx, act.toolCallId, act.callId, "Tool call failed").catch(() => undefined);
        this.emit({ type: "Info", text: `Error: ${(e as Error).message}` });
      }
    }
    return { kind: "completed", usage, contextWindow: entry.context_window };
  }
}

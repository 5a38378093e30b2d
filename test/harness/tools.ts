// The runtime's tools (reference §7, core `tools/`, daemon `rap_servers.rs` and
// `set_title_tool.rs`): the Tool shape, RAP tools bound to managed servers, and the built-ins
// (thread tools, cancel_subscription, the sleep family, set_title) with their exact texts.
import type { ConversationStore, InputSender, StateStore } from "../../stores/infinity/traits.js";
import type { InputMessage, ToolResult } from "../../stores/infinity/messages.js";
import { invocationJson, sortKeysDeep } from "../../toolsets/rap/wire-json.js";
import type { ManagedRapServer } from "./command-servers.js";
import type { HarnessEvent } from "./events.js";
import { rustDebugString } from "./preamble.js";
import { postJson, type RapNotifier } from "./rap-http.js";

/** `ToolContext` */
export interface ToolContext {
  sender: InputSender;
  /** the thread running the step */
  groupId: string;
  callbackUrl: string;
  /** root metadata "user_id" */
  userId: string | null;
  /** `[root, …, current]` */
  threadStack: string[];
}

/** `Tool<M>`: `execute` is fire and forget (the result comes back as input); sync tools answer inline. */
export interface Tool {
  readonly name: string;
  readonly description: string;
  parameters(): unknown;
  displayScript(): string | null;
  /** passive calls (sleeps) may be interrupted by synthetic events */
  isPassive(): boolean;
  supportsSync(): boolean;
  /** a rejection becomes the "Error: Tool call failed" result */
  execute(args: unknown, id: string, callId: string | null, ctx: ToolContext): Promise<void>;
  executeSynchronous(args: unknown, id: string, callId: string | null, ctx: ToolContext): Promise<ToolResult | null>;
}

/** `ThreadConfig`: what `ThreadConfigSource::resolve` returns for a thread. */
export interface ThreadConfig {
  tools: Tool[];
  extraSystemPrompt: string | null;
  rapNotifier: RapNotifier | null;
}

abstract class BaseTool implements Tool {
  abstract readonly name: string;
  abstract readonly description: string;
  abstract parameters(): unknown;
  displayScript(): string | null {
    return null;
  }
  isPassive(): boolean {
    return false;
  }
  supportsSync(): boolean {
    return false;
  }
  async execute(_args: unknown, _id: string, _callId: string | null, _ctx: ToolContext): Promise<void> {}
  async executeSynchronous(_args: unknown, _id: string, _callId: string | null, _ctx: ToolContext): Promise<ToolResult | null> {
    return null;
  }
}

/** A rig ToolResult with one text item (`call_id` omitted when None, as serde skips it). */
export function textToolResult(id: string, callId: string | null, text: string): ToolResult {
  return callId === null ? { id, content: [{ type: "text", text }] } : { id, call_id: callId, content: [{ type: "text", text }] };
}

/** A plain InputMessage carrying a tool result (no synthetic kind). */
export function toolResultInput(groupId: string, result: ToolResult, synthetic: InputMessage["synthetic"] = null): InputMessage {
  return {
    content: { type: "toolresult", ...result },
    group_id: groupId,
    metadata: null,
    synthetic,
    display_as: null,
    subscription: false,
  };
}

/** `send_tool_error`: enqueue `"Error: …"` as the call's result, dedup id = the call id. */
export async function sendToolError(ctx: ToolContext, id: string, callId: string | null, error: string): Promise<void> {
  await ctx.sender.sendToInputQueue(toolResultInput(ctx.groupId, textToolResult(id, callId, `Error: ${error}`)), id);
}

/** serde_json `args["key"].as_str()` */
function str(args: unknown, key: string): string | null {
  if (args === null || typeof args !== "object" || Array.isArray(args)) return null;
  const v = (args as Record<string, unknown>)[key];
  return typeof v === "string" ? v : null;
}

function field(args: unknown, key: string): unknown {
  if (args === null || typeof args !== "object" || Array.isArray(args)) return undefined;
  return (args as Record<string, unknown>)[key];
}

/** A panic inside a tool (Rust `expect`): the daemon's driver task dies; the harness fails the step. */
export class ToolPanic extends Error {
  override name = "ToolPanic";
}

// ---- RAP tools ----

export interface InvokeParams {
  endpoint: string;
  operation: string;
  arguments: unknown;
  id: string;
  callId: string | null;
}

/**
 * `invoke_rap_tool`: POST the invocation (daemon byte order, sorted `arguments`). A transport
 * failure rejects (→ "Error: Tool call failed"); a non-2xx enqueues the descriptive error result.
 */
export async function invokeRapTool(p: InvokeParams, ctx: ToolContext, record: (e: HarnessEvent) => void): Promise<void> {
  const stack = ctx.threadStack;
  const body = invocationJson({
    operation: p.operation,
    arguments: p.arguments,
    id: p.id,
    call_id: p.callId,
    callback_url: ctx.callbackUrl,
    group_id: ctx.groupId,
    user_id: ctx.userId,
    thread_ancestors: stack.length > 1 ? stack.slice(0, -1) : null,
  });
  let status: number;
  try {
    status = await postJson(p.endpoint, body);
  } catch (e) {
    record({ type: "invocation", threadId: ctx.groupId, operation: p.operation, toolCallId: p.id, endpoint: p.endpoint, body, status: null, error: (e as Error).message });
    throw e;
  }
  record({ type: "invocation", threadId: ctx.groupId, operation: p.operation, toolCallId: p.id, endpoint: p.endpoint, body, status });
  if (status < 200 || status >= 300) {
    await sendToolError(
      ctx,
      p.id,
      p.callId,
      `RAP tool '${p.operation}' failed: the server at ${p.endpoint} responded with HTTP ${status}. No result will arrive for this call.`,
    );
  }
}

/** `ManagedRapTool`: one manifest ToolDef bound to its server; each call asks for the current endpoint. */
export class ManagedRapTool extends BaseTool {
  constructor(
    readonly name: string,
    readonly description: string,
    private readonly inputSchema: unknown,
    private readonly script: string | null,
    readonly server: ManagedRapServer,
    private readonly record: (e: HarnessEvent) => void,
  ) {
    super();
  }
  parameters(): unknown {
    return this.inputSchema;
  }
  override displayScript(): string | null {
    return this.script;
  }
  override async execute(args: unknown, id: string, callId: string | null, ctx: ToolContext): Promise<void> {
    const endpoint = await this.server.invokeEndpoint();
    await invokeRapTool({ endpoint, operation: this.name, arguments: args, id, callId }, ctx, this.record);
  }
}

// ---- thread tools (core tools/thread.rs) ----

export class SpawnThreadTool extends BaseTool {
  readonly name = "spawn_thread";
  readonly description =
    "Spawn a new child thread for a sub-task. The new thread inherits the conversation context of the current thread and will see its tasks automatically. Returns the new thread ID.";
  constructor(private readonly conv: ConversationStore) {
    super();
  }
  parameters(): unknown {
    return {
      type: "object",
      properties: {
        instructions: {
          type: "string",
          description:
            "Instructions for the spawned thread describing what it should do. Make sure to include in the instructions what **you plan to do while the thread runs** to make sure the child thread doesn't accidentally duplicate your work.",
        },
        child_of: {
          type: "array",
          items: { type: "string" },
          description:
            'The thread stack that you are spawning from, used for validation. Pass the full thread stack from root to current thread. For example, if you are the root thread \'R\', pass ["R"]. If you are child \'A\' of root \'R\', pass ["R", "A"].',
        },
      },
      required: ["instructions", "child_of"],
    };
  }
  override supportsSync(): boolean {
    return true;
  }
  override async executeSynchronous(args: unknown, id: string, callId: string | null, ctx: ToolContext): Promise<ToolResult | null> {
    const raw = field(args, "child_of");
    const childOf = Array.isArray(raw) && raw.every((x) => typeof x === "string") ? (raw as string[]) : [];
    const same = childOf.length === ctx.threadStack.length && childOf.every((x, i) => x === ctx.threadStack[i]);
    if (!same) {
      const dbg = (a: string[]) => `[${a.map(rustDebugString).join(", ")}]`;
      return textToolResult(
        id,
        callId,
        `Error: child_of ${dbg(childOf)} does not match the actual thread stack ${dbg(ctx.threadStack)}. You may be confused and think you are in the parent thread, but you are not. You are in thread ${ctx.groupId}. Do NOT spawn threads — focus on your assigned task.`,
      );
    }
    let newThreadId: string;
    try {
      newThreadId = await this.conv.spawnThread(ctx.groupId, id, false, null);
    } catch (e) {
      return textToolResult(id, callId, `Error: failed to spawn thread: ${(e as Error).message}`);
    }
    const instructions = field(args, "instructions");
    if (instructions === undefined) throw new ToolPanic("bug: missing 'instructions' arg");
    if (typeof instructions !== "string") throw new ToolPanic("bug: 'instructions' arg is not a string");
    const seed = textToolResult(
      id,
      callId,
      `You are now INSIDE the thread that you requested to create. Your thread ID is ${newThreadId}. Your next task is to exactly follow these instructions: ${instructions}\n. Start by repeating to yourself the instructions, ignoring thinking from the parent context. Make sure to not be confused by the parent context. If the parent was planning to spawn more threads, you should not.`,
    );
    await ctx.sender.sendToInputQueue(toolResultInput(newThreadId, seed), id);
    return textToolResult(
      id,
      callId,
      `Child thread is successfully spawned and has ID: ${newThreadId}. You will be notified automatically when the child has anything to report. Make sure that you **do not** do the task assigned to the child thread.`,
    );
  }
}

export class ReportToParentTool extends BaseTool {
  readonly name = "report_to_parent";
  readonly description =
    "Send a report to the parent thread. Use this when you have intermediate results, updates, or information the parent should know about while you continue working.";
  constructor(private readonly conv: ConversationStore) {
    super();
  }
  parameters(): unknown {
    return {
      type: "object",
      properties: { report: { type: "string", description: "The report content to send to the parent thread." } },
      required: ["report"],
    };
  }
  override async execute(args: unknown, id: string, callId: string | null, ctx: ToolContext): Promise<void> {
    const report = str(args, "report");
    if (report === null) return sendToolError(ctx, id, callId, "report is required");
    const parent = await this.conv.getThreadParentInfo(ctx.groupId);
    if (!parent) return sendToolError(ctx, id, callId, "No parent thread found — this is a root thread");
    const [parentId, spawnToolCallId] = parent;
    const isSubscription = await this.conv.isSubscriptionEventThread(ctx.groupId).catch(() => false);
    const text = isSubscription
      ? `Report from temporary child thread created to process a subscription event:\n${report}`
      : `Report from child thread: ${report}`;
    await ctx.sender.sendToInputQueue(
      toolResultInput(parentId, textToolResult("", null, text), { type: "thread_report", tool_call_id: spawnToolCallId, child_thread_id: ctx.groupId }),
      id,
    );
    await ctx.sender.sendToInputQueue(toolResultInput(ctx.groupId, textToolResult(id, callId, "Report sent to parent thread.")), id);
  }
}

export class CloseThreadTool extends BaseTool {
  readonly name = "close_thread";
  readonly description =
    "Permanently shuts down the specified thread, marking it as complete. Use this from a thread that wants to close itself. Make sure to cancel any subscriptions you created before calling this. If the thread has additional information has not already been reported to the parent, include it in report_to_parent. Omit report_to_parent if there is nothing worth reporting.";
  constructor(
    private readonly conv: ConversationStore,
    private readonly notifier: RapNotifier | null,
  ) {
    super();
  }
  parameters(): unknown {
    return {
      type: "object",
      properties: {
        thread_id: { type: "string", description: "The ID of the thread to close." },
        report_to_parent: { type: "string", description: "Optional report to send to the parent thread." },
      },
      required: ["thread_id"],
    };
  }
  override async execute(args: unknown, id: string, callId: string | null, ctx: ToolContext): Promise<void> {
    const threadId = str(args, "thread_id");
    if (threadId === null) return sendToolError(ctx, id, callId, "thread_id is required");
    if (threadId !== ctx.groupId) {
      return sendToolError(ctx, id, callId, `the provided thread ID to close ${threadId} does not match the current thread ID ${ctx.groupId}`);
    }
    const parent = await this.conv.getThreadParentInfo(threadId);
    if (!parent) return sendToolError(ctx, id, callId, "cannot close the root thread. Only child threads can be closed.");
    const [parentId, spawnToolCallId] = parent;
    const report = str(args, "report_to_parent");
    // The thread is marked closed first; only then are the tool servers told.
    await this.conv.closeThread(threadId);
    const isCompaction = await this.conv.isCompactionThread(threadId).catch(() => false);
    if (isCompaction) {
      if (report !== null) {
        const upTo = (await this.conv.getThreadSpawnOrder(threadId)) ?? 0;
        await this.conv.saveCompactionSummary(parentId, report, upTo);
      }
      await ctx.sender.sendToInputQueue(toolResultInput(parentId, textToolResult("", null, "Compaction complete"), { type: "compaction_complete" }), id);
      await this.notifier?.notifyThreadClosed(threadId);
      return;
    }
    const isSubscription = await this.conv.isSubscriptionEventThread(threadId).catch(() => false);
    const text = isSubscription
      ? report === null
        ? null
        : `An event from your subscription ${spawnToolCallId} was processed by a child thread ${threadId}. The subscription remains active. Report from the child:\n${report}`
      : report === null
        ? `Child thread with ID ${threadId} has shut down`
        : `Child thread with ID ${threadId} has shut down. Report from child thread: ${report}`;
    if (text !== null) {
      await ctx.sender.sendToInputQueue(
        toolResultInput(parentId, textToolResult("", null, text), { type: "thread_report", tool_call_id: spawnToolCallId, child_thread_id: threadId }),
        id,
      );
    }
    await this.notifier?.notifyThreadClosed(threadId);
  }
}

export class SendMessageToChildTool extends BaseTool {
  readonly name = "send_message_to_child";
  readonly description = "Send a message to a child thread. The message will be injected inline into the child's conversation history.";
  constructor(private readonly conv: ConversationStore) {
    super();
  }
  parameters(): unknown {
    return {
      type: "object",
      properties: {
        thread_id: { type: "string", description: "The ID of the child thread to send the message to." },
        message: { type: "string", description: "The message content to send to the child thread." },
      },
      required: ["thread_id", "message"],
    };
  }
  override async execute(args: unknown, id: string, callId: string | null, ctx: ToolContext): Promise<void> {
    const child = str(args, "thread_id");
    if (child === null) return sendToolError(ctx, id, callId, "thread_id is required");
    const message = str(args, "message");
    if (message === null) return sendToolError(ctx, id, callId, "message is required");
    const info = await this.conv.getThreadParentInfo(child);
    if (!info) return sendToolError(ctx, id, callId, "Child thread not found or has no parent");
    const [parentId, spawnToolCallId] = info;
    if (parentId !== ctx.groupId) return sendToolError(ctx, id, callId, `thread ${child} is not a child of the current thread ${ctx.groupId}`);
    await ctx.sender.sendToInputQueue(
      toolResultInput(child, textToolResult("", null, `Message from parent thread: ${message}`), { type: "parent_message", tool_call_id: spawnToolCallId }),
      id,
    );
    await ctx.sender.sendToInputQueue(toolResultInput(ctx.groupId, textToolResult(id, callId, "Message sent to child thread.")), id);
  }
}

export class CancelSubscriptionTool extends BaseTool {
  readonly name = "cancel_subscription";
  readonly description =
    "Cancel an active subscription by its tool call ID. This sends a cancellation notification to the tool server and removes the subscription from tracking. You can only cancel subscriptions that were created by the current thread.";
  constructor(
    private readonly state: StateStore,
    private readonly notifier: RapNotifier | null,
  ) {
    super();
  }
  parameters(): unknown {
    return {
      type: "object",
      properties: {
        tool_call_id: {
          type: "string",
          description: "The tool call ID of the subscription to cancel. This is the ID of the original tool call that started the subscription.",
        },
      },
      required: ["tool_call_id"],
    };
  }
  override supportsSync(): boolean {
    return true;
  }
  override async executeSynchronous(args: unknown, id: string, callId: string | null, ctx: ToolContext): Promise<ToolResult | null> {
    const toolCallId = str(args, "tool_call_id");
    if (toolCallId === null) return textToolResult(id, callId, "Error: tool_call_id is required");
    let active: string[];
    try {
      active = await this.state.getActiveSubscriptions(ctx.groupId);
    } catch {
      return textToolResult(id, callId, "Error: failed to read thread subscriptions");
    }
    if (!active.includes(toolCallId)) return textToolResult(id, callId, `Error: no active subscription found for tool call ID '${toolCallId}'`);
    await this.notifier?.notifyToolCancelled(ctx.groupId, toolCallId);
    await this.state.removeActiveSubscription(ctx.groupId, toolCallId).catch(() => undefined);
    return textToolResult(id, callId, `Subscription '${toolCallId}' cancelled successfully.`);
  }
}

// ---- sleep family (core tools/sleep.rs) ----

export class SleepUntilEventOrInputTool extends BaseTool {
  readonly name = "sleep_until_event_or_input";
  readonly description =
    "Sleep indefinitely until an external event or user input arrives. Use this when you have completed all current tasks and are waiting for something to happen (e.g., a webhook, a scheduled event, or user input). The agent will pause and automatically resume when new input is received.";
  parameters(): unknown {
    return { type: "object", properties: {}, required: [] };
  }
  override displayScript(): string | null {
    return '"Sleeping until event or input"';
  }
  override isPassive(): boolean {
    return true;
  }
}

/** In-process timers of the sleep tools; cleared when the harness shuts down. */
export class Timers {
  private readonly live = new Set<NodeJS.Timeout>();
  after(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.live.delete(t);
      fn();
    }, Math.max(0, ms));
    this.live.add(t);
  }
  clear(): void {
    for (const t of this.live) clearTimeout(t);
    this.live.clear();
  }
}

export class SleepTool extends BaseTool {
  readonly name = "sleep";
  readonly description =
    "Sleep for a specified number of seconds before continuing. Useful for waiting or delaying actions. This tool will automatically be interrupted by the system on user input, so you are free to invoke it in a loop as necessary.";
  constructor(private readonly timers: Timers) {
    super();
  }
  parameters(): unknown {
    return {
      type: "object",
      properties: {
        seconds: { type: "number", description: "Number of seconds to sleep" },
        reason: { type: "string", description: "Human-readable reason for sleeping" },
      },
      required: ["seconds"],
    };
  }
  override displayScript(): string | null {
    return 'let s = "Sleeping " + args.seconds + "s"; if args.reason != () { s += ": " + args.reason; } s';
  }
  override isPassive(): boolean {
    return true;
  }
  override async execute(args: unknown, id: string, callId: string | null, ctx: ToolContext): Promise<void> {
    const v = field(args, "seconds");
    const seconds = typeof v === "number" ? v : 0;
    this.timers.after(seconds > 0 ? seconds * 1000 : 0, () => {
      void ctx.sender.sendToInputQueue(toolResultInput(ctx.groupId, textToolResult(id, callId, `Slept for ${seconds} seconds`)), id);
    });
  }
}

/** UTC milliseconds of a wall-clock time in an IANA zone (two passes over the zone offset). */
function zonedToUtc(y: number, mo: number, d: number, h: number, mi: number, s: number, tz: string): number {
  const fmt = new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" });
  const offsetAt = (ms: number) => {
    const p = Object.fromEntries(fmt.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
    return Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second)) - ms;
  };
  const guess = Date.UTC(y, mo - 1, d, h, mi, s);
  const first = guess - offsetAt(guess);
  return guess - offsetAt(first);
}

export class SleepUntilTool extends BaseTool {
  readonly name = "sleep_until";
  readonly description = "Sleep until a specific date and time in a given timezone. The agent will hibernate and wake up at the specified time.";
  constructor(
    private readonly timers: Timers,
    private readonly now: () => number = Date.now,
  ) {
    super();
  }
  parameters(): unknown {
    return {
      type: "object",
      properties: {
        date: { type: "string", description: "Target date in YYYY-MM-DD format" },
        time: { type: "string", description: "Target time in HH:MM or HH:MM:SS 24-hour format" },
        timezone: { type: "string", description: "IANA timezone name. Defaults to UTC." },
      },
      required: ["date", "time"],
    };
  }
  override displayScript(): string | null {
    return 'let s = "Sleeping until " + args.date + " " + args.time; if args.timezone != () { s += " (" + args.timezone + ")"; } s';
  }
  override isPassive(): boolean {
    return true;
  }
  override async execute(args: unknown, id: string, callId: string | null, ctx: ToolContext): Promise<void> {
    const dateStr = str(args, "date") ?? "";
    const timeStr = str(args, "time") ?? "";
    const tz = str(args, "timezone") ?? "UTC";
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: tz });
    } catch {
      throw new Error(`Invalid timezone: '${tz}'`);
    }
    const dm = /^(\d{4})-(\d{2})-(\d{2})$/.exec(dateStr);
    const tm = /^(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(timeStr);
    if (!dm || !tm) throw new Error("input contains invalid characters");
    const target = zonedToUtc(Number(dm[1]), Number(dm[2]), Number(dm[3]), Number(tm[1]), Number(tm[2]), Number(tm[3] ?? 0), tz);
    const now = this.now();
    const past = target <= now;
    const text = past ? `Target time ${dateStr} ${timeStr} is in the past. Waking immediately.` : `Woke up at target time: ${dateStr} ${timeStr} (${tz})`;
    this.timers.after(past ? 0 : target - now, () => {
      void ctx.sender.sendToInputQueue(toolResultInput(ctx.groupId, textToolResult(id, callId, text)), id);
    });
  }
}

// ---- daemon tool ----

export class SetTitleTool extends BaseTool {
  readonly name = "set_title";
  readonly description = "Set a short, friendly human-readable title for the current thread describing what it is working on.";
  constructor(private readonly setTitle: (threadId: string, title: string) => void) {
    super();
  }
  parameters(): unknown {
    return {
      type: "object",
      properties: { title: { type: "string", description: "A short human-readable title for the thread" } },
      required: ["title"],
    };
  }
  override displayScript(): string | null {
    return '"Set Thread Title: " + args.title';
  }
  override async execute(args: unknown, id: string, callId: string | null, ctx: ToolContext): Promise<void> {
    const title = str(args, "title") ?? "";
    this.setTitle(ctx.groupId, title);
    await ctx.sender.sendToInputQueue(toolResultInput(ctx.groupId, textToolResult(id, callId, `Title set to: ${title}`)), id);
  }
}

/** The model's view of a tool (rig ToolDefinition); serde_json writes `parameters` with sorted keys. */
export function toolDefinition(t: Tool): { name: string; description: string; parameters: unknown } {
  return { name: t.name, description: t.description, parameters: sortKeysDeep(t.parameters()) };
}

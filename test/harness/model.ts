// A scripted model in the style of Infinity's `rig-mock` (reference §6): every completion the
// runtime starts becomes a round that the test takes with `nextRequest()`, inspects (the exact
// request: preamble, chat_history as rig Message JSON, tools) and answers chunk by chunk.
//
//   const round = await model.nextRequest();
//   model.sendToolCall("tc-1", "memory_search", { query: "build" });
//   model.finish();

/** rig `ToolDefinition`: what the model sees of a tool. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: unknown;
}

/** rig-core 0.31 `Message` JSON (reference §3.2). */
export type RigUserContent =
  | { type: "text"; text: string }
  | { type: "toolresult"; id: string; call_id?: string; content: RigToolResultContent[] }
  | { type: string; [k: string]: unknown };
export type RigToolResultContent = { type: "text"; text: string } | { type: "image"; data: { type: "base64"; value: string }; media_type?: string };
export interface RigToolCall {
  id: string;
  call_id: string | null;
  function: { name: string; arguments: unknown };
  signature: string | null;
  additional_params: unknown;
}
export type RigAssistantContent = { text: string } | RigToolCall | Record<string, unknown>;
export type RigMessage = { role: "user"; content: RigUserContent[] } | { role: "assistant"; id: null; content: RigAssistantContent[] };

/** rig `CompletionRequest` as `run_completion` builds it (only preamble, chat_history and tools vary). */
export interface CompletionRequest {
  model: null;
  preamble: string;
  chat_history: RigMessage[];
  documents: [];
  tools: ToolDefinition[];
  temperature: null;
  max_tokens: null;
  tool_choice: null;
  additional_params: null;
  output_schema: null;
}

/** rig `Usage` */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cached_input_tokens: number;
}

/** provider `ModelEntry`: `context_window` 0 disables auto-compaction. */
export interface ModelEntry {
  model_id: string;
  display_name: string;
  context_window: number;
  max_output_tokens: number | null;
  supports_image_input: boolean;
}

export const DEFAULT_MODEL_ENTRY: ModelEntry = {
  model_id: "mock",
  display_name: "mock",
  context_window: 0,
  max_output_tokens: null,
  supports_image_input: false,
};

/** One streamed item (rig `RawStreamingChoice`, reduced to what the runtime acts on). */
export type StreamChunk =
  | { kind: "text"; text: string }
  | { kind: "tool_call"; call: RigToolCall }
  | { kind: "thinking"; text: string }
  | { kind: "final"; usage: Usage | null }
  | { kind: "error"; message: string };

/** The end of a round's stream: `null` = closed (after Final, or dropped). */
type Pull = StreamChunk | null;

/** One completion round: the request and the handle that answers it. */
export class ModelRound {
  private readonly queue: Pull[] = [];
  private waiter: ((p: Pull) => void) | null = null;
  private closed = false;
  /** set by the runtime when user text interrupted this completion */
  cancelled = false;

  constructor(
    readonly request: CompletionRequest,
    /** harness metadata (not part of the request): the thread that asked */
    readonly threadId: string,
    readonly seq: number,
  ) {}

  private push(p: Pull): void {
    if (this.closed) throw new Error(`round ${this.seq} (thread ${this.threadId}) is already finished`);
    if (p === null) this.closed = true;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w(p);
    } else {
      this.queue.push(p);
    }
  }

  /** runtime side: the next chunk, or null once the stream is closed */
  pull(): Promise<Pull> {
    if (this.queue.length > 0) return Promise.resolve(this.queue.shift()!);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => (this.waiter = resolve));
  }

  get finished(): boolean {
    return this.closed;
  }

  sendText(text: string): this {
    this.push({ kind: "text", text });
    return this;
  }

  /** A complete tool call (`RawStreamingToolCall::new`: no call_id, signature or params). */
  sendToolCall(id: string, name: string, args: unknown, opts: { callId?: string } = {}): this {
    this.push({ kind: "tool_call", call: { id, call_id: opts.callId ?? null, function: { name, arguments: args }, signature: null, additional_params: null } });
    return this;
  }

  /** A reasoning delta: shown as thinking, never stored. */
  sendThinking(text: string): this {
    this.push({ kind: "thinking", text });
    return this;
  }

  /** Final response (optionally with usage), then close the stream. */
  finish(opts: { usage?: Usage | null } = {}): void {
    this.push({ kind: "final", usage: opts.usage ?? null });
    this.push(null);
  }

  /** A stream error. Texts containing "unexpected end of stream" are retried by the runtime. */
  sendError(message: string): this {
    this.push({ kind: "error", message });
    return this;
  }

  /** Close without Final: the runtime discards the partial turn and retries the request. */
  dropStream(): void {
    this.push(null);
  }
}

export interface NextRequestOptions {
  /** only a round of this thread (others stay queued for later calls) */
  threadId?: string;
  timeoutMs?: number;
}

/**
 * The model shared by every thread of a MockInfinity, and its controller. Rounds queue in the
 * order the runtime starts them; `nextRequest` takes the oldest (optionally of one thread).
 */
export class ScriptedModel {
  private readonly rounds: ModelRound[] = [];
  private readonly waiters: { opts: NextRequestOptions; resolve: (r: ModelRound) => void }[] = [];
  private seq = 0;
  private current: ModelRound | null = null;
  /** every round ever started, in order (for transcripts and assertions) */
  readonly history: ModelRound[] = [];

  constructor(readonly entry: ModelEntry = DEFAULT_MODEL_ENTRY) {}

  /** runtime side: start a completion */
  stream(request: CompletionRequest, threadId: string): ModelRound {
    const round = new ModelRound(request, threadId, ++this.seq);
    this.history.push(round);
    const w = this.waiters.findIndex((x) => matches(round, x.opts));
    if (w >= 0) {
      const [waiter] = this.waiters.splice(w, 1);
      this.current = round;
      waiter!.resolve(round);
    } else {
      this.rounds.push(round);
    }
    return round;
  }

  /** Wait for the next completion request (rig-mock `next_request`) and make it current. */
  nextRequest(opts: NextRequestOptions = {}): Promise<ModelRound> {
    const i = this.rounds.findIndex((r) => matches(r, opts));
    if (i >= 0) {
      const [round] = this.rounds.splice(i, 1);
      this.current = round!;
      return Promise.resolve(round!);
    }
    const timeoutMs = opts.timeoutMs ?? 10_000;
    return new Promise((resolve, reject) => {
      const waiter = {
        opts,
        resolve: (r: ModelRound) => {
          clearTimeout(timer);
          resolve(r);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`no model request${opts.threadId ? ` from thread ${opts.threadId}` : ""} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** rig-mock `try_next_request`: a queued round or null, without waiting. */
  tryNextRequest(opts: NextRequestOptions = {}): ModelRound | null {
    const i = this.rounds.findIndex((r) => matches(r, opts));
    if (i < 0) return null;
    const [round] = this.rounds.splice(i, 1);
    this.current = round!;
    return round!;
  }

  /** rounds started but not yet taken by nextRequest */
  get queued(): number {
    return this.rounds.length;
  }

  private cur(): ModelRound {
    if (!this.current) throw new Error("call nextRequest() first");
    return this.current;
  }

  sendText(text: string): void {
    this.cur().sendText(text);
  }

  sendToolCall(id: string, name: string, args: unknown, opts: { callId?: string } = {}): void {
    this.cur().sendToolCall(id, name, args, opts);
  }

  sendThinking(text: string): void {
    this.cur().sendThinking(text);
  }

  finish(opts: { usage?: Usage | null } = {}): void {
    this.cur().finish(opts);
  }

  sendError(message: string): void {
    this.cur().sendError(message);
  }

  dropStream(): void {
    this.cur().dropStream();
  }
}

function matches(r: ModelRound, opts: NextRequestOptions): boolean {
  return opts.threadId === undefined || r.threadId === opts.threadId;
}

/** rig-mock test helper `tool_result_texts`: the first text of every tool result in the history. */
export function toolResultTexts(req: CompletionRequest): string[] {
  const out: string[] = [];
  for (const m of req.chat_history) {
    if (m.role !== "user") continue;
    const c = m.content[0];
    if (c?.type === "toolresult") {
      const first = (c as { content: RigToolResultContent[] }).content[0];
      if (first?.type === "text") out.push(first.text);
    }
  }
  return out;
}

/** A usage whose total crosses 3/4 of `contextWindow` (to trigger auto-compaction). */
export function highUsage(contextWindow: number): Usage {
  const total = Math.floor((contextWindow * 3) / 4) + 1;
  return { input_tokens: total - 1, output_tokens: 1, total_tokens: total, cached_input_tokens: 0 };
}

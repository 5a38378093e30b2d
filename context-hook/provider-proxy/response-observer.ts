// Watches the response lines the proxy relays: whether the exchange reached its end (so an
// upstream that vanishes half-way can be told apart from one that finished), and for a model
// call, what the model said and called. Excerpts only; bounded memory however long the stream.
import { responseKind, Usage, WireToolCall, type ResponseKind } from "./protocol.js";
import { createHash } from "node:crypto";
import { headOf } from "../../core/text.js";

export const FINAL_TEXT_CHARS = 2000;
const MAX_TOOL_CALLS = 32;
const MAX_ERRORS = 8;
const ERROR_CHARS = 500;

export interface ObservedToolCall {
  id: string;
  name: string;
  /** sha256 of the compact JSON arguments, 16 hex */
  args_digest: string;
}

export type ExchangeState = "waiting" | "streaming" | "done" | "failed";

export class ResponseObserver {
  state: ExchangeState = "waiting";
  private text = "";
  private textComplete = true;
  readonly toolCalls: ObservedToolCall[] = [];
  readonly errors: string[] = [];
  usage: Usage | null = null;

  constructor(private readonly request: "list" | "invoke" | "other") {}

  /** the exchange ended the way the protocol ends it (Models, StreamEnd or Error) */
  get finished(): boolean {
    return this.state === "done" || this.state === "failed";
  }

  /** InvokeStarted was seen: a failure now must be reported as a chunk, not as the response */
  get started(): boolean {
    return this.state === "streaming" || (this.state === "done" && this.request === "invoke");
  }

  get finalText(): string {
    return this.text;
  }

  get finalTextTruncated(): boolean {
    return !this.textComplete;
  }

  observe(line: string): ResponseKind {
    const kind = responseKind(line);
    if (this.finished) return kind;
    switch (kind) {
      case "models":
        this.state = "done";
        break;
      case "error":
        this.state = "failed";
        break;
      case "started":
        this.state = "streaming";
        break;
      case "end":
        this.state = "done";
        break;
      case "chunk":
        if (this.request === "invoke") this.chunk(line);
        break;
      case "unknown":
        break;
    }
    return kind;
  }

  private chunk(line: string): void {
    // Text beyond the excerpt needs no parse: skip the large lines cheaply.
    if (line.startsWith('{"Chunk":{"Message":') && this.text.length >= FINAL_TEXT_CHARS) {
      this.textComplete = false;
      return;
    }
    let item: unknown;
    try {
      item = (JSON.parse(line) as { Chunk?: unknown }).Chunk;
    } catch {
      return;
    }
    if (typeof item !== "object" || item === null) return;
    const v = item as Record<string, unknown>;
    if (typeof v.Message === "string") {
      const room = FINAL_TEXT_CHARS - this.text.length;
      if (v.Message.length > room) this.textComplete = false;
      // never half of a surrogate pair: the trace's JSON would carry a lone "\ud83d"
      this.text += headOf(v.Message, room);
    } else if ("ToolCall" in v) {
      const call = WireToolCall.safeParse(v.ToolCall);
      if (call.success && this.toolCalls.length < MAX_TOOL_CALLS) {
        this.toolCalls.push({ id: call.data.id, name: call.data.name, args_digest: argsDigest(call.data.arguments, line) });
      }
    } else if ("Final" in v) {
      const final = v.Final as { usage?: unknown } | null;
      const usage = Usage.safeParse(final?.usage);
      this.usage = usage.success ? usage.data : null;
    } else if (typeof v.Error === "string" && this.errors.length < MAX_ERRORS) {
      this.errors.push(headOf(v.Error, ERROR_CHARS));
    }
  }
}

function argsDigest(v: unknown, line: string): string {
  let json: string;
  try {
    json = JSON.stringify(v) ?? "null";
  } catch {
    // Nested deeper than JSON.stringify can walk (JSON.parse read it): this runs in the upstream's
    // data listener, where a throw would take the proxy down. The line still names the arguments.
    json = line;
  }
  return createHash("sha256").update(json).digest("hex").slice(0, 16);
}

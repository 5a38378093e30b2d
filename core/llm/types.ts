// The model-call seam used by the learning loop (summaries, skill drafting, judging). Callers see
// one `Llm`; adapters only implement `LlmBackend.generate` (one plain text call), and the shared
// client (client.ts) adds structured output, timeouts, cancellation and the daily budget.
import type { z } from "zod";

export type LlmErrorCode =
  /** no model is configured or reachable: callers fall back to deterministic code */
  | "unavailable"
  | "timeout"
  | "cancelled"
  | "budget_exhausted"
  /** the model's answer did not validate, even after the repair retry */
  | "invalid_output"
  /** the model or its provider answered with an error */
  | "upstream";

export interface LlmErrorDetails {
  op?: string;
  /** zod issues of the last answer (invalid_output) */
  issues?: readonly z.core.$ZodIssue[];
  /** HTTP status (openai adapter) */
  status?: number;
  cause?: unknown;
}

export class LlmError extends Error {
  readonly op: string | undefined;
  readonly issues: readonly z.core.$ZodIssue[] | undefined;
  readonly status: number | undefined;

  constructor(
    readonly code: LlmErrorCode,
    message: string,
    details: LlmErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "LlmError";
    this.op = details.op;
    this.issues = details.issues;
    this.status = details.status;
  }
}

export function isLlmError(e: unknown, code?: LlmErrorCode): e is LlmError {
  return e instanceof LlmError && (code === undefined || e.code === code);
}

export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cachedInputTokens?: number;
}

export interface LlmRequest<T = string> {
  /** what the call is for ("summarize_session", "draft_skill"); keys fakes, budgets and logs */
  op: string;
  system?: string;
  prompt: string;
  /** when given, the answer is parsed as JSON and validated; `value` is the parsed result */
  schema?: z.ZodType<T>;
  maxTokens?: number;
  signal?: AbortSignal;
  /** deadline for the whole call, repair retry included; the client's default otherwise */
  timeoutMs?: number;
}

export interface LlmResult<T = string> {
  /** the model's last answer, verbatim */
  text: string;
  /** the validated value with a schema, else the text itself */
  value: T;
  /** summed over the calls made (null when no call reported usage) */
  usage: LlmUsage | null;
  adapter: string;
  op: string;
  /** backend calls made: 1, or 2 after a repair retry */
  calls: number;
}

export interface Llm {
  readonly adapter: string;
  complete<T = string>(req: LlmRequest<T>): Promise<LlmResult<T>>;
  /** releases what the adapter holds (a spawned provider process); idempotent */
  close(): Promise<void>;
}

/** one plain text call as an adapter sees it */
export interface LlmCall {
  op: string;
  system?: string;
  prompt: string;
  maxTokens?: number;
  /** aborted on timeout or cancellation; its `reason` is the LlmError to reject with */
  signal: AbortSignal;
}

export interface LlmReply {
  text: string;
  usage: LlmUsage | null;
}

export interface LlmBackend {
  readonly name: string;
  generate(call: LlmCall): Promise<LlmReply>;
  close?(): Promise<void>;
}

/** the error an aborted call rejects with: the LlmError set as the reason, else "cancelled" */
export function abortError(signal: AbortSignal, op?: string): LlmError {
  const r: unknown = signal.reason;
  if (r instanceof LlmError) return r;
  return new LlmError("cancelled", `${op ?? "llm call"}: cancelled`, { op, cause: r });
}

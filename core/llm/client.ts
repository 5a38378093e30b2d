// Turns an adapter (`LlmBackend`) into an `Llm`: one deadline per complete() covering the repair
// retry, caller cancellation, the daily budget per backend call, and schema validation.
import type { CallBudget } from "./budget.js";
import { parseStructured, repairPrompt, structuredPrompt } from "./structured.js";
import {
  abortError,
  LlmError,
  type Llm,
  type LlmBackend,
  type LlmReply,
  type LlmRequest,
  type LlmResult,
  type LlmUsage,
} from "./types.js";

export const DEFAULT_LLM_TIMEOUT_MS = 60_000;

export interface LlmClientOptions {
  /** default deadline of a complete() call */
  timeoutMs?: number;
  /** absent: unlimited (tests, the fake) */
  budget?: CallBudget;
}

export function createLlm(backend: LlmBackend, opts: LlmClientOptions = {}): Llm {
  let closed = false;
  return {
    adapter: backend.name,
    complete: <T = string>(req: LlmRequest<T>) => complete(backend, opts, req),
    async close() {
      if (closed) return;
      closed = true;
      await backend.close?.();
    },
  };
}

async function complete<T>(backend: LlmBackend, opts: LlmClientOptions, req: LlmRequest<T>): Promise<LlmResult<T>> {
  const { op } = req;
  if (req.signal?.aborted) throw new LlmError("cancelled", `${op}: cancelled before it started`, { op });
  const timeoutMs = req.timeoutMs ?? opts.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS;
  const ctl = new AbortController();
  const timer = setTimeout(
    () => ctl.abort(new LlmError("timeout", `${op}: no answer within ${timeoutMs} ms`, { op })),
    timeoutMs,
  );
  const onCallerAbort = () => ctl.abort(new LlmError("cancelled", `${op}: cancelled`, { op, cause: req.signal?.reason }));
  req.signal?.addEventListener("abort", onCallerAbort, { once: true });

  let calls = 0;
  let usage: LlmUsage | null = null;
  const call = async (prompt: string): Promise<string> => {
    if (ctl.signal.aborted) throw abortError(ctl.signal, op);
    await opts.budget?.take(op);
    calls++;
    const reply = await untilAborted(
      backend.generate({ op, system: req.system, prompt, maxTokens: req.maxTokens, signal: ctl.signal }),
      ctl.signal,
      op,
    );
    usage = addUsage(usage, reply.usage);
    return reply.text;
  };

  try {
    const schema = req.schema;
    if (!schema) {
      const text = await call(req.prompt);
      return { text, value: text as T, usage, adapter: backend.name, op, calls };
    }
    const prompt = structuredPrompt(req.prompt, schema);
    const first = await call(prompt);
    const v1 = parseStructured(first, schema);
    if (v1.ok) return { text: first, value: v1.value, usage, adapter: backend.name, op, calls };
    // One repair: the model sees its own answer and the validation errors.
    const second = await call(repairPrompt(prompt, first, v1.summary));
    const v2 = parseStructured(second, schema);
    if (v2.ok) return { text: second, value: v2.value, usage, adapter: backend.name, op, calls };
    throw new LlmError("invalid_output", `${op}: the answer did not match the schema after a repair retry: ${v2.summary}`, {
      op,
      issues: v2.issues,
    });
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener("abort", onCallerAbort);
  }
}

/** settles with the abort reason as soon as `signal` fires, whether or not the adapter noticed */
function untilAborted(p: Promise<LlmReply>, signal: AbortSignal, op: string): Promise<LlmReply> {
  return new Promise<LlmReply>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal, op));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, (e: unknown) => reject(asLlmError(e, op))).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function asLlmError(e: unknown, op: string): LlmError {
  if (e instanceof LlmError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new LlmError("upstream", `${op}: ${message}`, { op, cause: e });
}

function addUsage(a: LlmUsage | null, b: LlmUsage | null): LlmUsage | null {
  if (!a) return b;
  if (!b) return a;
  const sum: LlmUsage = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  if (a.cachedInputTokens !== undefined || b.cachedInputTokens !== undefined) {
    sum.cachedInputTokens = (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0);
  }
  return sum;
}

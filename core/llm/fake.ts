// A scripted model for tests across the project, keyed by `op`. It runs behind the real client
// (client.ts), so schema validation, the repair retry, timeouts and the budget behave as in
// production; only the model is scripted.
import type { CallBudget } from "./budget.js";
import { createLlm } from "./client.js";
import { LlmError, type Llm, type LlmCall, type LlmReply, type LlmUsage } from "./types.js";

/** one scripted answer: text, a full reply, an error to throw, or a function of the call */
export type FakeAnswer =
  | string
  | LlmReply
  | Error
  | ((call: LlmCall, n: number) => string | LlmReply | Promise<string | LlmReply>);

/**
 * Per op: one answer for every call, or a list answered in order (the last one repeats), so
 * `["not json", '{"ok":true}']` scripts a repair.
 */
export type FakeScript = Record<string, FakeAnswer | FakeAnswer[]>;

export interface FakeCallRecord {
  op: string;
  system: string | undefined;
  prompt: string;
  maxTokens: number | undefined;
}

export interface FakeLlm extends Llm {
  /** every backend call, repairs included, in order */
  readonly calls: FakeCallRecord[];
  callsFor(op: string): FakeCallRecord[];
  /** adds or replaces ops */
  script(more: FakeScript): void;
}

export interface FakeLlmOptions {
  timeoutMs?: number;
  budget?: CallBudget;
  usage?: LlmUsage | null;
}

export function createFakeLlm(initial: FakeScript = {}, opts: FakeLlmOptions = {}): FakeLlm {
  const script: FakeScript = { ...initial };
  const calls: FakeCallRecord[] = [];
  const counts = new Map<string, number>();
  const usage = opts.usage ?? null;

  const inner = createLlm(
    {
      name: "fake",
      async generate(call: LlmCall): Promise<LlmReply> {
        calls.push({ op: call.op, system: call.system, prompt: call.prompt, maxTokens: call.maxTokens });
        const n = counts.get(call.op) ?? 0;
        counts.set(call.op, n + 1);
        const entry = script[call.op];
        if (entry === undefined) {
          throw new LlmError("unavailable", `fake llm: nothing scripted for op ${JSON.stringify(call.op)}`, { op: call.op });
        }
        const answer = Array.isArray(entry) ? entry[Math.min(n, entry.length - 1)] : entry;
        if (answer === undefined) {
          throw new LlmError("unavailable", `fake llm: empty script for op ${call.op}`, { op: call.op });
        }
        if (answer instanceof Error) throw answer;
        const out = typeof answer === "function" ? await answer(call, n) : answer;
        return typeof out === "string" ? { text: out, usage } : out;
      },
    },
    { timeoutMs: opts.timeoutMs, budget: opts.budget },
  );

  return {
    adapter: inner.adapter,
    complete: inner.complete,
    close: inner.close,
    calls,
    callsFor: (op) => calls.filter((c) => c.op === op),
    script(more) {
      Object.assign(script, more);
    },
  };
}

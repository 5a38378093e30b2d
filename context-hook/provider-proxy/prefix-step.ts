// The one change the proxy makes to a model call: find who it is for, ask the prefix builder, and
// put the prefix in front of the preamble. Everything here runs under a deadline; whatever goes
// wrong, the call goes through unchanged (a missing prefix costs less than a stalled model call).
import { performance } from "node:perf_hooks";
import type { PrefixBuilder, PrefixResult } from "../../core/retrieval/prefix-types.js";
import { parsePreambleThreadIds, type ThreadContext } from "../thread-context.js";
import { replaceStringAt } from "./json-splice.js";
import { PREAMBLE_PATH, type WireCompletionRequest } from "./protocol.js";
import { buildTask, DEFAULT_TASK_OPTIONS, isCompactionHistory, type TaskOptions } from "./task.js";
import type { PrefixSummary } from "./trace.js";

export interface PrefixStepDeps {
  builder: PrefixBuilder;
  resolve: (preamble: string) => Promise<ThreadContext | null>;
  deadlineMs: number;
  budgetTokens: number;
  taskOptions?: TaskOptions;
  /** the work that missed its deadline finished after all (ms since it started; error if it failed) */
  onLate?: (ms: number, err: unknown) => void;
}

export interface PrefixOutcome {
  summary: PrefixSummary;
  threadId: string | null;
  rootId: string | null;
  /** the rewritten request line; null: forward the original bytes */
  line: string | null;
  resolveMs: number;
  buildMs: number;
  totalMs: number;
  error?: string;
}

type Work =
  | { kind: "no_thread" }
  | { kind: "built"; ctx: ThreadContext; result: PrefixResult; resolveMs: number; buildMs: number };

class DeadlineExceeded extends Error {}

export async function applyPrefix(rawLine: string, request: WireCompletionRequest, deps: PrefixStepDeps): Promise<PrefixOutcome> {
  const started = performance.now();
  const preamble = request.preamble;
  const ids = typeof preamble === "string" ? parsePreambleThreadIds(preamble) : null;
  const base = { threadId: ids?.threadId ?? null, rootId: ids?.rootId ?? null, resolveMs: 0, buildMs: 0 };
  const unchanged = (status: PrefixSummary["status"], error?: string): PrefixOutcome => ({
    ...base,
    summary: { status, itemIds: [], tokens: 0 },
    line: null,
    totalMs: performance.now() - started,
    ...(error === undefined ? {} : { error }),
  });
  if (typeof preamble !== "string" || !ids) return unchanged("no_thread");
  if (isCompactionHistory(request.chat_history)) return unchanged("compaction");

  const work = (async (): Promise<Work> => {
    const ctx = await deps.resolve(preamble);
    if (!ctx) return { kind: "no_thread" };
    const resolved = performance.now();
    const { task, recent } = buildTask(request.chat_history, deps.taskOptions ?? DEFAULT_TASK_OPTIONS);
    const result = await deps.builder.build({ scope: ctx.scope, task, recent, budgetTokens: deps.budgetTokens });
    return { kind: "built", ctx, result, resolveMs: resolved - started, buildMs: performance.now() - resolved };
  })();

  let done: Work;
  try {
    done = await withDeadline(work, deps.deadlineMs);
  } catch (e) {
    if (e instanceof DeadlineExceeded) {
      // The builder cannot be interrupted; let it finish in the background, reported but harmless.
      work.then(
        () => deps.onLate?.(performance.now() - started, null),
        (err: unknown) => deps.onLate?.(performance.now() - started, err),
      );
      return unchanged("timeout", `no prefix within ${deps.deadlineMs} ms`);
    }
    return unchanged("error", e instanceof Error ? e.message : String(e));
  }
  if (done.kind === "no_thread") return unchanged("no_thread");

  const { result } = done;
  const summary: PrefixSummary = {
    status: result.disabled ? "disabled" : result.text.trim().length === 0 ? "empty" : "applied",
    itemIds: result.items.map((i) => i.id),
    tokens: result.tokensUsed,
  };
  const timing = { resolveMs: done.resolveMs, buildMs: done.buildMs };
  if (summary.status !== "applied") {
    return { ...base, ...timing, summary, line: null, totalMs: performance.now() - started };
  }
  const line = replaceStringAt(rawLine, PREAMBLE_PATH, `${result.text}\n\n${preamble}`);
  if (line === null) return { ...unchanged("error", "preamble not found in the request text"), ...timing };
  return { ...base, ...timing, summary, line, totalMs: performance.now() - started };
}

function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DeadlineExceeded()), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

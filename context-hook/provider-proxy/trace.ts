// The trace event a relayed model call leaves for the learning loop. One event per distinct
// request: the runtime retries a failed stream with the same history, and those retries share a
// dedup key (thread, history length, last message), so they are stored once.
import { createHash } from "node:crypto";
import type { TraceEvent } from "../../stores/traits.js";
import type { ResponseObserver } from "./response-observer.js";
import { lastMessageKey, trailingToolResults } from "./task.js";

export const TOOL_RESULT_CHARS = 500;

/** how the prefix step went for this call (recorded so learning can tell what the model saw) */
export interface PrefixSummary {
  status: "applied" | "empty" | "disabled" | "no_thread" | "compaction" | "timeout" | "error" | "off";
  itemIds: string[];
  tokens: number;
}

export interface RelayedCall {
  threadId: string | null;
  rootId: string | null;
  modelId: string;
  history: readonly unknown[];
  prefix: PrefixSummary;
}

export function traceDedupKey(threadId: string | null, history: readonly unknown[]): string {
  return createHash("sha256")
    .update(`provider_proxy\0${threadId ?? ""}\0${history.length}\0${lastMessageKey(history)}`)
    .digest("hex");
}

export function traceEventOf(call: RelayedCall, obs: ResponseObserver, at: number): TraceEvent {
  return {
    source: "provider_proxy",
    dedupKey: traceDedupKey(call.threadId, call.history),
    threadId: call.threadId,
    rootThreadId: call.rootId,
    kind: "model_call",
    body: {
      thread_id: call.threadId,
      model_id: call.modelId,
      history_len: call.history.length,
      tool_calls: obs.toolCalls,
      tool_results: trailingToolResults(call.history, TOOL_RESULT_CHARS),
      final_text: obs.finalText,
      final_text_truncated: obs.finalTextTruncated,
      usage: obs.usage,
      stream_errors: obs.errors,
      prefix: { status: call.prefix.status, item_ids: call.prefix.itemIds, tokens: call.prefix.tokens },
    },
    at,
  };
}

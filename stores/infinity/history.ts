// History assembly shared by every ConversationStore: the slice rule of load_history_up_to and
// the ancestors + compaction algorithm of load_history_with_ancestors (reference §3.4), written
// once so stores only provide the primitive reads.
import { InfinityStoreError } from "./errors.js";
import type { InfinityMessage } from "./messages.js";
import type { ConversationReader, ConversationStore, HistoryWithAncestors, ToleratedEntry } from "./traits.js";

export const COMPACTION_SUMMARY_HEADER = "[Compacted conversation summary]\n";

/** the assistant message that stands in for everything a summary covers */
export function compactionSummaryMessage(summary: string): InfinityMessage {
  return { kind: "assistant", content: { text: COMPACTION_SUMMARY_HEADER + summary } };
}

/**
 * A thread's messages, read around kinds this version does not know (a newer daemon's) where the
 * reader can: those come as `[null, id, kind]` in their place. A reader without a tolerant read
 * has no such messages to skip (or fails as strictly as the daemon would).
 */
export function loadTolerant(reader: ConversationReader, threadId: string, from?: number | null, upTo?: number | null): Promise<ToleratedEntry[]> {
  return reader.loadMessagesTolerant ? reader.loadMessagesTolerant(threadId, from, upTo) : reader.loadMessagesWithIds(threadId, from, upTo);
}

/**
 * `[start, end)` of load_history_up_to over `len` messages: `startFrom` counts messages to skip
 * and `upTo` is an exclusive end (the Rust doc comment says otherwise; the code does this).
 * Negative bounds count as 0, so an out-of-range request yields an empty slice, never an error.
 */
export function historySlice(len: number, startFrom?: number | null, upTo?: number | null): [number, number] {
  for (const b of [startFrom, upTo]) {
    if (b !== null && b !== undefined && !Number.isInteger(b)) {
      throw new InfinityStoreError("invalid_argument", `history bounds must be integers, got ${b}`);
    }
  }
  const end = Math.min(Math.max(upTo ?? len, 0), len);
  const start = Math.min(Math.max(startFrom ?? 0, 0), end);
  return [start, end];
}

export type HistorySource = Pick<
  ConversationStore,
  "loadHistoryUpTo" | "getAncestorChain" | "loadLatestCompactionSummaryUpTo"
>;

/**
 * 1. The thread's own latest summary `(S, k)`: `[summary(S)] + own[k..]`, returns `(h, k, 0)`.
 * 2. Otherwise walk the ancestors from the parent up to the root for the first one whose summary
 *    fits within the inherited cutoff: `[summary] + that[k..cutoff] + later ancestors[0..cutoff]`;
 *    without one, every ancestor's `[0..cutoff]`. Then the thread's own messages; returns
 *    `(h, null, prefix length)`.
 */
export async function loadHistoryWithAncestors(
  store: HistorySource,
  threadId: string,
): Promise<HistoryWithAncestors> {
  const own = await summaryOf(store, threadId, null);
  if (own) {
    const [summary, k] = own;
    const rest = await store.loadHistoryUpTo(threadId, k, null);
    return [[compactionSummaryMessage(summary), ...rest], k, 0];
  }

  const chain = await store.getAncestorChain(threadId);
  let from = 0;
  const combined: InfinityMessage[] = [];
  for (let i = chain.length - 1; i >= 0; i--) {
    const [ancestor, cutoff] = chain[i]!;
    const found = await summaryOf(store, ancestor, cutoff);
    if (!found) continue;
    combined.push(compactionSummaryMessage(found[0]));
    combined.push(...(await store.loadHistoryUpTo(ancestor, found[1], cutoff)));
    from = i + 1;
    break;
  }
  for (const [ancestor, cutoff] of chain.slice(from)) {
    combined.push(...(await store.loadHistoryUpTo(ancestor, null, cutoff)));
  }
  const prefixLen = combined.length;
  combined.push(...(await store.loadHistoryUpTo(threadId, null, null)));
  return [combined, null, prefixLen];
}

/**
 * The reference reads summaries with `if let Ok(Some(..))`: a failed lookup counts as "no
 * summary", so the turn still gets the uncompacted history instead of failing.
 */
async function summaryOf(
  store: HistorySource,
  threadId: string,
  upTo: number | null,
): Promise<[string, number] | null> {
  try {
    return await store.loadLatestCompactionSummaryUpTo(threadId, upTo);
  } catch {
    return null;
  }
}

// Delivery C: the prefix builder called in-process through a runtime's prompt-prefix seam
// (the mock runtime's `promptPrefix`, or a patched daemon embedding this package). The thread's
// scope comes from the runtime's own stores: the ancestor chain, the root's `user_id` metadata
// and the session's working directory.
import type { RequestScope } from "../core/memory/scope.js";
import type { PrefixBuilder } from "../core/retrieval/prefix-types.js";
import { messageText } from "../stores/infinity/messages.js";
import type { ConversationStore, InfinityMessage, StateStore } from "../stores/traits.js";
import { clip, headOf } from "../core/text.js";
import { projectDir } from "../stores/infinity-files/project-dir.js";
import { COMPACTION_CALL, DEFAULT_TASK_OPTIONS } from "./provider-proxy/task.js";

/** How many earlier turns join the latest user message as the task text. */
const TASK_WINDOW = 3;
const TASK_MAX_CHARS = 2000;
/** Each recent text is cut to this: the provider proxy's and gRPC hook's one limit (task.ts). */
export const RECENT_MAX_CHARS = DEFAULT_TASK_OPTIONS.recentChars;

function isUserText(m: InfinityMessage): boolean {
  return m.kind === "user" && m.content.type === "text";
}

/** The latest user message plus a short window of the turns before it; and the recent texts. */
export function taskFromHistory(history: readonly InfinityMessage[]): { task: string; recent: string[] } {
  // Only heads go on: a whole 20 MB tool result in `recent` kept the builder normalising and
  // splitting it into words for seconds, at every step while it stayed among the last turns.
  const texts = history.map((m) => ({ m, text: messageText(m) })).filter((x) => /\S/.test(x.text));
  const recentOf = (from: number) => texts.slice(from).map((x) => clip(x.text, RECENT_MAX_CHARS));
  const lastUser = [...texts].reverse().findIndex((x) => isUserText(x.m));
  if (lastUser < 0) return { task: "", recent: recentOf(-TASK_WINDOW) };
  const at = texts.length - 1 - lastUser;
  const window = texts.slice(Math.max(0, at - TASK_WINDOW), at).map((x) => headOf(x.text, TASK_MAX_CHARS));
  const task = headOf([headOf(texts[at]!.text, TASK_MAX_CHARS), ...window.reverse()].join("\n"), TASK_MAX_CHARS);
  return { task, recent: recentOf(-2 * TASK_WINDOW) };
}

export interface InProcessHookDeps {
  builder: PrefixBuilder;
  conversation: Pick<ConversationStore, "getAncestorChain">;
  state: Pick<StateStore, "getMetadata">;
  /** the session's working directory (the project), if known */
  cwdOf(rootThreadId: string): string | null | Promise<string | null>;
  localUser: string;
  budgetTokens?: number;
}

export async function scopeOfThread(deps: Omit<InProcessHookDeps, "builder">, threadId: string): Promise<RequestScope> {
  const chain = await deps.conversation.getAncestorChain(threadId);
  const ancestors = chain.map(([id]) => id);
  const root = ancestors[0] ?? threadId;
  const meta = (await deps.state.getMetadata(root)) as { user_id?: unknown } | null;
  const user = typeof meta?.user_id === "string" && meta.user_id.length > 0 ? meta.user_id : deps.localUser;
  // keyed as the memory toolset keys its own cwd (absolute, links resolved): a runtime handing
  // the session's cwd through a link or with a trailing slash still finds the project's memories
  const cwd = await deps.cwdOf(root);
  return { user, project: cwd ? projectDir(cwd) : null, session: root, thread: threadId, ancestors };
}

/** A `(threadId, history) => prefix` function for a runtime's prompt-prefix seam. */
export function inProcessPromptPrefix(deps: InProcessHookDeps) {
  return async (threadId: string, history: readonly InfinityMessage[]): Promise<string | null> => {
    // A compaction thread's summary becomes the parent's history for good: recalled memories
    // there would outlive a later forget (the runtime's synthetic call marks such a thread).
    if (history.some((m) => m.kind === "tool_call" && m.call.function.name === COMPACTION_CALL)) return null;
    const { task, recent } = taskFromHistory(history);
    if (!task) return null;
    const scope = await scopeOfThread(deps, threadId);
    const r = await deps.builder.build({ scope, task, recent, budgetTokens: deps.budgetTokens });
    return r.text || null;
  };
}

// Who a model call is for, recovered from what a provider proxy sees: the thread-id line the
// runtime writes into every preamble (reference §4.1), then the daemon's files (§3.5) for the
// ancestors, the user and the project, with the toolsets' root_contexts table as the fallback.
import type { RequestScope } from "../core/memory/scope.js";
import type { InfinityHome } from "../stores/infinity-files/home.js";
import type { RootContextStore } from "../stores/traits.js";

// `event_processor.rs::run_completion`: "Your current thread ID is `{t}`. The root thread ID is `{r}`."
const THREAD_LINE = /Your current thread ID is `([^`\n]+)`\. The root thread ID is `([^`\n]+)`\./;

export interface PreambleThreadIds {
  threadId: string;
  rootId: string;
}

/**
 * The ids in the runtime's thread line; null when there is none. The first match wins: the line
 * follows the fixed default prompt, and anything appended later (the session's extra prompt)
 * could quote such a line.
 */
export function parsePreambleThreadIds(preamble: string): PreambleThreadIds | null {
  const m = THREAD_LINE.exec(preamble);
  if (!m) return null;
  return { threadId: m[1]!, rootId: m[2]! };
}

export type UserSource = "root_metadata" | "root_contexts" | "local";
export type ProjectSource = "sessions" | "root_contexts" | null;

export interface ThreadContext {
  threadId: string;
  rootId: string;
  scope: RequestScope;
  userFrom: UserSource;
  projectFrom: ProjectSource;
}

export interface ThreadContextDeps {
  /** user id when neither the root's metadata nor root_contexts names one */
  localUser: string;
  /** the daemon's state directory (`~/.infinity`), read-only */
  home?: InfinityHome | null;
  rootContexts?: RootContextStore | null;
  /** remembers ancestor chains read from the home (a thread's parent never changes) */
  ancestorCache?: AncestorCache | null;
  /** a source that failed to read; resolution goes on with the next source */
  onSourceError?: (source: "thread_meta" | "root_metadata" | "sessions" | "root_contexts", err: unknown) => void;
}

export async function resolveThreadContext(preamble: string, deps: ThreadContextDeps): Promise<ThreadContext | null> {
  const ids = parsePreambleThreadIds(preamble);
  if (!ids) return null;
  const { threadId, rootId } = ids;
  const home = deps.home ?? null;
  const fail = deps.onSourceError ?? (() => {});

  const [ancestors, metaUser, cwd, stored] = await Promise.all([
    ancestorsOf(threadId, rootId, home, deps.ancestorCache ?? null, fail),
    home ? guarded(() => userIdOfMetadata(home, rootId), "root_metadata", fail) : null,
    home ? guarded(async () => home.sessions.cwdOf(rootId), "sessions", fail) : null,
    deps.rootContexts ? guarded(() => deps.rootContexts!.get(rootId), "root_contexts", fail) : null,
  ]);

  const userFrom: UserSource = metaUser ? "root_metadata" : stored ? "root_contexts" : "local";
  const user = metaUser ?? stored?.userId ?? deps.localUser;
  const projectFrom: ProjectSource = cwd ? "sessions" : stored?.project ? "root_contexts" : null;
  const project = cwd ?? stored?.project ?? null;
  return {
    threadId,
    rootId,
    scope: { user, project, session: rootId, thread: threadId, ancestors },
    userFrom,
    projectFrom,
  };
}

/** Ancestor chains by thread, bounded; the oldest entry goes first. */
export class AncestorCache {
  private readonly chains = new Map<string, string[]>();

  constructor(private readonly maxThreads = 4096) {}

  get(threadId: string): string[] | undefined {
    return this.chains.get(threadId);
  }

  set(threadId: string, chain: string[]): void {
    this.chains.delete(threadId);
    this.chains.set(threadId, chain);
    if (this.chains.size > this.maxThreads) {
      const oldest = this.chains.keys().next().value;
      if (oldest !== undefined) this.chains.delete(oldest);
    }
  }
}

/**
 * Root → parent. From the threads' meta files when the daemon's home is readable; otherwise (or
 * when the child's meta is not written yet) the root is the one ancestor known for sure.
 */
async function ancestorsOf(
  threadId: string,
  rootId: string,
  home: InfinityHome | null,
  cache: AncestorCache | null,
  fail: NonNullable<ThreadContextDeps["onSourceError"]>,
): Promise<string[]> {
  if (threadId === rootId) return [];
  const cached = cache?.get(threadId);
  if (cached) return [...cached];
  const chain = home ? await guarded(() => home.conversation.getAncestorChain(threadId), "thread_meta", fail) : null;
  if (!chain || chain.length === 0) return [rootId];
  const ids = chain.map(([id]) => id);
  // Only a chain that reaches the preamble's root is complete enough to keep.
  if (ids[0] === rootId) cache?.set(threadId, ids);
  return [...ids];
}

/** `state/{root}.state.json` → metadata.user_id (how the daemon passes user_id to toolsets) */
async function userIdOfMetadata(home: InfinityHome, rootId: string): Promise<string | null> {
  const meta = await home.state.getMetadata(rootId);
  if (typeof meta !== "object" || meta === null || Array.isArray(meta)) return null;
  const user = (meta as Record<string, unknown>).user_id;
  return typeof user === "string" && user.length > 0 ? user : null;
}

async function guarded<T>(
  read: () => Promise<T>,
  source: Parameters<NonNullable<ThreadContextDeps["onSourceError"]>>[0],
  fail: NonNullable<ThreadContextDeps["onSourceError"]>,
): Promise<T | null> {
  try {
    return await read();
  } catch (e) {
    fail(source, e);
    return null;
  }
}

// Scope derivation and visibility (ARCHITECTURE.md "Scope"). Pure: the caller supplies the
// invocation fields and what the server knows about its project.
import { createHash } from "node:crypto";
import type { RecordScope, ScopeLevel } from "./record.js";

/** Who is asking, derived once per invocation. */
export interface RequestScope {
  user: string;
  project: string | null;
  session: string;
  thread: string;
  /** root → parent, excluding `thread` */
  ancestors: string[];
}

export interface InvocationIdentity {
  group_id: string;
  user_id?: string | null | undefined;
  thread_ancestors?: string[] | null | undefined;
}

export function deriveRequestScope(
  inv: InvocationIdentity,
  opts: { localUser: string; project: string | null },
): RequestScope {
  const ancestors = inv.thread_ancestors ?? [];
  return {
    user: inv.user_id && inv.user_id.length > 0 ? inv.user_id : opts.localUser,
    project: opts.project,
    session: ancestors[0] ?? inv.group_id,
    thread: inv.group_id,
    ancestors: [...ancestors],
  };
}

/** The scope a new record gets when written at `level` by `req`. */
export function recordScopeFor(req: RequestScope, level: ScopeLevel): RecordScope {
  return {
    level,
    user: req.user,
    project: level === "user" ? null : req.project,
    session: level === "session" || level === "thread" ? req.session : null,
    thread: level === "thread" ? req.thread : null,
  };
}

/**
 * A request that sees the record scope `scope` itself: how a person's correction of one record
 * (the CLI, the review page) goes through the same update path as a thread's.
 */
export function requestScopeOwning(scope: RecordScope): RequestScope {
  return { user: scope.user, project: scope.project, session: scope.session ?? "", thread: scope.thread ?? "", ancestors: [] };
}

/**
 * Visibility key of a record: one opaque token per (level, owner, level key). A request sees the
 * union of a small set of keys, so the scope predicate can live inside the index lookup (an FTS
 * column match, a vector partition) instead of being a post-filter.
 */
export function visibilityKey(scope: RecordScope): string {
  const parts = [scope.level, scope.user];
  if (scope.level === "project") parts.push(scope.project ?? "");
  if (scope.level === "session") parts.push(scope.session ?? "");
  if (scope.level === "thread") parts.push(scope.thread ?? "");
  const h = createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 20);
  return `k${h}`;
}

/**
 * Every key visible to a request: user items, project items, session items, thread + ancestors.
 * With `levels` (non-empty), only the keys of those levels: a memory's key is its level's, so a
 * search narrowed to session items reads one small scope, not the user's whole store.
 */
export function visibleKeys(req: RequestScope, levels?: readonly ScopeLevel[]): string[] {
  const want = (l: ScopeLevel) => !levels || levels.length === 0 || levels.includes(l);
  const keys: string[] = [];
  if (want("user")) keys.push(visibilityKey({ level: "user", user: req.user, project: null, session: null, thread: null }));
  if (req.project && want("project")) {
    keys.push(visibilityKey({ level: "project", user: req.user, project: req.project, session: null, thread: null }));
  }
  if (want("session")) keys.push(visibilityKey({ level: "session", user: req.user, project: null, session: req.session, thread: null }));
  if (want("thread")) {
    for (const t of [req.thread, ...req.ancestors]) {
      keys.push(visibilityKey({ level: "thread", user: req.user, project: null, session: null, thread: t }));
    }
  }
  return [...new Set(keys)];
}

export function isVisible(scope: RecordScope, req: RequestScope): boolean {
  return visibleKeys(req).includes(visibilityKey(scope));
}

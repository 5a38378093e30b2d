// Row-level security (postgres://…?rls=1) binds every store call to a user. serve binds each
// memory tool call to the user it acts for, and runs its cross-user work — session indexing, the
// learning worker, the admin API and the ContextHook service — as system maintenance.
import type { RapInvocation } from "../toolsets/rap/wire.js";
import type { Toolset } from "../toolsets/rap/registry.js";

export interface Identity {
  asUser<T>(user: string, fn: () => T): T;
  asSystem<T>(fn: () => T): T;
}

/** No RLS: everything runs as is. */
export const NO_IDENTITY: Identity = { asUser: (_u, fn) => fn(), asSystem: (fn) => fn() };

/** The PostgreSQL adapter's binding, loaded only when a server runs with rls=1. */
export async function pgIdentity(): Promise<Identity> {
  const { withPgUser, asPgSystem } = await import("../stores/postgres/pool.js");
  return { asUser: withPgUser, asSystem: asPgSystem };
}

/** Each tool call of the toolset runs as the user `userOf` names for its invocation. */
export function bindCallsToUser(ts: Toolset, userOf: (inv: RapInvocation) => string, id: Identity): Toolset {
  if (id === NO_IDENTITY) return ts;
  return {
    ...ts,
    tools: ts.tools.map((t) => ({ ...t, handler: (args, ctx) => id.asUser(userOf(ctx.invocation), () => t.handler(args, ctx)) })),
  };
}

/** The method runs as system maintenance whoever calls it (e.g. indexing every user's sessions). */
export function asSystemMethod<O extends object, K extends keyof O>(obj: O, key: K, id: Identity): void {
  if (id === NO_IDENTITY) return;
  const orig = obj[key] as unknown as (...a: unknown[]) => unknown;
  (obj as Record<K, unknown>)[key] = (...a: unknown[]) => id.asSystem(() => orig.apply(obj, a));
}

// Who owns a session and which project it works in, for the scope of a proposed memory: what the
// toolsets recorded about the session first, then the conversation source's metadata, then the
// configured local user and the server's notion of the project.
import type { RequestScope } from "../memory/scope.js";
import type { RootContextStore } from "../../stores/traits.js";

export interface ScopeSources {
  roots?: Pick<RootContextStore, "get"> | null;
  userOf?: ((root: string) => Promise<string | null>) | null;
  cwdOf?: ((root: string) => Promise<string | null>) | null;
  projectOf?: ((root: string) => string | null) | null;
  localUser: string;
}

export function scopeResolver(s: ScopeSources): (root: string, thread: string) => Promise<RequestScope> {
  return async (root, thread) => {
    const rc = (await s.roots?.get(root)) ?? null;
    const user = rc?.userId ?? (await s.userOf?.(root)) ?? s.localUser;
    const project = rc?.project ?? (await s.cwdOf?.(root)) ?? s.projectOf?.(root) ?? null;
    return { user, project, session: root, thread, ancestors: [] };
  };
}

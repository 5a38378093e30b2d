// Enable/disable resolution: a setting applies at user, project, session or thread level, and the
// narrowest one that exists wins (this thread, then its ancestors nearest first, then the session,
// the project, the user). Without any setting a skill is enabled.
import type { RequestScope } from "../memory/scope.js";
import type { SkillToggle, ToggleLevel } from "./version.js";

/** The (level, key) pairs a request is under, narrowest first. */
export function toggleScopes(req: RequestScope): { level: ToggleLevel; key: string }[] {
  const out: { level: ToggleLevel; key: string }[] = [];
  for (const t of [req.thread, ...[...req.ancestors].reverse()]) out.push({ level: "thread", key: t });
  out.push({ level: "session", key: req.session });
  if (req.project) out.push({ level: "project", key: projectKey(req.user, req.project) });
  out.push({ level: "user", key: req.user });
  return out;
}

/**
 * A project setting belongs to one user's view of that project: the pair as a JSON array, which no
 * user id or path can forge. (It was the two joined by a NUL, which PostgreSQL text refuses, so
 * every project-scoped skill request failed there; SQLite migration 18 rewrote those keys.)
 */
export function projectKey(user: string, project: string): string {
  return JSON.stringify([user, project]);
}

/** The project path of a project setting's key (also of a key from before migration 18). */
export function projectOfKey(key: string): string {
  if (key.startsWith("[")) {
    try {
      const pair = JSON.parse(key) as unknown;
      if (Array.isArray(pair) && pair.length === 2 && typeof pair[1] === "string") return pair[1];
    } catch {
      // not a pair: shown as it is
    }
  }
  const cut = key.indexOf("\u0000");
  return cut >= 0 ? key.slice(cut + 1) : key;
}

/** The key a setting at `level` gets for this request. */
export function keyAt(req: RequestScope, level: ToggleLevel): string {
  switch (level) {
    case "user":
      return req.user;
    case "project":
      return projectKey(req.user, req.project ?? "");
    case "session":
      return req.session;
    case "thread":
      return req.thread;
  }
}

/** Skill ids disabled for this request, given every setting found under its scopes. */
export function disabledSkills(req: RequestScope, toggles: SkillToggle[]): Set<string> {
  const order = toggleScopes(req).map((s) => `${s.level}:${s.key}`);
  const rank = new Map(order.map((k, i) => [k, i]));
  const best = new Map<string, { rank: number; enabled: boolean }>();
  for (const t of toggles) {
    const r = rank.get(`${t.level}:${t.key}`);
    if (r === undefined) continue;
    const cur = best.get(t.skillId);
    if (!cur || r < cur.rank) best.set(t.skillId, { rank: r, enabled: t.enabled });
  }
  return new Set([...best].filter(([, v]) => !v.enabled).map(([id]) => id));
}

// Reads the daemon's sessions.json ({"sessions": {"<root id>": {"cwd": …, "shut_down": …}}}, or
// the older list form {"sessions": [{"thread_id": …}]}) to learn a session's working directory
// and whether it was stopped. Read-only; re-read when the file changes.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { projectDir } from "./project-dir.js";

/** `session_store.rs::SessionEntry`; `cwd` is null for sessions from the older list form */
export const SessionEntry = z.looseObject({
  cwd: z.string().nullable().default(null),
  shut_down: z.boolean().default(false),
  idle: z.boolean().default(false),
  archived: z.boolean().default(false),
});
export type SessionEntry = z.output<typeof SessionEntry>;

const SessionsFile = z.object({
  sessions: z.union([
    z.record(z.string(), SessionEntry),
    // the daemon falls back to its own cwd for these; a reader cannot know it
    z
      .array(z.looseObject({ thread_id: z.string() }))
      .transform((list) =>
        Object.fromEntries(list.map((e) => [e.thread_id, SessionEntry.parse({})])),
      ),
  ]),
});

export class SessionsReader {
  private cache: { mtimeMs: number; size: number; data: Record<string, SessionEntry> } | null = null;

  constructor(private readonly infinityHome: string) {}

  /**
   * A missing file reads as no sessions (the daemon starts from none, too). An unparsable one is
   * most likely mid-rewrite: keep the last good copy until the write completes.
   */
  private load(): Record<string, SessionEntry> {
    const path = join(this.infinityHome, "sessions.json");
    let st;
    try {
      st = statSync(path);
    } catch {
      this.cache = null;
      return {};
    }
    if (this.cache && this.cache.mtimeMs === st.mtimeMs && this.cache.size === st.size) return this.cache.data;
    try {
      const data = SessionsFile.parse(JSON.parse(readFileSync(path, "utf8"))).sessions;
      this.cache = { mtimeMs: st.mtimeMs, size: st.size, data };
      return data;
    } catch {
      return this.cache?.data ?? {};
    }
  }

  /** every session by root thread id */
  sessions(): Record<string, SessionEntry> {
    return { ...this.load() };
  }

  /** the session's working directory, links resolved as a command server in it would see it */
  cwdOf(sessionId: string): string | null {
    const cwd = this.load()[sessionId]?.cwd ?? null;
    return cwd === null ? null : projectDir(cwd);
  }

  isShutDown(sessionId: string): boolean {
    return this.load()[sessionId]?.shut_down === true;
  }
}

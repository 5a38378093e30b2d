// Reads the daemon's sessions.json ({"sessions": {"<root id>": {"cwd": …}}}) to learn a
// session's working directory. Read-only; re-read when the file changes.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";

interface SessionsFile {
  sessions?: Record<string, { cwd?: string; shut_down?: boolean }>;
}

export class SessionsReader {
  private cache: { mtimeMs: number; data: SessionsFile } | null = null;

  constructor(private readonly infinityHome: string) {}

  private load(): SessionsFile {
    const path = join(this.infinityHome, "sessions.json");
    try {
      const st = statSync(path);
      if (this.cache && this.cache.mtimeMs === st.mtimeMs) return this.cache.data;
      const data = JSON.parse(readFileSync(path, "utf8")) as SessionsFile;
      this.cache = { mtimeMs: st.mtimeMs, data };
      return data;
    } catch {
      return {};
    }
  }

  cwdOf(sessionId: string): string | null {
    return this.load().sessions?.[sessionId]?.cwd ?? null;
  }

  isShutDown(sessionId: string): boolean {
    return this.load().sessions?.[sessionId]?.shut_down === true;
  }
}

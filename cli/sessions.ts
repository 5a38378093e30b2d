// Where session search reads conversations from: the daemon's files (`infinity-home:DIR`) or an
// Infinity-shaped SQLite store (`sqlite:PATH`, e.g. the harness's), parsed from CLI specs.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { Clock } from "../core/clock.js";
import { SessionIndexer, type SessionSource } from "../core/sessions/indexer.js";
import { SessionSearch } from "../core/sessions/search.js";
import { openInfinityHome } from "../stores/infinity-files/home.js";
import { openDatabase, type Db } from "../stores/sqlite/database.js";
import { SqliteConversationStore } from "../stores/sqlite/conversation-store.js";
import { SqliteSessionIndex } from "../stores/sqlite/session-index.js";
import { SqliteStateStore } from "../stores/sqlite/state-store.js";

export function defaultInfinityHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.INFINITY_HOME ?? join(homedir(), ".infinity");
}

function userIdOf(meta: unknown): string | null {
  if (meta && typeof meta === "object" && "user_id" in meta) {
    const u = (meta as { user_id: unknown }).user_id;
    if (typeof u === "string" && u.length > 0) return u;
  }
  return null;
}

export interface OpenedSources {
  sources: SessionSource[];
  close(): void;
}

/** `infinity-home:DIR` or `sqlite:PATH`; a bare path is a daemon home. */
export function openSources(specs: string[], ownDb: Db, ownDbPath: string): OpenedSources {
  const sources: SessionSource[] = [];
  const extra: Db[] = [];
  for (const spec of specs) {
    const m = /^(infinity-home|sqlite):(.+)$/.exec(spec);
    const kind = m ? m[1]! : "infinity-home";
    const location = resolve(m ? m[2]! : spec);
    if (kind === "infinity-home") {
      if (!existsSync(location)) throw new Error(`session source ${spec}: ${location} does not exist`);
      const home = openInfinityHome(location);
      sources.push({
        kind: "infinity-files",
        location,
        reader: home.conversation,
        userOf: async (root) => userIdOf(await home.state.getMetadata(root)),
        cwdOf: async (root) => home.sessions.cwdOf(root),
      });
    } else {
      const db = location === resolve(ownDbPath) ? ownDb : openDatabase(location);
      if (db !== ownDb) extra.push(db);
      const conv = new SqliteConversationStore(db);
      const state = new SqliteStateStore(db);
      sources.push({
        kind: "sqlite",
        location,
        reader: conv,
        userOf: async (root) => userIdOf(await state.getMetadata(root)),
        cwdOf: async (root) => {
          const meta = await state.getMetadata(root);
          const cwd = meta && typeof meta === "object" ? (meta as { cwd?: unknown }).cwd : undefined;
          return typeof cwd === "string" ? cwd : null;
        },
      });
    }
  }
  return { sources, close: () => extra.forEach((d) => d.open && d.close()) };
}

export function makeSessionSearch(db: Db, sources: SessionSource[], clock: Clock, localUser: string): SessionSearch {
  const index = new SqliteSessionIndex(db);
  return new SessionSearch(index, new SessionIndexer(index, clock, localUser), sources, clock);
}

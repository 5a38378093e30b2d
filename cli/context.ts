// Wiring shared by the CLI commands, the server and the benchmarks: where the data lives, the
// configuration file, and the opened stores with the memory service on top.
import { existsSync, readFileSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { join } from "node:path";
import { systemClock, type Clock } from "../core/clock.js";
import { MemoryConfig } from "../core/config.js";
import { MemoryService } from "../core/memory/service.js";
import { openDatabase, type Db } from "../stores/sqlite/database.js";
import { SqliteMemoryStore } from "../stores/sqlite/memory-store.js";
import { SqliteSessionIndex } from "../stores/sqlite/session-index.js";
import { SqliteToggleStore } from "../stores/sqlite/toggle-store.js";

export function dataHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.INFINITY_MEMORY_HOME ?? join(homedir(), ".infinity", "memory");
}

export function defaultDbPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(dataHome(env), "memory.db");
}

function osUser(): string {
  try {
    return userInfo().username || "local";
  } catch {
    return "local";
  }
}

/** config.json beside the database (optional), then INFINITY_MEMORY_USER, then the OS user. */
export function loadConfig(home: string, env: NodeJS.ProcessEnv = process.env): MemoryConfig {
  const file = join(home, "config.json");
  let raw: Record<string, unknown> = {};
  if (existsSync(file)) {
    try {
      raw = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    } catch (e) {
      throw new Error(`${file} is not valid JSON: ${(e as Error).message}`);
    }
  }
  const parsed = MemoryConfig.safeParse({ localUser: env.INFINITY_MEMORY_USER ?? osUser(), ...raw });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${file}: "${issue?.path.join(".")}" ${issue?.message}`);
  }
  return parsed.data;
}

export interface SessionForget {
  /** bring the session index up to date before a forget purges it */
  refresh: (() => Promise<unknown>) | null;
}

export interface MemoryContext {
  sessionForget: SessionForget;
  db: Db;
  dbPath: string;
  config: MemoryConfig;
  clock: Clock;
  store: SqliteMemoryStore;
  toggles: SqliteToggleStore;
  service: MemoryService;
  close(): void;
}

export function openMemory(opts: { dbPath?: string; config?: MemoryConfig; clock?: Clock; env?: NodeJS.ProcessEnv } = {}): MemoryContext {
  const env = opts.env ?? process.env;
  const dbPath = opts.dbPath ?? defaultDbPath(env);
  const config = opts.config ?? loadConfig(dataHome(env), env);
  const clock = opts.clock ?? systemClock;
  const db = openDatabase(dbPath, { synchronous: env.INFINITY_MEMORY_SYNC === "full" ? "full" : "normal" });
  const store = new SqliteMemoryStore(db);
  const toggles = new SqliteToggleStore(db);
  const service = new MemoryService(store, clock, config);
  // Forgetting a memory also purges the conversation messages that said it from the session index,
  // after indexing whatever the conversation sources hold so far (serve sets `refresh`).
  const sessionIndex = new SqliteSessionIndex(db);
  const sessionForget: SessionForget = { refresh: null };
  service.onForget({
    afterForget: async (user, contents) => {
      if (sessionForget.refresh) await sessionForget.refresh();
      await sessionIndex.purgeContaining(user, contents);
    },
  });
  return {
    db,
    dbPath,
    config,
    clock,
    store,
    toggles,
    service,
    sessionForget,
    close: () => {
      if (db.open) db.close();
    },
  };
}

// Wiring shared by the CLI commands, the server and the benchmarks: where the data lives, the
// configuration file, and the opened stores with the memory service on top.
import { existsSync, readFileSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { join, resolve } from "node:path";
import { systemClock, type Clock } from "../core/clock.js";
import { MemoryConfig, unknownSettings, type EmbedderConfig } from "../core/config.js";
import { experienceForgetHook } from "../core/learning/forget.js";
import { skillForgetHook } from "../core/learning/skill-forget.js";
import { MemoryService } from "../core/memory/service.js";
import { backendKindOf, maskLocation, type Backend } from "../stores/backend.js";
import { sqliteBackendOver, type SqliteBackend } from "../stores/sqlite/backend.js";
import type { RetrievalChannels } from "../core/retrieval/channels.js";
import { embedderFromConfig, vectorChannelFromConfig } from "../stores/embedding/from-config.js";
import type { Embedder } from "../core/embedding/embedder.js";
import { outboxForgetHook } from "../toolsets/rap/outbox-forget.js";
import { openDatabase, type Db, type MigrationEvent, type MigrationListener } from "../stores/sqlite/database.js";
import type { SqliteMemoryStore } from "../stores/sqlite/memory-store.js";
import type { SqliteToggleStore } from "../stores/sqlite/toggle-store.js";
import { thisProcess } from "./process-ids.js";

export function dataHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.INFINITY_MEMORY_HOME ?? join(homedir(), ".infinity", "memory");
}

export function defaultDbPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(dataHome(env), "memory.db");
}

/** Where a command's data lives: `--db`, else INFINITY_MEMORY_DB, else the data home's file. */
export function databaseLocation(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return explicit ?? env.INFINITY_MEMORY_DB ?? defaultDbPath(env);
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
      // a byte-order mark (Notepad, PowerShell) is not JSON but is no reason to refuse the file
      raw = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, "")) as Record<string, unknown>;
    } catch (e) {
      throw new Error(`${file} is not valid JSON: ${(e as Error).message}`);
    }
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new Error(`${file} must hold one JSON object of settings, like {"localUser": "ana"}; it holds ${raw === null ? "null" : Array.isArray(raw) ? "an array" : `a ${typeof raw}`}`);
  }
  const unknown = unknownSettings(raw)[0];
  if (unknown) {
    throw new Error(`${file}: "${unknown.path}" is not a setting (the settings there are ${unknown.known.join(", ")}); fix its name or remove it`);
  }
  // an empty INFINITY_MEMORY_USER is an unset one (it was reported as a config.json error)
  const parsed = MemoryConfig.safeParse({ localUser: env.INFINITY_MEMORY_USER?.trim() || osUser(), ...raw });
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

/** The opened stores with the memory service on top, on either engine. */
export interface AnyMemoryContext {
  sessionForget: SessionForget;
  /** database file, or the PostgreSQL URL with its password masked */
  location: string;
  config: MemoryConfig;
  clock: Clock;
  backend: Backend;
  service: MemoryService;
  close(): void | Promise<void>;
}

/** The embedded default: one SQLite file (backup, restore and the file-level commands need it). */
export interface MemoryContext extends AnyMemoryContext {
  db: Db;
  dbPath: string;
  store: SqliteMemoryStore;
  toggles: SqliteToggleStore;
  backend: SqliteBackend;
  close(): void;
}

interface OpenOpts {
  config?: MemoryConfig;
  clock?: Clock;
  env?: NodeJS.ProcessEnv;
  /** schema upgrades as they run (default: a line each on stderr) */
  onMigration?: MigrationListener;
  /**
   * Refuse a SQLite file that does not exist yet. Commands that only read or change what is
   * stored set it: a mistyped --db would otherwise create an empty database and report nothing.
   */
  existing?: boolean;
}

/** The error for a missing database file, naming the settings that chose the path. */
export function missingDatabase(path: string): Error {
  return new Error(
    `no database at ${resolve(path)}: check --db, INFINITY_MEMORY_DB or INFINITY_MEMORY_HOME ` +
      `(serve, memory add, memory import and skills import create a new one)`,
  );
}

/** A person running a command sees why its first start after an upgrade takes a while. */
export function printMigration(e: MigrationEvent): void {
  process.stderr.write(
    e.phase === "start"
      ? `infinity-memory: upgrading the database to schema ${e.version} (${e.name})…\n`
      : `infinity-memory: schema ${e.version} done in ${((e.ms ?? 0) / 1000).toFixed(1)} s\n`,
  );
}

/** The memory service over a backend, with forget cascading into the session index, the learning loop, its skills and the outbox. */
function withService<B extends Backend>(backend: B, config: MemoryConfig, clock: Clock) {
  // its forget claims name this process, so another's sweep leaves a cascade under way alone
  const service = new MemoryService(backend.memory, clock, config, thisProcess);
  // Forgetting a memory also purges the conversation messages that said it from the session index,
  // after indexing whatever the conversation sources hold so far (serve sets `refresh`).
  const sessionForget: SessionForget = { refresh: null };
  service.onForget({
    beforeForget: async (user, contents, madeFrom) => {
      if (sessionForget.refresh) await sessionForget.refresh();
      await backend.sessionIndex.purgeContaining(user, contents, madeFrom);
    },
  });
  // and the learning loop's episodes and trace events that hold it, then what the loop built from
  // them on the skill side (after the episodes: a recompute of the policies no longer reads them),
  // and results and questions still waiting in the outbox that quote it
  service.onForget(experienceForgetHook(backend, clock));
  service.onForget(skillForgetHook(backend, clock));
  service.onForget(outboxForgetHook(backend.outbox, backend.userChoices));
  return { service, sessionForget };
}

/**
 * INFINITY_MEMORY_SYNC: "full" fsyncs every commit, unset or "normal" is the default. Anything
 * else was read as "normal", so a "FULL" or a typo left a person believing every commit was synced.
 */
export function syncMode(env: NodeJS.ProcessEnv): "full" | "normal" {
  const v = env.INFINITY_MEMORY_SYNC?.trim().toLowerCase();
  if (v === undefined || v === "" || v === "normal") return "normal";
  if (v === "full") return "full";
  throw new Error(`INFINITY_MEMORY_SYNC must be "full" (fsync every commit) or "normal" (the default); got "${env.INFINITY_MEMORY_SYNC}"`);
}

export function openMemory(opts: OpenOpts & { dbPath?: string; channels?: Partial<RetrievalChannels> } = {}): MemoryContext {
  const env = opts.env ?? process.env;
  const dbPath = databaseLocation(opts.dbPath, env);
  if (backendKindOf(dbPath) !== "sqlite") throw new Error(`this command works on a SQLite file, not ${maskLocation(dbPath)}`);
  if (opts.existing && dbPath !== ":memory:" && !existsSync(dbPath)) throw missingDatabase(dbPath);
  const config = opts.config ?? loadConfig(dataHome(env), env);
  const clock = opts.clock ?? systemClock;
  const db = openDatabase(dbPath, {
    synchronous: syncMode(env),
    onMigration: opts.onMigration ?? printMigration,
  });
  // [vector channel] optional embedder from config.embedder ("none" by default)
  const backend = sqliteBackendOver(db, dbPath, {
    // an explicit set (bench) wins over the config's switches
    channels: opts.channels ?? config.search.channels,
    vectors: vectorChannelFromConfig(db, config.embedder, { now: () => clock.now(), env }),
  });
  const { service, sessionForget } = withService(backend, config, clock);
  return {
    db,
    dbPath,
    location: dbPath,
    config,
    clock,
    backend,
    store: backend.memory,
    toggles: backend.toggles,
    service,
    sessionForget,
    close: () => {
      // the memory store stops its semantic worker and closes the database
      backend.memory.close();
    },
  };
}

/**
 * `--db` or INFINITY_MEMORY_DB: a SQLite file path (default) or a postgres:// URL. PostgreSQL is
 * loaded only when asked for, so the embedded default needs no driver.
 */
export async function openAnyMemory(opts: OpenOpts & { location?: string } = {}): Promise<AnyMemoryContext> {
  const env = opts.env ?? process.env;
  const location = databaseLocation(opts.location, env);
  if (backendKindOf(location) === "sqlite") return openMemory({ ...opts, dbPath: location });
  const config = opts.config ?? loadConfig(dataHome(env), env);
  const clock = opts.clock ?? systemClock;
  const embedder = await pgEmbedder(config.embedder, env);
  const backend = await openPostgres(location, {
    channels: config.search.channels,
    embedder,
    vectorWeight: config.embedder.weight,
    minSimilarity: config.embedder.minSimilarity,
  });
  const { service, sessionForget } = withService(backend, config, clock);
  return { location: backend.location, config, clock, backend, service, sessionForget, close: () => backend.close() };
}

/**
 * The configured embedder for the PostgreSQL vector channel (pgvector), loaded before the store
 * opens. As on SQLite, one that cannot be loaded does not keep memory from opening: it is said on
 * stderr and search runs on the word channels.
 */
async function pgEmbedder(config: EmbedderConfig, env: NodeJS.ProcessEnv): Promise<Embedder | null> {
  try {
    return await embedderFromConfig(config, env);
  } catch (e) {
    process.stderr.write(`infinity-memory: the embedder could not be loaded (${(e as Error).message}); the vector channel is off\n`);
    return null;
  }
}

interface PgOpenOptions {
  channels: Partial<RetrievalChannels>;
  embedder: Embedder | null;
  vectorWeight: number;
  minSimilarity: number;
}

async function openPostgres(url: string, opts: PgOpenOptions): Promise<Backend> {
  // The module name is a variable so the SQLite build does not depend on the PostgreSQL adapter.
  const modName = "../stores/postgres/backend.js";
  const mod = (await import(modName)) as { openPostgresBackend?: (url: string, opts: PgOpenOptions) => Promise<Backend> };
  if (typeof mod.openPostgresBackend !== "function") throw new Error("this build has no PostgreSQL adapter");
  return mod.openPostgresBackend(url, opts);
}

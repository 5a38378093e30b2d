// Where session search reads conversations from: the daemon's files (`infinity-home:DIR`) or an
// Infinity-shaped SQLite store (`sqlite:PATH`, e.g. the harness's) or the server's own database
// (`own:`, any engine), parsed from CLI specs.
import { existsSync, realpathSync } from "node:fs";
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
import type { Backend } from "../stores/backend.js";
import type { StateStore } from "../stores/infinity/traits.js";
import type { SessionIndexStore } from "../stores/traits.js";

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

/** The server's own database: a SQLite connection, or any backend (its conversation tables). */
type OwnDatabase = Db | Pick<Backend, "kind" | "conversations" | "state">;

function isSqliteDb(x: unknown): x is Db {
  return typeof (x as Db).prepare === "function";
}

/** `infinity-home:DIR`, `sqlite:PATH` or `own:` (the server's own database, any engine); a bare path is a daemon home. */
export function openSources(specs: string[], own: OwnDatabase, ownLocation: string): OpenedSources {
  const sources: SessionSource[] = [];
  const extra: Db[] = [];
  const ownDb = isSqliteDb(own) ? own : null;
  for (const spec of specs) {
    if (spec === "own:" || (!isSqliteDb(own) && spec === `sqlite:${ownLocation}`)) {
      if (isSqliteDb(own)) {
        sources.push(sqliteSource(own, ownLocation));
      } else {
        sources.push(storeSource(own.conversations, own.state, own.kind, ownLocation));
      }
      continue;
    }
    const m = /^(infinity-home|sqlite):(.+)$/.exec(spec);
    const kind = m ? m[1]! : "infinity-home";
    // "infinity-home:~/.infinity": no shell expands a ~ after the prefix, so a leading one is the home folder here
    const given = resolve(m ? m[2]!.replace(/^~(?=\/|$)/, homedir()) : spec);
    if (!existsSync(given)) {
      const prefix = /^([A-Za-z][\w-]*):/.exec(spec)?.[1];
      if (!m && prefix) throw new Error(`session source ${spec}: unknown kind "${prefix}"; use infinity-home:DIR (the daemon's files) or sqlite:FILE`);
      // a missing SQLite file would be created empty, and searched as if it had no conversations
      throw new Error(`session source ${spec}: ${given} does not exist`);
    }
    // The index keys a source by its location: the same home reached through a symbolic link (a
    // linked home directory, $INFINITY_HOME spelt another way) was indexed again as a second
    // source, and every search then showed each message once per spelling.
    const location = realpathSync.native(given);
    if (kind === "infinity-home") {
      // the indexer must see a thread caught mid-rewrite as unread (skipped, read again), not as
      // its last good copy: a forget retries until every thread was read whole
      const home = openInfinityHome(location, { tornReads: "refuse" });
      sources.push({
        kind: "infinity-files",
        location,
        ...(given !== location ? { formerLocation: given } : {}),
        reader: home.conversation,
        userOf: async (root) => userIdOf(await home.state.getMetadata(root)),
        cwdOf: async (root) => home.sessions.cwdOf(root),
        historyVersion: (thread) => home.conversation.historyVersion(thread),
        locationExists: async (other) => existsSync(other),
      });
    } else {
      const db = ownDb && location === realOrResolved(ownLocation) ? ownDb : openDatabase(location);
      if (db !== ownDb) extra.push(db);
      sources.push({ ...sqliteSource(db, location), ...(given !== location ? { formerLocation: given } : {}) });
    }
  }
  return { sources, close: () => extra.forEach((d) => d.open && d.close()) };
}

function realOrResolved(path: string): string {
  try {
    return realpathSync.native(resolve(path));
  } catch {
    return resolve(path);
  }
}

function sqliteSource(db: Db, location: string): SessionSource {
  return { ...storeSource(new SqliteConversationStore(db), new SqliteStateStore(db), "sqlite", location), locationExists: async (other) => existsSync(other) };
}

function storeSource(
  reader: SessionSource["reader"],
  state: Pick<StateStore, "getMetadata">,
  kind: SessionSource["kind"],
  location: string,
): SessionSource {
  return {
    kind,
    location,
    reader,
    userOf: async (root) => userIdOf(await state.getMetadata(root)),
    cwdOf: async (root) => {
      const meta = await state.getMetadata(root);
      const cwd = meta && typeof meta === "object" ? (meta as { cwd?: unknown }).cwd : undefined;
      return typeof cwd === "string" ? cwd : null;
    },
  };
}

/** Session search over the server's index: a SQLite connection or any backend's index store. */
export function makeSessionSearch(index: Db | SessionIndexStore, sources: SessionSource[], clock: Clock, localUser: string): SessionSearch {
  const store = isSqliteDb(index) ? new SqliteSessionIndex(index) : index;
  return new SessionSearch(store, new SessionIndexer(store, clock, localUser), sources, clock);
}

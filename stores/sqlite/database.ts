// Opens a SQLite database with the pragmas every store relies on and brings its schema up to
// date. One file holds every table of the product (memory, RAP state, later skills and traces).
import Database from "better-sqlite3";
import { statSync } from "node:fs";
import { dirname } from "node:path";
import { createPrivateFile, makePrivateDir } from "../private-files.js";
import { StoreError } from "../traits.js";
import { MIGRATIONS, type Migration } from "./migrations.js";

export type Db = Database.Database;

export interface OpenOptions {
  /** stop at this schema version (tests build databases of earlier versions) */
  targetVersion?: number;
  readonly?: boolean;
  /**
   * "normal" (default): WAL commits survive a crash of this process (what the daemon's SIGINT,
   * SIGKILL and restarts do) but the last ones may be lost on power failure or an OS crash.
   * "full": every commit is fsynced as well (~0.3 ms more per write on the reference machine).
   */
  synchronous?: "normal" | "full";
  /** told before and after each schema step it runs (some rewrite an index: seconds on a large store) */
  onMigration?: MigrationListener;
}

export interface MigrationEvent {
  version: number;
  name: string;
  phase: "start" | "done";
  /** how long the step took (phase "done") */
  ms?: number;
}
export type MigrationListener = (e: MigrationEvent) => void;

export function openDatabase(path: string, opts: OpenOptions = {}): Db {
  if (path !== ":memory:" && path !== "" && !opts.readonly) {
    // memories and conversation excerpts: owner-only when this creates them (private-files.ts)
    makePrivateDir(dirname(path));
    createPrivateFile(path);
  }
  let db: Db;
  try {
    db = new Database(path, { readonly: opts.readonly ?? false });
  } catch (e) {
    throw openProblem(path, e);
  }
  try {
    db.pragma("busy_timeout = 5000");
    if (!opts.readonly) {
      db.pragma("journal_mode = WAL");
      db.pragma(`synchronous = ${opts.synchronous === "full" ? "FULL" : "NORMAL"}`);
    }
    db.pragma("foreign_keys = ON");
    db.pragma("secure_delete = ON");
    if (!opts.readonly) migrate(db, MIGRATIONS, opts.targetVersion, opts.onMigration);
    return db;
  } catch (e) {
    db.close();
    throw openProblem(path, e);
  }
}

/**
 * SQLite refused a write for now, not for what it held: another connection kept the database
 * locked past the busy timeout (SQLITE_BUSY…), or the disk is full (SQLITE_FULL). The same write
 * succeeds once that has passed.
 */
export function refusedForNow(e: unknown): boolean {
  const code = e instanceof Error ? (e as { code?: unknown }).code : undefined;
  return typeof code === "string" && (code === "SQLITE_FULL" || code.startsWith("SQLITE_BUSY"));
}

/** more pages than any file holds: a backup step that copies them all */
const ALL_PAGES = 0x7fffffff;

/**
 * A consistent copy of the database into `file` while other connections go on writing. The
 * backup API's default, 100 pages a step with a turn of the event loop between steps, starts the
 * copy over whenever another connection commits between two steps: beside a server committing
 * every few milliseconds, a copy of a 150 MB file never finished. One step copies every page
 * inside one read transaction; in WAL mode writers go on beside it.
 */
export async function copyDatabase(db: Db, file: string): Promise<void> {
  await db.backup(file, { progress: () => ALL_PAGES });
}

/** SQLite's "unable to open database file" and "file is not a database" do not say which file. */
function openProblem(path: string, e: unknown): unknown {
  const code = (e as { code?: unknown }).code;
  if (code === "SQLITE_NOTADB") return new StoreError("io", `${path} is not a SQLite database (is the path right?)`);
  if (code === "SQLITE_CANTOPEN") {
    let why = "check that the path is right and that this user may read and write it";
    try {
      if (statSync(path).isDirectory()) why = "it is a directory; give the database file inside it (memory.db)";
    } catch {
      // the file is missing (a read-only open) or its directory cannot be read: the default reason
    }
    return new StoreError("io", `cannot open the database ${path}: ${why}`);
  }
  return e;
}

export function schemaVersion(db: Db): number {
  return db.pragma("user_version", { simple: true }) as number;
}

export function migrate(db: Db, migrations: Migration[], target?: number, onMigration?: MigrationListener): void {
  const latest = Math.max(0, ...migrations.map((m) => m.version));
  const goal = target ?? latest;
  const current = schemaVersion(db);
  if (current > latest) {
    throw new StoreError(
      "schema",
      `database schema version ${current} is newer than this build understands (${latest}); upgrade infinity-memory`,
    );
  }
  // In version order whatever order the list was written in.
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (m.version <= current || m.version > goal) continue;
    // BEGIN IMMEDIATE so two processes opening a fresh file do not both migrate it.
    const started = performance.now();
    const ran = db.transaction(() => {
      if (schemaVersion(db) >= m.version) return false;
      // Only an upgrade is worth telling: a new file's steps run on empty tables.
      if (current > 0) onMigration?.({ version: m.version, name: m.name, phase: "start" });
      db.exec(m.sql);
      m.up?.(db);
      db.pragma(`user_version = ${m.version}`);
      return true;
    }).immediate();
    if (ran && current > 0) onMigration?.({ version: m.version, name: m.name, phase: "done", ms: Math.round(performance.now() - started) });
  }
}

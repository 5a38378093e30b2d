// Opens a SQLite database with the pragmas every store relies on and brings its schema up to
// date. One file holds every table of the product (memory, RAP state, later skills and traces).
import Database from "better-sqlite3";
import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { basename, dirname } from "node:path";
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
    // SQLite opens a file this user may not write read-only without a word (reads work), and the
    // first write fails with "attempt to write a readonly database", naming nothing: noted here so
    // that failure can name the file (readOnlyProblem)
    if (path !== ":memory:" && path !== "" && !opts.readonly && !writable(path)) notWritable.add(path);
    db = new Database(path, { readonly: opts.readonly ?? false });
  } catch (e) {
    throw openProblem(path, e);
  }
  try {
    db.pragma("busy_timeout = 5000");
    // before anything is written to it (WAL mode, the schema)
    if (!opts.readonly) refuseForeign(db, path);
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
 * A database with tables but no schema version of ours is another program's: migrating it wrote
 * this product's ~50 tables (and WAL mode) into it, from any command given a wrong --db, even a
 * `memory list`. Our first schema step sets the version in the transaction that creates the tables.
 */
function refuseForeign(db: Db, path: string): void {
  if (schemaVersion(db) !== 0) return;
  const tables = (db.prepare(`SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name LIMIT 4`).all() as { name: string }[]).map((r) => r.name);
  if (tables.length === 0) return;
  const named = tables.length > 3 ? `${tables.slice(0, 3).join(", ")}, …` : tables.join(", ");
  throw new StoreError(
    "schema",
    `${path} is a SQLite database of another program (it has tables ${named} and no infinity-memory schema); nothing was changed in it. ` +
      `Point --db (or INFINITY_MEMORY_DB) at the memory database, or at a new file`,
  );
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

/** Databases this process opened that its user may not write (see openDatabase). */
const notWritable = new Set<string>();

/** Whether `path` was opened by this process and its user may not write it. */
export function openedReadOnly(path: string): boolean {
  return notWritable.has(path);
}

/**
 * A write SQLite refused because the database is read-only for this user, as an error naming the
 * file and the fix (the file this process opened so); null for any other error.
 */
export function readOnlyProblem(e: unknown): StoreError | null {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !code.startsWith("SQLITE_READONLY") || notWritable.size !== 1) return null;
  return openProblem([...notWritable][0]!, e) as StoreError;
}

/** Whether this user may write the file (true when it is missing: the open creates it or says why not). */
function writable(path: string): boolean {
  try {
    accessSync(path, fsConstants.W_OK);
    return true;
  } catch (e) {
    return (e as { code?: unknown }).code !== "EACCES" && (e as { code?: unknown }).code !== "EROFS";
  }
}

/**
 * SQLite's "unable to open database file", "file is not a database" and "attempt to write a
 * readonly database" do not say which file, nor what to change.
 */
export function openProblem(path: string, e: unknown): unknown {
  const code = (e as { code?: unknown }).code;
  if (code === "SQLITE_NOTADB") return new StoreError("io", `${path} is not a SQLite database (is the path right?)`);
  if (typeof code === "string" && code.startsWith("SQLITE_READONLY")) {
    // WAL mode writes <file>-wal and <file>-shm beside the database: its folder must take them
    const what = code === "SQLITE_READONLY_DIRECTORY" ? `its folder ${dirname(path)} is not writable for this user (SQLite keeps ${basename(path)}-wal and -shm beside it)` : "it is read-only for this user";
    return new StoreError("io", `cannot write the database ${path}: ${what}; give this user write access to the file and its folder, or point --db elsewhere`);
  }
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

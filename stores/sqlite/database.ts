// Opens a SQLite database with the pragmas every store relies on and brings its schema up to
// date. One file holds every table of the product (memory, RAP state, later skills and traces).
import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
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
  if (path !== ":memory:" && !opts.readonly) mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { readonly: opts.readonly ?? false });
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
    throw e;
  }
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

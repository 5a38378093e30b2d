// `infinity-memory backup|restore|verify`: online copies of the database. The SQLite backup API
// copies pages while servers keep writing; forgotten content is not in a later copy because a
// forget overwrites it in place (secure_delete) and removes its index entries.
import type { Command } from "commander";
import { existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { backendKindOf, maskLocation } from "../../stores/backend.js";
import { copyDatabase, openDatabase, schemaVersion } from "../../stores/sqlite/database.js";
import { createPrivateFile } from "../../stores/private-files.js";
import { ftsPurge } from "../../stores/sqlite/fts-purge.js";
import { dropRebuild, runningRebuild } from "../../stores/sqlite/memory-fts.js";
import { MIGRATIONS } from "../../stores/sqlite/migrations.js";
import { databaseLocation, missingDatabase, openMemory } from "../context.js";
import { placeNoReplace, removeOnInterrupt, removeStaleTemps, removeTemp, tempPath } from "../temp-files.js";
import { WORD_REINDEX, canonical, forgettingProcesses, markRestoring, processEnded, reindexingProcesses, servingProcesses } from "../serving-marks.js";

export interface VerifyReport {
  file: string;
  integrity: string;
  schema_version: number;
  memories: number;
  forgotten: number;
  audit_rows: number;
}

export function verifyFile(file: string): VerifyReport {
  if (!existsSync(file)) throw new Error(`${file} does not exist`);
  if (statSync(file).isDirectory()) throw new Error(`${file} is a directory; give the database or backup file`);
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    db.prepare(`SELECT 1 FROM sqlite_schema LIMIT 1`).get();
  } catch (e) {
    throw new Error(`${file} is not a SQLite database (${(e as Error).message})`);
  }
  try {
    const tables = new Set((db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table'`).all() as { name: string }[]).map((r) => r.name));
    if (!tables.has("memories") || !tables.has("audit_log")) throw new Error(`${file} is a SQLite database but not an infinity-memory one (it has no memories or audit_log table)`);
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    return {
      file,
      integrity: (db.prepare(`PRAGMA integrity_check`).get() as { integrity_check: string }).integrity_check,
      schema_version: db.pragma("user_version", { simple: true }) as number,
      memories: count(`SELECT count(*) AS n FROM memories WHERE status <> 'deleted'`),
      forgotten: count(`SELECT count(*) AS n FROM memories WHERE status = 'deleted'`),
      audit_rows: count(`SELECT count(*) AS n FROM audit_log`),
    };
  } finally {
    db.close();
  }
}

/** backup and restore copy SQLite files; a PostgreSQL location has its own tools (pg_dump). */
function sqliteFile(explicit: string | undefined): string {
  const location = databaseLocation(explicit);
  if (backendKindOf(location) !== "sqlite") {
    throw new Error(`backup and restore work on a SQLite file, not ${maskLocation(location)}; for PostgreSQL use pg_dump and pg_restore`);
  }
  return resolve(location);
}

export function registerBackup(program: Command): void {
  program
    .command("backup")
    .description("copy the database to a file, online (servers may keep running)")
    .requiredOption("--out <file>", "where to write the copy (must not exist)")
    .option("--db <path>", "database file")
    .action(async (o: { out: string; db?: string }) => {
      const out = resolve(o.out);
      if (existsSync(out)) throw new Error(`${out} exists; choose a new file`);
      if (!existsSync(dirname(out))) throw new Error(`cannot write ${out}: the folder ${dirname(out)} does not exist; create it first`);
      const from = sqliteFile(o.db);
      // the name of a file SQLite keeps beside the database: its next open deleted the copy (a
      // -wal or -journal that is not one) or wrote over it (-shm), after "backed up" was reported
      // (SQLite keeps them beside the file a symbolic link names, so both places are compared)
      const side = ["-wal", "-shm", "-journal"].find((s) => out === `${from}${s}` || canonical(out) === `${canonical(from)}${s}`);
      if (side) throw new Error(`--out ${out} is the name of the ${side.slice(1)} file SQLite keeps beside the database; it would delete or overwrite the copy: give a new file, such as ${from}.backup`);
      if (!existsSync(from)) throw missingDatabase(from);
      // The copy is made under a temporary name and linked into place once it has passed its
      // check: an interrupted or failed backup never leaves a file under the name given.
      // a copy left by a backup into this folder that was killed outright holds every memory too
      removeStaleTemps(out);
      const partial = tempPath(out, "partial");
      const release = removeOnInterrupt(partial);
      let r: VerifyReport;
      try {
        const db = openDatabase(from);
        try {
          // what a forget left in the full-text segments goes before the copy is taken
          if (!ftsPurge(db).finish()) throw new Error("the full-text indexes still hold forgotten rows and another process kept the database busy; try the backup again");
          // every memory is in the copy: owner-only, as the database (placing it below keeps the mode)
          createPrivateFile(partial);
          await copyDatabase(db, partial);
        } finally {
          db.close();
        }
        // a forget claimed and not purged yet (its cascade under way, or its process stopped) still
        // has its text: finished in the copy, cascade and all, so the copy holds no forgotten text
        await finishForgetsIn(partial);
        // one self-contained file: the copy keeps the live file's WAL mode otherwise, and reading
        // it (verify) leaves -wal and -shm files beside it
        const copy = new Database(partial);
        try {
          copy.pragma("journal_mode = DELETE");
          // a word-index rebuild under way in the live file: in the copy its triggers would note
          // every write for good and its pid would refuse a reindex of the restored database
          copy.pragma("secure_delete = ON");
          copy.transaction(() => dropRebuild(copy))();
        } finally {
          copy.close();
        }
        r = { ...verifyFile(partial), file: out };
        if (r.integrity !== "ok") throw new Error(`the copy of ${from} failed its integrity check (${r.integrity}); nothing was written to ${out}`);
        try {
          placeNoReplace(partial, out); // unlike a rename, never replaces a file that appeared meanwhile
        } catch (e) {
          throw new Error((e as { code?: unknown }).code === "EEXIST" ? `${out} exists; choose a new file` : `cannot write ${out}: ${(e as Error).message}`);
        }
      } finally {
        removeTemp(partial);
        release();
      }
      process.stdout.write(`backed up ${r.memories} memories (schema ${r.schema_version}) to ${out}\n`);
    });

  program
    .command("verify")
    .argument("<file>", "a database or backup file")
    .description("check a database or backup: integrity, schema version, counts")
    .action((file: string) => {
      const r = verifyFile(resolve(file));
      process.stdout.write(`${JSON.stringify(r)}\n`);
      const latest = Math.max(...MIGRATIONS.map((m) => m.version));
      if (r.integrity !== "ok" || r.schema_version > latest) process.exitCode = 1;
    });

  program
    .command("restore")
    .argument("<file>", "a backup made with `infinity-memory backup`")
    .description("replace the database's content with a backup (stop the servers first); memories forgotten since the backup are forgotten again")
    .option("--db <path>", "database file")
    .option("--bring-back-forgotten", "keep memories the database had forgotten after the backup was made (to undo a mistaken forget)")
    .option("--force", "restore even though a server, reindex or forget seems to be using the database (its process id was reused by another program; Linux tells these apart by itself)")
    .action(async (file: string, o: { db?: string; bringBackForgotten?: boolean; force?: boolean }) => {
      const src = resolve(file);
      const target = sqliteFile(o.db);
      // Swapped under a running server, the content changes beneath its caches, open calls and
      // learning queue, and what it writes next lands in the restored file as if nothing happened.
      // The restore marks itself first, so a server starting from now on refuses (or is seen here).
      const unmark = markRestoring(target);
      try {
        refuseWhileServed(target, o.force === true);
        if (!o.force) refuseWhileWritten(target);
        await restore(src, target, o);
      } finally {
        unmark();
      }
    });
}

/** Throw, naming them and the fix, when servers use `target` (unless `force`). */
function refuseWhileServed(target: string, force: boolean): void {
  const serving = force ? [] : servingProcesses(target);
  if (serving.length > 0) {
    const who = serving.map((p) => `pid ${p.pid}${p.what ? ` (${p.what}${p.since ? `, since ${p.since}` : ""})` : ""}`).join(", ");
    throw new Error(
      `cannot restore into ${target} while a server uses it: ${who}; stop ${serving.length === 1 ? "it" : "them"} first (Ctrl-C in its terminal, kill ${serving.map((p) => p.pid).join(" ")}, or end the Infinity session that started it), then restore again; --force restores anyway`,
    );
  }
}

/** Throw when a CLI command writes `target` by row id (a reindex, a forget's cascade). */
function refuseWhileWritten(target: string): void {
  refuseWhileReindexed(target);
  refuseWhileForgetting(target);
}

/**
 * Throw when a CLI forget (`memory forget`, `memory review --reject`) runs in `target`: after its
 * claim its cascade purges by row id, which in a restored file are the backup's rows (and what it
 * purges from the session index and the learning queue goes from the restored file's).
 */
function refuseWhileForgetting(target: string): void {
  const forgetting = forgettingProcesses(target);
  if (forgetting.length === 0) return;
  const who = forgetting.map((p) => `pid ${p.pid}${p.what ? ` (${p.what})` : ""}`).join(", ");
  throw new Error(`cannot restore into ${target} while a forget runs in it: ${who}; wait for it to finish, then restore again; --force restores anyway`);
}

/**
 * Throw when a `memory reindex` rebuilds `target`'s word index: replaced under it, the restored
 * file got the reindex's index of the old content (searches found memories the backup lacks).
 * The same for `memory reindex --vectors`: it goes on storing vectors of the old texts by row id,
 * which in the restored file are other memories'.
 */
function refuseWhileReindexed(target: string): void {
  const marked = reindexingProcesses(target);
  // a word-index rebuild marks itself too (so it refuses while a restore runs): named as below
  const rebuilding = marked.find((p) => p.what === WORD_REINDEX);
  if (rebuilding) throw new Error(`cannot restore into ${target} while memory reindex (pid ${rebuilding.pid}) rebuilds its word index; wait for the reindex to finish, then restore again; --force restores anyway`);
  const embedding = marked;
  if (embedding.length > 0) {
    const who = embedding.map((p) => `pid ${p.pid}`).join(", ");
    throw new Error(`cannot restore into ${target} while memory reindex --vectors (${who}) stores its vectors; wait for the reindex to finish, then restore again; --force restores anyway`);
  }
  let db: Database.Database;
  try {
    db = new Database(target, { readonly: true, fileMustExist: true });
  } catch {
    return; // no database yet (or none SQLite opens): nothing rebuilds it
  }
  let pid: number | null = null;
  try {
    pid = runningRebuild(db, processEnded);
  } catch {
    // not an infinity-memory database: the restore replaces it whole
  } finally {
    db.close();
  }
  if (pid !== null) throw new Error(`cannot restore into ${target} while memory reindex (pid ${pid}) rebuilds its word index; wait for the reindex to finish, then restore again; --force restores anyway`);
}

async function restore(src: string, target: string, o: { bringBackForgotten?: boolean; force?: boolean }): Promise<void> {
    // SQLite's own words for these were "unable to open database file" and "Cannot save backup
    // because the directory does not exist", naming neither the path nor the fix
    const folder = dirname(target);
    if (!existsSync(folder)) throw new Error(`cannot restore into ${target}: the folder ${folder} does not exist; create it first`);
    if (!statSync(folder).isDirectory()) throw new Error(`cannot restore into ${target}: ${folder} is a file, not a folder; check --db`);
    if (existsSync(target) && statSync(target).isDirectory()) throw new Error(`cannot restore into ${target}: it is a directory; give the database file inside it (memory.db)`);
    const r = verifyFile(src);
    if (r.integrity !== "ok") throw new Error(`${src} failed its integrity check (${r.integrity}); not restoring`);
    const latest = Math.max(...MIGRATIONS.map((m) => m.version));
    // restored, a newer schema would leave a database this build cannot open
    if (r.schema_version > latest) throw new Error(`${src} has schema ${r.schema_version}, newer than this build understands (${latest}); restore it with the build that made it, or upgrade infinity-memory`);
    // A forget is meant to be for good: what the database forgot after the backup was made (its
    // tombstones keep the ids, not the text) is forgotten again once the backup's copy is back.
    const forgottenSince = existsSync(target) && !o.bringBackForgotten ? forgottenIds(target) : [];
    // Forgotten again in a copy beside the database first, and that copy goes in whole: restored
    // straight into the live file, a restore that stopped before forgetting again (killed, a
    // config.json it could not read) left those memories back for good, their tombstones gone.
    removeStaleTemps(target);
    const staged = forgottenSince.length > 0 ? tempPath(target, "restoring") : null;
    const release = staged ? removeOnInterrupt(staged) : () => undefined;
    let again = 0;
    try {
      if (staged) {
        await copyFile(src, staged);
        again = await forgetAgain(staged, forgottenSince);
      }
      // a server, reindex or forget that started while the copy was staged (one that did not see the mark) is caught here
      refuseWhileServed(target, o.force === true);
      if (!o.force) refuseWhileWritten(target);
      // The backup API in the other direction: into the live file in one transaction, under its locks.
      await copyFile(staged ?? src, target);
    } finally {
      if (staged) removeTemp(staged);
      release();
    }
    const db = openDatabase(target);
    process.stdout.write(`restored ${r.memories - again} memories from ${src} (schema now ${schemaVersion(db)})\n`);
    if (again > 0) process.stdout.write(`${again} of them had been forgotten after this backup was made and were forgotten again (--bring-back-forgotten keeps them)\n`);
    db.close();
}

/** Copy one SQLite file into another (created or replaced in one transaction). */
async function copyFile(from: string, to: string): Promise<void> {
  const db = new Database(from, { readonly: true, fileMustExist: true });
  // a database the restore creates (and its staged copy) is owner-only, as one serve creates
  createPrivateFile(to);
  try {
    await copyDatabase(db, to);
  } finally {
    db.close();
  }
}

/** Ids of the forgotten memories (tombstones) in a database; none in a file that is not one yet. */
function forgottenIds(file: string): string[] {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch {
    return [];
  }
  try {
    return (db.prepare(`SELECT id FROM memories WHERE status = 'deleted'`).all() as { id: string }[]).map((r) => r.id);
  } catch {
    return []; // not an infinity-memory database (the restore replaces it whole)
  } finally {
    db.close();
  }
}

/** Finish, through the same cascade as `memory forget`, every forget a copy holds claimed and not purged. */
async function finishForgetsIn(file: string): Promise<void> {
  const ctx = openMemory({ dbPath: file, existing: true });
  try {
    // in rounds: a sweep takes a limited number at a time (bounded, whatever a round returns)
    for (let round = 0; round < 1000 && (await ctx.service.finishForgets({ all: true })).length > 0; round++);
  } finally {
    await ctx.close();
  }
}

/** Forget, through the same cascade as `memory forget`, those of `ids` the restored copy holds; returns how many versions went. */
async function forgetAgain(file: string, ids: string[]): Promise<number> {
  const ctx = openMemory({ dbPath: file, existing: true });
  try {
    const byOwner = new Map<string, string[]>();
    for (const id of ids) {
      const rec = await ctx.backend.memory.get(id);
      // (deleted with its text still there: a forget claimed it and stopped; this one finishes it)
      if (!rec || (rec.status === "deleted" && rec.content === "")) continue;
      byOwner.set(rec.scope.user, [...(byOwner.get(rec.scope.user) ?? []), id]);
    }
    let n = 0;
    for (const [owner, list] of byOwner) {
      n += (await ctx.service.forget({ owner, project: null }, list, { actor: "user", threadId: null, toolCallId: null }, "forgotten again after a restore")).length;
    }
    return n;
  } finally {
    await ctx.close();
  }
}

// Which processes serve a SQLite database right now, so `restore` can refuse to swap the file
// under them. A server (`serve`, standalone or as a daemon command server, and `provider-proxy`)
// leaves `.NAME.PID.serving` beside the database while it runs and removes it when it exits; one
// killed outright (SIGKILL, a crash) leaves its mark behind, which counts for nothing once that
// process is gone (and is removed by the next look). A running `restore` leaves
// `.NAME.PID.restoring-mark` the same way, and a server refuses to start while one is live: each
// side writes its own mark before it looks for the other's, so of two starting at once at least
// one sees the other. `memory reindex --vectors` leaves `.NAME.PID.reindexing` the same way: it
// writes vectors by row id, so a restore under it would get vectors of the old content attached to
// other memories (the word-index rebuild keeps its own mark inside the database, memory-fts.ts, which
// restore reads; it leaves `.reindexing` too, so that it refuses to start while a restore runs).
// A CLI forget (`memory forget`, `memory review --reject`) leaves `.NAME.PID.forgetting`: after
// its claim its cascade writes by row id too, which in a restored file land on the backup's rows.
import { readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { processGone, removeOnInterrupt } from "./temp-files.js";

export interface ServingMark {
  pid: number;
  /** what the process said it serves ("serve --toolset memory"), when its mark could be read */
  what: string | null;
  /** when it started (ISO time), when its mark could be read */
  since: string | null;
}

type MarkKind = "serving" | "restoring-mark" | "reindexing" | "forgetting";

function markPath(db: string, pid: number, kind: MarkKind = "serving"): string {
  const file = canonical(db);
  return join(dirname(file), `.${basename(file)}.${pid}.${kind}`);
}

/**
 * The database file's own path, symbolic links resolved: a server that opened it through a link
 * (~/.infinity/memory/memory.db → /data/memory.db) left its mark beside the link, and a restore
 * naming the file itself did not see it and replaced the database under the server.
 */
export function canonical(db: string): string {
  try {
    return realpathSync(db);
  } catch {
    // not there yet (a restore creating it): its folder's own path
    try {
      return join(realpathSync(dirname(db)), basename(db));
    } catch {
      return db;
    }
  }
}

/** Mark `db` as served by this process until it exits; returns the unmark (idempotent). */
export function markServing(db: string, what: string, now: Date = new Date()): () => void {
  return mark(db, "serving", what, now);
}

/** Mark `db` as being replaced by this process's restore until it ends; returns the unmark. */
export function markRestoring(db: string, now: Date = new Date()): () => void {
  const unmark = mark(db, "restoring-mark", "restore", now);
  // Ctrl-C ends a restore without an exit event unless something listens for the signal
  const release = db === ":memory:" ? () => undefined : removeOnInterrupt(markPath(db, process.pid, "restoring-mark"));
  return () => {
    unmark();
    release();
  };
}

/**
 * Mark `db` as served by this process, unless a restore is replacing it: then the mark goes again
 * and the error names the restore. Returns the unmark.
 */
export function claimServing(db: string, what: string): () => void {
  return unlessRestoring(db, markServing(db, what), (who) => `cannot serve ${db}: a restore is replacing it (${who}); wait for the restore to finish, then start again`);
}

/** what a `memory reindex` rebuilding the word index says in its mark (restore names it so) */
export const WORD_REINDEX = "memory reindex";

/**
 * Mark `db` as having its vectors rebuilt by this process (`memory reindex --vectors`) until it
 * ends, unless a restore is replacing it: then the mark goes again and the error names the
 * restore. Returns the unmark.
 */
export function claimReindexing(db: string, what: string, now: Date = new Date()): () => void {
  return claimWork(db, "reindexing", what, now, (who) => `cannot reindex ${db}: a restore is replacing it (${who}); wait for the restore to finish, then run the reindex again`);
}

/**
 * Mark `db` as having its word index rebuilt by this process (`memory reindex`) until it ends,
 * unless a restore is replacing it: then the mark goes again and the error names the restore. No
 * Ctrl-C listener: the rebuild runs synchronously, so one would hold Ctrl-C off until it ended (a
 * mark left by a killed process counts for nothing). Returns the unmark.
 */
export function claimWordReindexing(db: string, now: Date = new Date()): () => void {
  return unlessRestoring(db, mark(db, "reindexing", WORD_REINDEX, now), (who) => `cannot reindex ${db}: a restore is replacing it (${who}); wait for the restore to finish, then run the reindex again`);
}

/**
 * Mark `db` as having memories forgotten by this process (a CLI forget or reject) until it ends,
 * unless a restore is replacing it: then the mark goes again and the error names the restore.
 * Returns the unmark.
 */
export function claimForgetting(db: string, what: string, now: Date = new Date()): () => void {
  return claimWork(db, "forgetting", what, now, (who) => `cannot forget in ${db}: a restore is replacing it (${who}); nothing was forgotten; wait for the restore to finish, then run the forget again`);
}

/** A command's mark that also goes on Ctrl-C, unless a restore is replacing `db` (then `refusal`). */
function claimWork(db: string, kind: MarkKind, what: string, now: Date, refusal: (who: string) => string): () => void {
  const unmark = mark(db, kind, what, now);
  // Ctrl-C ends a command without an exit event unless something listens for the signal
  const release = db === ":memory:" ? () => undefined : removeOnInterrupt(markPath(db, process.pid, kind));
  const both = () => {
    unmark();
    release();
  };
  return unlessRestoring(db, both, refusal);
}

/** `unmark` when no restore replaces `db`; otherwise unmarks and throws `refusal(who)`. */
function unlessRestoring(db: string, unmark: () => void, refusal: (who: string) => string): () => void {
  const restoring = restoringProcesses(db);
  if (restoring.length === 0) return unmark;
  unmark();
  throw new Error(refusal(restoring.map((p) => `pid ${p.pid}${p.since ? `, since ${p.since}` : ""}`).join("; ")));
}

function mark(db: string, kind: MarkKind, what: string, now: Date): () => void {
  if (db === ":memory:") return () => undefined;
  const path = markPath(db, process.pid, kind);
  // a mark that cannot be written (a read-only folder) only costs restore its check
  try {
    writeFileSync(path, `${JSON.stringify({ pid: process.pid, what, since: now.toISOString(), start: processStart(process.pid) })}\n`, { mode: 0o600 });
  } catch {
    return () => undefined;
  }
  let done = false;
  const unmark = () => {
    if (done) return;
    done = true;
    process.off("exit", unmark);
    rmSync(path, { force: true });
  };
  // every way a server ends but SIGKILL goes through exit (installShutdown ends in process.exit)
  process.on("exit", unmark);
  return unmark;
}

/** The live processes serving `db`; marks of processes that are gone are removed on the way. */
export function servingProcesses(db: string): ServingMark[] {
  return liveMarks(db, "serving");
}

/** The live restores replacing `db`; marks of restores that are gone are removed on the way. */
export function restoringProcesses(db: string): ServingMark[] {
  return liveMarks(db, "restoring-mark");
}

/** The live `memory reindex --vectors` runs writing `db`'s vectors; marks of ones that are gone are removed on the way. */
export function reindexingProcesses(db: string): ServingMark[] {
  return liveMarks(db, "reindexing");
}

/** The live CLI forgets (`memory forget`, `memory review --reject`) in `db`; marks of ones that are gone are removed on the way. */
export function forgettingProcesses(db: string): ServingMark[] {
  return liveMarks(db, "forgetting");
}

/**
 * When process `pid` started (clock ticks after boot, /proc/PID/stat on Linux): with the pid it
 * names one process for good, so a pid reused by another program is told apart. Null where it
 * cannot be read (other systems): the pid alone counts then.
 */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // the command name (field 2) may hold spaces and ")": the fields after it follow the last ")"
    const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]; // field 22, starttime
    return start && /^\d+$/.test(start) ? start : null;
  } catch {
    return null;
  }
}

/**
 * Whether the process `pid` that started at `start` (processStart; null: not recorded) is gone:
 * no process has the pid, or one that started at another time took it since.
 */
export function processEnded(pid: number, start: string | null): boolean {
  if (processGone(pid)) return true;
  const now = start === null ? null : processStart(pid);
  return now !== null && now !== start;
}

function liveMarks(db: string, kind: MarkKind): ServingMark[] {
  const file = canonical(db);
  const dir = dirname(file);
  const prefix = `.${basename(file)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const pattern = new RegExp(`^([1-9]\\d*)\\.${kind}$`);
  const live: ServingMark[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const m = pattern.exec(name.slice(prefix.length));
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid) continue;
    if (processGone(pid)) {
      rmSync(join(dir, name), { force: true });
      continue;
    }
    let what: string | null = null;
    let since: string | null = null;
    try {
      const j = JSON.parse(readFileSync(join(dir, name), "utf8")) as { what?: unknown; since?: unknown; start?: unknown };
      what = typeof j.what === "string" ? j.what : null;
      since = typeof j.since === "string" ? j.since : null;
      // the pid is taken by another program since the marking process died: that one is gone
      const now = typeof j.start === "string" ? processStart(pid) : null;
      if (now !== null && now !== j.start) {
        rmSync(join(dir, name), { force: true });
        continue;
      }
    } catch {
      // a mark being written, or damaged: the pid alone still names the process
    }
    live.push({ pid, what, since });
  }
  return live.sort((a, b) => a.pid - b.pid);
}

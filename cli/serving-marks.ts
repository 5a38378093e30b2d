// Which processes serve a SQLite database right now, so `restore` can refuse to swap the file
// under them. A server (`serve`, standalone or as a daemon command server, and `provider-proxy`)
// leaves `.NAME.PID.serving` beside the database while it runs and removes it when it exits; one
// killed outright (SIGKILL, a crash) leaves its mark behind, which counts for nothing once that
// process is gone (and is removed by the next look).
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { processGone } from "./temp-files.js";

export interface ServingMark {
  pid: number;
  /** what the process said it serves ("serve --toolset memory"), when its mark could be read */
  what: string | null;
  /** when it started (ISO time), when its mark could be read */
  since: string | null;
}

function markPath(db: string, pid: number): string {
  return join(dirname(db), `.${basename(db)}.${pid}.serving`);
}

/** Mark `db` as served by this process until it exits; returns the unmark (idempotent). */
export function markServing(db: string, what: string, now: Date = new Date()): () => void {
  if (db === ":memory:") return () => undefined;
  const path = markPath(db, process.pid);
  // a mark that cannot be written (a read-only folder) only costs restore its check
  try {
    writeFileSync(path, `${JSON.stringify({ pid: process.pid, what, since: now.toISOString() })}\n`, { mode: 0o600 });
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
  const dir = dirname(db);
  const prefix = `.${basename(db)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const live: ServingMark[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const m = /^([1-9]\d*)\.serving$/.exec(name.slice(prefix.length));
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
      const j = JSON.parse(readFileSync(join(dir, name), "utf8")) as { what?: unknown; since?: unknown };
      what = typeof j.what === "string" ? j.what : null;
      since = typeof j.since === "string" ? j.since : null;
    } catch {
      // a mark being written, or damaged: the pid alone still names the process
    }
    live.push({ pid, what, since });
  }
  return live.sort((a, b) => a.pid - b.pid);
}

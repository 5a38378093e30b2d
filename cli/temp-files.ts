// The temporary files of the commands that copy every memory: backup's and `memory export --out`'s
// `.NAME.PID.partial` beside the output, restore's `.NAME.PID.restoring` beside the database. Each
// holds every memory where no forget reaches it, so none may outlive its command: an interrupted
// command (SIGINT, SIGTERM, SIGHUP) removes its own and exits with the conventional 128+n code,
// and one killed outright (SIGKILL, a crash) leaves files that the next of these commands writing
// into the same folder (and, for restore, `serve`) removes once the process that made them is gone.
import { closeSync, linkSync, openSync, readdirSync, readSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export type TempKind = "partial" | "restoring";

/** SQLite's own files beside a database it opened */
const SIDE_FILES = ["", "-wal", "-shm", "-journal"];

/** the temporary file of this process for `target` */
export function tempPath(target: string, kind: TempKind): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}.${kind}`);
}

/** Remove a temporary file with whatever SQLite made beside it. */
export function removeTemp(path: string): void {
  for (const side of SIDE_FILES) rmSync(`${path}${side}`, { force: true });
}

const EXIT_CODES: Record<string, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };
const held = new Set<string>();

function onSignal(signal: NodeJS.Signals): void {
  for (const path of held) {
    try {
      removeTemp(path);
    } catch {
      // the others still go
    }
  }
  process.stderr.write(`infinity-memory: interrupted by ${signal}; its temporary copies are removed\n`);
  process.exit(EXIT_CODES[signal] ?? 1);
}

/**
 * Remove `path` (and SQLite's files beside it) if a signal ends the process before the returned
 * release is called. Without a listener Node dies at once on these signals, leaving it behind.
 */
export function removeOnInterrupt(path: string): () => void {
  if (held.size === 0) for (const s of Object.keys(EXIT_CODES)) process.on(s, onSignal);
  held.add(path);
  return () => {
    if (!held.delete(path) || held.size > 0) return;
    for (const s of Object.keys(EXIT_CODES)) process.off(s, onSignal);
  };
}

/** Whether no process `pid` runs any more (EPERM: it runs, as another user). */
export function processGone(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** Whether `path` holds what our commands copy: a SQLite file, `memory export` lines, or nothing yet. */
function looksOurs(path: string): boolean {
  let fd: number | null = null;
  try {
    fd = openSync(path, "r");
    const head = Buffer.alloc(16);
    const n = readSync(fd, head, 0, head.length, 0);
    const text = head.subarray(0, n).toString("latin1");
    return n === 0 || text === "SQLite format 3\u0000" || text.startsWith('{"id":"mem_');
  } catch {
    return false;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/**
 * Remove the temporary files earlier runs left in `target`'s folder when they were killed, once
 * their process is gone; returns their names. Those for `target` itself go whatever they hold;
 * those for other names (a backup killed while writing b1.db, found by the backup to b2.db) go
 * when they hold what our commands write, so another program's file that happens to share the
 * pattern stays. SQLite's files beside a temporary go with it, or alone when it is gone.
 */
export function removeStaleTemps(target: string): string[] {
  const dir = dirname(target);
  const own = basename(target);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return []; // no folder yet: nothing left in it
  }
  const present = new Set(names);
  const removed: string[] = [];
  const decided = new Map<string, boolean>();
  for (const name of names) {
    const m = /^\.(.+)\.([1-9]\d*)\.(partial|restoring)(-wal|-shm|-journal)?$/.exec(name);
    if (!m || !processGone(Number(m[2]))) continue;
    const main = name.slice(0, name.length - (m[4]?.length ?? 0));
    let go = decided.get(main);
    if (go === undefined) {
      go = m[1] === own || !present.has(main) || looksOurs(join(dir, main));
      decided.set(main, go);
    }
    if (!go) continue;
    try {
      rmSync(join(dir, name), { force: true });
      removed.push(name);
    } catch {
      // not ours to remove (another user's folder): left for its owner
    }
  }
  return removed;
}

/** What link() says on a file system without hard links (FAT, exFAT, some network shares). */
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "ENOSYS"]);

/**
 * Give the finished temporary file `from` the name `to`, never replacing a file that has that name
 * (an error with code EEXIST then, `from` left in place). A hard link does it in one step; where
 * the file system has none, the name is claimed with an exclusive create and the file renamed over
 * that empty claim. `link` is the step a test makes fail.
 */
export function placeNoReplace(from: string, to: string, link: (from: string, to: string) => void = linkSync): void {
  try {
    link(from, to);
    rmSync(from, { force: true });
    return;
  } catch (e) {
    if (!NO_HARD_LINKS.has((e as NodeJS.ErrnoException).code ?? "")) throw e;
  }
  // "wx" fails with EEXIST when anything holds the name, so the rename only ever replaces our
  // own empty claim (both steps are synchronous: no signal handler runs between them)
  closeSync(openSync(to, "wx", 0o600));
  try {
    renameSync(from, to);
  } catch (e) {
    rmSync(to, { force: true });
    throw e;
  }
}

// This process as claims record it: host, pid and the pid's start time, and on Linux what its pids
// are counted in (`host/pid/start/pidns:INODE,boot:ID`; start empty where it cannot be read, the
// last field absent where neither can be read), so a pid another program has taken since is told
// apart. A claim made on another machine (a shared PostgreSQL) cannot be checked from here: its
// lease decides. So can a claim made under this host name in another pid namespace or boot (two
// containers given one --hostname, pods on the host's network): its pid names no process here.
import { readFileSync, statSync } from "node:fs";
import { hostname } from "node:os";
import type { ProcessIdentity } from "../core/process-identity.js";
import { processEnded, processStart } from "./serving-marks.js";

let id: string | null = null;
let space: string | null | undefined;

/** Where this process's pids count, `pidns:INODE,boot:ID` (either part absent when unreadable); null on other systems. */
function pidSpace(): string | null {
  if (space !== undefined) return space;
  const parts: string[] = [];
  try {
    // the pid namespace's inode: two containers on one kernel each have their own
    parts.push(`pidns:${statSync("/proc/self/ns/pid").ino}`);
  } catch {
    // not Linux, or /proc not mounted
  }
  try {
    // a pid's start time counts from boot: after a reboot it may name another process
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    if (/^[0-9a-f-]+$/i.test(boot)) parts.push(`boot:${boot}`);
  } catch {
    // not Linux
  }
  space = parts.length > 0 ? parts.join(",") : null;
  return space;
}

/** The same pid space: every part both name agrees (one that names none in common is another). */
function sameSpace(a: string, b: string): boolean {
  const ours = new Map(a.split(",").map((p) => [p.slice(0, p.indexOf(":")), p]));
  let common = 0;
  for (const p of b.split(",")) {
    const mine = ours.get(p.slice(0, p.indexOf(":")));
    if (mine === undefined) continue;
    if (mine !== p) return false;
    common++;
  }
  return common > 0;
}

export const thisProcess: ProcessIdentity = {
  get id(): string {
    const at = pidSpace();
    id ??= `${hostname()}/${process.pid}/${processStart(process.pid) ?? ""}${at === null ? "" : `/${at}`}`;
    return id;
  },
  gone(other: string): boolean | null {
    // host names may hold "/": the fields are taken from the end. The pid space, when recorded,
    // is last: the start field it follows is digits or empty, so a recorded one is told apart.
    const parts = other.split("/");
    const at = parts.length >= 4 && /[^0-9]/.test(parts.at(-1)!) ? parts.pop()! : null;
    if (parts.length < 3) return null;
    const start = parts.at(-1)!;
    const pid = Number(parts.at(-2));
    if (parts.slice(0, -2).join("/") !== hostname() || !Number.isSafeInteger(pid) || pid <= 0) return null;
    // (an identity recorded before the pid space was is checked by its pid, as it always was)
    if (at !== null) {
      const here = pidSpace();
      if (here === null || !sameSpace(here, at)) return null;
    }
    return processEnded(pid, start === "" ? null : start);
  },
};

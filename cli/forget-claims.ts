// Which process a forget's claim belongs to (core/memory/service.ts ForgetOwner): this host, pid
// and the pid's start time, so serve's sweep for unfinished forgets leaves a claim whose process
// still runs its cascade to it, and finishes one whose process is gone (or whose pid another
// program has taken since). A claim made on another machine (a shared PostgreSQL) cannot be
// checked from here: its lease decides.
import { hostname } from "node:os";
import type { ForgetOwner } from "../core/memory/service.js";
import { processEnded, processStart } from "./serving-marks.js";

/** This process as a claim owner: `host/pid/start` (start empty where it cannot be read). */
export function processOwner(): ForgetOwner {
  const host = hostname();
  return {
    id: `${host}/${process.pid}/${processStart(process.pid) ?? ""}`,
    gone: (owner) => {
      // host names may hold "/": pid and start are the last two fields
      const parts = owner.split("/");
      if (parts.length < 3) return null;
      const start = parts.at(-1)!;
      const pid = Number(parts.at(-2));
      if (parts.slice(0, -2).join("/") !== host || !Number.isSafeInteger(pid) || pid <= 0) return null;
      // the pid may run, but another program may have taken it since the claim
      return processEnded(pid, start === "" ? null : start);
    },
  };
}

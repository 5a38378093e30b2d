// This process as claims record it: host, pid and the pid's start time (`host/pid/start`, start
// empty where it cannot be read), so a pid another program has taken since is told apart. A claim
// made on another machine (a shared PostgreSQL) cannot be checked from here: its lease decides.
import { hostname } from "node:os";
import type { ProcessIdentity } from "../core/process-identity.js";
import { processEnded, processStart } from "./serving-marks.js";

let id: string | null = null;

export const thisProcess: ProcessIdentity = {
  get id(): string {
    id ??= `${hostname()}/${process.pid}/${processStart(process.pid) ?? ""}`;
    return id;
  },
  gone(other: string): boolean | null {
    // host names may hold "/": pid and start are the last two fields
    const parts = other.split("/");
    if (parts.length < 3) return null;
    const start = parts.at(-1)!;
    const pid = Number(parts.at(-2));
    if (parts.slice(0, -2).join("/") !== hostname() || !Number.isSafeInteger(pid) || pid <= 0) return null;
    return processEnded(pid, start === "" ? null : start);
  },
};

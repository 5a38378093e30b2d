// Names this process for good (host, pid and start time) and tells whether a process so named has
// ended: a skill request being approved records its approver's process, so that an approval left
// part way by one that stopped is finished at once rather than after the lease
// (core/learning/evolution.ts ProcessIds).
import { hostname } from "node:os";
import type { ProcessIds } from "../core/learning/evolution.js";
import { processStart } from "./serving-marks.js";
import { processGone } from "./temp-files.js";

let self: string | null = null;

export const processIds: ProcessIds = {
  get self(): string {
    self ??= `${hostname()}:${process.pid}:${processStart(process.pid) ?? ""}`;
    return self;
  },
  gone(name: string): boolean | null {
    // host:pid:start, the host may be anything but the last two fields are ours
    const m = /^(.*):([1-9]\d*):(\d*)$/.exec(name);
    if (!m || m[1] !== hostname()) return null;
    const pid = Number(m[2]);
    if (processGone(pid)) return true;
    // the pid is another program's since (a start time that differs)
    const start = m[3] ? processStart(pid) : null;
    return start !== null && start !== m[3];
  },
};

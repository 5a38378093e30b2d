// Which server boot owns a journaled invocation, and whether that owner is gone. An owner is
// `${pid}:${bootId}`; a new id per server start lets a restart inside one process (and pid
// reuse) recognise the invocations a previous boot left unfinished.
import { randomUUID } from "node:crypto";

// Boots of this process that are still serving: process-wide by nature, because two servers
// in one process share its pid and must not take each other's calls.
const liveBoots = new Set<string>();

export interface Owner {
  id: string;
  /** mark this boot finished, so a later boot may take over its open invocations */
  release(): void;
}

export function newOwner(): Owner {
  const id = `${process.pid}:${randomUUID()}`;
  liveBoots.add(id);
  return { id, release: () => void liveBoots.delete(id) };
}

export function isOwnerDead(owner: string): boolean {
  const pid = Number(owner.slice(0, owner.indexOf(":")));
  if (!Number.isInteger(pid) || pid <= 0) return true;
  if (pid === process.pid) return !liveBoots.has(owner);
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}

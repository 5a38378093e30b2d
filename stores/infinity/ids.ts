// Thread id sources. Threads are UUIDv4 (reference §7); tests pass the daemon's sequential source
// so ids are predictable.
import { randomUUID } from "node:crypto";

export type ThreadIdSource = () => string;

export const uuidThreadIds: ThreadIdSource = () => randomUUID();

/** the daemon's test `SequentialIdSource`: `00000000-0000-4000-8000-{n:012x}` from n = start */
export function sequentialThreadIds(start = 1): ThreadIdSource {
  let n = start;
  return () => `00000000-0000-4000-8000-${(n++).toString(16).padStart(12, "0")}`;
}

// The daemon owns its files; this adapter only reads them, so every write is refused.
import { InfinityStoreError } from "../infinity/errors.js";

export function readOnly(method: string): InfinityStoreError {
  return new InfinityStoreError(
    "read_only",
    `${method}: the Infinity daemon's files are read-only here; write through the daemon or a SQLite store`,
  );
}

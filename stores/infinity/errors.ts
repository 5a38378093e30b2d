// The error class of the Infinity-shaped stores (stores/infinity, stores/sqlite conversation and
// state stores, stores/infinity-files). Rust's `type Error` becomes a rejected Promise with this.

export type InfinityStoreErrorCode =
  /** a write reached a read-only store (the daemon's own files) */
  | "read_only"
  /** a thread id or state key that cannot name a file or row (path separators, empty) */
  | "invalid_id"
  /** a message or user choice that does not match the daemon's JSON shape */
  | "invalid_message"
  /** an order, cutoff or count that is not a non-negative integer */
  | "invalid_argument"
  /** a stored file or row that no longer parses */
  | "corrupt"
  /** the file system or database failed */
  | "io";

export class InfinityStoreError extends Error {
  constructor(
    readonly code: InfinityStoreErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "InfinityStoreError";
  }
}

export function isInfinityStoreError(e: unknown): e is InfinityStoreError {
  return e instanceof InfinityStoreError;
}

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
  /** the file it is about, when a file of the daemon's home */
  readonly file?: string;
  /** where in that file's text the parser stopped, when it says */
  readonly position?: number;

  constructor(
    readonly code: InfinityStoreErrorCode,
    message: string,
    where: { file?: string; position?: number } = {},
  ) {
    super(message);
    this.name = "InfinityStoreError";
    if (where.file !== undefined) this.file = where.file;
    if (where.position !== undefined) this.position = where.position;
  }
}

export function isInfinityStoreError(e: unknown): e is InfinityStoreError {
  return e instanceof InfinityStoreError;
}

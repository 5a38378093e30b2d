// Node's file-system errors read "ENOENT: no such file or directory, open '/x'"; a person running a
// command wants the path and the reason in plain words.

const REASONS: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "it is a directory, not a file",
  ENOTDIR: "a part of the path is not a directory",
  ENOSPC: "no space left on the device",
  EROFS: "the file system is read-only",
  EEXIST: "it already exists",
  EMFILE: "too many open files",
};

/** The plain reason for a file-system error, or its message when the code is not one of these. */
export function fileReason(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return (typeof code === "string" && REASONS[code]) || (e instanceof Error ? e.message : String(e));
}

/** `PATH: reason` for an error Node raised about a path, else null. */
export function fileErrorText(e: unknown): string | null {
  const err = e as { code?: unknown; path?: unknown; syscall?: unknown } | null;
  if (!err || typeof err.path !== "string" || typeof err.syscall !== "string" || typeof err.code !== "string") return null;
  return `${err.path}: ${fileReason(e)}`;
}

// Files that hold what the agent learned about a person (memories, conversation excerpts, logs of
// their sessions, backups and exports of them) are for that person only. On a shared machine a
// home directory is often readable by everyone (0755 on macOS and older Debian/Ubuntu), and SQLite
// and Node create files 0644 under the usual umask: other users could read memory.db. New folders
// are made 0700 and new files 0600; a file that exists keeps the mode its owner gave it.
import { closeSync, mkdirSync, openSync } from "node:fs";

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** mkdir -p, each folder it creates owner-only */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Create `path` empty and owner-only when it does not exist. SQLite takes an empty file as a new
 * database and gives its -wal, -shm and -journal files the database file's mode.
 */
export function createPrivateFile(path: string): void {
  try {
    closeSync(openSync(path, "wx", PRIVATE_FILE_MODE));
  } catch {
    // it exists (its mode is left alone), or the open that follows reports why it cannot be made
  }
}

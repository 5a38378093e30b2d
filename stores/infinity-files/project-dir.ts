// A project is keyed by its directory's path, so one directory must give one key however it is
// named. A command server learns its project from its own cwd, which the system reports with
// symbolic links resolved; a path typed on the command line (`--project ~/proj` through a link,
// `--project .` from a linked folder) or recorded in sessions.json is resolved the same way.
import { realpathSync } from "node:fs";
import { resolve } from "node:path";

/** The directory's real absolute path; a path that does not exist (moved, deleted) as given, made absolute. */
export function projectDir(path: string): string {
  const abs = resolve(path);
  try {
    return realpathSync.native(abs);
  } catch {
    return abs;
  }
}

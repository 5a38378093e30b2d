// Where the Infinity daemon keeps its state under its home directory (`~/.infinity/`,
// reference §3.5). Ids become file names here, so anything that could leave the directory is
// refused.
import { join } from "node:path";
import { InfinityStoreError } from "../infinity/errors.js";

export class InfinityHomeLayout {
  readonly threadsDir: string;
  readonly stateDir: string;
  readonly sessionsFile: string;

  constructor(readonly home: string) {
    this.threadsDir = join(home, "threads");
    this.stateDir = join(home, "state");
    this.sessionsFile = join(home, "sessions.json");
  }

  /** `ThreadSnapshot` (messages + compaction summaries), or the older rig-message format */
  threadFile(threadId: string): string {
    return join(this.threadsDir, `${fileId(threadId)}.json`);
  }

  /** flat ThreadInfo ⊕ ThreadExtras */
  metaFile(threadId: string): string {
    return join(this.threadsDir, `${fileId(threadId)}.meta.json`);
  }

  /** `{view_type: content}`, absent when the thread has no views */
  viewsFile(threadId: string): string {
    return join(this.threadsDir, `${fileId(threadId)}.views.json`);
  }

  /** `ThreadState`; session metadata lives under the root thread's key */
  stateFile(key: string): string {
    return join(this.stateDir, `${fileId(key)}.state.json`);
  }

  /** the thread id a file in threads/ belongs to, or null for views files and strangers */
  static threadIdOfFile(name: string): string | null {
    // hidden files are not threads (a thread id never starts with a dot): macOS leaves "._x.json"
    // beside every file copied onto some volumes, and it made every index run fail on its id
    if (name.startsWith(".")) return null;
    if (name.endsWith(".views.json")) return null;
    if (name.endsWith(".meta.json")) return name.slice(0, -".meta.json".length) || null;
    if (name.endsWith(".json")) return name.slice(0, -".json".length) || null;
    return null;
  }
}

/** A thread id or state key usable as a file name: no separators, NUL or leading dot. */
export function fileId(id: string): string {
  if (id.length === 0 || id.startsWith(".") || /[/\\\0]/.test(id)) {
    throw new InfinityStoreError("invalid_id", `not a usable thread id: ${JSON.stringify(id)}`);
  }
  return id;
}

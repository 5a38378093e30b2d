// Reads the daemon's JSON files and keeps the parsed result until the file's mtime or size
// changes. The daemon rewrites files in place (no rename), so a read can catch one half-written:
// the last good copy is served until the write completes, unless the reader must know (the
// session indexer: a forget reads again until every thread was read whole, and a stale copy
// looked whole, so the purge ran before the message that said the forgotten text was indexed).
import { readFile, stat } from "node:fs/promises";
import { InfinityStoreError } from "../infinity/errors.js";

interface Entry {
  mtimeNs: bigint;
  size: bigint;
  value: unknown;
}

/** Parsed threads of a long session run to megabytes; keep only the recently used ones. */
export const DEFAULT_CACHE_ENTRIES = 256;

export class JsonFileCache {
  /** Map order = recency, oldest first */
  private readonly entries = new Map<string, Entry>();

  /**
   * `tornReads`: "last-good" serves the previous parse of a file caught mid-rewrite; "refuse"
   * reports it as corrupt (tried again later) so the caller knows it has not seen the file.
   */
  constructor(
    private readonly maxEntries = DEFAULT_CACHE_ENTRIES,
    private readonly tornReads: "last-good" | "refuse" = "last-good",
  ) {}

  /** the parsed file, or null when it does not exist */
  async read<T>(path: string, parse: (raw: unknown) => T): Promise<T | null> {
    const st = await statOrNull(path);
    if (!st) {
      this.entries.delete(path);
      return null;
    }
    const cached = this.entries.get(path);
    if (cached && cached.mtimeNs === st.mtimeNs && cached.size === st.size) {
      this.touch(path, cached);
      return cached.value as T;
    }
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (e) {
      if (isNotFound(e)) {
        this.entries.delete(path);
        return null;
      }
      throw new InfinityStoreError("io", `cannot read ${path}: ${(e as Error).message}`, { file: path });
    }
    let value: T;
    try {
      value = parse(JSON.parse(text));
    } catch (e) {
      if (cached && this.tornReads === "last-good") return cached.value as T;
      if (e instanceof InfinityStoreError) throw e.file === undefined ? new InfinityStoreError(e.code, e.message, { file: path }) : e;
      if (e instanceof SyntaxError) {
        const { text: why, position } = jsonSyntax(e);
        throw new InfinityStoreError("corrupt", `${path}: ${why}`, position === undefined ? { file: path } : { file: path, position });
      }
      throw new InfinityStoreError("corrupt", `${path}: ${(e as Error).message}`, { file: path });
    }
    this.touch(path, { mtimeNs: st.mtimeNs, size: st.size, value });
    return value;
  }

  private touch(path: string, entry: Entry): void {
    this.entries.delete(path);
    this.entries.set(path, entry);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
}

/**
 * JSON.parse's complaint without the input it quotes: Node 20 says `Unexpected token 'x', "…" is
 * not valid JSON` with up to a few dozen characters of the file, and this text reaches logs and
 * stored rows (the learning worker's). The forms that give a position quote nothing.
 */
function jsonSyntax(e: SyntaxError): { text: string; position?: number } {
  const at = /^(.*?) at position (\d+)/s.exec(e.message);
  if (at && !at[1]!.includes('"')) return { text: `${at[1]} at position ${at[2]}`, position: Number(at[2]) };
  if (e.message === "Unexpected end of JSON input") return { text: "not valid JSON: it ends early" };
  return { text: "not valid JSON (an unexpected character)" };
}

async function statOrNull(path: string): Promise<{ mtimeNs: bigint; size: bigint } | null> {
  try {
    return await stat(path, { bigint: true });
  } catch (e) {
    if (isNotFound(e)) return null;
    throw new InfinityStoreError("io", `cannot stat ${path}: ${(e as Error).message}`, { file: path });
  }
}

export function isNotFound(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

// Line output of a command (JSON lines) to stdout or a file. A file is written beside its target and
// renamed over it once complete and synced, so a failed or interrupted export never leaves half a
// file under the name a user will import from. Backpressure is honoured: a million-memory export
// streams instead of buffering.
import { createWriteStream } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileReason } from "./file-errors.js";
import { PRIVATE_FILE_MODE } from "../stores/private-files.js";
import { removeOnInterrupt, removeStaleTemps, tempPath } from "./temp-files.js";

/** Writes each line (newline added) and returns how many; `file` undefined means stdout. */
export async function writeLines(lines: AsyncIterable<string>, file?: string): Promise<number> {
  let n = 0;
  async function* numbered() {
    for await (const line of lines) {
      n++;
      yield `${line}\n`;
    }
  }
  if (file === undefined) {
    try {
      await pipeline(Readable.from(numbered()), process.stdout);
    } catch (e) {
      // `… | head`: the reader has gone, which ends the output rather than failing it
      if ((e as { code?: unknown }).code !== "EPIPE") throw e;
    }
    return n;
  }
  const target = resolve(file);
  // what an export or backup into this folder that was killed outright left: every memory, too
  removeStaleTemps(target);
  const tmp = tempPath(target, "partial");
  const release = removeOnInterrupt(tmp);
  try {
    // the lines are memories (memory export): owner-only, as the database they come from
    await pipeline(Readable.from(numbered()), createWriteStream(tmp, { mode: PRIVATE_FILE_MODE }));
    const fh = await open(tmp, "r+");
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, target);
  } catch (e) {
    await rm(tmp, { force: true });
    throw (e as { code?: unknown }).code ? new Error(`cannot write ${target}: ${fileReason(e)}`) : e;
  } finally {
    release();
  }
  return n;
}

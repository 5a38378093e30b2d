// A copy of the fixture daemon home in a fresh folder, with a memory database beside it and session
// search over the copy (tests that change the home's files: delete a thread, replace metadata).
import { cpSync } from "node:fs";
import { join, resolve } from "node:path";
import { makeSessionSearch, openSources } from "../../cli/sessions.js";
import { openTestMemory } from "./memory.js";
import { tempDir } from "./tmp.js";

export const FIXTURE_HOME = resolve("test/fixtures/infinity-home");

export function copiedHome() {
  const dir = tempDir();
  const home = join(dir, "home");
  cpSync(FIXTURE_HOME, home, { recursive: true });
  const m = openTestMemory(dir);
  const src = openSources([`infinity-home:${home}`], m.db, m.dbPath);
  const s = makeSessionSearch(m.db, src.sources, m.clock, "local");
  return { dir, home, m, src, s };
}

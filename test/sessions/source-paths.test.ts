// Session sources are keyed by where they live: one daemon home is one source however its path
// is spelt, so a search shows each message once.
import { cpSync, symlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { makeSessionSearch, openSources } from "../../cli/sessions.js";
import { SessionIndexer } from "../../core/sessions/indexer.js";
import { SqliteSessionIndex } from "../../stores/sqlite/session-index.js";
import { openTestMemory } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const HOME = resolve("test/fixtures/infinity-home");
const LOCAL_SESSION = "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35";

describe("session source paths", () => {
  it("a home reached through a symbolic link is the same source, not a second copy of every conversation", async () => {
    const dir = tempDir();
    const home = join(dir, "home");
    cpSync(HOME, home, { recursive: true });
    // e.g. ~/.infinity linked to another disk, or $INFINITY_HOME spelt through a linked folder
    symlinkSync(home, join(dir, "linked-home"));
    const m = openTestMemory(dir);
    for (const spec of [`infinity-home:${home}`, `infinity-home:${join(dir, "linked-home")}`, join(dir, "linked-home", ".")]) {
      const src = openSources([spec], m.db, m.dbPath);
      const s = makeSessionSearch(m.db, src.sources, m.clock, "local");
      const hits = await s.search("local", { query: "staging logs deploy", limit: 10, window: 0 });
      expect(hits.map((h) => [h.hit.threadId, h.hit.ord])).toEqual([[LOCAL_SESSION, hits[0]!.hit.ord]]);
      src.close();
    }
    expect((m.db.prepare(`SELECT count(*) AS n FROM session_sources`).get() as { n: number }).n).toBe(1);
    m.close();
  });

  it("a home indexed before under its linked path keeps its index: nothing is indexed a second time", async () => {
    const dir = tempDir();
    const home = join(dir, "home");
    cpSync(HOME, home, { recursive: true });
    const linked = join(dir, "linked-home");
    symlinkSync(home, linked);
    const m = openTestMemory(dir);
    // what an earlier version did: the source keyed by the path as given
    const before = openSources([`infinity-home:${home}`], m.db, m.dbPath);
    const index = new SqliteSessionIndex(m.db);
    const first = await new SessionIndexer(index, m.clock, "local").run({ ...before.sources[0]!, location: linked });
    expect(first.messagesAdded).toBeGreaterThan(0);
    before.close();

    const src = openSources([`infinity-home:${linked}`], m.db, m.dbPath);
    const s = makeSessionSearch(m.db, src.sources, m.clock, "local");
    const again = (await s.refresh(true))[0]!;
    expect([again.messagesAdded, again.reset]).toEqual([0, 0]);
    expect((await s.search("local", { query: "staging logs deploy", limit: 10, window: 0 })).map((h) => h.hit.threadId)).toEqual([LOCAL_SESSION]);
    expect(m.db.prepare(`SELECT location FROM session_sources`).pluck().all()).toEqual([home]);
    src.close();
    m.close();
  });
});

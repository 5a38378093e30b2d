// A file in the daemon's threads/ folder whose name is no usable thread id (a backslash in it, as
// some sync tools leave behind) is left out of the run, named; every other conversation is indexed.
import { cpSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { makeSessionSearch, openSources } from "../../cli/sessions.js";
import { openTestMemory } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

describe("a thread file with an unusable name", () => {
  it("is skipped with the reason, and the rest of the home is indexed and found", async () => {
    const dir = tempDir();
    const home = join(dir, "home");
    cpSync(resolve("test/fixtures/infinity-home"), home, { recursive: true });
    writeFileSync(join(home, "threads", "odd\\name.json"), JSON.stringify({ messages: [], compaction_summaries: [] }));
    const m = openTestMemory(dir);
    const src = openSources([`infinity-home:${home}`], m.db, m.dbPath);
    const s = makeSessionSearch(m.db, src.sources, m.clock, "local");
    const report = (await s.refresh(true))[0]!;
    expect(report.skipped.map((t) => t.threadId)).toEqual(["odd\\name"]);
    expect(report.skipped[0]!.reason).toContain("not a usable thread id");
    expect((await s.search("local", { query: "staging logs deploy", limit: 1, window: 0 }))[0]?.hit.text).toContain("staging logs");
    src.close();
    m.close();
  });
});

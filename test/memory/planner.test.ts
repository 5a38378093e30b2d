// Search on a store past the planner's postings budget: common terms are pruned, rows are
// filtered after ranking, and scope stays exact.
import { describe, expect, it } from "vitest";
import { seedMemories } from "../../bench/seed.js";
import { POSTINGS_BUDGET } from "../../stores/sqlite/fts-planner.js";
import { CUE_POOL } from "../../core/retrieval/cues.js";
import { openTestMemory, req, T0 } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

describe("search on a large store", () => {
  it("stays scope-exact and finds rare terms when common terms are pruned", async () => {
    const m = openTestMemory(tempDir());
    const alice = req({ user: "alice" });
    const bob = req({ user: "bob", session: "b1", thread: "b1" });
    const n = POSTINGS_BUDGET + 2000;
    // Bob owns most of the store, so for him the scope keys are not selective.
    await seedMemories(m, n, (i) => {
      const who = i % 4 === 0 ? alice : bob;
      return {
        scope: who,
        level: "user",
        kind: "note",
        content: `${who.user} notes that the deploy pipeline runs step ${i}${i === 4321 ? " with the zebrafish canary" : ""}`,
        at: T0 + i,
      };
    });
    const bobHits = await m.service.search({ thread: bob }, { query: "deploy pipeline zebrafish canary", limit: 5 });
    expect(bobHits[0]?.record.content).toContain("zebrafish");
    expect(bobHits.every((h) => h.record.scope.user === "bob")).toBe(true);
    const common = await m.service.search({ thread: bob }, { query: "deploy pipeline", limit: 20 });
    expect(common).toHaveLength(20);
    expect(common.every((h) => h.record.scope.user === "bob")).toBe(true);
    const aliceHits = await m.service.search({ thread: alice }, { query: "deploy pipeline zebrafish", limit: 20 });
    expect(aliceHits).toHaveLength(20);
    expect(aliceHits.every((h) => h.record.scope.user === "alice")).toBe(true);
    expect(aliceHits.some((h) => h.record.content.includes("zebrafish"))).toBe(false);
    // A partial word the word index holds nowhere still reaches the trigram channel.
    const partial = await m.service.search({ thread: bob }, { query: "zebraf", limit: 5 });
    expect(partial.map((h) => h.record.content)).toEqual([expect.stringContaining("zebrafish")]);
    m.close();
  });

  it("a word too common to rank by returns the viewer's newest mentions", async () => {
    const m = openTestMemory(tempDir());
    const alice = req({ user: "alice" });
    const bob = req({ user: "bob", session: "b1", thread: "b1" });
    const n = POSTINGS_BUDGET + 1500;
    // Every memory mentions the pipeline except every 7th of Bob's, whose neighbours do (the
    // context column would match those); Alice's memories are the newest.
    await seedMemories(m, n, (i) => {
      const who = i >= n - 300 ? alice : bob;
      const mentions = who === alice || i % 7 !== 0;
      return { scope: who, level: "user", kind: "note", content: mentions ? `${who.user} ran the pipeline, step ${i}` : `${who.user} waited, step ${i}`, at: T0 + i };
    });
    const hits = await m.service.search({ thread: bob }, { query: "pipeline", limit: 10 });
    const steps = hits.map((h) => Number(/step (\d+)/.exec(h.record.content)?.[1]));
    // The newest of Bob's mentions form the pool; neighbour spreading orders it (runs of mentions
    // rise), and no neighbour-only match or older mention gets in.
    const newest: number[] = [];
    for (let i = n - 301; newest.length < CUE_POOL; i--) if (i % 7 !== 0) newest.push(i);
    expect(hits).toHaveLength(10);
    expect(hits.every((h) => h.record.scope.user === "bob" && h.record.content.includes("pipeline"))).toBe(true);
    expect(steps.every((s) => newest.includes(s))).toBe(true);
    m.close();
  });
});

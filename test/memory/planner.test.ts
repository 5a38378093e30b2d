// Search on a store past the planner's postings budget: common terms are pruned, rows are
// filtered after ranking, and scope stays exact.
import { describe, expect, it, vi } from "vitest";
import { seedMemories } from "../../bench/seed.js";
import { POSTINGS_BUDGET } from "../../stores/sqlite/fts-planner.js";
import { CUE_POOL } from "../../core/retrieval/cues.js";
import { DEFAULT_CHANNELS } from "../../core/retrieval/channels.js";
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

  it("the feedback pass queries again only when a feedback word fits its budget", async () => {
    const m = openTestMemory(tempDir(), "memory.db", { ...DEFAULT_CHANNELS, prf: true });
    const bob = req({ user: "bob", session: "b1", thread: "b1" });
    const n = POSTINGS_BUDGET + 1000;
    // "harbour" is in every 12th memory, so with its neighbours' context in ~5/12 of them: rare
    // enough to be feedback (idf > 0), too common for the feedback pass's budget. "lighthouse" is
    // in 35 (and their neighbours).
    const zebrafish = [720, 1440, 2160, 2880, 3600];
    const quokka = [732, 1452, 2172, 2892, 3612];
    await seedMemories(m, n, (i) => {
      let content = `bob logged entry ${i}`;
      if (i % 12 === 0) content += " near the harbour";
      if (zebrafish.includes(i)) content += " with a zebrafish";
      if (quokka.includes(i)) content += " with a quokka";
      if (quokka.includes(i) || (i % 97 === 1 && i < 97 * 30)) content += " by the lighthouse";
      return { scope: bob, level: "user", kind: "note", content, at: T0 + i };
    });
    type Hit = { row: { rowid: number } };
    const store = m.store as unknown as { channel: (table: string) => Hit[]; feedbackPass: () => Hit[] };
    const channel = vi.spyOn(store, "channel");
    const feedback = vi.spyOn(store, "feedbackPass");
    const wordPasses = () => channel.mock.calls.filter((c) => c[0] === "memory_fts").length;
    const rowids = (hs: Hit[]) => hs.map((h) => h.row.rowid);

    // Only "harbour" recurs, and it does not fit: no second word pass; the first pass's own word
    // ranking stands in as the feedback list.
    const hits = await m.service.search({ thread: bob }, { query: "zebrafish", limit: 10 });
    expect(hits.filter((h) => h.record.content.includes("zebrafish"))).toHaveLength(5);
    expect(wordPasses()).toBe(1);
    const firstPass = channel.mock.results[0]!.value as Hit[];
    expect(rowids(feedback.mock.results[0]!.value as Hit[])).toEqual(rowids(firstPass).slice(0, 10));

    // "lighthouse" fits: a second word pass runs with it.
    channel.mockClear();
    feedback.mockClear();
    await m.service.search({ thread: bob }, { query: "quokka", limit: 10 });
    expect(wordPasses()).toBe(2);
    const second = channel.mock.results.filter((_, i) => channel.mock.calls[i]![0] === "memory_fts")[1]!.value as Hit[];
    expect(rowids(feedback.mock.results[0]!.value as Hit[])).toEqual(rowids(second));
    m.close();
  });
});

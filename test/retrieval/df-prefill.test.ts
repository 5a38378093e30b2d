// Word counts read ahead (stores/sqlite/df-prefill.ts): a worker reads the commonest words' document
// counts from the vocabulary and the planner takes them, so a common word's first search does not
// walk its doclist. The counts must be the ones the planner would read itself, must never replace a
// newer count, and must age like any count once the memories change. Real SQLite files, past the
// planner's threshold, and the real worker thread.
import type { Statement } from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RequestScope } from "../../core/memory/scope.js";
import { DfPrefill, PREFILL_EVERY_MS, commonTerms } from "../../stores/sqlite/df-prefill.js";
import { FtsPlanner, POSTINGS_BUDGET } from "../../stores/sqlite/fts-planner.js";
import { openTestMemory, req } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const scope: RequestScope = req({ session: "s-1", thread: "s-1" });
const origin = { actor: "user" as const, threadId: "s-1", toolCallId: null };

async function remember(ctx: ReturnType<typeof openTestMemory>, contents: string[]): Promise<void> {
  for (let start = 0; start < contents.length; start += 1000) {
    await ctx.service.rememberMany(contents.slice(start, start + 1000).map((content) => ({ req: scope, input: { content, kind: "fact" as const }, origin })));
  }
}

/** POSTINGS_BUDGET + 100 notes: "checklist" in every one, "rollout" in every other, a distinct number in each (over 1,000 terms in all) */
async function filled(dir = tempDir()): Promise<ReturnType<typeof openTestMemory>> {
  const ctx = openTestMemory(dir);
  await remember(ctx, Array.from({ length: POSTINGS_BUDGET + 100 }, (_, i) => (i % 2 === 0 ? `Note ${i} about the rollout checklist` : `Note ${i} on the checklist`)));
  return ctx;
}

/** spy on the statement the planner reads one count with */
function countReads(planner: FtsPlanner) {
  return vi.spyOn((planner as unknown as { dfStmt: Statement }).dfStmt, "get");
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe("word counts read ahead", () => {
  it("commonTerms reads the vocabulary in chunks, commonest first, with the counts the planner reads one by one", async () => {
    const ctx = await filled();
    const planner = new FtsPlanner(ctx.db);
    const pauses: number[] = [];
    const terms = await commonTerms(ctx.db, { minDocs: 1000, pause: async (ms) => void pauses.push(ms) });
    const [checklist, rollout] = [...planner.stems(["checklist", "rollout"]).values()];
    const names = terms.map((t) => t.term);
    expect(names).toContain(checklist);
    expect(names).toContain(rollout);
    // a note's own number is in a handful of memories (its own and its neighbours' context)
    expect(names).not.toContain([...planner.stems(["17"]).values()][0]);
    for (const t of terms) expect(t.doc).toBe(planner.df(t.term));
    expect(terms.map((t) => t.doc)).toEqual([...terms.map((t) => t.doc)].sort((a, b) => b - a));
    // over 3,000 distinct terms: four reads of 1,000, a pause after each full one
    const everything = await commonTerms(ctx.db, { minDocs: 1, maxTerms: 1e9 });
    const vocabulary = (ctx.db.prepare(`SELECT count(*) AS n FROM temp.memory_fts_v`).get() as { n: number }).n;
    expect(everything.length).toBe(vocabulary);
    expect(vocabulary).toBeGreaterThan(3000);
    expect(pauses.length).toBe(Math.floor(vocabulary / 1000));
    expect((await commonTerms(ctx.db, { minDocs: 1, maxTerms: 5 })).map((t) => t.term)).toEqual(everything.slice(0, 5).map((t) => t.term));
    ctx.close();
  });

  it("the planner takes the counts a worker read and answers the common words without reading them", async () => {
    const ctx = await filled();
    const planner = new FtsPlanner(ctx.db);
    const prefill = new DfPrefill(ctx.db, planner);
    const reference = new FtsPlanner(ctx.db);
    const [checklist, rollout] = [...reference.stems(["checklist", "rollout"]).values()];
    expect(await prefill.run()).toBeGreaterThanOrEqual(2);
    const reads = countReads(planner);
    expect(planner.df(checklist!)).toBe(reference.df(checklist!));
    expect(planner.df(rollout!)).toBe(reference.df(rollout!));
    expect(reads).not.toHaveBeenCalled();
    // a word too rare to be read ahead is read on demand, as before
    const [rare] = [...reference.stems(["17"]).values()];
    expect(planner.df(rare!)).toBe(reference.df(rare!));
    expect(reads).toHaveBeenCalledTimes(1);
    // and a plan over the common words reads nothing either
    reads.mockClear();
    expect(planner.plan(["checklist", "rollout"], [], null).terms.length).toBeGreaterThan(0);
    expect(reads).not.toHaveBeenCalled();
    prefill.close();
    ctx.close();
  });

  it("counts read ahead never replace a newer count, and once the memories change they age like any count read at the mark", async () => {
    const dir = tempDir();
    const ctx = await filled(dir);
    const planner = new FtsPlanner(ctx.db);
    const [checklist, rollout] = [...planner.stems(["checklist", "rollout"]).values()];
    const mark = planner.prefillMark();
    const real = planner.df(checklist!); // read after the mark: newer than anything read at it
    expect(planner.prefill([[checklist!, 1], [rollout!, 1500]], mark)).toBe(1);
    expect(planner.df(checklist!)).toBe(real);
    expect(planner.df(rollout!)).toBe(1500);
    expect(planner.changedSince(mark)).toBe(false);
    // another connection adds 40 notes with the word (under 5% of the count read ahead, and
    // under the 50 rows a count a minute old may lag by)
    const byOther = async (n: number, from: number) => {
      const other = openTestMemory(dir);
      await remember(other, Array.from({ length: n }, (_, i) => `Rollout addendum ${from + i}`));
      other.close();
    };
    await byOther(40, 0);
    expect(planner.changedSince(mark)).toBe(true);
    // within a minute of the mark the count serves; past it too, while growth stays under 5%
    expect(planner.df(rollout!)).toBe(1500);
    const now = performance.now();
    const clock = vi.spyOn(performance, "now").mockReturnValue(now + 61_000);
    expect(planner.df(rollout!)).toBe(1500);
    clock.mockReturnValue(now);
    // 40 more (80 since the mark: past 5% of 1500 and past 50 rows) and it is read again at once,
    // inside the minute: a bulk write does not leave the plans on counts read before it
    await byOther(40, 40);
    expect(planner.df(rollout!)).toBe(new FtsPlanner(ctx.db).df(rollout!));
    expect(planner.df(rollout!)).toBeGreaterThan(1500);
    clock.mockRestore();
    ctx.close();
  });

  it("reads again every few minutes while the memories change, and not when they do not", async () => {
    const dir = tempDir();
    const ctx = await filled(dir);
    const planner = new FtsPlanner(ctx.db);
    const prefill = new DfPrefill(ctx.db, planner);
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    expect(await prefill.run()).toBeGreaterThan(0);
    prefill.keepFresh();
    const runs = vi.spyOn(prefill, "run");
    vi.advanceTimersByTime(PREFILL_EVERY_MS);
    expect(runs).not.toHaveBeenCalled();
    await remember(ctx, ["One more rollout note"]);
    vi.advanceTimersByTime(PREFILL_EVERY_MS);
    expect(runs).toHaveBeenCalledTimes(1);
    expect(await runs.mock.results[0]!.value).toBeGreaterThan(0);
    // the new note is counted now, without a read on demand
    const reads = countReads(planner);
    const [rollout] = [...planner.stems(["rollout"]).values()];
    expect(planner.df(rollout!)).toBe(new FtsPlanner(ctx.db).df(rollout!));
    expect(reads).not.toHaveBeenCalled();
    prefill.close();
    vi.advanceTimersByTime(PREFILL_EVERY_MS);
    expect(runs).toHaveBeenCalledTimes(1);
    ctx.close();
  });

  it("has nothing to read for a store within the planner's budget", async () => {
    const ctx = openTestMemory(tempDir());
    await remember(ctx, ["Note about the rollout checklist", "Another checklist"]);
    const prefill = new DfPrefill(ctx.db, new FtsPlanner(ctx.db));
    expect(await prefill.run()).toBe(0);
    ctx.close();
  });

  it("a store's warm-up reads the counts ahead for its own searches", async () => {
    const dir = tempDir();
    const ctx = await filled(dir);
    const common = [...new FtsPlanner(ctx.db).stems(["checklist", "rollout"]).values()];
    const readFor = async (c: ReturnType<typeof openTestMemory>, warm: boolean) => {
      const store = c.store as unknown as { planner: FtsPlanner; warm(): Promise<string[]> };
      if (warm) await store.warm();
      const reads = countReads(store.planner);
      const hits = await c.service.search({ thread: scope }, { query: "rollout checklist", limit: 5 });
      expect(hits.length).toBe(5);
      return reads.mock.calls.map((args) => args[0] as string);
    };
    // a store that did not warm up reads both words' counts on its first search (the scope keys the
    // index does not hold are read in both cases: a zero is never kept past a change)
    const cold = openTestMemory(dir);
    expect(await readFor(cold, false)).toEqual(expect.arrayContaining(common));
    cold.close();
    const read = await readFor(ctx, true);
    for (const w of common) expect(read).not.toContain(w);
    ctx.close();
  });
});

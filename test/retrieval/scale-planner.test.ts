// The word-channel planner caches each token's document frequency (stores/sqlite/fts-planner.ts).
// Past the small-store size it plans every query from those numbers, so a cached zero must never
// hide a word remembered a moment later, and a cached count must follow writes from this
// connection and from another process's connection. Real SQLite file, past the planner's threshold.
import { describe, expect, it, vi } from "vitest";
import type { RequestScope } from "../../core/memory/scope.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { CONTEXT_TERM_MAX_DF, DEFAULT_CHANNELS } from "../../core/retrieval/channels.js";
import { FtsPlanner, POSTINGS_BUDGET } from "../../stores/sqlite/fts-planner.js";
import { RELATED_POSTINGS_BUDGET, RELATED_WORD_WEIGHT, addedWords } from "../../core/retrieval/added-words.js";
import { openTestMemory, req } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const scope: RequestScope = req({ session: "s-1", thread: "s-1" });

async function fill(ctx: ReturnType<typeof openTestMemory>, n: number): Promise<void> {
  for (let start = 0; start < n; start += 1000) {
    const items = Array.from({ length: Math.min(1000, n - start) }, (_, i) => ({
      req: scope,
      input: { content: `Note ${start + i} about the usual rollout checklist`, kind: "fact" as const },
      origin: { actor: "user" as const, threadId: "s-1", toolCallId: null },
    }));
    await ctx.service.rememberMany(items);
  }
}

describe("planner document-frequency cache", () => {
  it("a word first searched while absent is found as soon as it is remembered", async () => {
    const dir = tempDir();
    const ctx = openTestMemory(dir);
    await fill(ctx, POSTINGS_BUDGET + 100);
    expect(await ctx.service.search({ thread: scope }, { query: "zebracorn rollout", limit: 10 })).not.toEqual([]);
    expect((await ctx.service.search({ thread: scope }, { query: "zebracorn", limit: 10 })).length).toBe(0);
    await ctx.service.remember(scope, { content: "The zebracorn migration runs on Fridays", kind: "fact" }, { actor: "user", threadId: "s-1", toolCallId: null });
    const hits = await ctx.service.search({ thread: scope }, { query: "zebracorn rollout", limit: 10 });
    expect(hits[0]?.record.content).toBe("The zebracorn migration runs on Fridays");
    ctx.close();
  });

  it("cached counts follow writes made through another connection: at once for a word that was absent; for one it held, after a minute once the index grew by 5% of it, after ten minutes in any case", async () => {
    const dir = tempDir();
    const ctx = openTestMemory(dir);
    await fill(ctx, POSTINGS_BUDGET + 100);
    const planner = new FtsPlanner(ctx.db);
    const [stem] = planner.stems(["checklist"]).values();
    const [fresh] = planner.stems(["zebracorn"]).values();
    const before = planner.df(stem!);
    expect(before).toBe(POSTINGS_BUDGET + 100);
    expect(planner.df(fresh!)).toBe(0);
    // Another process (here: a second connection) adds a memory with both words.
    const other = openTestMemory(dir);
    await other.service.remember(scope, { content: "A checklist for the zebracorn checklist", kind: "fact" }, { actor: "user", threadId: "s-1", toolCallId: null });
    other.close();
    // Planning notices the commit (data_version): the word that was absent is read again (a word
    // just written must not be planned as absent), the common one's count may lag by a write
    const plan = planner.plan(["checklist", "zebracorn"], [], null);
    expect(plan.terms).toContain("zebracorn");
    expect(planner.df(fresh!)).toBeGreaterThan(0); // its own row and its neighbours' context
    expect(planner.df(stem!)).toBe(before);
    // A minute on, a count the index held is read again only once the memories added since pass
    // 5% of it (an insert adds at most one to it); ten minutes on, after any change.
    const byOther = async (contents: string[]) => {
      const c = openTestMemory(dir);
      await c.service.rememberMany(contents.map((content) => ({ req: scope, input: { content, kind: "fact" as const }, origin: { actor: "user" as const, threadId: "s-1", toolCallId: null } })));
      c.close();
    };
    const now = performance.now();
    const clock = vi.spyOn(performance, "now").mockReturnValue(now + 61_000);
    try {
      expect(planner.df(stem!)).toBe(before);
      const share = Math.floor(0.05 * before);
      await byOther(Array.from({ length: share - 1 }, (_, i) => `Checklist addendum ${i}`));
      expect(planner.df(stem!)).toBe(before);
      await byOther(["Checklist addendum, one more", "Checklist addendum, and the last"]);
      expect(planner.df(stem!)).toBe(before + share + 2);
      await byOther(["A late checklist"]);
      clock.mockReturnValue(now + 61_000 + 599_000);
      expect(planner.df(stem!)).toBe(before + share + 2);
      clock.mockReturnValue(now + 61_000 + 601_000);
      expect(planner.df(stem!)).toBe(before + share + 3);
    } finally {
      clock.mockRestore();
    }
    ctx.close();
    // The file is still a valid database for a fresh opener.
    openDatabase(`${dir}/memory.db`).close();
  });

  it("a bulk write is counted at once: a word's cached count does not outlive a minute of heavy writing", async () => {
    const dir = tempDir();
    const ctx = openTestMemory(dir);
    await fill(ctx, POSTINGS_BUDGET + 100);
    const planner = new FtsPlanner(ctx.db);
    const [stem] = planner.stems(["kestrel"]).values();
    const batch = async (n: number, from: number) =>
      ctx.service.rememberMany(
        Array.from({ length: n }, (_, i) => ({ req: scope, input: { content: `Kestrel sighting ${from + i} at the ridge`, kind: "fact" as const }, origin: { actor: "user" as const, threadId: "s-1", toolCallId: null } })),
      );
    await batch(10, 0);
    const few = planner.df(stem!);
    expect(few).toBeGreaterThanOrEqual(10);
    // a few writes more: the count a moment old still serves (no read per write)
    await batch(3, 10);
    expect(planner.df(stem!)).toBe(few);
    // an import of 600 such memories a second later: planned as what the index now holds, not as rare
    await batch(600, 13);
    expect(planner.df(stem!)).toBe(new FtsPlanner(ctx.db).df(stem!));
    expect(planner.df(stem!)).toBeGreaterThanOrEqual(613);
    ctx.close();
  });

  it("a term past the budget is reported as too common and an absent one is not; the trigram channel takes partial words, not words left out as too common", async () => {
    const dir = tempDir();
    const ctx = openTestMemory(dir);
    await fill(ctx, POSTINGS_BUDGET + 100);
    const plan = new FtsPlanner(ctx.db).plan(["checklist", "zebracorn", "1234"], [], null);
    expect(plan.terms).toEqual(["1234"]);
    expect(plan.common).toEqual(["checklist"]);
    // A filter that leaves the words no hit: the trigram channel must not scan the trigrams of a
    // word the index holds 3,100 times (it took 48 ms a search at 100k memories).
    const statements: string[] = [];
    const prepare = ctx.db.prepare.bind(ctx.db);
    ctx.db.prepare = ((sql: string) => {
      statements.push(sql);
      return prepare(sql);
    }) as typeof ctx.db.prepare;
    expect(await ctx.service.search({ thread: scope }, { query: "checklist 1234", limit: 10, scopes: ["project"] })).toEqual([]);
    expect(statements.some((sql) => sql.includes("memory_fts"))).toBe(true);
    expect(statements.some((sql) => sql.includes("memory_tri"))).toBe(false);
    // a partial word still goes to it
    await ctx.service.search({ thread: scope }, { query: "checkl", limit: 10, scopes: ["project"] });
    expect(statements.some((sql) => sql.includes("memory_tri"))).toBe(true);
    ctx.close();
  });

  it("past the budget, a word in more than CONTEXT_TERM_MAX_DF memories matches own text only; a rarer word still matches the neighbours' context", async () => {
    const dir = tempDir();
    // neighbour spreading and word associations off: what comes back is what the words matched
    const ctx = openTestMemory(dir, "memory.db", { ...DEFAULT_CHANNELS, neighbours: false, semantic: false });
    await fill(ctx, POSTINGS_BUDGET + 100);
    // another user's memories make "widget" common (every one says it in its own text)
    const bob = req({ user: "bob", session: "b-1", thread: "b-1" });
    const widgets = Array.from({ length: CONTEXT_TERM_MAX_DF + 50 }, (_, i) => ({
      req: bob,
      input: { content: `Bob shipped widget batch ${i}`, kind: "fact" as const },
      origin: { actor: "user" as const, threadId: "b-1", toolCallId: null },
    }));
    await ctx.service.rememberMany(widgets);
    // Alice: two short conversations, each a turn naming the word and a reply that does not
    const alice = req({ session: "a-1", thread: "a-1" });
    const say = async (content: string, thread: string) =>
      (await ctx.service.remember({ ...alice, thread, session: thread }, { content, kind: "fact" }, { actor: "user", threadId: thread, toolCallId: null })).record.id;
    const widget = await say("The widget cracked on the test bench", "a-w");
    const widgetReply = await say("I will order a replacement tomorrow", "a-w");
    const zebra = await say("The zebrafish tank is leaking", "a-z");
    const zebraReply = await say("I will call the plumber tomorrow", "a-z");
    const planner = new FtsPlanner(ctx.db);
    const plan = planner.plan(["widget", "zebrafish"], [], null);
    expect(plan.terms.sort()).toEqual(["widget", "zebrafish"]);
    expect(plan.ownTextOnly).toEqual(["widget"]);
    const ids = async (query: string, thread: string) =>
      (await ctx.service.search({ thread: { ...alice, thread, session: thread } }, { query, limit: 10 })).map((h) => h.record.id);
    // the rare word: its own turn, then the reply whose context holds it
    expect(await ids("zebrafish", "a-z")).toEqual([zebra, zebraReply]);
    // the common word: its own turn only
    expect(await ids("widget", "a-w")).toEqual([widget]);
    expect(widgetReply).toBeTruthy();
    ctx.close();
  });

  it("past the budget, the near-synonym pass searches the synonyms found in few memories, not the common ones", async () => {
    const dir = tempDir();
    const ctx = openTestMemory(dir, "memory.db", { ...DEFAULT_CHANNELS, neighbours: false, semantic: false });
    await fill(ctx, POSTINGS_BUDGET + 100);
    // another user's memories make "course" common, past the near-synonym pass's budget
    const bob = req({ user: "bob", session: "b-1", thread: "b-1" });
    await ctx.service.rememberMany(
      Array.from({ length: RELATED_POSTINGS_BUDGET + 50 }, (_, i) => ({
        req: bob,
        input: { content: `Bob finished online course unit ${i}`, kind: "fact" as const },
        origin: { actor: "user" as const, threadId: "b-1", toolCallId: null },
      })),
    );
    const alice = req({ session: "a-1", thread: "a-1" });
    const say = async (content: string) =>
      (await ctx.service.remember(alice, { content, kind: "fact" }, { actor: "user", threadId: "a-1", toolCallId: null })).record.id;
    const workshop = await say("Alice signed up for a pottery workshop on Saturdays");
    const course = await say("Alice took a pottery course with her aunt");
    // "workshop" (in one memory) is searched; "course" (in RELATED_POSTINGS_BUDGET + 51) is past
    // the pass's budget, though well within the first pass's
    const pass = addedWords("Which classes?", ["classes"], true).find((p) => p.weight === RELATED_WORD_WEIGHT)!;
    expect(pass.words).toEqual(expect.arrayContaining(["course", "workshop"]));
    const planner = new FtsPlanner(ctx.db);
    expect(planner.plan(pass.words, [], null, pass.budget).terms).toEqual(["workshop"]);
    expect(planner.plan(pass.words, [], null).terms.sort()).toEqual(["course", "workshop"]);
    const found = (await ctx.service.search({ thread: alice }, { query: "Which classes?", limit: 10 })).map((h) => h.record.id);
    expect(found).toEqual([workshop]);
    expect(course).toBeTruthy();
    ctx.close();
  });

  it("the store size the plans use follows writes at once, forgotten memories included, whatever the requests' clock says", async () => {
    const dir = tempDir();
    const ctx = openTestMemory(dir);
    await fill(ctx, 10);
    const planner = new FtsPlanner(ctx.db);
    expect(planner.plan(["checklist"], [], null).pruned).toBe(false);
    await fill(ctx, POSTINGS_BUDGET + 100);
    // the test clock stands still (a fixed clock, or a request clock set back, once kept a cached
    // size forever): the size is read with each plan
    expect(planner.plan(["checklist"], [], null).pruned).toBe(true);
    const count = () => (ctx.db.prepare(`SELECT count(*) AS n FROM memories`).get() as { n: number }).n;
    expect(planner.corpus().n).toBe(count());
    // a forget blanks the row and keeps it: the size (the rows the index has seen) stays the count
    const before = planner.corpus().n;
    const [first] = await ctx.service.search({ thread: scope }, { query: "rollout checklist", limit: 1 });
    await ctx.service.forget({ thread: scope }, [first!.record.id], { actor: "user", threadId: "s-1", toolCallId: null });
    await ctx.service.remember(scope, { content: "One more note after the forget", kind: "fact" }, { actor: "user", threadId: "s-1", toolCallId: null });
    expect(planner.corpus().n).toBe(count());
    expect(planner.corpus().n).toBe(before + 1);
    ctx.close();
  });
});

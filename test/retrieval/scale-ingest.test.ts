// Batched ingest finds most neighbours of a new turn among the batch's own rows instead of asking
// the database (stores/sqlite/memory-fts.ts). The word rows it writes must be exactly those the
// one-row-at-a-time path writes: rebuilding the index row by row afterwards changes nothing. And
// after batched writes, a forget or a later batch still reaches every channel.
import { describe, expect, it } from "vitest";
import type { RequestScope } from "../../core/memory/scope.js";
import type { MemoryContext } from "../../cli/context.js";
import { recreateWordIndex } from "../../stores/sqlite/memory-fts.js";
import { openTestMemory, req, trigramMatch } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

type Level = "user" | "project" | "session";

interface Turn {
  thread: string;
  level: Level;
  content: string;
}

const scopeOf = (thread: string): RequestScope => req({ session: thread, thread });

/** Distinct made-up words, so every turn's text is its own in the index. */
function word(i: number): string {
  const syl = ["ka", "lo", "ven", "tri", "mar", "sol", "bek", "dra", "fin", "gor"];
  return `${syl[i % 10]}${syl[Math.floor(i / 10) % 10]}${syl[Math.floor(i / 100) % 10]}x`;
}

/**
 * Three interleaved conversations; one switches scope level half-way (so its turns split over two
 * scope keys), one has a turn the batch reports as a duplicate.
 */
function corpus(): Turn[] {
  const out: Turn[] = [];
  let w = 0;
  for (let i = 0; i < 60; i++) {
    const thread = ["conv-a", "conv-b", "conv-c"][i % 3]!;
    const level: Level = thread === "conv-b" && i > 30 ? "session" : thread === "conv-c" ? "project" : "user";
    out.push({ thread, level, content: `Turn ${i} of ${thread}: ${word(w++)} ${word(w++)} and ${word(w++)}.` });
  }
  out.push({ ...out[4]! });
  return out;
}

async function writeBatch(ctx: MemoryContext, turns: Turn[]): Promise<string[]> {
  const res = await ctx.service.rememberMany(
    turns.map((t) => ({
      req: scopeOf(t.thread),
      input: { content: t.content, kind: "fact" as const, scope: t.level },
      origin: { actor: "user" as const, threadId: t.thread, toolCallId: null },
    })),
  );
  return res.map((r) => {
    if (r.status === "refused") throw new Error(`refused: ${r.message}`);
    return r.id;
  });
}

/** For every word of the corpus, the rows whose context column holds it. */
function contextRows(ctx: MemoryContext, words: string[]): Record<string, number[]> {
  const st = ctx.db.prepare(`SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rowid`);
  return Object.fromEntries(words.map((w) => [w, (st.all(`context: "${w}"`) as { rowid: number }[]).map((r) => r.rowid)]));
}

const allWords = () => Array.from({ length: 180 }, (_, i) => word(i));

describe("batched ingest and the context column", () => {
  it("writes the same context rows as the row-by-row rebuild, across batch boundaries", async () => {
    const ctx = openTestMemory(tempDir());
    const turns = corpus();
    // Uneven batches, so conversations straddle batch boundaries and older neighbours get rewritten.
    await writeBatch(ctx, turns.slice(0, 7));
    await writeBatch(ctx, turns.slice(7, 40));
    await writeBatch(ctx, turns.slice(40));
    const words = allWords();
    const batched = contextRows(ctx, words);
    // Sanity: neighbours exist and a turn's words reach the turns next to it, not farther.
    expect(batched[word(30)]!.length).toBeGreaterThanOrEqual(2);
    recreateWordIndex(ctx.db);
    expect(contextRows(ctx, words)).toEqual(batched);
    ctx.close();
  });

  it("after batched writes, forget and a later batch still update the word, context and trigram indexes", async () => {
    const ctx = openTestMemory(tempDir());
    const turns = corpus().slice(0, 30);
    const ids = await writeBatch(ctx, turns);
    const victim = 12; // conv-a, in the middle of its conversation
    const victimWord = word(victim * 3 + 1);
    expect(contextRows(ctx, [victimWord])[victimWord]!.length).toBeGreaterThan(0);
    await ctx.service.forget({ thread: scopeOf("conv-a") }, [ids[victim]!], { actor: "user", threadId: "conv-a", toolCallId: null });
    expect(contextRows(ctx, [victimWord])[victimWord]).toEqual([]);
    expect(ctx.db.prepare(`SELECT count(*) AS n FROM memory_tri WHERE memory_tri MATCH ?`).get(trigramMatch(victimWord))).toEqual({ n: 0 });
    const hits = await ctx.service.search({ thread: scopeOf("conv-a") }, { query: victimWord, limit: 10 });
    expect(hits).toEqual([]);

    // A later batch continues conv-a: its first new turn joins the context of conv-a's last turn.
    const lastA = ids[27]!;
    const fresh = "Turn 99 of conv-a: qorvatukzz arrives.";
    await writeBatch(ctx, [{ thread: "conv-a", level: "user", content: fresh }]);
    const rowidOf = (id: string) => (ctx.db.prepare(`SELECT rowid FROM memories WHERE id = ?`).get(id) as { rowid: number }).rowid;
    expect(contextRows(ctx, ["qorvatukzz"]).qorvatukzz).toContain(rowidOf(lastA));
    const found = await ctx.service.search({ thread: scopeOf("conv-a") }, { query: "qorvatukzz", limit: 10 });
    expect(found.map((h) => h.record.content)).toContain(fresh);
    const partial = await ctx.service.search({ thread: scopeOf("conv-a") }, { query: "qorvatuk", limit: 10 });
    expect(partial.map((h) => h.record.content)).toContain(fresh);
    ctx.close();
  });
});

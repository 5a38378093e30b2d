// Incremental maintenance: a write is searchable in every channel as soon as it returns (word
// index, neighbours' context column, trigram index), and a forget leaves no trace of the text in
// any of them — no rebuild in between. Both the single (`remember`) and batch (`rememberMany`)
// write paths, on a real SQLite file.
import { describe, expect, it } from "vitest";
import type { RequestScope } from "../../core/memory/scope.js";
import type { MemoryContext } from "../../cli/context.js";
import { modelOrigin, openTestMemory, req, trigramMatch } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const THREAD = "trip-thread";
const scope: RequestScope = req({ session: THREAD, thread: THREAD });

function rowidOf(ctx: MemoryContext, id: string): number {
  return (ctx.db.prepare(`SELECT rowid FROM memories WHERE id = ?`).get(id) as { rowid: number }).rowid;
}

/** Rows of an FTS table whose given column(s) match `expr` (the index itself, not search()). */
function ftsRows(ctx: MemoryContext, table: "memory_fts" | "memory_tri", expr: string): number[] {
  return (ctx.db.prepare(`SELECT rowid FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid`).all(expr) as { rowid: number }[]).map((r) => r.rowid);
}

/** Is this token anywhere in the index vocabulary (any row, any column)? */
function inVocabulary(ctx: MemoryContext, table: "memory_fts" | "memory_tri", token: string): boolean {
  ctx.db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.${table}_vocab USING fts5vocab(main, ${table}, 'row')`);
  return ctx.db.prepare(`SELECT 1 FROM temp.${table}_vocab WHERE term = ?`).get(token) !== undefined;
}

async function search(ctx: MemoryContext, query: string) {
  return ctx.service.search({ thread: scope }, { query, limit: 10 });
}

const TURNS = [
  "We talked about the weekend plans and the weather",
  "I booked the flight to Qorvatuk for the glacier hike",
  "It leaves at seven in the morning from gate twelve",
  "Remember to pack the warm gloves and the thermos",
];

/** Write the turns through the chosen path; returns their ids in order. */
async function writeTurns(ctx: MemoryContext, batch: boolean): Promise<string[]> {
  if (batch) {
    const res = await ctx.service.rememberMany(
      TURNS.map((content) => ({ req: scope, input: { content, kind: "fact" as const }, origin: { actor: "user" as const, threadId: THREAD, toolCallId: null } })),
    );
    return res.map((r) => {
      if (r.status !== "created") throw new Error(`unexpected ${r.status}`);
      return r.id;
    });
  }
  const ids: string[] = [];
  for (const content of TURNS) ids.push((await ctx.service.remember(scope, { content, kind: "fact" }, modelOrigin(THREAD))).record.id);
  return ids;
}

describe.each([
  ["remember (one at a time)", false],
  ["rememberMany (one batch)", true],
])("incremental maintenance via %s", (_name, batch) => {
  it("a new memory is findable at once in the word, context and trigram channels", async () => {
    const ctx = openTestMemory(tempDir());
    try {
      const ids = await writeTurns(ctx, batch);
      const [, flight, leaves] = ids.map((id) => rowidOf(ctx, id));

      // Word channel: the rare word finds the turn that says it, first.
      const byWord = await search(ctx, "Qorvatuk");
      expect(byWord[0]!.record.id).toBe(ids[1]);
      expect(ftsRows(ctx, "memory_fts", "{content}: qorvatuk")).toEqual([flight]);

      // Context channel: the next turn carries its neighbour's words in its context column, so a
      // question in the neighbour's words reaches it too.
      expect(ftsRows(ctx, "memory_fts", "{context}: qorvatuk")).toContain(leaves);
      expect(byWord.map((h) => h.record.id)).toContain(ids[2]);
      // …and the earlier turn's context was refreshed when the later one arrived.
      expect(ftsRows(ctx, "memory_fts", "{context}: gate")).toContain(flight);

      // Trigram channel: a partial word the word index cannot match.
      expect(ftsRows(ctx, "memory_tri", trigramMatch("orvatu"))).toEqual([flight]);
      const partial = await search(ctx, "orvatu");
      expect(partial[0]!.record.id).toBe(ids[1]);
      expect(["trigram", "both"]).toContain(partial[0]!.channel);

      // A later write (same path) joins the same conversation without any rebuild: the older
      // turns before it now carry its words in their context.
      const content = "The Qorvatuk lodge confirmed our zyphlon booking";
      let lateId: string;
      if (batch) {
        const [r] = await ctx.service.rememberMany([{ req: scope, input: { content, kind: "fact" }, origin: { actor: "user", threadId: THREAD, toolCallId: null } }]);
        if (r?.status !== "created") throw new Error(`unexpected ${r?.status}`);
        lateId = r.id;
      } else lateId = (await ctx.service.remember(scope, { content, kind: "fact" }, modelOrigin(THREAD))).record.id;
      expect((await search(ctx, "zyphlon"))[0]!.record.id).toBe(lateId);
      expect(ftsRows(ctx, "memory_fts", "{context}: zyphlon")).toEqual([leaves, rowidOf(ctx, ids[3]!)]);
      expect((await search(ctx, "yphlo"))[0]!.record.id).toBe(lateId);
    } finally {
      ctx.close();
    }
  });

  it("a forgotten memory leaves nothing in any channel, its neighbours' context included", async () => {
    const ctx = openTestMemory(tempDir());
    try {
      const ids = await writeTurns(ctx, batch);
      const flight = rowidOf(ctx, ids[1]!);
      expect((await search(ctx, "Qorvatuk")).length).toBeGreaterThan(1);
      const first = rowidOf(ctx, ids[0]!);
      expect(ftsRows(ctx, "memory_fts", "{context}: gloves")).not.toContain(first);

      await ctx.service.forget({ thread: scope }, [ids[1]!], { actor: "user", threadId: null, toolCallId: null });

      // Search by its rare word, a partial word and its phrase: nothing, in any channel.
      expect(await search(ctx, "Qorvatuk")).toEqual([]);
      expect(await search(ctx, "orvatu")).toEqual([]);
      expect((await search(ctx, "glacier hike flight")).map((h) => h.record.id)).not.toContain(ids[1]);
      // The index tables hold no row for it and no neighbour's context holds its words.
      expect(ftsRows(ctx, "memory_fts", "qorvatuk")).toEqual([]);
      expect(ftsRows(ctx, "memory_fts", `"glacier"`)).toEqual([]);
      expect(ftsRows(ctx, "memory_tri", trigramMatch("orvatu"))).toEqual([]);
      expect(ftsRows(ctx, "memory_fts", "{content}: weekend OR seven OR gloves")).not.toContain(flight);
      expect(ftsRows(ctx, "memory_tri", trigramMatch("weekend", "seven", "gloves"))).not.toContain(flight);
      // Not even in the vocabulary (its bytes leave the segments in the purge after: fts-purge.test.ts).
      expect(inVocabulary(ctx, "memory_fts", "qorvatuk")).toBe(false);
      expect(inVocabulary(ctx, "memory_tri", "qor")).toBe(false);
      // The other turns are still there and still findable; the neighbours became each other's.
      expect((await search(ctx, "thermos"))[0]!.record.id).toBe(ids[3]);
      expect(ftsRows(ctx, "memory_fts", "{context}: gloves")).toContain(first);
    } finally {
      ctx.close();
    }
  });
});

import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import type { RequestScope } from "../../core/memory/scope.js";
import { MemoryService } from "../../core/memory/service.js";
import { CHANNEL_NAMES, channelList, DEFAULT_CHANNELS, parseChannels, type RetrievalChannels } from "../../core/retrieval/channels.js";
import { rrf } from "../../core/retrieval/fusion.js";
import { expansionTerms } from "../../core/retrieval/prf.js";
import { mmr, proximityRerank } from "../../core/retrieval/rerank.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteMemoryStore } from "../../stores/sqlite/memory-store.js";
import { MemoryConfig } from "../../core/config.js";
import { openMemory } from "../../cli/context.js";
import { tempDir } from "../helpers/tmp.js";

describe("channel switches", () => {
  it("parses a channel list; lexical stays on; unknown names fail", () => {
    const c = parseChannels("context,prf");
    expect(channelList(c)).toEqual(["lexical", "context", "prf"]);
    expect(() => parseChannels("lexical,vectors")).toThrow(/unknown channel/);
    expect(channelList(parseChannels(channelList(DEFAULT_CHANNELS).join(",")))).toEqual(channelList(DEFAULT_CHANNELS));
  });

  it("config.json's search.channels switches channels for every command that opens the store", async () => {
    const dir = tempDir();
    const dbPath = join(dir, "memory.db");
    const req: RequestScope = { user: "alice", project: null, session: "t", thread: "t", ancestors: [] };
    const question = { query: "What instruments does Alice play?", limit: 5 };
    const found = async (channels: Record<string, boolean>) => {
      const ctx = openMemory({ dbPath, config: defaultConfig({ localUser: "alice", search: { channels } }), clock: fixedClock(Date.UTC(2024, 0, 1)), env: {} });
      try {
        if ((await ctx.service.list({ thread: req }, {})).items.length === 0) {
          for (const [i, content] of ["I practise the violin every evening", "the weather was grey", "the train was late", "we watched a movie", "my brother called", "the museum shows old instruments of torture"].entries()) {
            await ctx.service.remember(req, { content, kind: "note", scope: "user", userStated: true }, { actor: "user", threadId: "t", toolCallId: null, messageIds: [`m${i}`] });
          }
        }
        const hits = await ctx.service.search({ thread: req }, question);
        return hits.some((h) => h.record.content.includes("violin"));
      } finally {
        ctx.close();
      }
    };
    // the category channel (on by default) finds the member "violin" for "instruments"
    expect(await found({})).toBe(true);
    expect(await found({ categories: false })).toBe(false);
    const bad = MemoryConfig.safeParse({ search: { channels: { vectors: true } } });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toMatch(/search.*channels|vectors/);
  });
});

describe("fusion and re-ranking", () => {
  it("reciprocal-rank fusion adds each list's contribution", () => {
    const f = rrf([
      { name: "a", weight: 1, hits: [{ key: 1, item: "x" }, { key: 2, item: "y" }] },
      { name: "b", weight: 1, hits: [{ key: 2, item: "y" }] },
    ]).sort((p, q) => q.score - p.score);
    expect(f.map((h) => h.key)).toEqual([2, 1]);
    expect([...f[0]!.from].sort()).toEqual(["a", "b"]);
    expect(f[0]!.score).toBeCloseTo(1 / 62 + 1 / 61);
  });

  it("MMR moves a near-duplicate below a distinct result", () => {
    const list = [
      { score: 1.0, item: { content: "alice adopted a grey cat named pixel" } },
      { score: 0.99, item: { content: "alice adopted a grey cat named pixel yesterday" } },
      { score: 0.9, item: { content: "the cat clinic opens at nine on mondays" } },
    ];
    const out = mmr(list, 2).map((h) => h.item.content);
    expect(out[0]).toBe(list[0]!.item.content);
    expect(out[1]).toBe(list[2]!.item.content);
  });

  it("proximity prefers a memory holding more query words side by side", () => {
    const list = [
      { score: 1.0, item: { content: "we talked about the weather" } },
      { score: 0.9, item: { content: "the pottery workshop was on friday" } },
    ];
    const out = proximityRerank(list, ["pottery", "workshop"]).map((h) => h.item.content);
    expect(out[0]).toBe("the pottery workshop was on friday");
  });

  it("feedback terms recur in the feedback set, skip the query's own stems, and are deterministic", () => {
    const input = {
      texts: ["we went camping at the beach with marshmallows", "camping trip with marshmallows and a campfire", "the campfire was warm"],
      queryStems: new Set(["camp"]),
      stem: (ws: string[]) => new Map(ws.map((w) => [w, w.replace(/ing$|s$/, "")])),
      df: (s: string) => (s === "beach" ? 50 : 2),
      n: 100,
    };
    const a = expansionTerms(input);
    expect(a).toEqual(expansionTerms(input));
    expect(a).toContain("marshmallows");
    expect(a).toContain("campfire");
    expect(a).not.toContain("camping");
    expect(a).not.toContain("beach");
  });
});

describe("every channel stays inside the viewer's scope", () => {
  const all = parseChannels(CHANNEL_NAMES.join(","));
  const sets: RetrievalChannels[] = [all, DEFAULT_CHANNELS, ...CHANNEL_NAMES.map((n) => parseChannels(n))];

  it("two users with near-identical conversations never see each other's memories", async () => {
    const dir = tempDir();
    const db = openDatabase(join(dir, "memory.db"));
    const clock = fixedClock(Date.UTC(2024, 0, 1));
    const config = defaultConfig({ localUser: "alice" });
    const writer = new MemoryService(new SqliteMemoryStore(db), clock, config);
    const lines = [
      "I went camping in the mountains with my family last week",
      "We roasted marshmallows around the campfire",
      "My sister started a pottery class on fridays",
      "The pottery workshop made bowls and cups",
      "I am reading Becoming Nicole, an inspiring book",
      "We adopted a grey cat named Pixel",
    ];
    const ids = new Map<string, string>();
    for (const user of ["alice", "bob"]) {
      const thread = `${user}-t1`;
      const req: RequestScope = { user, project: null, session: thread, thread, ancestors: [] };
      for (const [i, line] of lines.entries()) {
        clock.advance(1000);
        const text = `${user === "alice" ? "Alice" : "Bob"}: ${line}${user === "bob" ? " too" : ""}`;
        const r = await writer.remember(req, { content: text, kind: "note", scope: "user", userStated: true }, {
          actor: "user",
          threadId: thread,
          toolCallId: null,
          messageIds: [`${user}-${i}`],
        });
        ids.set(r.record.id, user);
      }
    }
    const queries = ["camping marshmallows", "pottery bowls", "what book is inspiring", "cat Pixel", "campfir", "family week friday"];
    for (const channels of sets) {
      const svc = new MemoryService(new SqliteMemoryStore(db, channels), clock, config);
      for (const user of ["alice", "bob"]) {
        const req: RequestScope = { user, project: null, session: `${user}-q`, thread: `${user}-q`, ancestors: [] };
        for (const query of queries) {
          const hits = await svc.search({ thread: req }, { query, limit: 20 });
          expect(hits.length, `${channelList(channels).join(",")} ${user} "${query}"`).toBeGreaterThan(0);
          for (const h of hits) expect(ids.get(h.record.id), `${channelList(channels).join(",")} ${user} "${query}"`).toBe(user);
        }
      }
    }
    db.close();
  });
});

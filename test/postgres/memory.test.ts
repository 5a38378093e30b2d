// MemoryStore conformance on PostgreSQL: the full profile (tsvector + GIN, pg_trgm) and the
// Aurora DSQL profile (no extensions, no GIN: the scoped substring scan) on the same server.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DSQL_MAX_BATCH, PgMemoryStore, planWords, WORD_POSTINGS_BUDGET } from "../../stores/postgres/memory-store.js";
import { CUE_POOL } from "../../core/retrieval/cues.js";
import { CONTEXT_TERM_MAX_DF } from "../../core/retrieval/channels.js";
import { visibilityKey } from "../../core/memory/scope.js";
import type { PgDb } from "../../stores/postgres/pool.js";
import { analyzeQuery } from "../../core/retrieval/analyze.js";
import { MEMORY_MIGRATIONS } from "../../stores/postgres/schema-memory.js";
import { openPg } from "../../stores/postgres/setup.js";
import { createTestDatabase, describePg, memoryDatabase } from "../helpers/postgres.js";
import { mem, memoryConformance, scopeOf } from "../stores/memory-conformance.js";

for (const profile of ["postgres", "dsql"] as const) {
  describePg(`postgres memory store (${profile} profile)`, (base) => {
    let db: PgDb;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      const t = await createTestDatabase(base(), `mem_${profile}`);
      drop = t.drop;
      // the memory side only: the catalog steps (PG-B) carry no DSQL variant
      db = await openPg(t.url, { profile, max: 4, migrations: MEMORY_MIGRATIONS });
    });
    afterAll(async () => {
      await db?.close();
      await drop?.();
    });
    // one database per file; each test starts from empty tables
    memoryConformance(
      `postgres/${profile}`,
      async () => {
        await db.pool.query(`TRUNCATE memories, memory_tags, memory_sources, memory_source_messages, edges RESTART IDENTITY CASCADE`);
        await db.pool.query(`ALTER TABLE audit_log DISABLE TRIGGER USER`).catch(() => {});
        await db.pool.query(`DELETE FROM audit_log`);
        await db.pool.query(`ALTER TABLE audit_log ENABLE TRIGGER USER`).catch(() => {});
        return { store: new PgMemoryStore(db), close: async () => {} };
      },
      profile === "dsql" ? { stemming: false, partialWords: true, context: false } : {},
    );

    if (profile === "dsql") {
      it("refuses an insertMany larger than a DSQL transaction may write, naming the batch size", async () => {
        const store = new PgMemoryStore(db);
        const items = Array.from({ length: DSQL_MAX_BATCH + 1 }, (_, i) => {
          const rec = mem(`bulk ${i}`);
          return { rec, audit: { at: 1, actor: "import", action: "create" as const, targetKind: "memory" as const, targetId: rec.id, detail: {} } };
        });
        await expect(store.insertMany(items)).rejects.toMatchObject({ code: "constraint", message: expect.stringMatching(/at most 400 per batch/) });
        expect((await store.insertMany(items.slice(0, 3))).map((o) => o.status)).toEqual(["created", "created", "created"]);
      });
    }
  });
}

describePg("postgres memory store: forget leaves no trace in any table", (base) => {
  const database = memoryDatabase(base, "purge");

  /** every text-like column of every table in the schema, searched for `needle` */
  async function tablesHolding(needle: string): Promise<string[]> {
    const cols = (
      await database().pool.query<{ table_name: string; column_name: string }>(
        `SELECT table_name, column_name FROM information_schema.columns
         WHERE table_schema = current_schema() AND data_type IN ('text', 'tsvector', 'character varying')`,
      )
    ).rows;
    const hits: string[] = [];
    for (const c of cols) {
      const r = await database().pool.query(`SELECT 1 FROM ${c.table_name} WHERE ${c.column_name}::text ILIKE $1 LIMIT 1`, [`%${needle}%`]);
      if (r.rowCount) hits.push(`${c.table_name}.${c.column_name}`);
    }
    return hits;
  }

  it("content, tags, word index (tsvector) and neighbours' context are purged", async () => {
    const store = new PgMemoryStore(database());
    const thread = { threadId: "conv-x", messageIds: ["m9"], toolCallId: null, actor: "user" as const, at: 1 };
    const secret = mem("My passport number is quokkazebra77", { tags: ["quokkatag"], source: { ...thread, toolCallId: "a" } });
    const next = mem("I travel next week", { source: { ...thread, toolCallId: "b" } });
    await store.insert(secret, { at: 1, actor: "u", action: "create", targetKind: "memory", targetId: secret.id, detail: {} });
    await store.insert(next, { at: 1, actor: "u", action: "create", targetKind: "memory", targetId: next.id, detail: {} });
    expect((await tablesHolding("quokkazebra")).sort()).toEqual(["memories.content", "memory_words.tsv"]);
    expect(await tablesHolding("quokkatag")).toEqual(["memory_tags.tag", "memory_words.tsv"]);
    await store.forget([secret.id], { at: 2, actor: "u", action: "forget", targetKind: "memory", targetId: secret.id, detail: {} });
    expect(await tablesHolding("quokkazebra")).toEqual([]);
    expect(await tablesHolding("quokkatag")).toEqual([]);
    // the neighbour's word row was rebuilt without the forgotten text, and is still searchable
    const row = (await database().pool.query(`SELECT w.tsv::text AS t FROM memory_words w JOIN memories m ON m.rowid = w.rowid WHERE m.id = $1`, [next.id])).rows[0];
    expect(row.t).toMatch(/travel/);
  });
});

describePg("postgres memory store: several servers writing one conversation", (base) => {
  let url = "";
  let drop: () => Promise<void>;
  let admin: PgDb;
  beforeAll(async () => {
    const t = await createTestDatabase(base(), "conc");
    url = t.url;
    drop = t.drop;
    admin = await openPg(url, { max: 2, migrations: MEMORY_MIGRATIONS });
  });
  afterAll(async () => {
    await admin?.close();
    await drop?.();
  });

  it("4 pools × 10 concurrent writes into one thread: every write lands once, every word row is there", async () => {
    const servers = await Promise.all(Array.from({ length: 4 }, () => openPg(url, { max: 5, migrations: MEMORY_MIGRATIONS })));
    try {
      const recs = Array.from({ length: 40 }, (_, i) => mem(`Turn ${i} about the pelican migration`, { source: { threadId: "shared", messageIds: [], toolCallId: `c${i}`, actor: "model", at: i } }));
      await Promise.all(
        recs.map((r, i) => new PgMemoryStore(servers[i % 4]!).insert(r, { at: 1, actor: "m", action: "create", targetKind: "memory", targetId: r.id, detail: {} })),
      );
      const n = await admin.query<{ m: number; w: number }>(`SELECT (SELECT count(*) FROM memories)::int AS m, (SELECT count(*) FROM memory_words)::int AS w`);
      expect(n[0]).toEqual({ m: 40, w: 40 });
      const store = new PgMemoryStore(admin);
      const ids = new Set(recs.map((r) => r.id));
      const hits = await store.search({ visibility: { owner: "alice" }, query: analyzeQuery("pelican"), statuses: ["active"], includeFlagged: false, now: 10, limit: 50 });
      expect(hits.filter((h) => ids.has(h.record.id))).toHaveLength(40);
    } finally {
      for (const s of servers) await s.close();
    }
  });
});

describe("postgres word plan (pure)", () => {
  it("keeps every word on a small table, the rarest within the budget on a large one, else the newest mentions", () => {
    // words: pipeline, zebrafish, canary, absent
    expect(planWords({ df: [4000, 1, 900, 0], n: 2000 })).toEqual({ words: [0, 1, 2, 3], newest: false });
    expect(planWords({ df: [4000, 1, 900, 0], n: 100_000 })).toEqual({ words: [1, 2], newest: false });
    expect(planWords({ df: [4000, 1, WORD_POSTINGS_BUDGET, 0], n: 100_000 })).toEqual({ words: [1], newest: false });
    expect(planWords({ df: [9000, 4000], n: 100_000 })).toEqual({ words: [1, 0], newest: true });
    expect(planWords({ df: [0], n: 100_000 })).toEqual({ words: [], newest: false });
  });
});

describePg("postgres word channel on a table past the postings budget", (base) => {
  const database = memoryDatabase(base, "budget");

  it("ranks rare words past common ones, and a word too common to rank returns the newest own-text mentions", async () => {
    const store = new PgMemoryStore(database());
    const n = WORD_POSTINGS_BUDGET + 1500;
    const T = Date.UTC(2026, 10, 1);
    // Every memory mentions the pipeline except every 7th of Bob's, whose neighbours (same
    // conversation) do; Alice's memories are the newest. One of Bob's has a zebrafish canary.
    const recs = Array.from({ length: n }, (_, i) => {
      const who = i >= n - 300 ? "alice" : "bob";
      const text = who === "alice" || i % 7 !== 0 ? `${who} ran the pipeline, step ${i}` : `${who} waited, step ${i}`;
      return mem(i === 1234 ? `${text} with the zebrafish canary` : text, {
        scope: scopeOf(who),
        createdAt: T + i,
        source: { threadId: `${who}-t${Math.floor(i / 20)}`, messageIds: [], toolCallId: `c${i}`, actor: "model", at: T + i },
      });
    });
    for (let i = 0; i < n; i += 500) {
      await store.insertMany(recs.slice(i, i + 500).map((rec) => ({ rec, audit: { at: rec.createdAt, actor: "t", action: "create" as const, targetKind: "memory" as const, targetId: rec.id, detail: {} } })));
    }
    const search = (text: string, user: string, limit = 10) =>
      store.search({ visibility: { keys: [visibilityKey(scopeOf(user))] }, query: analyzeQuery(text), text, statuses: ["active"], includeFlagged: false, now: T + n, limit });
    const steps = (hs: { record: { content: string } }[]) => hs.map((h) => Number(/step (\d+)/.exec(h.record.content)?.[1]));

    type WordHits = { row: { content: string }; rank: number }[];
    const channel = vi.spyOn(PgMemoryStore.prototype as unknown as { wordChannel: () => Promise<WordHits> }, "wordChannel");
    const wordHits = async () => (await channel.mock.results.at(-1)!.value) as WordHits;

    // the rare words rank; the pipeline (in nearly every memory) is left out of the ranking, so the
    // word channel finds only the zebrafish memory and the neighbours whose context holds it
    const rare = await search("pipeline zebrafish canary", "bob", 5);
    expect(rare[0]?.record.content).toContain("zebrafish canary");
    expect(rare.every((h) => h.record.scope.user === "bob")).toBe(true);
    expect((await wordHits()).length).toBeLessThanOrEqual(5);

    // too common: Bob's newest own-text mentions (no neighbour-only match, nothing of Alice's),
    // unranked
    const hits = await search("pipeline", "bob");
    expect((await wordHits()).map((h) => h.rank)).toEqual(Array(CUE_POOL).fill(1));
    const newest: number[] = [];
    for (let i = n - 301; newest.length < CUE_POOL; i--) if (i % 7 !== 0) newest.push(i);
    expect(hits).toHaveLength(10);
    expect(hits.every((h) => h.record.scope.user === "bob" && h.record.content.includes("pipeline"))).toBe(true);
    expect(steps(hits).every((s) => newest.includes(s))).toBe(true);

    // Alice has no zebrafish: the rare words find nothing in her scope, so the word left out as too
    // common comes back (her newest pipeline mentions), and the trigram channel is not asked to
    // scan for words the index holds (an ILIKE over much of the scope per search)
    const tri = vi.spyOn(PgMemoryStore.prototype as unknown as { trigramChannel: (...a: unknown[]) => Promise<unknown[]> }, "trigramChannel");
    const alice = await search("pipeline zebrafish canary", "alice", 5);
    expect(alice).toHaveLength(5);
    expect(alice.every((h) => h.record.scope.user === "alice" && h.record.content.includes("pipeline"))).toBe(true);
    expect(steps(alice)).toEqual([n - 1, n - 2, n - 3, n - 4, n - 5]);
    expect(tri).not.toHaveBeenCalled();
    // a partial word (absent from the word index) still goes to it (the test cluster has pg_trgm)
    expect(database().features.trigram).toBe(true);
    await search("zebraf", "bob", 5);
    expect(tri.mock.calls.at(-1)?.[2]).toEqual(["zebraf"]);
    tri.mockRestore();

    // Once the table is analysed, a word its statistics put past the budget (by a margin) takes
    // the capped count without a read of up to 3,001 matches; rarer words are still counted; what
    // a search returns does not change.
    const before = { rare: await search("pipeline zebrafish canary", "bob", 5), common: await search("pipeline", "bob"), alice: await search("pipeline zebrafish canary", "alice", 5) };
    await database().pool.query(`ANALYZE memory_words`);
    const analysed = new PgMemoryStore(database());
    const searchAnalysed = (text: string, user: string, limit = 10) =>
      analysed.search({ visibility: { keys: [visibilityKey(scopeOf(user))] }, query: analyzeQuery(text), text, statuses: ["active"], includeFlagged: false, now: T + n, limit });
    const idsOf = (hs: { record: { id: string } }[]) => hs.map((h) => h.record.id);
    expect(idsOf(await searchAnalysed("pipeline zebrafish canary", "bob", 5))).toEqual(idsOf(before.rare));
    expect(idsOf(await searchAnalysed("pipeline", "bob"))).toEqual(idsOf(before.common));
    expect(idsOf(await searchAnalysed("pipeline zebrafish canary", "alice", 5))).toEqual(idsOf(before.alice));
    // which path each word took: inside a transaction that blanks every word row (rolled back), a
    // count would find nothing, the statistics still know "pipeline"
    type Stats = { df: number[] };
    const wordStats = (analysed as unknown as { wordStats: (c: unknown, w: { config: string; text: string }[], now: number, user?: string) => Promise<Stats> }).wordStats.bind(analysed);
    let probe: Stats | undefined;
    await expect(
      database().tx(async (c) => {
        await c.query(`UPDATE memory_words SET tsv = ''::tsvector`);
        probe = await wordStats(c, [{ config: "english", text: "pipeline" }, { config: "english", text: "zebrafish" }], Date.now() + 10 * 60_000);
        throw new Error("roll back");
      }),
    ).rejects.toThrow(/roll back/);
    expect(probe?.df).toEqual([WORD_POSTINGS_BUDGET + 1, 0]);
    expect((await database().pool.query(`SELECT count(*)::int AS n FROM memory_words WHERE tsv = ''::tsvector`)).rows[0].n).toBe(0);
  });
});

describePg("postgres word channel: rankings do not depend on ANALYZE", (base) => {
  const database = memoryDatabase(base, "analyzed");

  it("on a table below the budget, searches score the same before and after the statistics exist (autovacuum may analyse it at any time)", async () => {
    const opts = { channels: { semantic: false } };
    const store = new PgMemoryStore(database(), opts);
    const T = Date.UTC(2026, 10, 1);
    // common words in most rows (a table's most common lexemes), rarer ones in a few
    const recs = Array.from({ length: 400 }, (_, i) =>
      mem(`${i % 5 === 0 ? "garden" : "kitchen"} notes ${i % 3 === 0 ? "tomato" : "pepper"} day ${i}${i % 40 === 0 ? " basil" : ""}`, {
        scope: scopeOf("bob"),
        createdAt: T + i,
        source: { threadId: `t${Math.floor(i / 10)}`, messageIds: [], toolCallId: `c${i}`, actor: "model", at: T + i },
      }),
    );
    await store.insertMany(recs.map((rec) => ({ rec, audit: { at: rec.createdAt, actor: "t", action: "create" as const, targetKind: "memory" as const, targetId: rec.id, detail: {} } })));
    const queries = ["kitchen notes tomato", "garden pepper basil", "notes day"];
    const run = (s: PgMemoryStore) =>
      Promise.all(
        queries.map(async (text) =>
          (await s.search({ visibility: { keys: [visibilityKey(scopeOf("bob"))] }, query: analyzeQuery(text), text, statuses: ["active"], includeFlagged: false, now: T + 1000, limit: 20 })).map(
            (h) => [h.record.id, h.score],
          ),
        ),
      );
    const before = await run(store);
    expect(before.every((hs) => hs.length === 20)).toBe(true);
    await database().pool.query(`ANALYZE memory_words`);
    const stats = await database().pool.query(`SELECT most_common_elems IS NOT NULL AS known FROM pg_stats WHERE tablename = 'memory_words' AND attname = 'tsv'`);
    expect(stats.rows[0]?.known).toBe(true);
    expect(await run(new PgMemoryStore(database(), opts))).toEqual(before);
  });
});

describePg("postgres word channel: common words and the neighbour context", (base) => {
  const database = memoryDatabase(base, "ctxdf");

  it("past the budget, a word in more than CONTEXT_TERM_MAX_DF memories matches own text only; a rarer word still matches the neighbours' context", async () => {
    // neighbour spreading and word associations off: what comes back is what the words matched
    const store = new PgMemoryStore(database(), { channels: { neighbours: false, semantic: false } });
    const T = Date.UTC(2026, 10, 1);
    const n = WORD_POSTINGS_BUDGET + 100;
    const audit = (rec: { id: string; createdAt: number }) => ({ at: rec.createdAt, actor: "t", action: "create" as const, targetKind: "memory" as const, targetId: rec.id, detail: {} });
    // Bob's memories fill the table; the first CONTEXT_TERM_MAX_DF + 50 say "widget" in their own text
    const bobs = Array.from({ length: n }, (_, i) =>
      mem(i <= CONTEXT_TERM_MAX_DF + 50 ? `Bob shipped widget batch ${i}` : `Bob filed report ${i}`, {
        scope: scopeOf("bob"),
        createdAt: T + i,
        source: { threadId: `bob-${i}`, messageIds: [], toolCallId: `b${i}`, actor: "model", at: T + i },
      }),
    );
    for (let i = 0; i < n; i += 500) await store.insertMany(bobs.slice(i, i + 500).map((rec) => ({ rec, audit: audit(rec) })));
    // Alice: two short conversations, each a turn naming the word and a reply that does not
    const turn = (content: string, thread: string, i: number) =>
      mem(content, { createdAt: T + n + i, source: { threadId: thread, messageIds: [], toolCallId: `a${i}`, actor: "model", at: T + n + i } });
    const alice = [
      turn("The widget cracked on the test bench", "a-w", 0),
      turn("I will order a replacement tomorrow", "a-w", 1),
      turn("The zebrafish tank is leaking", "a-z", 2),
      turn("I will call the plumber tomorrow", "a-z", 3),
    ];
    await store.insertMany(alice.map((rec) => ({ rec, audit: audit(rec) })));
    const ids = async (text: string) =>
      (
        await store.search({ visibility: { keys: [visibilityKey(scopeOf("alice"))] }, query: analyzeQuery(text), statuses: ["active"], includeFlagged: false, now: T + n + 10, limit: 10 })
      ).map((h) => h.record.id);
    // the rare word: its own turn, then the reply whose context holds it
    expect(await ids("zebrafish")).toEqual([alice[2]!.id, alice[3]!.id]);
    // the common word: its own turn only
    expect(await ids("widget")).toEqual([alice[0]!.id]);
  });
});

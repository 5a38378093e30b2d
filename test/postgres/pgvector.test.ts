// The pgvector channel: KNN with the scope predicate inside, tested in-process on PGlite with its
// pgvector extension (the system PostgreSQL 15 has no pgvector), reached through a real socket by
// the same node-postgres pool the server uses. On the PG 15 cluster: the clear "off" message.
import { createServer } from "node:net";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbedderError } from "../../core/embedding/embedder.js";
import { HashingEmbedder } from "../../core/embedding/hashing.js";
import { visibilityKey } from "../../core/memory/scope.js";
import { analyzeQuery } from "../../core/retrieval/analyze.js";
import { PgMemoryStore } from "../../stores/postgres/memory-store.js";
import { PgDb } from "../../stores/postgres/pool.js";
import { MEMORY_MIGRATIONS } from "../../stores/postgres/schema-memory.js";
import { openPg, preparePg } from "../../stores/postgres/setup.js";
import type { SearchQuery, Visibility } from "../../stores/traits.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";
import { mem, scopeOf } from "../stores/memory-conformance.js";

const embedder = new HashingEmbedder({ dimensions: 64 });
const audit = (id: string, action: "create" | "forget" = "create") => ({ at: 1, actor: "t", action, targetKind: "memory" as const, targetId: id, detail: {} });
const alice: Visibility = { keys: [visibilityKey(scopeOf("alice"))] };
const q = (text: string, visibility: Visibility, over: Partial<SearchQuery> = {}): SearchQuery => ({
  visibility,
  query: analyzeQuery(text),
  text,
  statuses: ["active", "pending"],
  includeFlagged: false,
  now: Date.UTC(2027, 0, 1),
  limit: 5,
  ...over,
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe("pgvector channel on PGlite (in-process PostgreSQL with pgvector)", () => {
  let lite: PGlite;
  let server: PGLiteSocketServer;
  let db: PgDb;
  let store: PgMemoryStore;

  beforeAll(async () => {
    lite = await PGlite.create({ extensions: { vector } });
    const port = await freePort();
    server = new PGLiteSocketServer({ db: lite, port, host: "127.0.0.1" });
    await server.start();
    // PGlite serves one connection at a time
    db = PgDb.open(`postgres://postgres@127.0.0.1:${port}/postgres`, { max: 1 });
    await preparePg(db, undefined, MEMORY_MIGRATIONS);
    store = new PgMemoryStore(db, { embedder });
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await server?.stop();
    await lite?.close();
  });

  it("detects pgvector and turns the channel on", () => {
    expect(db.features.vector).toBe(true);
    expect(store.vectorStatus()).toEqual({ enabled: true, reason: expect.stringContaining("pgvector") });
  });

  it("finds by meaning what the word channel misses, only inside the viewer's scope", async () => {
    const a = mem("Calligraphing herons at dawn by the lake");
    const b = mem("Calligraphing herons at dawn by the lake", { scope: scopeOf("bob") });
    const c = mem("Quarterly tax filing deadline");
    for (const r of [a, b, c]) await store.insert(r, audit(r.id));
    // english stemming: "calligraphy" → calligraphi, "calligraphing" → calligraph: no word match
    const hits = await store.search(q("calligraphy", alice));
    expect(hits[0]).toMatchObject({ record: { id: a.id }, channel: "vector" });
    expect(hits.map((h) => h.record.id)).not.toContain(b.id);
    const bobs = await store.search(q("calligraphy", { owner: "bob" }));
    expect(bobs[0]?.record.id).toBe(b.id);
    expect(bobs.map((h) => h.record.id)).not.toContain(a.id);
    // the conflict check (own words only) does not use vectors
    expect(await store.search(q("calligraphy", alice, { wordsOnly: true }))).toEqual([]);
  });

  it("forget removes the vector row; status filters apply to vector hits", async () => {
    const r = mem("Sailing lessons every Thursday evening");
    await store.insert(r, audit(r.id));
    const row = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM memory_vectors v JOIN memories m ON m.rowid = v.rowid WHERE m.id = $1`, [r.id]);
    expect(row[0]!.n).toBe(1);
    await store.setStatus(r.id, "pending", null, audit(r.id));
    expect((await store.search(q("sailor lesson", alice, { statuses: ["active"] }))).map((h) => h.record.id)).not.toContain(r.id);
    await store.forget([r.id], audit(r.id, "forget"));
    const after = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM memory_vectors v JOIN memories m ON m.rowid = v.rowid WHERE m.id = $1`, [r.id]);
    expect(after[0]!.n).toBe(0);
  });

  it("backfills vectors for memories written without an embedder", async () => {
    const plain = new PgMemoryStore(db);
    const r = mem("Violin practice in the attic");
    await plain.insert(r, audit(r.id));
    const { embedded } = await store.backfillVectors(16);
    expect(embedded).toBeGreaterThanOrEqual(1);
    const n = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM memory_vectors v JOIN memories m ON m.rowid = v.rowid WHERE m.id = $1`, [r.id]);
    expect(n[0]!.n).toBe(1);
    expect(await store.backfillVectors(16)).toEqual({ embedded: 0 });
    const hit = (await store.search(q("violinist", alice))).find((h) => h.record.id === r.id);
    expect(hit?.channel).toBe("vector");
  });
});

describe("pgvector channel with an embedder that fails (PGlite)", () => {
  let lite: PGlite;
  let server: PGLiteSocketServer;
  let db: PgDb;

  beforeAll(async () => {
    lite = await PGlite.create({ extensions: { vector } });
    const port = await freePort();
    server = new PGLiteSocketServer({ db: lite, port, host: "127.0.0.1" });
    await server.start();
    db = PgDb.open(`postgres://postgres@127.0.0.1:${port}/postgres`, { max: 1 });
    await preparePg(db, undefined, MEMORY_MIGRATIONS);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await server?.stop();
    await lite?.close();
  });

  it("an unreachable embedder is asked once, then rests: writes store no vector and searches run on words, without waiting", async () => {
    let calls = 0;
    const down = {
      id: embedder.id,
      dimensions: embedder.dimensions,
      embed: async (): Promise<Float32Array[]> => {
        calls++;
        throw new EmbedderError("unavailable", "embeddings endpoint: connection refused");
      },
    };
    const store = new PgMemoryStore(db, { embedder: down });
    const a = mem("Pottery class on Thursday evenings");
    const b = mem("Pottery kiln needs a new element");
    await store.insert(a, audit(a.id));
    await store.insert(b, audit(b.id));
    expect(calls).toBe(1);
    expect((await store.search(q("pottery", alice))).map((h) => h.record.id).sort()).toEqual([a.id, b.id].sort());
    expect(calls).toBe(1);
    expect(store.lastVectorError).toMatch(/connection refused/);
  });

  it("a text the embedder refuses costs only itself its vector; the backfill says how many and why", async () => {
    const plain = new PgMemoryStore(db);
    const ok = mem("Sailing lessons on the lake");
    const bad = mem("Sailing regatta REFUSE-ME results");
    for (const r of [ok, bad]) await plain.insert(r, audit(r.id));
    const picky = {
      id: embedder.id,
      dimensions: embedder.dimensions,
      embed: async (texts: string[]): Promise<Float32Array[]> => {
        if (texts.some((t) => t.includes("REFUSE-ME"))) throw new EmbedderError("invalid", "input is longer than the model's context");
        return embedder.embed(texts);
      },
    };
    const out = await new PgMemoryStore(db, { embedder: picky }).backfillVectors(16);
    expect(out).toMatchObject({ skipped: 1, reason: expect.stringMatching(/longer than the model's context/) });
    expect(out.embedded).toBeGreaterThanOrEqual(1);
    const has = async (id: string) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM memory_vectors v JOIN memories m ON m.rowid = v.rowid WHERE m.id = $1`, [id]))[0]!.n;
    expect([await has(ok.id), await has(bad.id)]).toEqual([1, 0]);
  });
});

describePg("pgvector absent (system PostgreSQL 15)", (base) => {
  let db: PgDb;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const t = await createTestDatabase(base(), "novec");
    drop = t.drop;
    db = await openPg(t.url, { max: 2, migrations: MEMORY_MIGRATIONS });
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it("says clearly that the vector channel is off and why, and search still works", async () => {
    expect(db.features.vector).toBe(false);
    const store = new PgMemoryStore(db, { embedder });
    const st = store.vectorStatus();
    expect(st.enabled).toBe(false);
    expect(st.reason).toMatch(/vector channel off: .*vector.*(not installed|failed)/);
    expect(st.reason).toMatch(/pgvector/);
    const r = mem("Herons nest in the reeds");
    await store.insert(r, audit(r.id));
    expect((await store.search(q("heron", alice))).map((h) => h.record.id)).toEqual([r.id]);
    await expect(store.backfillVectors()).rejects.toMatchObject({ code: "schema" });
  });
});

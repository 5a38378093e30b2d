// serve's start-up sweep for forgets a stopped process left claimed (unfinishedForgets) read every
// memory to find the few deleted rows still holding their text. Memory step 16 adds a partial
// index of claimed rows only (as SQLite's migration 28); a database made before gets it, and the
// sweep's statement uses it.
import type pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { PgDb } from "../../stores/postgres/pool.js";
import { PgMemoryStore } from "../../stores/postgres/memory-store.js";
import { MEMORY_MIGRATIONS } from "../../stores/postgres/schema-memory.js";
import { openPg } from "../../stores/postgres/setup.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";

describePg("the sweep for unfinished forgets (PostgreSQL)", (base) => {
  let url: string;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const t = await createTestDatabase(base(), "unfinished");
    url = t.url;
    drop = t.drop;
    // a database as the build before step 16 left it, with memories in it: two claimed, many purged
    const old = await openPg(url, { max: 2, migrations: MEMORY_MIGRATIONS.filter((m) => m.version !== 16) });
    try {
      await old.pool.query(`INSERT INTO memories (id, lineage_id, vis_key, level, user_id, kind, content, trust, confidence, status, version, created_at, updated_at, content_hash)
        SELECT 'mem_' || i, 'mem_' || i, 'u:alice', 'user', 'alice', 'fact',
          CASE WHEN i IN (500, 1500) THEN 'Fact number ' || i WHEN i % 3 = 0 THEN '' ELSE 'Fact number ' || i END, 'user_stated', 0.9,
          CASE WHEN i IN (500, 1500) OR i % 3 = 0 THEN 'deleted' ELSE 'active' END, 1, i, i, 'h'
        FROM generate_series(0, 19999) AS i`);
    } finally {
      await old.close();
    }
  });
  afterAll(async () => {
    await drop?.();
  });

  it("an upgraded database gets the partial index, and the sweep reads it instead of the whole table", async () => {
    const db: PgDb = await openPg(url, { max: 4, migrations: MEMORY_MIGRATIONS });
    const store = new PgMemoryStore(db);
    try {
      const def = (await db.pool.query<{ d: string }>(`SELECT indexdef AS d FROM pg_indexes WHERE indexname = 'memories_unfinished_forgets'`)).rows[0]?.d;
      expect(def).toBe(`CREATE INDEX memories_unfinished_forgets ON public.memories USING btree (updated_at, rowid) WHERE ((status = 'deleted'::text) AND (content <> ''::text))`);
      await db.pool.query(`ANALYZE memories`);
      // the statements the sweep's read sends, as sent
      const sent: { text: string; values: unknown[] }[] = [];
      const connect = db.pool.connect.bind(db.pool) as (...a: unknown[]) => Promise<pg.PoolClient>;
      (db.pool as { connect: unknown }).connect = async (...a: unknown[]) => {
        // (pool.query connects with a callback: left as it is)
        if (a.length > 0) return connect(...a);
        const c = await connect();
        const query = c.query.bind(c) as (...a: unknown[]) => unknown;
        (c as { query: unknown }).query = (...a: unknown[]) => {
          if (typeof a[0] === "string") sent.push({ text: a[0], values: Array.isArray(a[1]) ? a[1] : [] });
          return query(...a);
        };
        return c;
      };
      expect((await store.unfinishedForgets(10)).map((u) => u.record.id)).toEqual(["mem_500", "mem_1500"]);
      (db.pool as { connect: unknown }).connect = connect;
      const onMemories = sent.filter((s) => /\bFROM memories\b/.test(s.text));
      expect(onMemories.length).toBeGreaterThan(0);
      const plans: string[] = [];
      for (const s of onMemories) {
        plans.push(...(await db.pool.query<{ "QUERY PLAN": string }>(`EXPLAIN ${s.text}`, s.values)).rows.map((r) => r["QUERY PLAN"]));
      }
      expect(plans.some((p) => p.includes("Index Scan using memories_unfinished_forgets"))).toBe(true);
      expect(plans.filter((p) => p.includes("Seq Scan on memories"))).toEqual([]);
    } finally {
      store.close();
      await db.close();
    }
  });
});

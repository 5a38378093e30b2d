// The catalog conformance suites under the Aurora DSQL profile (?profile=dsql), run on the local
// PostgreSQL cluster: schema without sequences, foreign keys, triggers, GIN or tsvector; ids from
// the store; optimistic claims retried on conflict instead of SKIP LOCKED; word search by scan.
// (Aurora DSQL itself is not reachable from CI; the profile restricts us to what it documents.)
import { describe, expect, it } from "vitest";
import { OLD_ERROR } from "../../core/learning/failure.js";
import { dsqlStatements } from "../../stores/postgres/migrate.js";
import { pgCatalogStores } from "../../stores/postgres/catalog.js";
import { CATALOG_MIGRATIONS } from "../../stores/postgres/schema-catalog.js";
import { openPg } from "../../stores/postgres/setup.js";
import { catalogConformance } from "../stores/catalog-conformance.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";
import { migratedTemplate } from "./pg-databases.js";

describe("catalog schema, DSQL profile", () => {
  it("versions stay within 100–199 and the DSQL DDL uses only what Aurora DSQL supports", () => {
    for (const m of CATALOG_MIGRATIONS) {
      expect(m.version).toBeGreaterThanOrEqual(100);
      expect(m.version).toBeLessThanOrEqual(199);
      expect(m.dsql).toBeDefined();
    }
    const all = CATALOG_MIGRATIONS.flatMap((m) => dsqlStatements(m.dsql!));
    const text = all.join("\n");
    for (const banned of [/serial/i, /REFERENCES/i, /USING gin/i, /TRIGGER/i, /plpgsql/i, /tsvector/i, /CREATE EXTENSION/i, /\bjsonb?\b/i, /FUNCTION/i]) {
      expect(text).not.toMatch(banned);
    }
    for (const st of all) {
      // a column added bare (DSQL's ALTER TABLE takes ADD COLUMN IF NOT EXISTS name type, no constraint)
      expect(st).toMatch(/^(CREATE TABLE IF NOT EXISTS|CREATE (UNIQUE )?INDEX ASYNC IF NOT EXISTS|ALTER TABLE \w+ ADD COLUMN IF NOT EXISTS \w+ (text|integer|bigint)$)/);
      if (/INDEX/.test(st)) expect(st).not.toMatch(/\)\s*WHERE/);
    }
  });
});

describePg("postgres, dsql profile", (url) => {
  const dbs = migratedTemplate(url, { profile: "dsql" });
  catalogConformance("postgres (dsql profile)", async () => {
    const d = await dbs.fresh();
    return {
      open: async () => {
        const db = await openPg(d.url, { max: 4, profile: "dsql" });
        return { ...pgCatalogStores(db), close: () => db.close() };
      },
      drop: d.drop,
    };
  }, { commitOrderedTraceIds: false });
});

// Step 112 cleared the error texts older versions kept (a parser's message quotes the conversation)
// on PostgreSQL only: its DSQL variant is DDL, so under the profile they stayed for good. Step 113
// clears them there, in batches of a few hundred rows, and keeps what this version writes.
describePg("postgres, dsql profile: old learning error texts", (url) => {
  it("step 113 clears the texts step 112 left under the DSQL profile, in batches, keeping the ones this version writes", async () => {
    const t = await createTestDatabase(url(), "dsqlerr");
    try {
      const old = await openPg(t.url, { max: 2, profile: "dsql", targetVersion: 110 });
      const quoted = `/h/threads/t1.json: Unexpected token 's', ..."text": sk-9f8e7d}"... is not valid JSON`;
      const kept = "InfinityStoreError corrupt in /h/threads/t 9.json at position 12";
      // more rows than one batch, old and new texts mixed
      for (let i = 0; i < 1200; i++) {
        await old.pool.query(`INSERT INTO learning_queue (source, thread_id, root_thread_id, enqueued_at, attempts, last_error) VALUES ('conversation', $1, $1, 1, 1, $2)`, [`t${String(i).padStart(4, "0")}`, i === 700 ? kept : quoted]);
      }
      await old.pool.query(`INSERT INTO learning_dropped (source, thread_id, root_thread_id, format, drops, retry_at, reason) VALUES ('conversation', 'd1', 'd1', 'v1', 0, 5, $1), ('conversation', 'd2', 'd2', 'v1', 0, 5, $2)`, [quoted, kept]);
      const details = [
        { source: "conversation", attempts: 1, error: quoted },
        { start_ord: 4, error: 'say "sk-9f8e7d"\\ twice', after: "kept" },
        {},
        { error: kept },
      ];
      let id = 1;
      for (const d of details) await old.pool.query(`INSERT INTO learning_events (id, at, kind, thread_id, episode_id, detail) VALUES ($1, 1, 'thread_failed', 't1', NULL, $2)`, [id++, JSON.stringify(d)]);
      await old.close();
      // a database step 112 migrated under the profile: the texts are still there
      const at112 = await openPg(t.url, { max: 2, profile: "dsql", targetVersion: 112 });
      try {
        expect((await at112.pool.query(`SELECT count(*)::int AS n FROM learning_queue WHERE last_error = $1`, [quoted])).rows[0]).toEqual({ n: 1199 });
      } finally {
        await at112.close();
      }
      const db = await openPg(t.url, { max: 2, profile: "dsql" });
      try {
        expect((await db.pool.query(`SELECT last_error, count(*)::int AS n FROM learning_queue GROUP BY last_error ORDER BY n`)).rows).toEqual([
          { last_error: kept, n: 1 },
          { last_error: null, n: 1199 },
        ]);
        expect((await db.pool.query(`SELECT thread_id, reason FROM learning_dropped ORDER BY thread_id`)).rows).toEqual([
          { thread_id: "d1", reason: OLD_ERROR },
          { thread_id: "d2", reason: kept },
        ]);
        const after = (await db.pool.query<{ detail: string }>(`SELECT detail FROM learning_events ORDER BY id`)).rows.map((r) => JSON.parse(r.detail) as unknown);
        expect(after).toEqual([{ source: "conversation", attempts: 1, error: OLD_ERROR }, { start_ord: 4, error: OLD_ERROR, after: "kept" }, {}, { error: kept }]);
        expect((await db.pool.query(`SELECT count(*)::int AS n FROM schema_migrations WHERE version = 113`)).rows[0]).toEqual({ n: 1 });
      } finally {
        await db.close();
      }
    } finally {
      await t.drop();
    }
  }, 120_000);
});

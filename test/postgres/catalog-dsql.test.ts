// The catalog conformance suites under the Aurora DSQL profile (?profile=dsql), run on the local
// PostgreSQL cluster: schema without sequences, foreign keys, triggers, GIN or tsvector; ids from
// the store; optimistic claims retried on conflict instead of SKIP LOCKED; word search by scan.
// (Aurora DSQL itself is not reachable from CI; the profile restricts us to what it documents.)
import { describe, expect, it } from "vitest";
import { dsqlStatements } from "../../stores/postgres/migrate.js";
import { pgCatalogStores } from "../../stores/postgres/catalog.js";
import { CATALOG_MIGRATIONS } from "../../stores/postgres/schema-catalog.js";
import { openPg } from "../../stores/postgres/setup.js";
import { catalogConformance } from "../stores/catalog-conformance.js";
import { describePg } from "../helpers/postgres.js";
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

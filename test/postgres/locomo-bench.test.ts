// `bench locomo --pg URL`: the same benchmark on PostgreSQL, in a database of its own that is
// dropped afterwards. The conversation is a small made-up one in LoCoMo's format (helpers/locomo.ts).
import pg from "pg";
import { expect, it } from "vitest";
import { runLocomo } from "../../bench/locomo.js";
import { describePg } from "../helpers/postgres.js";
import { tinyLocomo } from "../helpers/locomo.js";

describePg("bench locomo on PostgreSQL", (url) => {
  it("scores the same questions as on SQLite, says which engine ran, and drops its database", async () => {
    const data = tinyLocomo();
    const onPg = await runLocomo({ data, ks: [1, 5], pgUrl: url() });
    const onSqlite = await runLocomo({ data, ks: [1, 5] });
    expect(onPg.engine).toBe("postgres");
    expect(onSqlite.engine).toBe("sqlite");
    expect(onPg.questions).toBe(3);
    expect(onPg.ingest.memories).toBe(8);
    expect(onPg.recall[5]).toBe(100);
    expect(onSqlite.recall[5]).toBe(100);
    const admin = new pg.Client({ connectionString: url() });
    await admin.connect();
    try {
      const left = await admin.query(`SELECT datname FROM pg_database WHERE datname LIKE 'locomo_%'`);
      expect(left.rows).toEqual([]);
    } finally {
      await admin.end();
    }
  });

  it("refuses a context-prefix run on PostgreSQL before creating anything", async () => {
    await expect(runLocomo({ data: tinyLocomo(), ks: [5], pgUrl: url(), prefixBudget: 500 })).rejects.toThrow(/SQLite only/);
  });
});

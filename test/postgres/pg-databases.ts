// Fast empty databases for the PostgreSQL suites: one database is migrated once per test file and
// used as a template, so each test's CREATE DATABASE … TEMPLATE is a file copy, not a migration.
import pg from "pg";
import { afterAll } from "vitest";
import { openPg } from "../../stores/postgres/setup.js";
import { createTestDatabase, withDatabase } from "../helpers/postgres.js";

let n = 0;

export function migratedTemplate(base: () => string, opts: { profile?: "postgres" | "dsql" } = {}) {
  let template: Promise<{ name: string; drop: () => Promise<void> }> | null = null;
  afterAll(async () => {
    if (template) await (await template).drop();
  });
  const admin = async <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString: base() });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  return {
    /** a new database holding the whole migrated schema and no rows */
    async fresh(): Promise<{ url: string; drop: () => Promise<void> }> {
      template ??= (async () => {
        const t = await createTestDatabase(base(), "tpl");
        const db = await openPg(t.url, opts.profile ? { profile: opts.profile } : {});
        await db.close();
        return { name: new URL(t.url).pathname.slice(1), drop: t.drop };
      })();
      const tpl = await template;
      const name = `c_${process.pid}_${Date.now().toString(36)}_${n++}`;
      await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${tpl.name}`));
      return {
        url: withDatabase(base(), name),
        drop: () => admin(async (c) => void (await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
      };
    },
  };
}

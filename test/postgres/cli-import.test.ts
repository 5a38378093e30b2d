// `infinity-memory memory import --db postgres://…` as a real CLI child process: a large import
// ends with VACUUM (ANALYZE) of the memory tables (searches plan from statistics at once); a small
// one leaves them to autovacuum and says so; a role that may not vacuum the tables is told so
// rather than told it vacuumed.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ANALYZE_AFTER_IMPORTED } from "../../cli/commands/memory-import.js";
import type { PgDb } from "../../stores/postgres/pool.js";
import { MEMORY_MIGRATIONS } from "../../stores/postgres/schema-memory.js";
import { openPg } from "../../stores/postgres/setup.js";
import { MEMORY_WRITE_TABLES, vacuumAnalyze } from "../../stores/postgres/vacuum.js";
import { CLI, runCli } from "../helpers/cli.js";
import { spawn } from "node:child_process";
import { createTestDatabase, describePg, withDatabase } from "../helpers/postgres.js";

describePg("infinity-memory memory import into PostgreSQL", (url) => {
  let dir: string;
  const drops: (() => Promise<void>)[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "imem-pg-import-"));
  });
  afterAll(async () => {
    for (const d of drops) await d();
    rmSync(dir, { recursive: true, force: true });
  });
  const lines = (n: number, word: string) => {
    const p = join(dir, `${word}-${n}.jsonl`);
    writeFileSync(p, Array.from({ length: n }, (_, i) => JSON.stringify({ content: `Note ${i} about the ${word} rollout, step ${i * 7}` })).join("\n") + "\n");
    return p;
  };
  const stats = async (u: string) => {
    const c = new pg.Client({ connectionString: u });
    await c.connect();
    try {
      const r = await c.query<{ relname: string; analyzed: boolean }>(
        `SELECT relname, (last_analyze IS NOT NULL) AS analyzed FROM pg_stat_user_tables WHERE relname IN ('memories', 'memory_words') ORDER BY relname`,
      );
      return r.rows;
    } finally {
      await c.end();
    }
  };
  const env = () => ({ INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" });

  it("a small import leaves the tables to autovacuum; a large one analyses them, and the memories are there", { timeout: 120_000 }, async () => {
    const t = await createTestDatabase(url(), "imp");
    drops.push(t.drop);
    const small = runCli(["memory", "import", lines(20, "heron"), "--json", "--db", t.url], env());
    expect(small.stderr).toBe("");
    expect(JSON.parse(small.stdout)).toMatchObject({ imported: 20, failed: 0, analyzed: `skipped: 20 new memories (fewer than ${ANALYZE_AFTER_IMPORTED}); autovacuum will analyse the tables` });
    expect(await stats(t.url)).toEqual([
      { relname: "memories", analyzed: false },
      { relname: "memory_words", analyzed: false },
    ]);

    const n = ANALYZE_AFTER_IMPORTED + 50;
    const large = runCli(["memory", "import", lines(n, "osprey"), "--json", "--db", t.url], env());
    expect(large.stderr).toBe("");
    expect(JSON.parse(large.stdout)).toMatchObject({ lines: n, imported: n, failed: 0, analyzed: "vacuum analyze" });
    expect(await stats(t.url)).toEqual([
      { relname: "memories", analyzed: true },
      { relname: "memory_words", analyzed: true },
    ]);
    const found = runCli(["memory", "search", "osprey rollout step 7", "--json", "--db", t.url], env());
    expect(found.status).toBe(0);
    expect(found.stdout).toContain("Note 1 about the osprey rollout, step 7");

    // the text summary says it too
    const again = runCli(["memory", "import", lines(n, "kestrel"), "--db", t.url], env());
    expect(again.stdout).toContain(`imported ${n} memories`);
    expect(again.stdout).toContain("analysed the memory tables (VACUUM ANALYZE)");
  });

  it("a line PostgreSQL could not store (a NUL in its text) is reported and the good lines still go in", async () => {
    const t = await createTestDatabase(url(), "nul");
    drops.push(t.drop);
    const p = join(dir, "nul.jsonl");
    writeFileSync(p, [{ content: "The osprey nests on the east pylon" }, { content: "binary\u0000junk from a tool" }, { content: "The osprey eggs hatched in May" }].map((l) => JSON.stringify(l)).join("\n") + "\n");
    const r = runCli(["memory", "import", p, "--json", "--db", t.url], env());
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ lines: 3, imported: 2, failed: 1 });
    expect(r.stderr).toMatch(/^line 2: "content": "content" holds a NUL character \(U\+0000\) at character 7; remove it/m);
    expect(runCli(["memory", "search", "osprey", "--json", "--db", t.url], env()).stdout.trim().split("\n")).toHaveLength(2);
  });

  it("a role that owns neither the tables nor the database is told it was skipped, and nothing is vacuumed", async () => {
    const t = await createTestDatabase(url(), "vac");
    drops.push(t.drop);
    const role = `imem_vac_${process.pid}`;
    const admin = new pg.Client({ connectionString: t.url });
    await admin.connect();
    const owner = await openPg(t.url, { max: 1, migrations: MEMORY_MIGRATIONS });
    try {
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
      await admin.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER`);
      await admin.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
      await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
      // only the pool of a store opened by that role (opening itself wants to own the tables)
      const pool = new pg.Pool({ connectionString: withDatabase(t.url, new URL(t.url).pathname.slice(1), role), max: 1 });
      try {
        const app = { serverIsDsql: false, pool } as unknown as PgDb;
        expect(await vacuumAnalyze(app, MEMORY_WRITE_TABLES)).toBe(
          `skipped: this role may not vacuum ${[...MEMORY_WRITE_TABLES].sort().join(", ")} (not their owner); autovacuum will analyse the tables later`,
        );
      } finally {
        await pool.end();
      }
      expect((await stats(t.url)).every((r) => !r.analyzed)).toBe(true);
      // the owner may
      expect(await vacuumAnalyze(owner, MEMORY_WRITE_TABLES)).toBe("vacuum analyze");
      expect((await stats(t.url)).every((r) => r.analyzed)).toBe(true);
    } finally {
      await owner.close();
      await admin.query(`DROP OWNED BY ${role}`).catch(() => {});
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
      await admin.end();
    }
  });

  it("under the DSQL profile an import with the default batch goes in, in parts a DSQL transaction may write", { timeout: 120_000 }, async () => {
    const t = await createTestDatabase(url(), "impd");
    drops.push(t.drop);
    const db = `${t.url}?profile=dsql`;
    const file = lines(450, "plover");
    const first = runCli(["memory", "import", file, "--json", "--db", db], env());
    expect(first.stderr).toBe("");
    expect(JSON.parse(first.stdout)).toMatchObject({ lines: 450, imported: 450, duplicates: 0, failed: 0 });
    // again: each line a duplicate, whichever part it was written in
    expect(JSON.parse(runCli(["memory", "import", file, "--json", "--db", db], env()).stdout)).toMatchObject({ imported: 0, duplicates: 450, failed: 0 });
  });

  it("under the DSQL profile on PostgreSQL (no word index table) the tables it has are vacuumed", async () => {
    const t = await createTestDatabase(url(), "vacd");
    drops.push(t.drop);
    const db = await openPg(t.url, { profile: "dsql", max: 1, migrations: MEMORY_MIGRATIONS });
    try {
      expect(await vacuumAnalyze(db, MEMORY_WRITE_TABLES)).toBe("vacuum analyze");
      expect(await stats(t.url)).toEqual([{ relname: "memories", analyzed: true }]);
    } finally {
      await db.close();
    }
  });
});

describePg("the same memories written by several processes at once into PostgreSQL", (url) => {
  it("two imports of one file and four adds of one text store each memory once", { timeout: 120_000 }, async () => {
    const t = await createTestDatabase(url(), "dup");
    const dir = mkdtempSync(join(tmpdir(), "imem-pg-dup-"));
    try {
      const file = join(dir, "notes.jsonl");
      writeFileSync(file, Array.from({ length: 600 }, (_, i) => JSON.stringify({ content: `Runbook note ${i}: restart the ingest worker after step ${i * 3}` })).join("\n") + "\n");
      const env = { ...process.env, INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
      const run = (args: string[]) =>
        new Promise<{ status: number | null; stdout: string }>((done) => {
          const child = spawn(process.execPath, [CLI, ...args, "--db", t.url], { env, stdio: ["ignore", "pipe", "ignore"] });
          let stdout = "";
          child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
          child.on("exit", (status) => done({ status, stdout }));
        });
      const imports = await Promise.all([run(["memory", "import", file, "--batch", "100", "--json"]), run(["memory", "import", file, "--batch", "100", "--json"])]);
      expect(imports.map((r) => r.status)).toEqual([0, 0]);
      const imported = imports.map((r) => (JSON.parse(r.stdout) as { imported: number }).imported);
      expect(imported[0]! + imported[1]!).toBe(600);
      const adds = await Promise.all(Array.from({ length: 4 }, () => run(["memory", "add", "User's favourite shell is fish", "--json"])));
      expect(adds.map((r) => (JSON.parse(r.stdout) as { status: string }).status).sort()).toEqual(["created", "duplicate", "duplicate", "duplicate"]);
      const c = new pg.Client({ connectionString: t.url });
      await c.connect();
      try {
        const r = await c.query<{ rows: string; distinct: string }>(`SELECT count(*) AS rows, count(DISTINCT content) AS distinct FROM memories WHERE status <> 'deleted'`);
        expect(r.rows[0]).toEqual({ rows: "601", distinct: "601" });
      } finally {
        await c.end();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await t.drop();
    }
  });
});

// Servers that own nothing: the schema's owner runs `infinity-memory db upgrade --grant ROLE`
// (a real CLI process), and `serve` connects as a role with row grants only. It serves the memory
// tools over RAP, cannot change the schema, and with rls=1 is bound by the owner's policies. A
// schema behind the build, or rls=1 without policies, stops such a server with what to run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post, startServe, startSink, type ServeProcess, type Sink } from "../../bench/serve-fleet.js";
import { MEMORY_MIGRATIONS } from "../../stores/postgres/schema-memory.js";
import { openPg } from "../../stores/postgres/setup.js";
import { runCli } from "../helpers/cli.js";
import { skillMd } from "../skills/helpers.js";
import { createTestDatabase, describePg, withDatabase } from "../helpers/postgres.js";

describePg("a server role with row grants only", (base) => {
  const role = `imem_app_${process.pid}`;
  const password = "app-secret";
  const drops: (() => Promise<void>)[] = [];
  let dir: string;

  const admin = async <T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  /** the database's URL as the app role */
  const asApp = (dbUrl: string, query = "") => {
    const u = new URL(withDatabase(dbUrl, new URL(dbUrl).pathname.slice(1), role));
    u.password = password;
    return `${u.toString()}${query}`;
  };
  const env = () => ({ INFINITY_MEMORY_HOME: join(dir, "home"), INFINITY_MEMORY_USER: "alice" });
  const upgrade = (url: string, ...extra: string[]) => runCli(["db", "upgrade", "--db", url, "--json", ...extra], env());

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "imem-least-"));
    await admin(base(), async (c) => {
      await c.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
      await c.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}' NOSUPERUSER NOBYPASSRLS`);
    });
  });
  afterAll(async () => {
    for (const d of drops.reverse()) await d();
    await admin(base(), (c) => c.query(`DROP ROLE IF EXISTS ${role}`)).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const fresh = async (prefix: string) => {
    const t = await createTestDatabase(base(), prefix);
    drops.push(t.drop);
    return t.url;
  };

  describe("serving", () => {
    let sink: Sink;
    const servers: ServeProcess[] = [];
    let seq = 0;
    beforeAll(async () => {
      sink = await startSink();
    });
    afterAll(async () => {
      for (const s of servers) await s.stop();
      await sink?.close();
    }, 60_000);

    const call = async (server: ServeProcess, user: string, op: string, args: unknown): Promise<string> => {
      const id = `lp-${++seq}`;
      const body = JSON.stringify({ operation: op, arguments: args, id, call_id: null, callback_url: sink.url, group_id: `thread-${user}`, user_id: user, thread_ancestors: null });
      expect(await post(server.endpoint, body)).toBe(200);
      await sink.waitFor([id], 20_000);
      return sink.results.get(id)!.text;
    };

    it("the owner upgrades and grants; the role serves remember, search, list and forget, and owns and may alter nothing", { timeout: 120_000 }, async () => {
      const url = await fresh("lpserve");
      const up = upgrade(url, "--grant", role);
      expect(up.stderr).toBe("");
      expect(up.status).toBe(0);
      const s = JSON.parse(up.stdout);
      expect(s).toMatchObject({ engine: "postgres", schema: { before: 0 }, rls: false, granted: [{ role, schema: "public" }] });
      expect(s.applied.length).toBeGreaterThan(5);
      expect(s.schema.after).toBe(Math.max(...s.applied));
      expect(s.granted[0].tables).toBeGreaterThan(10);
      // a second run has nothing to do
      expect(JSON.parse(upgrade(url).stdout)).toMatchObject({ schema: { before: s.schema.after, after: s.schema.after }, applied: [] });

      const server = await startServe({ db: asApp(url), dir, name: "plain" });
      servers.push(server);
      expect(await call(server, "alice", "memory_remember", { content: "Alice keeps the spare key under the green planter", kind: "fact" })).toMatch(/^Remembered as mem_/);
      expect(await call(server, "alice", "memory_search", { query: "spare key planter" })).toContain("green planter");
      const id = /mem_[a-z0-9]+/.exec(await call(server, "alice", "memory_list", {}))?.[0];
      expect(id).toBeDefined();
      expect(await call(server, "alice", "memory_forget", { ids: [id] })).toMatch(/Forg/);
      expect(await call(server, "alice", "memory_search", { query: "spare key planter" })).toMatch(/^No memories match/);
      expect(await call(server, "alice", "memory_search", { query: 42 })).toMatch(/^Error: .*query/);

      await admin(asApp(url), async (c) => {
        const owned = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_class WHERE relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)`);
        expect(owned.rows[0]!.n).toBe(0);
        await expect(c.query(`CREATE TABLE stray (a int)`)).rejects.toThrow(/permission denied/);
        await expect(c.query(`ALTER TABLE memories ADD COLUMN stray int`)).rejects.toThrow(/must be owner/);
        await expect(c.query(`TRUNCATE memories CASCADE`)).rejects.toThrow(/permission denied/);
      });
    });

    it("the skills toolset works under the same role, inside a project: a proposal is stored and viewable, search reads the project's settings", { timeout: 120_000 }, async () => {
      const url = await fresh("lpskills");
      expect(upgrade(url, "--grant", role).status).toBe(0);
      const server = await startServe({ db: asApp(url), dir, name: "skills", toolset: "skills" });
      servers.push(server);
      const md = skillMd("rotate-keys", "Rotate the service's API keys without downtime.", "# Rotate keys\n\n1. Issue the new key.\n2. Deploy it beside the old one.\n3. Revoke the old key.");
      expect(await call(server, "alice", "skill_propose", { skill_md: md })).toMatch(/^Proposed rotate-keys v1 as a candidate/);
      expect(await call(server, "alice", "skill_view", { name: "rotate-keys" })).toBe('Error: "rotate-keys" has no published version yet; name a version to read one (it has v1..v1)');
      const viewed = await call(server, "alice", "skill_view", { name: "rotate-keys", version: "v1" });
      expect(viewed).toContain("rotate-keys v1");
      expect(viewed).toContain("2. Deploy it beside the old one.");
      expect(await call(server, "alice", "skill_search", { query: "rotate API keys" })).toBe('No enabled skill matches "rotate API keys".');
      expect(await call(server, "alice", "skill_propose", { skill_md: "no frontmatter" })).toMatch(/^Error: /);
    });

    it("with rls=1 the owner's policies bind the role: each user sees only their own memories", { timeout: 120_000 }, async () => {
      const url = await fresh("lprls");
      const up = upgrade(`${url}?rls=1`, "--grant", role);
      expect(up.status).toBe(0);
      expect(JSON.parse(up.stdout)).toMatchObject({ rls: true, granted: [{ role }] });

      const server = await startServe({ db: asApp(url, "?rls=1"), dir, name: "rls" });
      servers.push(server);
      expect(await call(server, "alice", "memory_remember", { content: "Alice stores the canoe paddles in the loft", kind: "fact" })).toMatch(/^Remembered as mem_/);
      expect(await call(server, "bob", "memory_remember", { content: "Bob stores the canoe paddles in the shed", kind: "fact" })).toMatch(/^Remembered as mem_/);
      const alice = await call(server, "alice", "memory_search", { query: "canoe paddles" });
      expect(alice).toContain("loft");
      expect(alice).not.toContain("shed");
      const bob = await call(server, "bob", "memory_search", { query: "canoe paddles" });
      expect(bob).toContain("shed");
      expect(bob).not.toContain("loft");

      await admin(asApp(url), async (c) => {
        // no user in the transaction: the policies show the role nothing
        expect((await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM memories`)).rows[0]!.n).toBe(0);
        await expect(c.query(`ALTER TABLE memories DISABLE ROW LEVEL SECURITY`)).rejects.toThrow(/must be owner/);
      });
      // the owner sees both rows were written
      expect(await admin(url, async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM memories`)).rows[0]!.n)).toBe(2);
    });
  });

  it("a schema behind this build stops the role with the command to run, and changes nothing", { timeout: 60_000 }, async () => {
    const url = await fresh("lpold");
    // behind by a step with DDL (a step that only rewrites rows, the role may apply)
    const ddl = MEMORY_MIGRATIONS.filter((m) => /\b(CREATE|ALTER|DROP)\b/.test(m.sql)).at(-1)!;
    const older = MEMORY_MIGRATIONS[MEMORY_MIGRATIONS.indexOf(ddl) - 1]!.version;
    await (await openPg(url, { targetVersion: older })).close();
    await admin(url, async (c) => {
      await c.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
      await c.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
      await c.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
    });
    const versions = () => admin(url, async (c) => (await c.query<{ version: number }>(`SELECT version FROM schema_migrations ORDER BY version`)).rows.map((r) => r.version));
    const had = await versions();
    const r = runCli(["memory", "list", "--db", asApp(url)], env());
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`role ${role} may not change it`);
    expect(r.stderr).toContain(`infinity-memory db upgrade --db <owner's URL> --grant ${role}`);
    expect(r.stderr).not.toContain(password);
    expect(await versions()).toEqual(had);
    // the owner's upgrade then lets it in
    expect(upgrade(url, "--grant", role).status).toBe(0);
    const ok = runCli(["memory", "list", "--db", asApp(url)], env());
    expect(ok.stderr).toBe("");
    expect(ok.status).toBe(0);
  });

  it("rls=1 on tables without policies stops the role and says to add them as the owner", { timeout: 60_000 }, async () => {
    const url = await fresh("lpnopol");
    expect(upgrade(url, "--grant", role).status).toBe(0);
    const r = runCli(["memory", "list", "--db", asApp(url, "?rls=1")], env());
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/rls=1, but .*memories.* no row-level security policy and this role does not own them/);
    expect(r.stderr).toContain("db upgrade --db '<owner's URL>?rls=1'");
    // nothing was switched on behind the owner's back
    expect(await admin(url, async (c) => (await c.query<{ on: boolean }>(`SELECT relrowsecurity AS on FROM pg_class WHERE relname = 'memories'`)).rows[0]!.on)).toBe(false);
  });

  it("an optional index the role may not build turns its channel off with the reason, and the store still opens", async () => {
    const url = await fresh("lptrgm");
    expect(upgrade(url, "--grant", role).status).toBe(0);
    const trgm = await admin(url, async (c) => (await c.query(`SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'`)).rowCount);
    expect(trgm).toBe(1); // the owner's upgrade installed it (PostgreSQL's contrib ships it)
    await admin(url, (c) => c.query(`DROP INDEX memories_content_trgm`));
    const db = await openPg(asApp(url));
    try {
      expect(db.features.trigram).toBe(false);
      expect(db.features.reasons.join("\n")).toContain("trigram channel off: memories_content_trgm is missing and this role may not create it");
    } finally {
      await db.close();
    }
    // the owner's next upgrade puts it back, and the role then has the channel
    expect(upgrade(url).status).toBe(0);
    const again = await openPg(asApp(url));
    expect(again.features.trigram).toBe(true);
    await again.close();
  });

  it("--grant names an existing role, or nothing changes", async () => {
    const url = await fresh("lpbad");
    const missing = upgrade(url, "--grant", "imem_nobody_here");
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("role imem_nobody_here does not exist; create it first");
    const bad = upgrade(url, "--grant", "app; DROP TABLE memories");
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(`--grant: "app; DROP TABLE memories" is not a role name`);
    // neither run changed the database: the roles are checked before the upgrade
    expect(await admin(url, async (c) => (await c.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`)).rows[0]!.t)).toBeNull();
  });
});

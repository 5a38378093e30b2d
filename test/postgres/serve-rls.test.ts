// serve on PostgreSQL with row-level security (rls=1), connected as an ordinary role: each memory
// tool call runs as the user it acts for, so the policies hold behind the scope predicates, while
// session indexing and the learning worker run as system maintenance and keep working.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { post, startServe, startSink, type ServeProcess, type Sink } from "../../bench/serve-fleet.js";
import { createTestDatabase, describePg, withDatabase } from "../helpers/postgres.js";

describePg("serve with row-level security (rls=1)", (base) => {
  const role = `imem_serve_${process.pid}`;
  let dir: string;
  let db: { url: string; drop: () => Promise<void> };
  let appUrl: string;
  let server: ServeProcess;
  let sink: Sink;
  let seq = 0;

  const call = async (user: string, op: string, args: unknown): Promise<string> => {
    const id = `rls-${++seq}`;
    const body = JSON.stringify({ operation: op, arguments: args, id, call_id: null, callback_url: sink.url, group_id: `thread-${user}`, user_id: user, thread_ancestors: null });
    expect(await post(server.endpoint, body)).toBe(200);
    await sink.waitFor([id], 20_000);
    return sink.results.get(id)!.text;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "imem-rls-serve-"));
    db = await createTestDatabase(base(), "rlsserve");
    const name = new URL(db.url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER NOBYPASSRLS`);
    await admin.query(`GRANT ALL ON SCHEMA public TO ${role}`);
    await admin.query(`ALTER DATABASE ${name} OWNER TO ${role}`);
    await admin.end();
    appUrl = `${withDatabase(db.url, name, role)}?rls=1`;
    sink = await startSink();
    server = await startServe({ db: appUrl, dir, name: "rls" });
  }, 90_000);

  afterAll(async () => {
    await server?.stop();
    await sink?.close();
    await db?.drop();
    const admin = new pg.Client({ connectionString: base() });
    await admin.connect();
    await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("each user's tool calls see their own memories and nothing of the other's", async () => {
    expect(await call("alice", "memory_remember", { content: "Alice parks the blue kayak at the north jetty", kind: "fact" })).toMatch(/^Remembered as mem_/);
    expect(await call("bob", "memory_remember", { content: "Bob parks the red kayak at the north jetty", kind: "fact" })).toMatch(/^Remembered as mem_/);
    const aliceSees = await call("alice", "memory_search", { query: "kayak north jetty" });
    expect(aliceSees).toContain("blue kayak");
    expect(aliceSees).not.toContain("red kayak");
    const bobSees = await call("bob", "memory_search", { query: "kayak north jetty" });
    expect(bobSees).toContain("red kayak");
    expect(bobSees).not.toContain("blue kayak");
  });

  it("the policies are really on: the server's role sees no memory without a user", async () => {
    const c = new pg.Client({ connectionString: appUrl.replace(/\?rls=1$/, "") });
    await c.connect();
    try {
      const policies = await c.query(`SELECT count(*)::int AS n FROM pg_policies WHERE tablename = 'memories'`);
      expect(policies.rows[0].n).toBeGreaterThan(0);
      expect((await c.query(`SELECT count(*)::int AS n FROM memories`)).rows[0].n).toBe(0);
      await c.query("BEGIN");
      await c.query(`SELECT set_config('app.user_id', 'bob', true)`);
      const rows = (await c.query<{ content: string }>(`SELECT content FROM memories`)).rows.map((r) => r.content);
      await c.query("COMMIT");
      expect(rows).toEqual(["Bob parks the red kayak at the north jetty"]);
    } finally {
      await c.end();
    }
  });

  it("a user's forget and a bad argument behave as without RLS", async () => {
    const listed = await call("alice", "memory_list", {});
    const id = /mem_[a-z0-9]+/.exec(listed)?.[0];
    expect(id).toBeDefined();
    expect(await call("bob", "memory_forget", { ids: [id] })).not.toMatch(/^Forgot/);
    expect(await call("alice", "memory_search", { query: "blue kayak" })).toContain("blue kayak");
    expect(await call("alice", "memory_forget", { ids: [id] })).toMatch(/Forg/);
    expect(await call("alice", "memory_search", { query: "blue kayak" })).toMatch(/^No memories match/);
    expect(await call("alice", "memory_search", { query: 42 })).toMatch(/^Error: .*query/);
  });
});

// Row-level security as the second line of defence (rls=1): policies on the user-scoped tables
// keyed by the transaction's app.user_id. Runs as an ordinary role (a superuser bypasses RLS).
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { visibilityKey } from "../../core/memory/scope.js";
import { analyzeQuery } from "../../core/retrieval/analyze.js";
import { PgMemoryStore } from "../../stores/postgres/memory-store.js";
import { asPgSystem, withPgUser, type PgDb } from "../../stores/postgres/pool.js";
import { MEMORY_MIGRATIONS } from "../../stores/postgres/schema-memory.js";
import { PgSessionIndex } from "../../stores/postgres/session-index.js";
import { openPg } from "../../stores/postgres/setup.js";
import { createTestDatabase, describePg, withDatabase } from "../helpers/postgres.js";
import { mem, scopeOf } from "../stores/memory-conformance.js";

const audit = (id: string) => ({ at: 1, actor: "t", action: "create" as const, targetKind: "memory" as const, targetId: id, detail: {} });

describePg("postgres row-level security (rls=1)", (base) => {
  let db: PgDb;
  let drop: () => Promise<void>;
  let store: PgMemoryStore;
  const role = `imem_app_${process.pid}`;
  const alice = mem("Alice keeps her spare key under the heron statue");
  const bob = mem("Bob keeps his spare key under the heron mat", { scope: scopeOf("bob") });

  beforeAll(async () => {
    const t = await createTestDatabase(base(), "rls");
    drop = t.drop;
    const admin = new pg.Client({ connectionString: t.url });
    await admin.connect();
    await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER NOBYPASSRLS`);
    await admin.query(`GRANT ALL ON SCHEMA public TO ${role}`);
    await admin.query(`ALTER DATABASE ${new URL(t.url).pathname.slice(1)} OWNER TO ${role}`);
    await admin.end();
    db = await openPg(`${withDatabase(t.url, new URL(t.url).pathname.slice(1), role)}?rls=1`, { max: 3, migrations: MEMORY_MIGRATIONS });
    store = new PgMemoryStore(db);
    await store.insert(alice, audit(alice.id));
    await store.insert(bob, audit(bob.id));
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
    // roles are cluster-wide: leave none behind on a shared server
    const admin = new pg.Client({ connectionString: base() });
    await admin.connect();
    await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin.end();
  });

  it("is on: the URL flag turned it on and the tables carry the policy", async () => {
    expect(db.rls).toBe(true);
    const r = await db.pool.query(`SELECT count(*)::int AS n FROM pg_policies WHERE policyname = 'imem_user'`);
    expect(r.rows[0].n).toBeGreaterThanOrEqual(7);
  });

  it("a query without the user setting sees nothing", async () => {
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM memories`)).rows[0].n).toBe(0);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM memory_words`)).rows[0].n).toBe(0);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM scope_tokens`)).rows[0].n).toBe(0);
    expect(await store.get(alice.id)).toBeNull();
  });

  it("user A cannot read B's rows even with a wrong WHERE or B's keys", async () => {
    await withPgUser("alice", async () => {
      expect((await db.query(`SELECT id FROM memories WHERE user_id = 'bob'`)).length).toBe(0);
      expect((await db.query<{ id: string }>(`SELECT id FROM memories`)).map((r) => r.id)).toEqual([alice.id]);
      // a bug that hands alice's request bob's scope keys still finds nothing of bob's
      const hits = await store.search({
        visibility: { keys: [visibilityKey(scopeOf("bob")), visibilityKey(scopeOf("alice"))] },
        query: analyzeQuery("spare key heron"),
        statuses: ["active"],
        includeFlagged: false,
        now: 10,
        limit: 10,
      });
      expect(hits.map((h) => h.record.id)).toEqual([alice.id]);
      // the semantic channel's change tokens are Alice's alone too
      expect((await db.query<{ vis_key: string }>(`SELECT vis_key FROM scope_tokens`)).map((r) => r.vis_key)).toEqual([visibilityKey(scopeOf("alice"))]);
      expect(await store.get(bob.id)).toBeNull();
      expect((await store.get(alice.id))?.content).toBe(alice.content);
    });
  });

  it("A cannot write rows owned by B", async () => {
    const forged = mem("Forged memory for bob", { scope: scopeOf("bob") });
    await withPgUser("alice", async () => {
      await expect(store.insert(forged, audit(forged.id))).rejects.toThrow(/row-level security/);
    });
    await asPgSystem(async () => expect(await store.get(forged.id)).toBeNull());
  });

  it("system maintenance sees every user's rows", async () => {
    const n = await asPgSystem(async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM memories`))[0]!.n);
    expect(n).toBe(2);
  });

  it("the expiry sweep crosses users (system maintenance) without a request identity", async () => {
    const a = mem("Alice's temporary code", { expiresAt: 5 });
    const b = mem("Bob's temporary code", { scope: scopeOf("bob"), expiresAt: 5 });
    await store.insert(a, audit(a.id));
    await store.insert(b, audit(b.id));
    expect(await store.expireDue(10, "sweeper")).toBe(2);
  });

  it("the session index is covered too", async () => {
    const s = new PgSessionIndex(db);
    const src = await s.sourceId("infinity-files", "/h");
    await s.append(src, { threadId: "tb", rootThreadId: "tb", user: "bob", cwd: null }, [{ ord: 0, messageId: "x", role: "user", text: "bob's heron secret" }], 1, null, 1);
    await withPgUser("alice", async () => {
      expect(await s.search({ user: "bob", query: analyzeQuery("heron"), limit: 5 })).toEqual([]);
      expect(await s.window(src, "tb", 0, 5)).toEqual([]);
    });
    await withPgUser("bob", async () => {
      expect((await s.search({ user: "bob", query: analyzeQuery("heron"), limit: 5 })).map((h) => h.messageId)).toEqual(["x"]);
    });
  });
});

// Many servers, one store: three real `serve` processes started at once on one empty PostgreSQL
// database (they migrate it once, under the advisory lock), RAP invocations spread over them:
// every acknowledged write lands exactly once, every result is delivered exactly once, also when
// the results pile up in the outbox while the receiver is down and all three servers' deliverers
// compete for the rows once it is back.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { factOf, invocation, post, runLoad, startServe, startSink, type ServeProcess, type Sink } from "../../bench/serve-fleet.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";

describePg("many serve processes on one PostgreSQL database", (base) => {
  let dir: string;
  let db: { url: string; drop: () => Promise<void> };
  let servers: ServeProcess[] = [];
  let sink: Sink;
  let client: pg.Client;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "imem-fleet-"));
    db = await createTestDatabase(base(), "fleet");
    sink = await startSink();
    servers = await Promise.all([0, 1, 2].map((i) => startServe({ db: db.url, dir, name: `server-${i}` })));
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  }, 90_000);

  afterAll(async () => {
    await client?.end();
    await Promise.all(servers.map((s) => s.stop()));
    await sink?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const q = async <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []) => (await client.query<T>(sql, params)).rows;

  it("migrated the empty database once although all servers started together", async () => {
    const rows = await q<{ version: number; n: string }>(`SELECT version, count(*) AS n FROM schema_migrations GROUP BY version`);
    expect(rows.length).toBeGreaterThan(4);
    expect(rows.every((r) => Number(r.n) === 1)).toBe(true);
    expect(new Set(servers.map((s) => s.pid)).size).toBe(3);
  });

  it("300 invocations over 3 servers and 12 threads: no write lost or duplicated, each result delivered once", async () => {
    const r = await runLoad({ endpoints: servers.map((s) => s.endpoint), sink, threads: 12, total: 300, tag: "fleet" });
    expect(r.refused).toEqual({});
    expect(r.acked).toBe(300);
    expect(r.lost_results).toBe(0);
    expect(r.duplicated_results).toBe(0);
    for (const id of r.ids) expect(sink.results.get(id)!.text).not.toMatch(/^Error/);
    const facts = await q<{ content: string; n: string }>(
      `SELECT content, count(*) AS n FROM memories WHERE content LIKE 'Load fact fleet-%' AND status = 'active' GROUP BY content`,
    );
    expect(facts).toHaveLength(300);
    expect(facts.every((f) => Number(f.n) === 1)).toBe(true);
    expect(new Set(facts.map((f) => f.content))).toEqual(new Set(r.ids.map(factOf)));
    const journal = await q<{ status: string; n: string }>(`SELECT status, count(*) AS n FROM rap_invocations WHERE call_id LIKE 'fleet-%' GROUP BY status`);
    expect(journal).toEqual([{ status: "done", n: "300" }]);
    const outbox = await q<{ status: string; n: string }>(`SELECT status, count(*) AS n FROM rap_outbox WHERE call_id LIKE 'fleet-%' GROUP BY status`);
    expect(outbox).toEqual([{ status: "delivered", n: "300" }]);
    // the work really was spread: every server journaled some of the calls
    const owners = await q<{ owner: string }>(`SELECT DISTINCT split_part(owner, ':', 1) AS owner FROM rap_invocations WHERE call_id LIKE 'fleet-%'`);
    expect(owners.map((o) => Number(o.owner)).sort()).toEqual(servers.map((s) => s.pid).sort());
  });

  it("results queued while the receiver is down are delivered once each when it returns, by whichever server claims them", async () => {
    sink.refuseWith(503);
    const ids = Array.from({ length: 60 }, (_, i) => `down-${i}`);
    const statuses = await Promise.all(
      ids.map((id, i) => post(servers[i % 3]!.endpoint, invocation("memory_remember", { content: factOf(id), kind: "fact" }, id, sink.url, `down-thread-${i % 6}`))),
    );
    // a refusal names its status, with what the servers logged (0: no HTTP answer at all)
    const refused = statuses.map((s, i) => ({ id: ids[i], s })).filter((x) => x.s !== 200);
    expect(refused, servers.map((s) => s.errorLog()).join("\n")).toEqual([]);
    // every call finished (result enqueued) while the receiver kept refusing
    for (let i = 0; i < 600; i++) {
      const done = await q<{ n: string }>(`SELECT count(*) AS n FROM rap_invocations WHERE call_id LIKE 'down-%' AND status = 'done'`);
      if (Number(done[0]!.n) === 60) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 500));
    expect(sink.refusedCount()).toBeGreaterThan(0);
    const pending = await q<{ n: string }>(`SELECT count(*) AS n FROM rap_outbox WHERE call_id LIKE 'down-%' AND status = 'pending'`);
    expect(Number(pending[0]!.n)).toBe(60);
    sink.refuseWith(null);
    expect(await sink.waitFor(ids, 45_000)).toEqual([]);
    await new Promise((r) => setTimeout(r, 1000));
    expect(ids.filter((id) => sink.results.get(id)!.n !== 1)).toEqual([]);
    const outbox = await q<{ status: string; n: string }>(`SELECT status, count(*) AS n FROM rap_outbox WHERE call_id LIKE 'down-%' GROUP BY status`);
    expect(outbox).toEqual([{ status: "delivered", n: "60" }]);
  }, 90_000);
});

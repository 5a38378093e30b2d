// Many servers, one store, under load: N `serve` processes (default 4) × T concurrent client
// threads (default 50) send I memory_remember invocations (default 10,000) over RAP with a real
// callback listener, first on PostgreSQL, then the same load on SQLite (N processes sharing one
// file). Prints one JSON object: throughput, latency from POST to delivered result (p50/p95),
// lost and duplicated writes (counted in the database afterwards) and results.
//
//   node dist/bench/pg-load.js [--servers 4] [--threads 50] [--invocations 10000]
//        [--engines postgres,sqlite] [--pg-url postgres://…]
// Without --pg-url (or INFINITY_MEMORY_PG_URL) a throwaway PostgreSQL 15 cluster is started with
// initdb/pg_ctl (INFINITY_MEMORY_PG_BIN, default /usr/lib/postgresql/15/bin) and removed after.
import Database from "better-sqlite3";
import { execFileSync } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { factOf, runLoad, startServe, startSink, type LoadResult, type ServeProcess } from "./serve-fleet.js";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i]!;
  if (a.startsWith("--")) args.set(a.slice(2), process.argv[i + 1]?.startsWith("--") ? "1" : (process.argv[++i] ?? "1"));
}
const SERVERS = Number(args.get("servers") ?? 4);
const THREADS = Number(args.get("threads") ?? 50);
const INVOCATIONS = Number(args.get("invocations") ?? 10_000);
const ENGINES = (args.get("engines") ?? "postgres,sqlite").split(",");
const BIN = process.env.INFINITY_MEMORY_PG_BIN ?? "/usr/lib/postgresql/15/bin";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A throwaway cluster (as the `postgres` user when we are root: initdb refuses root). */
async function startCluster(): Promise<{ url: string; settings: string[]; stop: () => void }> {
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "imem-pgload-"));
  const run = (cmd: string, a: string[]) =>
    root ? execFileSync("runuser", ["-u", "postgres", "--", join(BIN, cmd), ...a], { stdio: "pipe" }) : execFileSync(join(BIN, cmd), a, { stdio: "pipe" });
  if (root) chownSync(dir, Number(execFileSync("id", ["-u", "postgres"]).toString()), Number(execFileSync("id", ["-g", "postgres"]).toString()));
  const data = join(dir, "data");
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"]);
  const port = await freePort();
  // synchronous_commit=off: a commit survives a server process crash but not an OS crash, the same
  // promise as the SQLite default (WAL, synchronous=NORMAL), so the two figures compare.
  const settings = ["listen_addresses=127.0.0.1", "max_connections=400", "synchronous_commit=off", "shared_buffers=128MB"];
  run("pg_ctl", ["-D", data, "-o", [`-p ${port}`, `-k ${dir}`, ...settings.map((s) => `-c ${s}`)].join(" "), "-l", join(dir, "server.log"), "-w", "-t", "60", "start"]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    settings,
    stop: () => {
      try {
        run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function newPgDatabase(base: string): Promise<string> {
  const name = `pgload_${Date.now().toString(36)}`;
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

interface WriteCheck {
  /** acknowledged invocations whose fact is not in the database */
  lost_writes: number;
  /** facts stored more than once */
  duplicated_writes: number;
  outbox: Record<string, number>;
}

async function checkPg(url: string, r: LoadResult): Promise<WriteCheck> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const rows = (await c.query<{ content: string; n: string }>(`SELECT content, count(*) AS n FROM memories WHERE content LIKE 'Load fact %' GROUP BY content`)).rows;
    const outbox = (await c.query<{ status: string; n: string }>(`SELECT status, count(*) AS n FROM rap_outbox GROUP BY status`)).rows;
    return writeCheck(new Map(rows.map((x) => [x.content, Number(x.n)])), r, Object.fromEntries(outbox.map((o) => [o.status, Number(o.n)])));
  } finally {
    await c.end();
  }
}

function checkSqlite(file: string, r: LoadResult): WriteCheck {
  const d = new Database(file, { readonly: true });
  try {
    const rows = d.prepare(`SELECT content, count(*) AS n FROM memories WHERE content LIKE 'Load fact %' GROUP BY content`).all() as { content: string; n: number }[];
    const outbox = d.prepare(`SELECT status, count(*) AS n FROM rap_outbox GROUP BY status`).all() as { status: string; n: number }[];
    return writeCheck(new Map(rows.map((x) => [x.content, x.n])), r, Object.fromEntries(outbox.map((o) => [o.status, o.n])));
  } finally {
    d.close();
  }
}

function writeCheck(stored: Map<string, number>, r: LoadResult, outbox: Record<string, number>): WriteCheck {
  let lost = 0;
  for (const id of r.ackedIds) if (!stored.has(factOf(id))) lost++;
  return { lost_writes: lost, duplicated_writes: [...stored.values()].filter((n) => n > 1).length, outbox };
}

async function runEngine(engine: string, db: string, dir: string): Promise<Record<string, unknown>> {
  const sink = await startSink();
  const servers: ServeProcess[] = [];
  try {
    // the first server migrates a new database; the others then start together
    servers.push(await startServe({ db, dir, name: `${engine}-0` }));
    servers.push(...(await Promise.all(Array.from({ length: SERVERS - 1 }, (_, i) => startServe({ db, dir, name: `${engine}-${i + 1}` })))));
    const r = await runLoad({ endpoints: servers.map((s) => s.endpoint), sink, threads: THREADS, total: INVOCATIONS, tag: engine, resultTimeoutMs: 120_000 });
    await Promise.all(servers.splice(0).map((s) => s.stop()));
    const check = engine === "postgres" ? await checkPg(db, r) : checkSqlite(db, r);
    const { ids: _ids, ackedIds: _acked, ...result } = r;
    return { ...result, ...check };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await sink.close();
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "imem-pgload-run-"));
  const out: Record<string, unknown> = {
    bench: "pg-load",
    servers: SERVERS,
    threads: THREADS,
    invocations: INVOCATIONS,
    operation: "memory_remember (one unique fact per invocation)",
    cpus: cpus().length,
  };
  let cluster: Awaited<ReturnType<typeof startCluster>> | null = null;
  try {
    if (ENGINES.includes("postgres")) {
      const given = args.get("pg-url") ?? process.env.INFINITY_MEMORY_PG_URL;
      if (!given) cluster = await startCluster();
      const url = await newPgDatabase(given ?? cluster!.url);
      out.postgres = { ...(await runEngine("postgres", url, dir)), cluster: cluster ? { version: 15, settings: cluster.settings } : "external" };
    }
    if (ENGINES.includes("sqlite")) {
      out.sqlite = await runEngine("sqlite", join(dir, "load.db"), dir);
    }
  } finally {
    cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`pg-load: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});

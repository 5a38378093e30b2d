// Memory store on PostgreSQL (postgres and dsql profiles) next to SQLite, at the store level:
// bulk insert throughput and search latency (p50/p95) over the same synthetic corpus, with the
// scope predicate of one user among several: on the fresh tables, and on PostgreSQL again after
// VACUUM (ANALYZE); then list pages and review lists (pending memories) of a thread's view and of a
// person's. Prints one JSON object on the last stdout line.
//
//   node dist/bench/pg-memory.js [--size 5000] [--queries 300] [--users 4] [--profiles postgres,dsql] [--pg-url postgres://…]
// Without --pg-url (or INFINITY_MEMORY_PG_URL) a throwaway PostgreSQL 15 cluster is started (as
// the tests do) and removed afterwards.
import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { newId } from "../core/ids.js";
import type { NewMemory, RecordScope } from "../core/memory/record.js";
import { visibilityKey } from "../core/memory/scope.js";
import { analyzeQuery } from "../core/retrieval/analyze.js";
import { PgMemoryStore } from "../stores/postgres/memory-store.js";
import { MEMORY_MIGRATIONS } from "../stores/postgres/schema-memory.js";
import { openPg } from "../stores/postgres/setup.js";
import { openDatabase } from "../stores/sqlite/database.js";
import { SqliteMemoryStore } from "../stores/sqlite/memory-store.js";
import type { MemoryStore } from "../stores/traits.js";
import { startPgCluster } from "../test/helpers/pg-cluster.js";
import { memoryText, queryText, rng } from "./corpus.js";
import { summary } from "./stats.js";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i]!;
  if (a.startsWith("--")) args.set(a.slice(2), process.argv[i + 1]?.startsWith("--") ? "1" : (process.argv[++i] ?? "1"));
}
const SIZE = Number(args.get("size") ?? 5000);
const QUERIES = Number(args.get("queries") ?? 300);
const USERS = Number(args.get("users") ?? 4);
const PROFILES = (args.get("profiles") ?? "postgres,dsql").split(",").map((p) => {
  if (p !== "postgres" && p !== "dsql") throw new Error(`--profiles: "${p}" is not a profile; use postgres and/or dsql`);
  return p;
});
const BATCH = 400;

const scopeOf = (u: number): RecordScope => ({ level: "user", user: `user-${u}`, project: null, session: null, thread: null });

function corpus(): NewMemory[] {
  const r = rng(7);
  const T0 = Date.UTC(2026, 0, 1);
  return Array.from({ length: SIZE }, (_, i) => {
    const at = T0 + i * 1000;
    const id = newId("mem", at);
    const content = memoryText(i, r);
    return {
      id,
      lineageId: id,
      scope: scopeOf(i % USERS),
      kind: "fact",
      content,
      tags: [],
      trust: "user_stated",
      confidence: 0.9,
      status: "active",
      flags: [],
      version: 1,
      supersedes: null,
      validFrom: null,
      validTo: null,
      createdAt: at,
      expiresAt: null,
      contentHash: createHash("sha256").update(content).digest("hex"),
      source: { threadId: `t-${i % USERS}-${Math.floor(i / 20)}`, messageIds: [], toolCallId: `c${i}`, actor: "model", at },
    } satisfies NewMemory;
  });
}

async function searchLatency(store: MemoryStore) {
  const r = rng(11);
  const lat: number[] = [];
  let hits = 0;
  for (let i = 0; i < QUERIES; i++) {
    const text = queryText(r);
    const s = performance.now();
    const res = await store.search({
      visibility: { keys: [visibilityKey(scopeOf(0))] },
      query: analyzeQuery(text),
      text,
      statuses: ["active"],
      includeFlagged: false,
      now: Date.UTC(2027, 0, 1),
      limit: 10,
    });
    lat.push(performance.now() - s);
    hits += res.length;
  }
  return { search: summary(lat), meanHits: Math.round((hits / QUERIES) * 10) / 10 };
}

const LIST_PAGES = 5;
const LIST_WALKS = 10;

/**
 * memory_list and the review page at the store: the first LIST_PAGES pages of 20, newest first, of
 * a thread's view (user-0's person-wide scope and two scopes of a session and thread, as a thread
 * sees them) and of user-0's whole view, each counting its total (up to 10,000); then both views'
 * review lists (pending memories, oldest first: the corpus has none, which must not take a read of
 * the whole view to find).
 */
async function listLatency(store: MemoryStore) {
  // what memory_list asks (MemoryService.list): current memories, flagged ones included
  const base = { includeFlagged: true, now: Date.UTC(2027, 0, 1) };
  const u = scopeOf(0);
  const views = {
    thread: { keys: [visibilityKey(u), visibilityKey({ ...u, level: "session", session: "s1" }), visibilityKey({ ...u, level: "thread", session: "s1", thread: "t1" })] },
    person: { owner: u.user },
  };
  const out: Record<string, unknown> = {};
  for (const [name, visibility] of Object.entries(views)) {
    const pages: number[] = [];
    const review: number[] = [];
    for (let w = 0; w < LIST_WALKS; w++) {
      let cursor: string | undefined;
      for (let p = 0; p < LIST_PAGES; p++) {
        const t = performance.now();
        const page = await store.list({ ...base, visibility, statuses: ["active", "pending"], limit: 20, order: "newest", cursor });
        pages.push(performance.now() - t);
        if (!page.nextCursor) break;
        cursor = page.nextCursor;
      }
      const t = performance.now();
      await store.list({ ...base, visibility, statuses: ["pending"], limit: 50, order: "oldest" });
      review.push(performance.now() - t);
    }
    out[`${name}_view_ms`] = summary(pages);
    out[`${name}_review_ms`] = summary(review);
  }
  return out;
}

/**
 * Insert throughput, then search latency on the freshly written table and (PostgreSQL, `settle`)
 * again once it is vacuumed and analysed, the state autovacuum brings a running server to.
 */
async function measure(store: MemoryStore, recs: NewMemory[], settle?: () => Promise<void>) {
  const t0 = performance.now();
  for (let i = 0; i < recs.length; i += BATCH) {
    await store.insertMany(recs.slice(i, i + BATCH).map((rec) => ({ rec, audit: { at: rec.createdAt, actor: "bench", action: "create", targetKind: "memory", targetId: rec.id, detail: {} } })));
  }
  const insertMs = performance.now() - t0;
  const fresh = await searchLatency(store);
  const settled = settle ? (await settle(), await searchLatency(store)) : null;
  return {
    insertPerSec: Math.round((recs.length / insertMs) * 1000),
    ...fresh,
    ...(settled ? { after_vacuum_analyze: settled.search } : {}),
    list: await listLatency(store),
  };
}

async function main(): Promise<void> {
  let url = args.get("pg-url") ?? process.env.INFINITY_MEMORY_PG_URL ?? null;
  let stop: (() => void) | undefined;
  if (!url) {
    const c = await startPgCluster();
    if ("skip" in c) throw new Error(`no PostgreSQL: ${c.skip}`);
    url = c.url;
    stop = c.stop;
  }
  const recs = corpus();
  const out: Record<string, unknown> = { bench: "pg-memory", size: SIZE, users: USERS, queries: QUERIES };
  try {
    const sqlite = new SqliteMemoryStore(openDatabase(":memory:"));
    out.sqlite = await measure(sqlite, recs);
    sqlite.close();
    for (const profile of PROFILES) {
      const name = `bench_${profile}_${process.pid}`;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${name}`);
      await admin.query(`CREATE DATABASE ${name}`);
      const u = new URL(url);
      u.pathname = `/${name}`;
      const db = await openPg(u.toString(), { profile, max: 4, migrations: MEMORY_MIGRATIONS });
      try {
        out[`postgres_${profile}`] = await measure(new PgMemoryStore(db), recs, async () => {
          await db.pool.query(`VACUUM (ANALYZE)`);
        });
      } finally {
        await db.close();
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      }
    }
  } finally {
    stop?.();
  }
  console.log(JSON.stringify(out));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

// `npm run bench`: latency and throughput of the memory toolset on real SQLite files and a real
// RAP server. Prints one JSON object (last stdout line) and writes it to bench/results/.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { spawn, spawnSync } from "node:child_process";
import http from "node:http";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fixedClock } from "../core/clock.js";
import { defaultConfig } from "../core/config.js";
import type { RequestScope } from "../core/memory/scope.js";
import { openMemory, type MemoryContext } from "../cli/context.js";
import { memoryText, queryText, rng } from "./corpus.js";
import { seedMemories } from "./seed.js";
import { summary } from "./stats.js";
import { makeSessionSearch, openSources } from "../cli/sessions.js";
import { SqliteConversationStore } from "../stores/sqlite/conversation-store.js";
import { SqliteStateStore } from "../stores/sqlite/state-store.js";
import type { InfinityMessage } from "../stores/traits.js";
import { MemoryPrefixBuilder } from "../core/retrieval/prefix.js";
import { loadTokenCounter } from "../core/retrieval/tokens.js";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i]!;
  if (a.startsWith("--")) args.set(a.slice(2), process.argv[i + 1]?.startsWith("--") ? "1" : (process.argv[++i] ?? "1"));
}
const SIZES = (args.get("sizes") ?? "10000,100000").split(",").map(Number);
const QUERIES = Number(args.get("queries") ?? 500);
const USERS = Number(args.get("users") ?? 1);
const SESSION_SIZES = (args.get("session-sizes") ?? "100000").split(",").map(Number);

function scopeFor(u: number, i: number): RequestScope {
  const session = `s-${u}-${i % 50}`;
  return { user: `user-${u}`, project: `/work/project-${u % 3}`, session, thread: session, ancestors: [] };
}

/** Bulk-load `n` memories (policy-free fast path, one commit per batch). */
async function load(ctx: MemoryContext, n: number, seed: number): Promise<number> {
  const r = rng(seed);
  const t0 = performance.now();
  await seedMemories(ctx, n, (i) => {
    const level = i % 5 === 0 ? "project" : "user";
    return { scope: scopeFor(i % USERS, i), level, kind: level === "project" ? "project" : "fact", content: memoryText(i, r), at: 1_700_000_000_000 + i };
  });
  return performance.now() - t0;
}

async function searchBench(ctx: MemoryContext, n: number) {
  const r = rng(99);
  const lat: number[] = [];
  let results = 0;
  for (let q = 0; q < QUERIES; q++) {
    const req = scopeFor(q % USERS, q);
    const t = performance.now();
    const hits = await ctx.service.search({ thread: req }, { query: queryText(r), limit: 10 });
    lat.push(performance.now() - t);
    results += hits.length;
  }
  return { records: n, queries: QUERIES, mean_results: Math.round((results / QUERIES) * 10) / 10, latency_ms: summary(lat) };
}

async function prefixBench(ctx: MemoryContext, n: number) {
  const builder = new MemoryPrefixBuilder({
    service: ctx.service,
    toggles: ctx.toggles,
    edgesOf: (id) => ctx.store.edgesOf(id),
    tokens: await loadTokenCounter(ctx.config.prefix.tokenizer),
    config: ctx.config,
  });
  const r = rng(123);
  const lat: number[] = [];
  let items = 0;
  let tokens = 0;
  for (let q = 0; q < QUERIES; q++) {
    const scope = scopeFor(q % USERS, q);
    const t = performance.now();
    const p = await builder.build({ scope, task: queryText(r) });
    lat.push(performance.now() - t);
    items += p.items.length;
    tokens += p.tokensUsed;
  }
  return { records: n, builds: QUERIES, mean_items: Math.round((items / QUERIES) * 10) / 10, mean_tokens: Math.round(tokens / QUERIES), latency_ms: summary(lat) };
}

/** Session search at `n` messages: index build rate, then query latency through SessionSearch. */
async function sessionBench(dir: string, n: number) {
  const ctx = openMemory({ dbPath: join(dir, "sessions.db"), config: defaultConfig({ localUser: "bench" }), env: {} });
  const conv = new SqliteConversationStore(ctx.db);
  const state = new SqliteStateStore(ctx.db);
  const r = rng(5);
  const PER_THREAD = 100;
  const threads = Math.ceil(n / PER_THREAD);
  for (let t = 0; t < threads; t++) {
    const id = `session-${t}`;
    await conv.ensureRootThread(id);
    await state.setMetadata(id, { user_id: `user-${t % 10}` });
    const msgs: [InfinityMessage, string][] = [];
    for (let i = 0; i < PER_THREAD; i++) {
      const text = memoryText(t * PER_THREAD + i, r);
      msgs.push([i % 2 === 0 ? { kind: "user", content: { type: "text", text } } : { kind: "assistant", content: { text } }, `${id}-m${i}`]);
    }
    await conv.appendMessages(id, msgs);
  }
  const source = openSources([`sqlite:${ctx.dbPath}`], ctx.db, ctx.dbPath);
  const search = makeSessionSearch(ctx.db, source.sources, ctx.clock, "bench");
  const t0 = performance.now();
  await search.refresh(true);
  const indexMs = performance.now() - t0;
  const t1 = performance.now();
  await search.refresh(true);
  const noopRefreshMs = performance.now() - t1;
  const q = rng(77);
  const lat: number[] = [];
  let hits = 0;
  for (let i = 0; i < QUERIES; i++) {
    const t = performance.now();
    const m = await search.search(`user-${i % 10}`, { query: queryText(q), limit: 5, window: 1 });
    lat.push(performance.now() - t);
    hits += m.length;
  }
  source.close();
  ctx.close();
  return {
    messages: threads * PER_THREAD,
    threads,
    index_messages_per_second: Math.round(((threads * PER_THREAD) / indexMs) * 1000),
    unchanged_refresh_ms: Math.round(noopRefreshMs * 10) / 10,
    queries: QUERIES,
    mean_matches: Math.round((hits / QUERIES) * 10) / 10,
    latency_ms: summary(lat),
  };
}

/** A benchmark that is its own script (proxy overhead, learning), folded into this report. */
function scriptBench(name: string, extra: string[] = [], timeoutMs = 300_000): unknown {
  const script = join(dirname(fileURLToPath(import.meta.url)), name);
  const r = spawnSync(process.execPath, [script, ...extra], { encoding: "utf8", timeout: timeoutMs });
  const last = r.stdout.trim().split("\n").at(-1) ?? "";
  try {
    return JSON.parse(last) as unknown;
  } catch {
    // some scripts print one pretty-printed object
  }
  try {
    return JSON.parse(r.stdout.slice(r.stdout.indexOf("{"))) as unknown;
  } catch {
    return { error: `${name} failed (${r.status}): ${r.stderr.slice(-300)}` };
  }
}

async function rememberBench(ctx: MemoryContext, count: number) {
  const r = rng(7);
  const t0 = performance.now();
  const lat: number[] = [];
  for (let i = 0; i < count; i++) {
    const req = scopeFor(i % USERS, i);
    const t = performance.now();
    await ctx.service.remember(req, { content: `${memoryText(1_000_000 + i, r)} fresh` }, { actor: "model", threadId: req.thread, toolCallId: `rb-${i}` });
    lat.push(performance.now() - t);
  }
  const ms = performance.now() - t0;
  return { memories: count, per_second: Math.round((count / ms) * 1000), latency_ms: summary(lat) };
}

function post(port: number, path: string, body: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, path, method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The server as the daemon runs it (a command-server child process); load from this process. */
async function startChildServer(dir: string): Promise<{ port: number; log: string; stop(): Promise<void> }> {
  const cwd = join(dir, "proj", ".infinity");
  mkdirSync(cwd, { recursive: true });
  const main = join(dirname(fileURLToPath(import.meta.url)), "..", "cli", "main.js");
  const child = spawn(process.execPath, [main, "serve", "--toolset", "memory", "--db", join(dir, "ack.db")], {
    cwd,
    env: { ...process.env, RAP_EMBEDDED: "1", INFINITY_MEMORY_USER: "bench" },
    stdio: ["ignore", "pipe", "ignore"],
  });
  const exited = new Promise<void>((r) => child.on("exit", () => r()));
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once("line", (l) => {
      rl.close();
      resolve(l);
    });
    child.once("exit", (c) => reject(new Error(`server exited with ${c}`)));
  });
  return {
    log: join(cwd, "infinity-memory.log"),
    port: (JSON.parse(line) as { port: number }).port,
    stop: async () => {
      child.kill("SIGINT");
      await exited;
    },
  };
}

async function ackBench(dir: string) {
  let delivered = 0;
  let expected = 0;
  let allDone: (() => void) | null = null;
  const listener = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.end("OK");
      delivered++;
      if (delivered >= expected && allDone) allDone();
    });
  });
  await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
  const cbPort = (listener.address() as { port: number }).port;
  const server = await startChildServer(dir);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const acks: number[] = [];
  const completions: number[] = [];
  const CONCURRENCY = 200;
  const ROUNDS = 5;
  const r = rng(3);
  const t0 = performance.now();
  for (let round = 0; round < ROUNDS; round++) {
    expected += CONCURRENCY;
    const done = new Promise<void>((res) => (allDone = res));
    const start = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, i) => {
        const remember = i % 2 === 0;
        const inv = {
          operation: remember ? "memory_remember" : "memory_search",
          arguments: remember ? { content: `${memoryText(round * 1000 + i, r)} ack` } : { query: queryText(r) },
          id: `tooluse_${round}_${i}`,
          call_id: null,
          callback_url: `http://127.0.0.1:${cbPort}`,
          group_id: `thread-${i % 20}`,
          thread_ancestors: null,
        };
        const t = performance.now();
        const status = await post(server.port, "/invoke", JSON.stringify(inv), agent);
        acks.push(performance.now() - t);
        if (status !== 200) throw new Error(`ack status ${status}`);
      }),
    );
    await done;
    completions.push(performance.now() - start);
  }
  const totalMs = performance.now() - t0;

  // Acks while 200 calls are in flight: 200 forget-by-query calls wait on the person (their
  // user_choice is never answered), then invocations arrive one at a time, as one thread's steps do.
  for (let i = 0; i < CONCURRENCY; i++) {
    await post(
      server.port,
      "/invoke",
      JSON.stringify({ operation: "memory_forget", arguments: { query: queryText(r) }, id: `tooluse_wait_${i}`, call_id: null, callback_url: `http://127.0.0.1:${cbPort}`, group_id: `waiting-${i}`, thread_ancestors: null }),
      agent,
    );
  }
  const inFlightAcks: number[] = [];
  for (let i = 0; i < 300; i++) {
    const body = JSON.stringify({ operation: "memory_search", arguments: { query: queryText(r) }, id: `tooluse_seq_${i}`, call_id: null, callback_url: `http://127.0.0.1:${cbPort}`, group_id: `seq-${i % 10}`, thread_ancestors: null });
    const t = performance.now();
    await post(server.port, "/invoke", body, agent);
    inFlightAcks.push(performance.now() - t);
  }
  await server.stop();
  agent.destroy();
  listener.close();
  // The server logs how long each ack took on its side (request headers → 200).
  const serverAcks = readFileSync(server.log, "utf8")
    .split("\n")
    .filter((l) => l.includes('"ack_ms"'))
    .map((l) => (JSON.parse(l) as { ack_ms: number }).ack_ms);
  return {
    concurrency: CONCURRENCY,
    invocations: CONCURRENCY * ROUNDS,
    ack_latency_ms: summary(acks),
    server_side_ack_ms: summary(serverAcks),
    round_to_all_results_ms: summary(completions),
    sequential_ack_with_200_in_flight_ms: summary(inFlightAcks),
    invocations_per_second: Math.round(((CONCURRENCY * ROUNDS) / totalMs) * 1000),
  };
}

async function main() {
  const root = mkdtempSync(join(tmpdir(), "imem-bench-"));
  const out: Record<string, unknown> = { machine: { node: process.version, cpus: (await import("node:os")).cpus().length }, users: USERS };
  try {
    const search: unknown[] = [];
    const prefix: unknown[] = [];
    for (const n of SIZES) {
      const dir = join(root, `s${n}`);
      mkdirSync(dir);
      const ctx = openMemory({ dbPath: join(dir, "memory.db"), config: defaultConfig({ localUser: "bench" }), clock: fixedClock(1_800_000_000_000), env: {} });
      const loadMs = await load(ctx, n, n);
      const s = await searchBench(ctx, n);
      prefix.push(await prefixBench(ctx, n));
      search.push({ ...s, bulk_load_per_second: Math.round((n / loadMs) * 1000), db_bytes: statSync(join(dir, "memory.db")).size });
      if (n === SIZES[0]) out.remember = await rememberBench(ctx, 2000);
      ctx.close();
      process.stderr.write(`search at ${n}: ${JSON.stringify(s.latency_ms)}\n`);
    }
    out.search = search;
    out.prefix = prefix;
    out.ack = await ackBench(root);
    const sessions: unknown[] = [];
    for (const n of SESSION_SIZES) {
      const dir = join(root, `sessions-${n}`);
      mkdirSync(dir);
      sessions.push(await sessionBench(dir, n));
      process.stderr.write(`session search at ${n} messages done\n`);
    }
    out.session_search = sessions;
    out.proxy = scriptBench("proxy-overhead.js");
    out.learning = scriptBench("learning.js");
    out.skills = scriptBench("skills.js");
    // `--long` (or `--soak-minutes N`, at most 10) runs the soak for 10 minutes instead of 1.
    const soakMinutes = Math.min(10, Number(args.get("soak-minutes") ?? (args.has("long") ? 10 : 1)) || 1);
    out.soak = scriptBench("soak.js", ["--minutes", String(soakMinutes)], (soakMinutes * 60 + 240) * 1000);
    out.evolution = scriptBench("evolution/run.js");
    // A bulk import beside a command server the agent keeps remembering through (bench/import-beside-server.ts).
    out.import_beside_server = scriptBench("import-beside-server.js");
    // `--pg-load`: 4 serve processes × 50 threads, 10,000 invocations on PostgreSQL and on SQLite
    // (bench/pg-load.ts; starts a throwaway cluster unless INFINITY_MEMORY_PG_URL is set)
    if (args.has("pg-load")) out.pg_load = scriptBench("pg-load.js", [], 3_600_000);
    // Synthetic corpus at 10k/100k/1M memories (bench/scale.ts): batched ingest, search by query
    // kind, prefix builds, index size, RSS; `--scale-sizes` narrows it.
    out.scale = scriptBench("scale.js", ["--sizes", args.get("scale-sizes") ?? "10000,100000,1000000"], 1_800_000);
    out.rss_mb = Math.round(process.memoryUsage().rss / 1e6);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const line = JSON.stringify(out);
  mkdirSync("bench/results", { recursive: true });
  writeFileSync(join("bench/results", `bench-${new Date().toISOString().replace(/[:.]/g, "-")}.json`), `${line}\n`);
  process.stdout.write(`${line}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = 1;
});

// `node dist/bench/proxy-overhead.js [--calls 300] [--memories 10000]`: what the provider proxy
// adds to a model call. The scripted provider answers at once, so the difference between a call
// through the proxy and a direct call is the proxy's own cost. Two runs: a fixed prefix builder
// (relay, thread resolution, task text and splice only) and the memory builder over a seeded
// database, whose build time the proxy logs per call and is reported apart. Prints one JSON line.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { openMemory } from "../cli/context.js";
import { defaultConfig } from "../core/config.js";
import { newId } from "../core/ids.js";
import type { NewMemory } from "../core/memory/record.js";
import { recordScopeFor, type RequestScope } from "../core/memory/scope.js";
import { contentHash } from "../core/memory/write-policy.js";
import { seedMemories } from "./seed.js";
import { summary } from "./stats.js";
import { memoryText, queryText, rng } from "./corpus.js";

const ROOT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const CLI = join(ROOT_DIR, "dist/cli/main.js");
const FIXTURES = join(ROOT_DIR, "test/fixtures/providers");
const SCRIPTED = join(FIXTURES, "scripted-provider.mjs");
const FIXED_BUILDER = join(FIXTURES, "fixed-builder.mjs");
const HOME = join(FIXTURES, "infinity-home");
const ROOT = "7c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e";
const GRAND = "9e3f4a5b-6c7d-4e8f-a091-b23c4d5e6f70";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i]!;
  if (a.startsWith("--")) args.set(a.slice(2), process.argv[++i] ?? "");
}
const CALLS = Number(args.get("calls") ?? 300);
const MEMORIES = Number(args.get("memories") ?? 10_000);
const WARMUP = 30;

function stats(xs: number[]) {
  const { p50, p95 } = summary(xs);
  return { p50, p95 };
}

interface Proc {
  child: ChildProcess;
  socketPath: string;
}

function start(argv: string[], env: Record<string, string>, stderr: "inherit" | "ignore" = "inherit"): Promise<Proc> {
  const child = spawn(process.execPath, argv, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", stderr] });
  return new Promise((res, rej) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once("line", (socketPath) => res({ child, socketPath }));
    child.once("exit", (code) => rej(new Error(`${argv.join(" ")} exited with ${code}`)));
  });
}

async function stop(p: Proc): Promise<void> {
  if (p.child.exitCode !== null) return;
  const exited = new Promise((r) => p.child.once("exit", r));
  p.child.kill("SIGTERM");
  await exited;
}

/** one provider call: connect, send the line, read until the server closes */
function timedCall(socketPath: string, line: string): Promise<number> {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const s = createConnection(socketPath);
    let tail = "";
    s.on("data", (d: Buffer) => (tail = (tail + d.toString("utf8")).slice(-32)));
    s.on("close", () => (tail.endsWith('"StreamEnd"\n') ? res(performance.now() - t0) : rej(new Error(`incomplete response: ${tail}`))));
    s.on("error", rej);
    s.write(line);
  });
}

/** a request shaped like a mid-session model call: daemon preamble, 30 messages of history */
function requestLine(query: string): string {
  const preamble =
    "You are Infinity, a coding agent that works in threads.\n".repeat(20) +
    `\n\nYour current thread ID is \`${GRAND}\`. The root thread ID is \`${ROOT}\`.` +
    '\n\nThe user\'s current working directory is: "/work/projects/alpha"';
  const history: unknown[] = [];
  for (let i = 0; i < 14; i++) {
    history.push({ role: "user", content: [{ type: "text", text: `step ${i}: ${"context ".repeat(40)}` }] });
    history.push({ role: "assistant", id: null, content: [{ text: `done ${i}: ${"result ".repeat(40)}` }] });
  }
  history.push({ role: "user", content: [{ type: "text", text: query }] });
  const request = { model: null, preamble, chat_history: history, documents: [], tools: [], temperature: null, max_tokens: null, tool_choice: null, additional_params: null, output_schema: null };
  return `${JSON.stringify({ InvokeModel: { model_id: "scripted-1", request } })}\n`;
}

async function seed(dbPath: string, n: number): Promise<void> {
  const ctx = openMemory({ dbPath, config: defaultConfig({ localUser: "local" }), env: {} });
  const r = rng(7);
  const req: RequestScope = { user: "dana", project: "/work/projects/alpha", session: ROOT, thread: ROOT, ancestors: [] };
  await seedMemories(ctx, n, (i) => {
    const level = i % 5 === 0 ? "project" : "user";
    return { scope: req, level, kind: level === "project" ? "project" : "fact", content: memoryText(i, r), at: 1_700_000_000_000 + i };
  });
  ctx.close();
}

/** interleaved direct/proxied calls; returns both latency series */
async function measure(direct: Proc, proxy: Proc, lines: string[]) {
  for (let i = 0; i < WARMUP; i++) {
    await timedCall(direct.socketPath, lines[i % lines.length]!);
    await timedCall(proxy.socketPath, lines[i % lines.length]!);
  }
  const d: number[] = [];
  const p: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const line = lines[i % lines.length]!;
    d.push(await timedCall(direct.socketPath, line));
    p.push(await timedCall(proxy.socketPath, line));
  }
  return { d, p };
}

/** per-call timings the proxy logged, in call order (the last `n` model calls) */
function loggedTimings(logFile: string, n: number): { resolveMs: number; buildMs: number; prefixMs: number; prefix: string }[] {
  return readFileSync(logFile, "utf8")
    .split("\n")
    .filter((l) => l.includes('"model call relayed"'))
    .map((l) => JSON.parse(l) as { resolveMs: number; buildMs: number; prefixMs: number; prefix: string })
    .slice(-n);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "imem-proxy-bench-"));
  const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "local" };
  const procs: Proc[] = [];
  try {
    const direct = await start([SCRIPTED], {}, "ignore");
    procs.push(direct);
    const r = rng(11);
    const queries = Array.from({ length: 50 }, () => queryText(r));
    const lines = queries.map(requestLine);

    // 1. fixed builder: the proxy's own work
    const fixedLog = join(dir, "fixed.log");
    const fixed = await start(
      [CLI, "provider-proxy", "--infinity-home", HOME, "--db", join(dir, "fixed.db"), "--log", fixedLog, "--builder-module", FIXED_BUILDER, "--upstream", process.execPath, SCRIPTED],
      env,
    );
    procs.push(fixed);
    const a = await measure(direct, fixed, lines);
    await stop(fixed);
    const fixedTimings = loggedTimings(fixedLog, CALLS);

    // 2. the memory builder over a seeded database
    const dbPath = join(dir, "memory.db");
    await seed(dbPath, MEMORIES);
    const memLog = join(dir, "memory.log");
    const mem = await start(
      [CLI, "provider-proxy", "--infinity-home", HOME, "--db", dbPath, "--log", memLog, "--deadline-ms", "5000", "--upstream", process.execPath, SCRIPTED],
      env,
    );
    procs.push(mem);
    const b = await measure(direct, mem, lines);
    await stop(mem);
    const timings = loggedTimings(memLog, CALLS);
    const build = timings.map((t) => t.buildMs);
    const prefixTotal = timings.map((t) => t.prefixMs);

    const pairDiff = (d: number[], p: number[], minus: number[] = []) => p.map((x, i) => x - d[i]! - (minus[i] ?? 0));
    console.log(
      JSON.stringify({
        bench: "provider-proxy-overhead",
        calls: CALLS,
        request_bytes: Buffer.byteLength(lines[0]!),
        direct_ms: stats(a.d),
        fixed_builder: {
          proxied_ms: stats(a.p),
          overhead_ms: stats(pairDiff(a.d, a.p)),
          resolve_ms: stats(fixedTimings.map((t) => t.resolveMs)),
          prefix_step_ms: stats(fixedTimings.map((t) => t.prefixMs)),
        },
        memory_builder: {
          memories: MEMORIES,
          prefix_applied: timings.filter((t) => t.prefix === "applied").length,
          proxied_ms: stats(b.p),
          resolve_ms: stats(timings.map((t) => t.resolveMs)),
          build_ms: stats(build),
          prefix_step_ms: stats(prefixTotal),
          overhead_excluding_build_ms: stats(pairDiff(b.d, b.p, build)),
        },
      }),
    );
  } finally {
    for (const p of procs.reverse()) await stop(p);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});

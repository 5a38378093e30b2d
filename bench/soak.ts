// Load and soak: N concurrent threads (default 200) drive a real `serve --toolset memory` child
// process over RAP for a bounded time, each with the daemon's exact invocation JSON and a real
// callback listener. Prints one JSON object: throughput, p50/p95/p99 latency (POST → tool_result),
// the server's RSS over time and its drift, throughput and server CPU per call in each third of the
// run (by_third: a cost per call that grows with the store shows there), and lost writes
// (acknowledged calls without a result, delivered memories missing from the database: both must be 0).
//
//   node dist/bench/soak.js [--minutes 1] [--threads 200] [--sample-seconds 5]
//   npm run bench -- --long          (the same soak for 10 minutes inside the full bench)
//   npm run bench -- --soak-minutes N
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";

function arg(name: string, fallback: number): number {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  const v = i >= 0 ? args[i + 1] : args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
  const n = v === undefined ? fallback : Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
  return n;
}

const MINUTES = Math.min(arg("minutes", 1), 10);
const THREADS = arg("threads", 200);
const SAMPLE_MS = arg("sample-seconds", 5) * 1000;
const RSS_FLAT_PERCENT = 10;
const CLI = resolve(dirname(fileURLToPath(import.meta.url)), "../cli/main.js");

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** CPU time the process (all its threads) has used, in ms. */
function cpuMsOf(pid: number): number {
  // fields after the command name: utime and stime are the 12th and 13th, in clock ticks (100 a second)
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const r1 = (x: number) => Math.round(x * 10) / 10;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "imem-soak-"));
  const cwd = join(dir, "proj", ".infinity");
  mkdirSync(cwd, { recursive: true });
  const db = join(dir, "memory.db");

  // callback listener
  const pending = new Map<string, (text: string) => void>();
  const sink = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      res.writeHead(200).end();
      const b = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { type: string; id: string; text?: string };
      if (b.type !== "tool_result") return;
      const w = pending.get(b.id);
      if (w) {
        pending.delete(b.id);
        w(b.text ?? "");
      }
    });
  });
  sink.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => sink.listen(0, "127.0.0.1", r));
  const callback = `http://127.0.0.1:${(sink.address() as { port: number }).port}/cb`;

  const child = spawn(process.execPath, [CLI, "serve", "--toolset", "memory", "--db", db], {
    cwd,
    env: { ...process.env, RAP_EMBEDDED: "1", INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "soak", INFINITY_HOME: join(dir, "none") },
    stdio: ["ignore", "pipe", "ignore"],
  });
  const port = await new Promise<number>((res, rej) => {
    const rl = createInterface({ input: child.stdout });
    rl.once("line", (l) => {
      rl.close();
      res((JSON.parse(l) as { port: number }).port);
    });
    child.once("exit", (c) => rej(new Error(`server exited with ${c}`)));
  });
  const endpoint = `http://127.0.0.1:${port}/invoke`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: THREADS });

  const post = (body: string) =>
    new Promise<number>((res) => {
      const q = http.request(endpoint, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (r) => {
        r.resume();
        r.on("end", () => res(r.statusCode ?? 0));
      });
      q.on("error", () => res(0));
      q.end(body);
    });

  const latencies: number[] = [];
  const byTool: Record<string, number[]> = {};
  const remembered: string[] = [];
  let acked = 0;
  let failedAcks = 0;
  let resent = 0;
  let errors = 0;
  let lostResults = 0;
  let seq = 0;
  const started = Date.now();
  const deadline = started + MINUTES * 60_000;
  const rss: { t: number; mb: number }[] = [{ t: 0, mb: rssOf(child.pid!) }];
  // Calls answered and the server's CPU time so far, per sample: a cost per call that grows with the
  // store (a search rebuilding its scope each time) shows up as a later third slower than the first.
  const load: { t: number; calls: number; cpuMs: number }[] = [{ t: 0, calls: 0, cpuMs: cpuMsOf(child.pid!) }];
  const sample = () => {
    const t = (Date.now() - started) / 1000;
    rss.push({ t: Math.round(t), mb: r1(rssOf(child.pid!)) });
    load.push({ t, calls: latencies.length, cpuMs: cpuMsOf(child.pid!) });
  };
  const sampler = setInterval(sample, SAMPLE_MS);

  const call = async (group: string, op: string, args: unknown): Promise<string | null> => {
    const id = `soak_${++seq}`;
    const body = `{"operation":${JSON.stringify(op)},"arguments":${JSON.stringify(args)},"id":"${id}","call_id":null,"callback_url":"${callback}","group_id":"${group}","thread_ancestors":null}`;
    const t0 = performance.now();
    const result = new Promise<string | null>((res) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        res(null);
      }, 60_000);
      pending.set(id, (text) => {
        clearTimeout(timer);
        res(text);
      });
    });
    let status = await post(body);
    // A keep-alive socket the server closed while idle resets before any answer; the call id
    // makes a re-send idempotent (the journal drops duplicates), so send it once more.
    if (status === 0) {
      resent++;
      status = await post(body);
    }
    if (status !== 200) {
      failedAcks++;
      pending.delete(id);
      return null;
    }
    acked++;
    const text = await result;
    if (text === null) {
      lostResults++;
      return null;
    }
    const ms = performance.now() - t0;
    latencies.push(ms);
    (byTool[op] ??= []).push(ms);
    if (text.startsWith("Error:")) errors++;
    return text;
  };

  const thread = async (t: number) => {
    const group = `soak-root-${t}`;
    let i = 0;
    while (Date.now() < deadline) {
      i++;
      if (i % 3 !== 0) {
        const text = await call(group, "memory_remember", { content: `Soak thread ${t} fact ${i}: service ${t}-${i} listens on port ${1000 + ((t * 31 + i) % 60000)}`, kind: "fact" });
        const m = text ? /Remembered as (mem_[0-9a-z]+)/.exec(text) : null;
        if (m) remembered.push(m[1]!);
      } else {
        await call(group, "memory_search", { query: `service ${t} port`, limit: 5 });
      }
    }
  };
  await Promise.all(Array.from({ length: THREADS }, (_, t) => thread(t)));
  clearInterval(sampler);
  const seconds = (Date.now() - started) / 1000;
  rss.push({ t: Math.round(seconds), mb: r1(rssOf(child.pid!)) });
  load.push({ t: seconds, calls: latencies.length, cpuMs: cpuMsOf(child.pid!) });

  // Lost writes: every delivered memory id must be in the database.
  child.kill("SIGTERM");
  await new Promise<void>((r) => child.once("exit", () => r()));
  const d = new Database(db, { readonly: true });
  const has = d.prepare("SELECT 1 FROM memories WHERE id = ? AND status = 'active'");
  const missingWrites = remembered.filter((id) => !has.get(id)).length;
  const integrity = d.pragma("integrity_check", { simple: true });
  d.close();
  agent.destroy();
  await new Promise<void>((r) => sink.close(() => r()));
  rmSync(dir, { recursive: true, force: true });

  const sorted = [...latencies].sort((a, b) => a - b);
  // RSS drift: mean of the last third against the mean of the second third (after warm-up).
  const third = Math.max(1, Math.floor(rss.length / 3));
  const mean = (xs: { mb: number }[]) => xs.reduce((s, x) => s + x.mb, 0) / Math.max(1, xs.length);
  const mid = mean(rss.slice(third, 2 * third));
  const last = mean(rss.slice(2 * third));
  // Throughput and server CPU per call in each third of the run.
  const at = (t: number) => load.reduce((best, x) => (Math.abs(x.t - t) < Math.abs(best.t - t) ? x : best));
  const thirds = [0, 1, 2].map((k) => {
    const a = at((seconds * k) / 3);
    const b = at((seconds * (k + 1)) / 3);
    const calls = b.calls - a.calls;
    return { from_s: r1(a.t), to_s: r1(b.t), calls_per_s: r1(calls / Math.max(0.001, b.t - a.t)), server_cpu_ms_per_call: calls > 0 ? r1((b.cpuMs - a.cpuMs) / calls) : null };
  });
  const out = {
    bench: "soak",
    minutes: MINUTES,
    threads: THREADS,
    seconds: r1(seconds),
    calls: latencies.length,
    throughput_per_s: r1(latencies.length / seconds),
    latency_ms: { p50: r1(pct(sorted, 50)), p95: r1(pct(sorted, 95)), p99: r1(pct(sorted, 99)), max: r1(sorted.at(-1) ?? NaN) },
    latency_ms_by_tool: Object.fromEntries(Object.entries(byTool).map(([k, v]) => {
      const s = [...v].sort((a, b) => a - b);
      return [k, { n: s.length, p50: r1(pct(s, 50)), p95: r1(pct(s, 95)), p99: r1(pct(s, 99)) }];
    })),
    by_third: thirds,
    acked,
    failed_acks: failedAcks,
    resent_after_connection_reset: resent,
    error_results: errors,
    lost_results: lostResults,
    writes_delivered: remembered.length,
    lost_writes: missingWrites,
    integrity_check: integrity,
    rss_mb: { start: rss[0]?.mb, peak: Math.max(...rss.map((x) => x.mb)), end: rss.at(-1)?.mb, mid_third_mean: r1(mid), last_third_mean: r1(last), drift_percent: r1(((last - mid) / mid) * 100) },
    // Flat: after warm-up the last third of the run uses at most 10 % more memory than the middle
    // third (a leak of a few bytes per call grows linearly and shows up here over 10 minutes).
    rss_flat: ((last - mid) / mid) * 100 <= RSS_FLAT_PERCENT,
    rss_flat_threshold_percent: RSS_FLAT_PERCENT,
    rss_samples: rss,
  };
  console.log(JSON.stringify(out));
  if (lostResults > 0 || missingWrites > 0 || failedAcks > 0 || integrity !== "ok") process.exitCode = 1;
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

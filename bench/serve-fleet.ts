// Several real `infinity-memory serve` processes on one database, a callback listener and a
// closed-loop RAP client: what the many-servers test (test/postgres/many-servers.test.ts) and
// the load bench (bench/pg-load.ts) drive. Each invocation remembers one unique fact, so after a
// run the database must hold exactly one memory per acknowledged invocation and the listener
// must have received exactly one tool_result per invocation.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import http from "node:http";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

// dist/bench/serve-fleet.js when built, bench/serve-fleet.ts under vitest: the CLI is dist/cli/main.js
const here = fileURLToPath(import.meta.url);
export const CLI = join(here.includes("/dist/") ? resolve(here, "../../..") : resolve(here, "../.."), "dist", "cli", "main.js");

export interface ServeProcess {
  child: ChildProcess;
  port: number;
  endpoint: string;
  pid: number;
  /** the last error lines of its log (what to show when a check on it fails) */
  errorLog(): string;
  stop(): Promise<void>;
}

function errorLines(cwd: string, toolset: string, n: number): string {
  try {
    return readFileSync(join(cwd, `infinity-${toolset}.log`), "utf8").split("\n").filter((x) => /"level":(50|60)/.test(x)).slice(-n).join("\n");
  } catch {
    return ""; // no log yet
  }
}

/** Start `serve` as the daemon would (RAP_EMBEDDED=1, port on the first stdout line). */
export function startServe(opts: { db: string; dir: string; name: string; toolset?: string; env?: Record<string, string> }): Promise<ServeProcess> {
  const toolset = opts.toolset ?? "memory";
  const cwd = join(opts.dir, opts.name, ".infinity");
  const home = join(opts.dir, opts.name, "home");
  mkdirSync(cwd, { recursive: true });
  mkdirSync(home, { recursive: true });
  const child = spawn(process.execPath, [CLI, "serve", "--toolset", toolset, "--db", opts.db], {
    cwd,
    env: {
      ...process.env,
      RAP_EMBEDDED: "1",
      INFINITY_MEMORY_HOME: home,
      INFINITY_MEMORY_USER: "alice",
      INFINITY_HOME: join(home, "no-daemon"),
      ...opts.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  return new Promise((resolvePort, reject) => {
    const t = setTimeout(() => reject(new Error(`${opts.name}: serve printed no port within 30 s\n${stderr}`)), 30_000);
    const rl = createInterface({ input: child.stdout! });
    rl.once("line", (l) => {
      clearTimeout(t);
      rl.close();
      const port = (JSON.parse(l) as { port: number }).port;
      resolvePort({
        child,
        port,
        pid: child.pid!,
        endpoint: `http://127.0.0.1:${port}/invoke`,
        errorLog: () => errorLines(cwd, toolset, 10),
        stop: async () => {
          if (child.exitCode === null) child.kill("SIGTERM");
          const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
          await exited;
          clearTimeout(killer);
        },
      });
    });
    child.once("exit", (c) => {
      clearTimeout(t);
      const log = errorLines(cwd, toolset, 3);
      reject(new Error(`${opts.name}: serve exited with ${c} before its port line\n${log}\n${stderr}`));
    });
  });
}

export interface Sink {
  url: string;
  /** invocation id → how many tool_results arrived, and when the first did */
  results: Map<string, { n: number; at: number; text: string }>;
  waitFor(ids: Iterable<string>, timeoutMs: number): Promise<string[]>;
  /** answer callbacks with this status instead of 200 (nothing is recorded while refusing) */
  refuseWith(status: number | null): void;
  /** callbacks refused so far */
  refusedCount(): number;
  close(): Promise<void>;
}

/** A callback listener counting tool_results per invocation id. */
export async function startSink(): Promise<Sink> {
  const results = new Map<string, { n: number; at: number; text: string }>();
  const waiters = new Set<() => void>();
  let refuse: number | null = null;
  let refusedN = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let b: Record<string, unknown>;
      try {
        b = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      } catch {
        res.writeHead(400).end("bad json");
        return;
      }
      if (refuse !== null) {
        refusedN++;
        res.writeHead(refuse).end("not now");
        return;
      }
      res.writeHead(200).end("OK");
      if (b.type !== "tool_result") return;
      const id = String(b.id);
      const prev = results.get(id);
      results.set(id, { n: (prev?.n ?? 0) + 1, at: prev?.at ?? performance.now(), text: prev?.text ?? String(b.text) });
      for (const w of waiters) w();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/cb`;
  return {
    url,
    results,
    refuseWith: (status) => {
      refuse = status;
    },
    refusedCount: () => refusedN,
    /** resolves with the ids still missing when all arrived or the time ran out */
    waitFor: (ids, timeoutMs) =>
      new Promise((done) => {
        const want = [...ids];
        const missing = () => want.filter((id) => !results.has(id));
        const check = () => {
          if (missing().length === 0) finish();
        };
        const finish = () => {
          waiters.delete(check);
          clearTimeout(t);
          done(missing());
        };
        const t = setTimeout(finish, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export function post(url: string, body: string, timeoutMs = 30_000): Promise<number> {
  return new Promise((done) => {
    const req = http.request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }, timeout: timeoutMs },
      (res) => {
        res.resume();
        res.on("end", () => done(res.statusCode ?? 0));
        res.on("error", () => done(0));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => done(0));
    req.end(body);
  });
}

export function invocation(op: string, args: unknown, id: string, cb: string, group: string): string {
  return JSON.stringify({ operation: op, arguments: args, id, call_id: null, callback_url: cb, group_id: group, thread_ancestors: null });
}

/** the fact invocation `id` writes (unique per id, so duplicates and losses are countable) */
export const factOf = (id: string) => `Load fact ${id}: the nightly build of module ${id.replace(/\W/g, "")} finished green`;

export interface LoadResult {
  invocations: number;
  acked: number;
  refused: Record<string, number>;
  /** POSTs sent again after a connection error */
  transport_retries: number;
  /** acknowledged invocations whose result never arrived */
  lost_results: number;
  /** results delivered more than once */
  duplicated_results: number;
  seconds: number;
  throughput_per_s: number;
  /** from the POST to the tool_result arriving at the listener */
  latency_ms: { p50: number; p95: number; p99: number; max: number };
  ids: string[];
  ackedIds: string[];
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 10) / 10;
}

/**
 * `threads` concurrent client threads (each a RAP thread/group id, spread over the servers)
 * send `total` memory_remember invocations, each thread waiting for its result before the next.
 */
export async function runLoad(opts: { endpoints: string[]; sink: Sink; threads: number; total: number; tag: string; resultTimeoutMs?: number }): Promise<LoadResult> {
  const { endpoints, sink, threads, total, tag } = opts;
  const started = performance.now();
  const sentAt = new Map<string, number>();
  const refused: Record<string, number> = {};
  const ids: string[] = [];
  const ackedIds: string[] = [];
  let transportRetries = 0;
  let next = 0;
  let acked = 0;
  const thread = async (t: number) => {
    const group = `${tag}-thread-${t}`;
    const endpoint = endpoints[t % endpoints.length]!;
    for (;;) {
      const n = next++;
      if (n >= total) return;
      const id = `${tag}-${n}`;
      ids.push(id);
      sentAt.set(id, performance.now());
      const body = invocation("memory_remember", { content: factOf(id), kind: "fact" }, id, sink.url, group);
      let status = await post(endpoint, body);
      // A connection error (0) — e.g. a keep-alive socket the server closed just as it was reused —
      // is retried with the same invocation id, as a runtime would: the journal makes it idempotent.
      for (let i = 0; status === 0 && i < 2; i++) {
        transportRetries++;
        status = await post(endpoint, body);
      }
      if (status !== 200) {
        refused[String(status)] = (refused[String(status)] ?? 0) + 1;
        continue;
      }
      acked++;
      ackedIds.push(id);
      await sink.waitFor([id], opts.resultTimeoutMs ?? 60_000);
    }
  };
  await Promise.all(Array.from({ length: threads }, (_, t) => thread(t)));
  const missing = await sink.waitFor(ackedIds, 5_000);
  const seconds = (performance.now() - started) / 1000;
  const lat = ids
    .map((id) => {
      const r = sink.results.get(id);
      return r ? r.at - sentAt.get(id)! : null;
    })
    .filter((x): x is number => x !== null)
    .sort((a, b) => a - b);
  return {
    invocations: total,
    acked,
    refused,
    transport_retries: transportRetries,
    lost_results: missing.length,
    duplicated_results: ids.filter((id) => (sink.results.get(id)?.n ?? 0) > 1).length,
    seconds: Math.round(seconds * 100) / 100,
    throughput_per_s: Math.round((sink.results.size / seconds) * 10) / 10,
    latency_ms: { p50: pct(lat, 50), p95: pct(lat, 95), p99: pct(lat, 99), max: Math.round((lat.at(-1) ?? 0) * 10) / 10 },
    ids,
    ackedIds,
  };
}

export interface ImportProcess {
  child: ChildProcess;
  /** settles when it exits: its code or signal, stdout and stderr, seconds it ran */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string; seconds: number }>;
}

/** Start `memory import FILE --json` as a person would, beside whatever serves the same database. */
export function startImport(opts: { file: string; db: string; batch: number; env: NodeJS.ProcessEnv }): ImportProcess {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, "memory", "import", opts.file, "--db", opts.db, "--batch", String(opts.batch), "--json"], {
    env: opts.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const done = new Promise<Awaited<ImportProcess["done"]>>((r) =>
    child.on("exit", (code, signal) => r({ code, signal, out, err, seconds: (performance.now() - t0) / 1000 })),
  );
  return { child, done };
}

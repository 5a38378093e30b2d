// Property-based fuzzing of the memory RAP server over real HTTP (keep-alive): every route,
// every tool's arguments, and the invocation envelope. Every generated request must be refused:
// HTTP-level garbage with a 4xx (never 5xx, never a dropped connection), a well-formed invocation
// with bad arguments with a 200 ack and a tool_result whose text starts with "Error:". The
// process never crashes, no promise rejection goes unhandled, and the stored memories are
// byte-for-byte unchanged by all of it.
// FUZZ_REQUESTS (default 100,000) sets the in-process count; FUZZ_CHILD_REQUESTS (default 3,000)
// the count against a real `serve` child process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { createHash } from "node:crypto";
import http from "node:http";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import Database from "better-sqlite3";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import { openMemory, type MemoryContext } from "../../cli/context.js";
import { startRapServer, type RapServer } from "../../toolsets/rap/server.js";
import { memoryToolset } from "../../toolsets/memory/tools.js";
import type { Toolset } from "../../toolsets/rap/registry.js";
import { safeParseWire } from "../../toolsets/rap/safe-parse.js";
import { CLI, spawnCommandServer } from "../helpers/cli.js";
import { T0, modelOrigin, req } from "../helpers/memory.js";

const TOTAL = Number(process.env.FUZZ_REQUESTS ?? 100_000);
const CHILD_TOTAL = Number(process.env.FUZZ_CHILD_REQUESTS ?? 3_000);
const BATCH = 250;
const CONCURRENCY = 48;

// ---------------------------------------------------------------- a tiny keep-alive client

interface Raw {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  /** send fewer bytes than content-length announces, then end the request */
  truncate?: number;
  /** the invocation id when this is a well-formed invocation (a tool_result must follow) */
  invocationId?: string;
}

function send(agent: http.Agent, port: number, r: Raw): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { ...r.headers };
    const truncated = r.truncate !== undefined && r.truncate < r.body.length;
    headers["content-length"] = r.body.length;
    const q = http.request({ host: "127.0.0.1", port, method: r.method, path: r.path, agent: truncated ? false : agent, headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", () => resolve({ status: -1, text: "response error" }));
    });
    q.on("timeout", () => q.destroy(new Error("timeout")));
    q.on("error", (e) => resolve({ status: truncated ? -2 : -1, text: e.message }));
    if (truncated) {
      // A body cut short: the client gives up and closes; the server must not hang or crash.
      q.write(r.body.subarray(0, r.truncate));
      setTimeout(() => q.destroy(), 5);
    } else {
      q.end(r.body);
    }
  });
}

async function sendAll(agent: http.Agent, port: number, rs: Raw[]): Promise<{ status: number; text: string }[]> {
  const out: { status: number; text: string }[] = new Array(rs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, rs.length) }, async () => {
      while (next < rs.length) {
        const i = next++;
        out[i] = await send(agent, port, rs[i]!);
      }
    }),
  );
  return out;
}

// ---------------------------------------------------------------- callback sink (cheap)

async function startResultSink() {
  const results = new Map<string, string>();
  const other: string[] = [];
  const waiters = new Set<() => void>();
  const server = http.createServer((rq, rs) => {
    const chunks: Buffer[] = [];
    rq.on("data", (c: Buffer) => chunks.push(c));
    rq.on("end", () => {
      rs.writeHead(200).end();
      const b = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { type: string; id: string; text?: string };
      if (b.type === "tool_result") results.set(b.id, b.text ?? "");
      else other.push(b.type);
      for (const w of waiters) w();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/cb`;
  return {
    url,
    results,
    other,
    async waitFor(ids: string[], timeoutMs = 60_000): Promise<string[]> {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const missing = ids.filter((id) => !results.has(id));
        if (missing.length === 0) return [];
        await new Promise<void>((r) => {
          const t = setTimeout(r, 50);
          waiters.add(() => {
            clearTimeout(t);
            r();
          });
        });
        waiters.clear();
      }
      return ids.filter((id) => !results.has(id));
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

// ---------------------------------------------------------------- generators

const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.constantFrom(
    "",
    "\u0000",
    "\uFEFF",
    "\uD800",
    "\uDFFF",
    "a\u202Eb",
    "\u200B\u200C\u200D\u2060",
    "𝔪𝔢𝔪𝔬𝔯𝔶",
    "Ω≈ç√",
    "../../etc/passwd",
    "'; DROP TABLE memories; --",
    "\" OR 1=1 --",
    "mem_\u0000",
    "%00",
    "${jndi:ldap://x}",
    "{{7*7}}",
    "NEAR(a b)",
    "\"unterminated",
    "a*",
    "^",
    "AND OR NOT",
  ),
  fc.nat({ max: 5000 }).map((n) => "x".repeat(n)),
);

function deep(depth: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { a: v };
  return v;
}

const weirdValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.anything({ maxDepth: 3, withBigInt: false, withBoxedValues: false, withMap: false, withSet: false, withTypedArray: false, withSparseArray: false, withDate: false, withNullPrototype: false }) },
  { weight: 3, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1e308, -0, 0.5, 2 ** 53, [], {}, [null], { __proto__: 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 400 }).map((d) => deep(d, "x")) },
);

const FIELDS = [
  "content", "kind", "scope", "tags", "confidence", "expires_at", "supersedes", "user_stated", "query", "kinds", "scopes",
  "limit", "include_history", "id", "ids", "status", "cursor", "order", "action", "current_session", "thread_id",
  "message_index", "message_id", "window", "rating", "note", "episode_id", "__proto__", "constructor",
];

/** Argument objects near the valid shape (a valid base with one field broken) or anywhere. */
function argsFor(tool: string): fc.Arbitrary<unknown> {
  const valid: Record<string, Record<string, unknown>> = {
    memory_remember: { content: "The build server is in Oslo", kind: "fact" },
    memory_search: { query: "build server" },
    memory_update: { id: "mem_0000000000000000000000000", content: "corrected" },
    memory_history: { id: "mem_0000000000000000000000000" },
    memory_forget: { id: "mem_0000000000000000000000000" },
    memory_list: { limit: 5 },
    memory_review: { action: "list" },
    session_search: { query: "hello" },
    task_feedback: { rating: 1 },
  };
  const base = valid[tool] ?? {};
  return fc.oneof(
    weirdValue,
    fc.dictionary(fc.constantFrom(...FIELDS), weirdValue, { maxKeys: 6 }),
    fc.tuple(fc.constantFrom(...FIELDS), weirdValue).map(([k, v]) => ({ ...base, [k]: v })),
    fc.constantFrom(...Object.keys(base), "__none__").map((k) => {
      const o: Record<string, unknown> = { ...base };
      delete o[k];
      return o;
    }),
  );
}

export interface FuzzCtx {
  toolset: Toolset;
  callbackUrl: string;
  nextId(): string;
}

const ROUTES = ["/invoke", "/cancel_tool_call", "/close_thread", "/migrate", "/user_choice_response", "/.well-known/rap-toolset"];

function reqArb(c: FuzzCtx): fc.Arbitrary<() => Raw> {
  const names = c.toolset.tools.map((t) => t.name);
  const json = (v: unknown) => Buffer.from(JSON.stringify(v) ?? "null");
  const hdr = { "content-type": "application/json" };

  // A well-formed invocation envelope with bad arguments (the arguments are made invalid below).
  const invocation = fc
    .record({
      op: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: hostileString }),
      args: fc.constant(null),
      user: fc.option(hostileString, { nil: undefined }),
      ancestors: fc.option(fc.array(hostileString, { maxLength: 4 }), { nil: null }),
      group: fc.oneof(fc.constant("fuzz-root"), hostileString.filter((s) => s.length > 0 && s.length < 200)),
      contentType: fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded", "", "application/json; charset=latin1"),
    })
    .chain((e) => argsFor(e.op).map((args) => ({ ...e, args })));
  const invocationReq = invocation.map((e) => (): Raw => {
    const id = c.nextId();
    // What the server sees is the JSON form (undefined members vanish, NaN becomes null …).
    let args: unknown = e.args === undefined ? null : (JSON.parse(JSON.stringify(e.args) ?? "null") as unknown);
    const tool = c.toolset.tools.find((t) => t.name === e.op);
    // Valid by chance: break it (every input schema is strict, so an unknown key is refused).
    if (tool && safeParseWire(tool.input, args ?? {}).success) args = { ...(args && typeof args === "object" && !Array.isArray(args) ? args : {}), __fuzz_extra__: 1 };
    const env: Record<string, unknown> = { operation: e.op, arguments: args, id, call_id: null, callback_url: c.callbackUrl, group_id: e.group, thread_ancestors: e.ancestors };
    if (e.user !== undefined) env.user_id = e.user;
    const headers: Record<string, string> = e.contentType ? { "content-type": e.contentType } : {};
    return { method: "POST", path: "/invoke", headers, body: json(env), invocationId: id };
  });

  // Envelope-level garbage on every route.
  const envelopeGarbage = fc
    .record({
      path: fc.constantFrom(...ROUTES.filter((r) => r !== "/.well-known/rap-toolset")),
      body: fc.oneof(
        weirdValue.map(json),
        fc.dictionary(fc.constantFrom("operation", "arguments", "id", "call_id", "callback_url", "group_id", "thread_ancestors", "thread_id", "tool_call_id", "session_id", "destination_url", "selected", "user_id"), weirdValue, { maxKeys: 8 }).map((o) => {
          // never a complete valid invocation: drop or break the id
          if (typeof o.id === "string" && typeof o.operation === "string" && typeof o.callback_url === "string" && typeof o.group_id === "string") o.id = 42;
          return json(o);
        }),
        fc.string({ maxLength: 200 }).map((s) => Buffer.from(s)),
        fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
        fc.constantFrom(
          Buffer.from("{"),
          Buffer.from("{\"operation\":"),
          Buffer.from("\uFEFF{}"),
          Buffer.from([0xff, 0xfe, 0x7b, 0x7d]),
          Buffer.from([0xc3, 0x28]),
          Buffer.from("{\"id\":\"\\uD800\"}"),
          Buffer.from("[".repeat(100_000)),
          Buffer.from("{\"a\":".repeat(20_000) + "1" + "}".repeat(20_000)),
          Buffer.from("null"),
          Buffer.from("1e999999"),
          Buffer.from(""),
        ),
      ),
      contentType: fc.constantFrom("application/json", "text/plain", "multipart/form-data; boundary=x", "", "application/json; charset=utf-16"),
    })
    .map((g) => (): Raw => {
      const o = ((): unknown => {
        try {
          return JSON.parse(g.body.toString("utf8"));
        } catch {
          return undefined;
        }
      })();
      // /migrate and /close_thread bodies that happen to be valid are acked; skip those.
      if (o && typeof o === "object" && !Array.isArray(o)) {
        const r = o as Record<string, unknown>;
        if (typeof r.thread_id === "string") r.thread_id = 1;
        if (typeof r.session_id === "string") r.session_id = 1;
        if (typeof r.id === "string") r.id = 1;
        let body = g.body;
        try {
          body = json(r);
        } catch {
          /* too deep to re-serialize here: send the original bytes (no string id in them) */
        }
        return { method: "POST", path: g.path, headers: g.contentType ? { "content-type": g.contentType } : {}, body };
      }
      return { method: "POST", path: g.path, headers: g.contentType ? { "content-type": g.contentType } : {}, body: g.body };
    });

  const wrongRoute = fc
    .record({
      method: fc.constantFrom("GET", "PUT", "DELETE", "PATCH", "POST", "OPTIONS"),
      path: fc.oneof(
        fc.constantFrom(...ROUTES),
        fc.constantFrom("/", "/invoke/", "/INVOKE", "/invoke%00", "//invoke", "/..%2finvoke", "/.well-known/rap-toolset/../x", "/%ZZ", "/" + "a".repeat(4000), "/__proto__", "/constructor", "/hasOwnProperty"),
        fc.webPath(),
      ),
    })
    .filter((w) => !(ROUTES.includes(w.path) && ((w.method === "POST" && w.path !== "/.well-known/rap-toolset") || (w.method === "GET" && w.path === "/.well-known/rap-toolset"))))
    .map((w) => (): Raw => ({ method: w.method, path: w.path, headers: hdr, body: Buffer.from(w.method === "GET" ? "" : "{}") }));

  const truncated = invocation.map((e) => (): Raw => {
    const body = json({ operation: e.op, arguments: e.args, id: c.nextId(), call_id: null, callback_url: c.callbackUrl, group_id: "fuzz-root", thread_ancestors: null });
    return { method: "POST", path: "/invoke", headers: hdr, body, truncate: Math.floor(body.length / 2) };
  });

  return fc.oneof(
    { weight: 10, arbitrary: invocationReq },
    { weight: 6, arbitrary: envelopeGarbage },
    { weight: 2, arbitrary: wrongRoute },
    { weight: 1, arbitrary: truncated },
  );
}

// ---------------------------------------------------------------- the oracle

function memoriesHash(db: Database.Database): string {
  const h = createHash("sha256");
  for (const t of ["memories", "memory_tags", "memory_sources", "edges", "audit_log", "learning_feedback"]) {
    const rows = db.prepare(`SELECT * FROM ${t}`).all().map((r) => JSON.stringify(r)).sort();
    for (const r of rows) h.update(r);
    h.update(`|${t}|`);
  }
  return h.digest("hex");
}

interface Tally {
  requests: number;
  invocations: number;
  errorResults: number;
  status: Record<string, number>;
  truncated: number;
}

async function fuzz(port: number, c: FuzzCtx, total: number, sink: Awaited<ReturnType<typeof startResultSink>>, tally: Tally): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const arb = reqArb(c);
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(arb, { minLength: BATCH, maxLength: BATCH }), async (makers) => {
        const rs = makers.map((m) => m());
        const answers = await sendAll(agent, port, rs);
        const ids: string[] = [];
        rs.forEach((r, i) => {
          const a = answers[i]!;
          tally.requests++;
          tally.status[a.status] = (tally.status[a.status] ?? 0) + 1;
          if (r.truncate !== undefined) {
            tally.truncated++;
            // the client hung up; whatever the server says, it must not be a 5xx
            expect(a.status < 500, `truncated body got ${a.status}`).toBe(true);
            return;
          }
          if (r.invocationId !== undefined && a.status === 200) {
            ids.push(r.invocationId);
            return;
          }
          expect(a.status >= 400 && a.status < 500, `${r.method} ${r.path} ${r.body.subarray(0, 120).toString()} → ${a.status} ${a.text.slice(0, 200)}`).toBe(true);
        });
        tally.invocations += ids.length;
        const missing = await sink.waitFor(ids);
        expect(missing).toEqual([]);
        for (const id of ids) {
          const text = sink.results.get(id)!;
          expect(text.startsWith("Error:"), `tool_result for ${id}: ${text.slice(0, 200)}`).toBe(true);
          tally.errorResults++;
          sink.results.delete(id);
        }
      }),
      // INFINITY_MEMORY_FUZZ_SEED replays a failing run (fast-check prints its seed)
      { numRuns: Math.ceil(total / BATCH), endOnFailure: true, ...(process.env.INFINITY_MEMORY_FUZZ_SEED ? { seed: Number(process.env.INFINITY_MEMORY_FUZZ_SEED) } : {}) },
    );
  } finally {
    agent.destroy();
  }
}

// ---------------------------------------------------------------- tests

describe("HTTP fuzzing of the memory RAP server", () => {
  let dir: string;
  let ctx: MemoryContext;
  let server: RapServer;
  let sink: Awaited<ReturnType<typeof startResultSink>>;
  let toolset: Toolset;
  const rejections: unknown[] = [];
  const onRejection = (e: unknown) => rejections.push(e);
  const errorsLogged: string[] = [];
  let n = 0;

  beforeAll(async () => {
    process.on("unhandledRejection", onRejection);
    dir = mkdtempSync(join(tmpdir(), "imem-fuzz-"));
    ctx = openMemory({ dbPath: join(dir, "memory.db"), config: defaultConfig({ localUser: "alice" }), clock: fixedClock(T0), env: {} });
    for (let i = 0; i < 30; i++) await ctx.service.remember(req({ project: "/work/app" }), { content: `Seed fact number ${i}: the build cache lives in bucket ${i}`, kind: "fact" }, modelOrigin());
    sink = await startResultSink();
    toolset = memoryToolset({ service: ctx.service, toggles: ctx.toggles, clock: ctx.clock, localUser: "alice", projectOf: () => "/work/app", sessions: null });
    const logger = pino({ level: "error" }, { write: (l: string) => void errorsLogged.push(l) });
    server = await startRapServer({ toolset, db: ctx.db, host: "127.0.0.1", port: 0, logger, outbox: { pollMs: 20 } });
  });

  afterAll(async () => {
    process.off("unhandledRejection", onRejection);
    await server?.close({ graceMs: 1000 });
    await sink?.close();
    ctx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`refuses ${TOTAL} generated requests with 4xx or Error: results and leaves stored memories unchanged`, async () => {
    const before = memoriesHash(ctx.db);
    const tally: Tally = { requests: 0, invocations: 0, errorResults: 0, status: {}, truncated: 0 };
    const t0 = Date.now();
    await fuzz(server.port, { toolset, callbackUrl: sink.url, nextId: () => `fz_${++n}` }, TOTAL, sink, tally);
    const seconds = (Date.now() - t0) / 1000;
    // still serving
    const m = await fetch(`${server.url}/.well-known/rap-toolset`);
    expect(m.status).toBe(200);
    expect(memoriesHash(ctx.db)).toBe(before);
    expect(ctx.db.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(rejections).toEqual([]);
    // nothing answered 500 ("request failed" is logged for those)
    expect(errorsLogged.filter((l) => l.includes("request failed"))).toEqual([]);
    expect(tally.requests).toBeGreaterThanOrEqual(TOTAL);
    console.log("http-fuzz in-process " + JSON.stringify({ ...tally, seconds, perSecond: Math.round(tally.requests / seconds), otherCallbacks: sink.other.length }));
  }, 600_000);

  it("answers 413 to an oversized body, declared or chunked, and keeps serving", async () => {
    const big = Buffer.alloc(1024 * 1024 + 10, 0x61);
    const declared = await send(new http.Agent(), server.port, { method: "POST", path: "/invoke", headers: { "content-type": "application/json" }, body: big });
    expect(declared.status).toBe(413);
    expect(declared.text).toMatch(/exceeds the limit of 1048576 bytes/);
    const chunked = await new Promise<number>((resolve) => {
      const q = http.request({ host: "127.0.0.1", port: server.port, method: "POST", path: "/invoke", headers: { "content-type": "application/json", "transfer-encoding": "chunked" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      q.on("error", () => resolve(-1));
      for (let i = 0; i < 20; i++) q.write(Buffer.alloc(64 * 1024, 0x61));
      q.end();
    });
    expect(chunked).toBe(413);
    expect((await fetch(`${server.url}/.well-known/rap-toolset`)).status).toBe(200);
  });
});

describe("HTTP fuzzing of a real `serve` child process", () => {
  it(`survives ${CHILD_TOTAL} generated requests and leaves stored memories unchanged`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "imem-fuzz-child-"));
    const cwd = join(dir, "proj", ".infinity");
    mkdirSync(cwd, { recursive: true });
    const dbPath = join(dir, "memory.db");
    const seed = openMemory({ dbPath, config: defaultConfig({ localUser: "alice" }), clock: fixedClock(T0), env: {} });
    for (let i = 0; i < 10; i++) await seed.service.remember(req({ project: join(dir, "proj") }), { content: `Child seed ${i}: deploys go through the blue pipeline`, kind: "fact" }, modelOrigin());
    seed.close();
    const hashOf = () => {
      const d = new Database(dbPath, { readonly: true });
      try {
        return memoriesHash(d);
      } finally {
        d.close();
      }
    };
    const before = hashOf();
    const sink = await startResultSink();
    const s = await spawnCommandServer(`exec ${process.execPath} ${CLI} serve --toolset memory --db ${dbPath}`, cwd, { INFINITY_MEMORY_USER: "alice", INFINITY_HOME: join(dir, "none") });
    let exitedEarly = false;
    void s.exited.then(() => (exitedEarly = true));
    try {
      const toolset = memoryToolset({ service: null as never, toggles: null as never, clock: fixedClock(T0), localUser: "alice", projectOf: () => null, sessions: null });
      let n = 0;
      const tally: Tally = { requests: 0, invocations: 0, errorResults: 0, status: {}, truncated: 0 };
      await fuzz(s.port, { toolset, callbackUrl: sink.url, nextId: () => `fzc_${++n}` }, CHILD_TOTAL, sink, tally);
      expect(exitedEarly).toBe(false);
      expect((await fetch(`http://127.0.0.1:${s.port}/.well-known/rap-toolset`)).status).toBe(200);
      console.log("http-fuzz child " + JSON.stringify(tally));
    } finally {
      process.kill(-s.child.pid!, "SIGTERM");
      await s.exited;
      await sink.close();
    }
    expect(hashOf()).toBe(before);
    rmSync(dir, { recursive: true, force: true });
  }, 300_000);
});

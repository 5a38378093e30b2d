// Property-based fuzzing of the provider-proxy protocol (NDJSON over a Unix socket): fast-check
// generates request lines — valid ListModels / InvokeModel lines with hostile histories and
// preambles, wrong types, malformed and truncated JSON, invalid UTF-8, deep nesting, huge lines,
// several lines, CRLF, no newline plus half-close — and delivers them whole, in random pieces or
// with an early hang-up, to the real ProviderProxyServer over real sockets. Six upstream providers
// (real Unix-socket servers) answer well, with garbage, cut off mid-line, with an over-long line,
// byte by byte, or not at all. For every case:
//   - the proxy answers and closes (no hang), the process sees no uncaught error or rejection;
//   - every line the client gets is one the upstream wrote, or the proxy's own protocol error
//     (`{"Error":"memory proxy: …"}` / `{"Chunk":{"Error":"memory proxy: …"}}`);
//   - the upstream got the request bytes unchanged, except that a resolvable InvokeModel's
//     preamble may carry a prefix in front (everything else in the line is identical);
//   - an over-long request line is refused with a protocol error and never forwarded;
// and at the end the memories table is byte-for-byte what it was and integrity_check is ok.
// FUZZ_PROXY_RUNS scales the number of cases (default 20,000).
import fc from "fast-check";
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AncestorCache, resolveThreadContext } from "../../context-hook/thread-context.js";
import { ProviderProxyServer } from "../../context-hook/provider-proxy/server.js";
import { MemoryPrefixBuilder, FRAME_TAG } from "../../core/retrieval/prefix.js";
import { loadTokenCounter } from "../../core/retrieval/tokens.js";
import { openInfinityHome } from "../../stores/infinity-files/home.js";
import { SqliteRootContexts } from "../../stores/sqlite/root-contexts.js";
import { SqliteTraceStore } from "../../stores/sqlite/trace-store.js";
import { assistantMsg, CHILD, daemonPreamble, GRAND, HOME, invokeLine, ROOT, ROOT2, toolCallMsg, toolResultMsg, userMsg } from "../context-hook/proxy-helpers.js";
import { modelOrigin, openTestMemory, req } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const RUNS = Number(process.env.FUZZ_PROXY_RUNS ?? 20_000);
const BATCH = 50;
const MAX_LINE = 16 * 1024;
const PROXY_ERROR = /^\{"(?:Chunk":\{")?Error":"memory proxy: /;

// ---- upstream providers ------------------------------------------------------------------------

type Behaviour = "good" | "garbage" | "cut" | "huge" | "trickle" | "hangup";
const BEHAVIOURS: Behaviour[] = ["good", "garbage", "cut", "huge", "trickle", "hangup"];

/** Every line any upstream wrote (so the client can tell relayed bytes from invented ones). */
const emitted = new Set<string>();
/** What the upstreams received, by a key that ignores the preamble (see requestKey). */
const received = new Map<string, string[]>();

function sha(b: Buffer | string): string {
  return createHash("sha256").update(b).digest("hex");
}

/**
 * For a parseable InvokeModel line: its JSON without the preamble, plus the preamble; anything
 * else is keyed by its raw bytes. The proxy may only change the preamble.
 */
function requestKey(raw: Buffer): { key: string; preamble: string | null } {
  const text = raw.toString("utf8").replace(/\r$/, "");
  try {
    const v = JSON.parse(text) as { InvokeModel?: { request?: { preamble?: unknown } } };
    const r = v?.InvokeModel?.request;
    if (r && typeof r === "object" && typeof r.preamble === "string") {
      const preamble = r.preamble;
      // Textually, so a history too deep for JSON.stringify still has a key: the generated lines
      // and the proxy's splice both encode the preamble as JSON.stringify does.
      const field = `"preamble":${JSON.stringify(preamble)}`;
      const at = text.indexOf(field);
      if (at >= 0) return { key: `invoke:${sha(`${text.slice(0, at)}"preamble":""${text.slice(at + field.length)}`)}`, preamble };
      r.preamble = "";
      return { key: `invoke-json:${sha(JSON.stringify(v))}`, preamble };
    }
  } catch {
    // not JSON (or too deep to re-serialise): raw bytes
  }
  return { key: `raw:${sha(raw)}`, preamble: null };
}

function responseFor(line: Buffer): string[] {
  const text = line.toString("utf8").replace(/\r$/, "");
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return ['{"Error":"provider: request is not JSON"}'];
  }
  if (v === "ListModels") return ['{"Models":[{"model_id":"fuzz-1","display_name":"Fuzz","context_window":8192,"max_output_tokens":null}]}'];
  if (typeof v === "object" && v !== null && "InvokeModel" in v) {
    return [
      '"InvokeStarted"',
      `{"Chunk":{"Message":"ok ${sha(line).slice(0, 12)}"}}`,
      '{"Chunk":{"Final":{"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}}}',
      '"StreamEnd"',
    ];
  }
  return ['{"Error":"provider: unknown request"}'];
}

function startUpstream(dir: string, behaviour: Behaviour): Promise<{ server: Server; socketPath: string }> {
  const socketPath = join(dir, `up-${behaviour}.sock`);
  const server = createServer({ allowHalfOpen: true }, (s: Socket) => {
    s.on("error", () => {});
    if (behaviour === "hangup") return void s.destroy();
    const parts: Buffer[] = [];
    let answered = false;
    const answer = (line: Buffer) => {
      if (answered) return;
      answered = true;
      const { key, preamble } = requestKey(line);
      const list = received.get(key) ?? [];
      list.push(preamble ?? "");
      received.set(key, list);
      const lines = responseFor(line);
      const h = sha(line);
      switch (behaviour) {
        case "good":
          for (const l of lines) emitted.add(l);
          s.end(lines.map((l) => `${l}\n`).join(""));
          break;
        case "garbage": {
          const junk = [`not json ${h.slice(0, 6)}`, `{"Chunk":{"Message":${h.slice(0, 4)}`, `\u0000\u0001${h.slice(6, 10)}`, `{"Unknown":"${h.slice(0, 8)}"}`];
          for (const l of junk) emitted.add(l);
          s.end(junk.slice(0, 1 + (parseInt(h.slice(0, 2), 16) % junk.length)).map((l) => `${l}\n`).join(""));
          break;
        }
        case "cut": {
          const first = lines[0]!;
          emitted.add(first);
          s.end(`${first}\n${lines.slice(1).join("\n").slice(0, 17)}`);
          break;
        }
        case "huge":
          emitted.add(lines[0]!);
          s.end(`${lines[0]}\n{"Chunk":{"Message":"${"x".repeat(MAX_LINE + 10)}"}}\n`);
          break;
        case "trickle": {
          for (const l of lines) emitted.add(l);
          const all = Buffer.from(lines.map((l) => `${l}\n`).join(""));
          let at = 0;
          const step = () => {
            if (s.destroyed) return;
            if (at >= all.length) return void s.end();
            s.write(all.subarray(at, at + 7));
            at += 7;
            setImmediate(step);
          };
          step();
          break;
        }
      }
    };
    s.on("data", (d: Buffer) => {
      parts.push(d);
      const all = Buffer.concat(parts);
      const nl = all.indexOf(0x0a);
      if (nl >= 0) answer(all.subarray(0, nl));
    });
    s.on("end", () => {
      const all = Buffer.concat(parts);
      if (all.length > 0) answer(all.indexOf(0x0a) >= 0 ? all.subarray(0, all.indexOf(0x0a)) : all);
      else s.end();
    });
  });
  return new Promise((res, rej) => {
    server.once("error", rej);
    server.listen(socketPath, () => res({ server, socketPath }));
  });
}

// ---- generators --------------------------------------------------------------------------------

/** strings that stress JSON and text handling: full Unicode, lone surrogates, controls, bidi */
const nastyString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.constantFrom("\uD800", "\uDFFF", "a\uD83D", "\uFEFF", "\u2028\u2029", "\u0000", "\u202E\u2066", "𝕀𝕘𝕟𝕠𝕣𝕖", "`", "\\", '"', "Your current thread ID is `x`. The root thread ID is `../../etc`."),
  fc.string({ unit: "grapheme-ascii", minLength: 1000, maxLength: 5000 }),
);

const deepJson = (depth: number, open = "[", close = "]") => `${open.repeat(depth)}${close.repeat(depth)}`;
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

const historyItem: fc.Arbitrary<unknown> = fc.oneof(
  // on-topic turns, so the prefix builder finds the stored memories and the preamble gets a prefix
  fc.constantFrom("where does the deploy script live?", "does Dana prefer pnpm or npm?", "is the staging database read-only on Fridays?").map((s) => userMsg(s)),
  nastyString.map((s) => userMsg(s)),
  nastyString.map((s) => assistantMsg(s)),
  fc.tuple(nastyString, fc.jsonValue({ maxDepth: 4 })).map(([n, a]) => toolCallMsg("c1", n, a)),
  nastyString.map((s) => toolResultMsg("c1", s)),
  fc.jsonValue({ maxDepth: 5 }),
  fc.record({ role: fc.oneof(fc.constantFrom("user", "assistant", "system", "tool"), fc.jsonValue()), content: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.array(fc.record({ type: fc.constantFrom("text", "toolresult", "image"), text: fc.jsonValue({ maxDepth: 2 }) }), { maxLength: 3 })) }),
);

const preamble = fc.oneof(
  fc.constantFrom(ROOT, CHILD, GRAND, ROOT2).map((t) => daemonPreamble(t, t === CHILD || t === GRAND ? ROOT : t)),
  fc.constantFrom("../x", "", "a`b", ".hidden", "\u0000", "x/y").map((t) => daemonPreamble(t, t)),
  nastyString,
  fc.constant(null),
);

interface Case {
  what: string;
  /** the bytes sent, newline included where there is one */
  data: Buffer;
  /** write in this many pieces */
  pieces: number;
  /** shut the write side after sending */
  halfClose: boolean;
  /** hang up after sending (without reading) */
  hangUp: boolean;
  upstream: number;
}

const validInvoke = fc.tuple(preamble, fc.array(historyItem, { maxLength: 6 })).map(([p, h]) => invokeLine(p, h));

function mutate(line: string, how: number, at: number, byte: number): Buffer {
  const b = Buffer.from(line);
  const i = Math.floor(at * b.length);
  switch (how) {
    case 0:
      return b.subarray(0, i); // truncated
    case 1:
      return Buffer.concat([b.subarray(0, i), Buffer.from([byte]), b.subarray(i)]); // inserted byte
    case 2:
      return Buffer.concat([b.subarray(0, i), b.subarray(i + 1)]); // dropped byte
    case 3:
      return Buffer.concat([b.subarray(0, i), Buffer.from([0xc3, 0x28, 0xf0, 0x9f]), b.subarray(i)]); // invalid UTF-8
    default: {
      const c = Buffer.from(b);
      if (c.length > 0) c[Math.min(c.length - 1, i)] = byte; // flipped byte
      return c;
    }
  }
}

const wrongTypes = fc.oneof(
  fc.jsonValue().map((v) => `{"InvokeModel":{"model_id":"m","request":{"preamble":null,"chat_history":${JSON.stringify(v)}}}}`),
  fc.jsonValue().map((v) => `{"InvokeModel":{"model_id":${JSON.stringify(v)},"request":{"preamble":"p","chat_history":[]}}}`),
  fc.jsonValue().map((v) => `{"InvokeModel":{"model_id":"m","request":{"preamble":${JSON.stringify(v)},"chat_history":[]}}}`),
  fc.jsonValue().map((v) => `{"InvokeModel":{"model_id":"m","request":${JSON.stringify(v)}}}`),
  fc.jsonValue().map((v) => `{"InvokeModel":${JSON.stringify(v)}}`),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.constantFrom('"listmodels"', '"ListModels "', '{"ListModels":null}', "ListModels", '["ListModels"]', "null", "{}", '""'),
  fc.jsonValue().map((v) => `{"InvokeModel":{"model_id":"m","request":{"preamble":${JSON.stringify(daemonPreamble(ROOT, ROOT))},"chat_history":[],"temperature":${JSON.stringify(v)}}}}`),
);

const lineArb: fc.Arbitrary<{ what: string; line: Buffer; newline: boolean }> = fc.oneof(
  { weight: 3, arbitrary: validInvoke.map((l) => ({ what: "invoke", line: Buffer.from(l), newline: true })) },
  { weight: 1, arbitrary: fc.constant({ what: "list", line: Buffer.from('"ListModels"'), newline: true }) },
  { weight: 2, arbitrary: wrongTypes.map((l) => ({ what: "wrong-types", line: Buffer.from(l), newline: true })) },
  {
    weight: 3,
    arbitrary: fc.tuple(validInvoke, fc.integer({ min: 0, max: 4 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 255 })).map(([l, how, at, byte]) => ({
      what: `mutated-${how}`,
      line: mutate(l, how, at, byte),
      newline: true,
    })),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((u) => ({ what: "random-bytes", line: Buffer.from(u), newline: true })) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.integer({ min: 1, max: 20_000 }), fc.constantFrom(0, 1, 2)).map(([d, shape]) => ({
      what: `deep-${shape}-${d}`,
      line: Buffer.from(
        shape === 0
          ? deepJson(d)
          : shape === 1
            ? deepObject(d)
            : `{"InvokeModel":{"model_id":"m","request":{"preamble":${JSON.stringify(daemonPreamble(ROOT, ROOT))},"chat_history":[${deepJson(Math.min(d, 5000))}]}}}`,
      ),
      newline: true,
    })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.integer({ min: MAX_LINE - 2000, max: MAX_LINE + 5000 }), fc.boolean()).map(([n, valid]) => ({
      what: `huge-${n > MAX_LINE ? "over" : "under"}`,
      line: Buffer.from(valid ? invokeLine(daemonPreamble(ROOT, ROOT), [userMsg("y".repeat(Math.max(0, n - 700)))]) : "z".repeat(n)),
      newline: true,
    })),
  },
  { weight: 1, arbitrary: validInvoke.map((l) => ({ what: "crlf", line: Buffer.from(`${l}\r`), newline: true })) },
  { weight: 1, arbitrary: fc.tuple(validInvoke, wrongTypes).map(([a, b]) => ({ what: "two-lines", line: Buffer.from(`${a}\n${b}`), newline: true })) },
  { weight: 1, arbitrary: validInvoke.map((l) => ({ what: "no-newline", line: Buffer.from(l), newline: false })) },
  { weight: 1, arbitrary: fc.constant({ what: "empty", line: Buffer.alloc(0), newline: true }) },
);

const caseArb: fc.Arbitrary<Case> = fc
  .tuple(lineArb, fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 19 }), fc.integer({ min: 0, max: BEHAVIOURS.length - 1 }))
  .map(([l, pieces, mode, upstream]) => ({
    what: l.what,
    data: l.newline ? Buffer.concat([l.line, Buffer.from("\n")]) : l.line,
    pieces,
    // without a newline the request only ends at half-close (LinesCodec's decode_eof)
    halfClose: !l.newline || mode === 0,
    hangUp: mode === 1,
    upstream,
  }));

// ---- client ------------------------------------------------------------------------------------

function send(socketPath: string, c: Case): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = createConnection(socketPath);
    const parts: Buffer[] = [];
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no end of response within 15 s (${c.what}, upstream ${BEHAVIOURS[c.upstream]})`));
    }, 15_000);
    s.on("data", (d: Buffer) => parts.push(d));
    s.on("error", () => {}); // EPIPE/ECONNRESET after an early refusal: the bytes read so far count
    s.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(parts));
    });
    const size = Math.max(1, Math.ceil(c.data.length / c.pieces));
    void (async () => {
      for (let i = 0; i < c.data.length; i += size) {
        if (s.destroyed) return;
        s.write(c.data.subarray(i, i + size));
        if (c.pieces > 1) await new Promise((r) => setImmediate(r));
      }
      if (c.hangUp) {
        await new Promise((r) => setImmediate(r));
        s.destroy();
      } else if (c.halfClose) s.end();
    })();
  });
}

// ---- the test ----------------------------------------------------------------------------------

const problems = { unhandledRejections: [] as unknown[], uncaught: [] as unknown[] };
const onRejection = (e: unknown) => problems.unhandledRejections.push(e);
const onUncaught = (e: unknown) => problems.uncaught.push(e);

describe("provider-proxy protocol fuzz", () => {
  let m: ReturnType<typeof openTestMemory>;
  const upstreams: Server[] = [];
  const proxies: ProviderProxyServer[] = [];
  const paths: string[] = [];
  let before = "";

  const snapshot = () => JSON.stringify(m.db.prepare("SELECT id, content, content_hash, status, version, flags FROM memories ORDER BY id").all());

  beforeAll(async () => {
    process.on("unhandledRejection", onRejection);
    process.on("uncaughtException", onUncaught);
    const dir = tempDir("imem-pfuzz-");
    mkdirSync(join(dir, "s"));
    m = openTestMemory(dir);
    const scope = req({ user: "dana", project: "/work/projects/alpha", session: ROOT, thread: ROOT });
    for (const content of ["The deploy script lives in scripts/deploy.sh", "Dana prefers pnpm over npm", "The staging database is read-only on Fridays"]) {
      await m.service.remember(scope, { content, kind: "fact" }, modelOrigin(ROOT));
    }
    before = snapshot();
    const tokens = await loadTokenCounter("o200k_base");
    const builder = new MemoryPrefixBuilder({ service: m.service, toggles: m.toggles, edgesOf: (id) => m.store.edgesOf(id), tokens, config: m.config });
    const home = openInfinityHome(HOME);
    const rootContexts = new SqliteRootContexts(m.db);
    const ancestorCache = new AncestorCache();
    for (const b of BEHAVIOURS) {
      const up = await startUpstream(join(dir, "s"), b);
      upstreams.push(up.server);
      const proxy = new ProviderProxyServer({
        upstream: { socketPath: up.socketPath, exitReason: null },
        prefix: {
          builder,
          resolve: (p) => resolveThreadContext(p, { localUser: "alice", home, rootContexts, ancestorCache }),
          deadlineMs: 2000,
          budgetTokens: 400,
        },
        traces: new SqliteTraceStore(m.db),
        clock: m.clock,
        logger: pino({ level: "silent" }),
        maxLineBytes: MAX_LINE,
      });
      paths.push(await proxy.listen(join(dir, "s", `proxy-${b}.sock`)));
      proxies.push(proxy);
    }
  }, 60_000);

  afterAll(async () => {
    for (const p of proxies) await p.close();
    for (const u of upstreams) await new Promise((r) => u.close(r));
    m?.close();
    process.off("unhandledRejection", onRejection);
    process.off("uncaughtException", onUncaught);
  });

  it(`${RUNS} generated exchanges: protocol errors or pass-through only, data unchanged`, async () => {
    const tally: Record<string, number> = {};
    const outcome = { cases: 0, passThrough: 0, prefixed: 0, proxyErrors: 0, refusedTooLong: 0, hungUp: 0 };
    const check = async (c: Case) => {
      const got = await send(paths[c.upstream]!, c);
      outcome.cases++;
      tally[c.what.replace(/-\d+$/, "")] = (tally[c.what.replace(/-\d+$/, "")] ?? 0) + 1;
      if (c.hangUp) return void outcome.hungUp++;
      const text = got.toString("utf8");
      const lines = text.split("\n");
      if (lines.at(-1) === "") lines.pop();
      for (const l of lines) {
        if (PROXY_ERROR.test(l)) outcome.proxyErrors++;
        else expect(emitted.has(l), `${c.what} via ${BEHAVIOURS[c.upstream]}: line neither relayed nor a proxy error: ${l.slice(0, 120)}`).toBe(true);
      }
      const nl = c.data.indexOf(0x0a);
      const first = nl >= 0 ? c.data.subarray(0, nl) : c.data;
      if (first.length > MAX_LINE) {
        expect(lines, c.what).toHaveLength(1);
        expect(lines[0]).toMatch(/memory proxy: request line longer than/);
        expect(received.has(requestKey(first).key), "an over-long line was forwarded").toBe(false);
        outcome.refusedTooLong++;
        return;
      }
      if (BEHAVIOURS[c.upstream] === "hangup" || (first.length === 0 && c.halfClose && nl < 0)) return;
      // what the upstream received: the same bytes, or the same request with a prefixed preamble
      const { key, preamble: original } = requestKey(first);
      const seen = received.get(key);
      expect(seen, `${c.what}: the upstream never received the request`).toBeDefined();
      if (original === null) outcome.passThrough++;
      else {
        const exact = seen!.includes(original);
        const prefixed = seen!.some((p) => p.endsWith(`\n\n${original}`) && p.startsWith(`<${FRAME_TAG}`));
        expect(exact || prefixed, `${c.what}: the preamble was changed in some other way`).toBe(true);
        if (exact) outcome.passThrough++;
        else outcome.prefixed++;
      }
      if (BEHAVIOURS[c.upstream] === "good") {
        // a well-behaved upstream's answer arrives whole
        expect(lines.every((l) => !PROXY_ERROR.test(l)), `${c.what}: proxy error with a good upstream: ${text.slice(0, 200)}`).toBe(true);
      }
    };
    await fc.assert(
      fc.asyncProperty(fc.array(caseArb, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        await Promise.all(batch.map(check));
      }),
      { numRuns: Math.ceil(RUNS / BATCH), seed: 20261130, endOnFailure: true, reporter: shortReport },
    );
    // the proxies still work after all of it
    for (const p of paths.slice(0, 1)) {
      const r = await send(p, { what: "list", data: Buffer.from('"ListModels"\n'), pieces: 1, halfClose: false, hangUp: false, upstream: 0 });
      expect(r.toString()).toMatch(/^\{"Models":/);
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(problems.uncaught).toEqual([]);
    expect(problems.unhandledRejections).toEqual([]);
    expect(snapshot(), "memories changed").toBe(before);
    expect(m.db.pragma("integrity_check", { simple: true })).toBe("ok");
    const traces = (m.db.prepare("SELECT count(*) AS n FROM trace_events").get() as { n: number }).n;
    console.log("proxy fuzz " + JSON.stringify({ ...outcome, traceEventsRecorded: traces, byShape: tally }));
    expect(outcome.cases).toBeGreaterThanOrEqual(RUNS);
    expect(outcome.prefixed).toBeGreaterThan(0);
  }, 600_000);
});

/** fast-check's default report prints every byte of a 50-case batch; the first error says enough */
function shortReport<T>(d: fc.RunDetails<T>): void {
  if (d.failed) throw new Error(`fuzz failed (seed ${d.seed}, path ${d.counterexamplePath}): ${d.errorInstance instanceof Error ? d.errorInstance.message : String(d.errorInstance)}`);
}

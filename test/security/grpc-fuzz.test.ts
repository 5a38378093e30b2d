// Property-based fuzzing of the gRPC ContextHook service: a real grpc-js server
// (startContextHookServer) over the real memory prefix builder and SQLite trace store, called by a
// raw-bytes grpc-js client so any message body can be sent: valid messages with hostile field
// values, hand-built protobuf with wrong wire types, unknown and missing fields, bad lengths,
// over-long varints, groups, invalid UTF-8, truncated messages, random bytes, unknown methods.
// For every call: a status arrives; it is OK or a client error (INVALID_ARGUMENT with the field
// named, RESOURCE_EXHAUSTED, UNIMPLEMENTED) — never INTERNAL; an OK answer decodes. At the end:
// no uncaught error or rejection, the memories table is unchanged, trace_events grew by exactly
// the turns the server said it accepted, integrity_check is ok, and a normal call still works.
// FUZZ_GRPC_RUNS scales the number of calls (default 20,000).
import { create, toBinary, fromBinary } from "@bufbuild/protobuf";
import { Client, credentials, status, type ServiceError } from "@grpc/grpc-js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startContextHookServer, type ContextHookServer } from "../../context-hook/grpc/server.js";
import { MemoryPrefixBuilder } from "../../core/retrieval/prefix.js";
import { loadTokenCounter } from "../../core/retrieval/tokens.js";
import {
  BuildPrefixRequestSchema,
  BuildPrefixResponseSchema,
  RecordTurnRequestSchema,
  RecordTurnResponseSchema,
} from "../../proto/gen/infinity/memory/v1/context_hook_pb.js";
import { SqliteTraceStore } from "../../stores/sqlite/trace-store.js";
import { modelOrigin, openTestMemory, req } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const RUNS = Number(process.env.FUZZ_GRPC_RUNS ?? 20_000);
const BATCH = 200;
const BUILD = "/infinity.memory.v1.ContextHook/BuildPrefix";
const RECORD = "/infinity.memory.v1.ContextHook/RecordTurn";

// ---- hand-made protobuf --------------------------------------------------------------------------

function varint(n: bigint): number[] {
  const out: number[] = [];
  let v = n;
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return out;
}

type Field = { no: number; wire: number; payload: number[] };

function encode(fields: Field[]): Buffer {
  const out: number[] = [];
  for (const f of fields) {
    out.push(...varint(BigInt((f.no << 3) | f.wire)));
    if (f.wire === 2) out.push(...varint(BigInt(f.payload.length)));
    out.push(...f.payload);
  }
  return Buffer.from(out);
}

const utf8 = (s: string) => [...Buffer.from(s)];

const nasty = fc.oneof(
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.constantFrom("", " ", "\u0000", "\uFEFF", "\u202E", "../../etc/passwd", "alice", "bob", "/work/projects/alpha", "%s%n", "'; DROP TABLE memories; --", "mem_*"),
  fc.string({ unit: "grapheme-ascii", minLength: 500, maxLength: 3000 }),
);

/** a field with any wire type and a payload that may or may not fit it */
const rawField: fc.Arbitrary<Field> = fc.oneof(
  // a known field number with the right or the wrong wire type
  fc.record({ no: fc.integer({ min: 1, max: 8 }), wire: fc.constantFrom(0, 1, 2, 5), payload: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 12 }) }).map((f) =>
    f.wire === 0 ? { ...f, payload: varint(BigInt(f.payload[0] ?? 0)) } : f.wire === 1 ? { ...f, payload: [...f.payload, 0, 0, 0, 0, 0, 0, 0, 0].slice(0, 8) } : f.wire === 5 ? { ...f, payload: [...f.payload, 0, 0, 0, 0].slice(0, 4) } : f,
  ),
  // well-typed strings with hostile content (or invalid UTF-8)
  fc.tuple(fc.integer({ min: 1, max: 7 }), nasty, fc.boolean()).map(([no, s, bad]) => ({ no, wire: 2, payload: bad ? [...utf8(s), 0xc3, 0x28, 0xff] : utf8(s) })),
  // varints: huge, negative (10 bytes), over-long (11 bytes)
  fc.tuple(fc.integer({ min: 1, max: 8 }), fc.constantFrom(0n, 1n, 2147483647n, 2147483648n, 4294967295n, 18446744073709551615n, 18446744073709551616n)).map(([no, v]) => ({ no, wire: 0, payload: varint(v) })),
  fc.integer({ min: 1, max: 8 }).map((no) => ({ no, wire: 0, payload: [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01] })),
  // unknown field numbers, the largest field number, field 0
  fc.tuple(fc.constantFrom(0, 9, 99, 19000, 536870911), fc.constantFrom(0, 2)).map(([no, wire]) => ({ no, wire, payload: wire === 0 ? [1] : [0x61] })),
  // groups (wire types 3/4) and the reserved 6/7
  fc.tuple(fc.integer({ min: 1, max: 8 }), fc.constantFrom(3, 4, 6, 7)).map(([no, wire]) => ({ no, wire, payload: [] })),
  // nested messages (RecordTurn fields 4, 5, 7) built from more raw fields
  fc.tuple(fc.constantFrom(4, 5, 7), fc.array(fc.record({ no: fc.integer({ min: 1, max: 4 }), s: nasty }), { maxLength: 4 })).map(([no, inner]) => ({
    no,
    wire: 2,
    payload: [...encode(inner.map((i) => ({ no: i.no, wire: 2, payload: utf8(i.s) })))],
  })),
);

const validBuild = fc
  .record({
    threadId: fc.oneof({ weight: 3, arbitrary: fc.constantFrom("root-1", "child-1") }, { weight: 1, arbitrary: nasty }),
    rootThreadId: fc.oneof(fc.constantFrom("", "root-1"), nasty),
    ancestors: fc.oneof(fc.constantFrom(0, 1).map((n) => (n === 0 ? [] : ["root-1"])), fc.array(nasty, { maxLength: 5 })),
    userId: fc.oneof(fc.constantFrom("dana", "alice", "bob"), nasty),
    project: fc.option(fc.oneof(fc.constant("/work/projects/alpha"), nasty), { nil: undefined }),
    task: fc.oneof(fc.constantFrom("deploy script", "which package manager", "staging database"), nasty),
    recent: fc.array(nasty, { maxLength: 4 }),
    budgetTokens: fc.option(fc.oneof(fc.integer({ min: -5, max: 5 }), fc.integer({ min: 1, max: 2000 }), fc.constantFrom(100_000, 100_001, 2147483647, -2147483648)), { nil: undefined }),
  })
  .map((r) => toBinary(BuildPrefixRequestSchema, create(BuildPrefixRequestSchema, r)));

const validTurn = fc
  .record({
    threadId: fc.oneof(fc.constantFrom("root-1", "child-1"), nasty),
    rootThreadId: fc.oneof(fc.constantFrom("", "root-1"), nasty),
    historyLength: fc.nat({ max: 4294967295 }),
    toolCalls: fc.array(fc.record({ id: fc.oneof(fc.constantFrom("call_1", "call_2"), nasty), name: fc.oneof(fc.constantFrom("bash", "read_file"), nasty), argsJson: fc.oneof(fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)), nasty, fc.integer({ min: 1, max: 3000 }).map((d) => "[".repeat(d) + "]".repeat(d))) }), { maxLength: 4 }),
    toolResults: fc.array(fc.record({ id: fc.oneof(fc.constant("call_1"), nasty), excerpt: nasty }), { maxLength: 4 }),
    finalText: nasty,
    usage: fc.option(fc.record({ inputTokens: fc.nat(), outputTokens: fc.nat(), totalTokens: fc.nat(), cachedInputTokens: fc.nat() }), { nil: undefined }),
  })
  .map((r) => toBinary(RecordTurnRequestSchema, create(RecordTurnRequestSchema, r)));

interface Call {
  what: string;
  path: string;
  body: Buffer;
}

const body: fc.Arbitrary<{ what: string; bytes: Uint8Array }> = fc.oneof(
  { weight: 3, arbitrary: fc.oneof(validBuild, validTurn).map((b) => ({ what: "valid", bytes: b })) },
  { weight: 3, arbitrary: fc.array(rawField, { maxLength: 8 }).map((f) => ({ what: "raw-fields", bytes: encode(f) })) },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.oneof(validBuild, validTurn), fc.double({ min: 0, max: 1, noNaN: true })).map(([b, at]) => ({ what: "truncated", bytes: b.subarray(0, Math.floor(at * b.length)) })),
  },
  {
    weight: 1,
    // a length prefix longer than what follows
    arbitrary: fc.tuple(fc.integer({ min: 1, max: 8 }), fc.constantFrom(5, 127, 300, 1 << 20, 2 ** 31 - 1)).map(([no, len]) => ({ what: "bad-length", bytes: Buffer.from([...varint(BigInt((no << 3) | 2)), ...varint(BigInt(len)), 0x61]) })),
  },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => ({ what: "random", bytes: b })) },
  { weight: 1, arbitrary: fc.constant({ what: "empty", bytes: new Uint8Array(0) }) },
);

const callArb: fc.Arbitrary<Call> = fc
  .tuple(body, fc.oneof({ weight: 10, arbitrary: fc.constantFrom(BUILD, RECORD) }, { weight: 1, arbitrary: fc.constantFrom("/infinity.memory.v1.ContextHook/Nope", "/other.Service/BuildPrefix") }))
  .map(([b, path]) => ({ what: b.what, path, body: Buffer.from(b.bytes) }));

// ---- raw client --------------------------------------------------------------------------------

function rawCall(client: Client, c: Call): Promise<{ code: number; details: string; response: Buffer | null }> {
  return new Promise((resolve) => {
    client.makeUnaryRequest<Buffer, Buffer>(
      c.path,
      (b) => b,
      (b) => b,
      c.body,
      { deadline: Date.now() + 30_000 },
      (err: ServiceError | null, res?: Buffer) => resolve(err ? { code: err.code, details: err.details, response: null } : { code: status.OK, details: "", response: res ?? null }),
    );
  });
}

// ---- the test ----------------------------------------------------------------------------------

const problems = { unhandledRejections: [] as unknown[], uncaught: [] as unknown[] };
const onRejection = (e: unknown) => problems.unhandledRejections.push(e);
const onUncaught = (e: unknown) => problems.uncaught.push(e);

describe("gRPC ContextHook fuzz", () => {
  let m: ReturnType<typeof openTestMemory>;
  let server: ContextHookServer;
  let client: Client;
  let before = "";
  const snapshot = () => JSON.stringify(m.db.prepare("SELECT id, content, content_hash, status, version, flags FROM memories ORDER BY id").all());
  const traceCount = () => (m.db.prepare("SELECT count(*) AS n FROM trace_events").get() as { n: number }).n;

  beforeAll(async () => {
    process.on("unhandledRejection", onRejection);
    process.on("uncaughtException", onUncaught);
    m = openTestMemory(tempDir("imem-gfuzz-"));
    const scope = req({ user: "dana", project: "/work/projects/alpha" });
    for (const content of ["The deploy script lives in scripts/deploy.sh", "Dana prefers pnpm over npm", "The staging database is read-only on Fridays"]) {
      await m.service.remember(scope, { content, kind: "fact" }, modelOrigin());
    }
    before = snapshot();
    const tokens = await loadTokenCounter("o200k_base");
    const builder = new MemoryPrefixBuilder({ service: m.service, toggles: m.toggles, edgesOf: (id) => m.store.edgesOf(id), tokens, config: m.config });
    server = await startContextHookServer({ builder, traces: new SqliteTraceStore(m.db), address: "127.0.0.1:0", clock: m.clock });
    client = new Client(server.address, credentials.createInsecure());
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await server?.close({ graceMs: 500 });
    m?.close();
    process.off("unhandledRejection", onRejection);
    process.off("uncaughtException", onUncaught);
  });

  it(`${RUNS} generated calls: client errors or decodable answers only, data unchanged`, async () => {
    const traces0 = traceCount();
    const codes: Record<string, number> = {};
    let accepted = 0;
    let cases = 0;
    const check = async (c: Call) => {
      const r = await rawCall(client, c);
      cases++;
      codes[status[r.code] ?? String(r.code)] = (codes[status[r.code] ?? String(r.code)] ?? 0) + 1;
      const known = c.path === BUILD || c.path === RECORD;
      if (!known) return void expect(r.code, c.path).toBe(status.UNIMPLEMENTED);
      expect([status.OK, status.INVALID_ARGUMENT, status.RESOURCE_EXHAUSTED], `${c.what} ${c.path} → ${status[r.code]}: ${r.details}`).toContain(r.code);
      if (r.code === status.INVALID_ARGUMENT) expect(r.details.length, "an INVALID_ARGUMENT names what is wrong").toBeGreaterThan(5);
      if (r.code !== status.OK) return;
      if (c.path === BUILD) fromBinary(BuildPrefixResponseSchema, r.response!);
      else if (fromBinary(RecordTurnResponseSchema, r.response!).accepted) accepted++;
    };
    await fc.assert(
      fc.asyncProperty(fc.array(callArb, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        await Promise.all(batch.map(check));
      }),
      { numRuns: Math.ceil(RUNS / BATCH), seed: 20261130, endOnFailure: true, reporter: shortReport },
    );
    // over the default 4 MiB receive limit: refused before any handler runs
    const huge = await rawCall(client, { what: "huge", path: BUILD, body: toBinaryHuge() });
    expect(huge.code).toBe(status.RESOURCE_EXHAUSTED);
    // still serving
    const ok = await rawCall(client, {
      what: "normal",
      path: BUILD,
      body: Buffer.from(toBinary(BuildPrefixRequestSchema, create(BuildPrefixRequestSchema, { threadId: "root-1", userId: "dana", project: "/work/projects/alpha", task: "deploy script" }))),
    });
    expect(ok.code).toBe(status.OK);
    expect(fromBinary(BuildPrefixResponseSchema, ok.response!).text).toContain("scripts/deploy.sh");
    await new Promise((r) => setTimeout(r, 200));
    expect(problems.uncaught).toEqual([]);
    expect(problems.unhandledRejections).toEqual([]);
    expect(snapshot(), "memories changed").toBe(before);
    expect(traceCount() - traces0, "trace rows other than the accepted turns").toBe(accepted);
    expect(m.db.pragma("integrity_check", { simple: true })).toBe("ok");
    console.log("grpc fuzz " + JSON.stringify({ cases, acceptedTurns: accepted, codes }));
    expect(cases).toBeGreaterThanOrEqual(RUNS);
  }, 600_000);
});

/** fast-check's default report prints every byte of a 50-call batch; the first error says enough */
function shortReport<T>(d: fc.RunDetails<T>): void {
  if (d.failed) throw new Error(`fuzz failed (seed ${d.seed}, path ${d.counterexamplePath}): ${d.errorInstance instanceof Error ? d.errorInstance.message : String(d.errorInstance)}`);
}

function toBinaryHuge(): Buffer {
  return Buffer.from(toBinary(BuildPrefixRequestSchema, create(BuildPrefixRequestSchema, { threadId: "t", userId: "dana", task: "x".repeat(5 * 1024 * 1024) })));
}

// The gRPC ContextHook service through its public seam: a grpc-js client speaking the wire
// format of proto/infinity/memory/v1/context_hook.proto, over TCP loopback and a Unix socket.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, status, type Client, type ServiceError } from "@grpc/grpc-js";
import { spawn } from "node:child_process";
import { existsSync, lstatSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fixedClock } from "../../core/clock.js";
import { CoreError } from "../../core/errors.js";
import type { PrefixBuilder, PrefixRequest, PrefixResult } from "../../core/retrieval/prefix-types.js";
import {
  startContextHookServer,
  type ContextHookServer,
  type TraceSink,
} from "../../context-hook/grpc/server.js";
import { contextHookService } from "../../context-hook/grpc/service.js";
import {
  BuildPrefixRequestSchema,
  OmitReason,
  PrefixItemType,
  RecordTurnRequestSchema,
  type BuildPrefixRequest,
  type BuildPrefixResponse,
  type RecordTurnRequest,
  type RecordTurnResponse,
} from "../../proto/gen/infinity/memory/v1/context_hook_pb.js";
import { openDatabase, type Db } from "../../stores/sqlite/database.js";
import { SqliteTraceStore } from "../../stores/sqlite/trace-store.js";
import type { TraceEvent } from "../../stores/traits.js";
import { tempDir } from "../helpers/tmp.js";

// --- fixtures ----------------------------------------------------------------------------------

/** Answers from the request so the test can see every field crossed the wire both ways. */
class ScriptedBuilder implements PrefixBuilder {
  readonly requests: PrefixRequest[] = [];
  failWith: unknown = null;
  hang = false;

  async build(req: PrefixRequest): Promise<PrefixResult> {
    this.requests.push(req);
    if (this.hang) await new Promise(() => {});
    if (this.failWith !== null) throw this.failWith;
    return {
      text: `## Recalled\n- about ${req.task}`,
      items: [
        { id: "mem_1", type: "memory", kind: "preference", score: 2.5, tokens: 12, why: "matched: deploy" },
        { id: "skl_1", type: "skill", kind: "procedure", score: 0.75, tokens: 30, why: "matched: staging" },
      ],
      tokensUsed: 42,
      budgetTokens: req.budgetTokens ?? 1200,
      omitted: [
        { id: "mem_2", reason: "budget" },
        { id: "mem_3", reason: "near_duplicate" },
        { id: "mem_4", reason: "in_history" },
        { id: "mem_5", reason: "below_threshold" },
        { id: "mem_6", reason: "flagged" },
        { id: "mem_7", reason: "pending" },
      ],
      disabled: false,
    };
  }
}

/** The production trace store on a real SQLite file, with a switch to make it fail. */
class FailableTraces implements TraceSink {
  readonly store: SqliteTraceStore;
  fail = false;

  constructor(readonly db: Db) {
    this.store = new SqliteTraceStore(db);
  }

  async record(e: TraceEvent): Promise<boolean> {
    if (this.fail) throw new Error("disk I/O error");
    return this.store.record(e);
  }

  /** every row, straight from the table the learning loop reads */
  rows(): { source: string; thread_id: string; root_thread_id: string; kind: string; body: string; at: number }[] {
    return this.db.prepare(`SELECT source, thread_id, root_thread_id, kind, body, at FROM trace_events ORDER BY id`).all() as never;
  }
}

const HookClient = makeGenericClientConstructor(contextHookService, "ContextHook");
type Method = "buildPrefix" | "recordTurn";

function call<Res>(client: Client, method: Method, req: unknown): Promise<Res> {
  return new Promise((resolve, reject) => {
    const fn = (client as unknown as Record<Method, (r: unknown, opts: object, cb: (e: ServiceError | null, v: Res) => void) => void>)[method];
    fn.call(client, req, { deadline: Date.now() + 10_000 }, (e, v) => (e ? reject(e) : resolve(v)));
  });
}

async function callError(client: Client, method: Method, req: unknown): Promise<ServiceError> {
  try {
    await call(client, method, req);
  } catch (e) {
    return e as ServiceError;
  }
  throw new Error(`${method} succeeded; expected an error status`);
}

// The plain-object form of a request, every field optional.
type PrefixInit = Exclude<MessageInitShape<typeof BuildPrefixRequestSchema>, BuildPrefixRequest>;
type TurnInit = Exclude<MessageInitShape<typeof RecordTurnRequestSchema>, RecordTurnRequest>;

function prefixRequest(over: PrefixInit = {}): BuildPrefixRequest {
  return create(BuildPrefixRequestSchema, {
    threadId: "t-child",
    rootThreadId: "t-root",
    ancestors: ["t-root", "t-mid"],
    userId: "alice",
    project: "/work/app",
    task: "deploy the app to staging",
    recent: ["we use blue-green deploys"],
    budgetTokens: 800,
    ...over,
  });
}

function turn(over: TurnInit = {}): RecordTurnRequest {
  return create(RecordTurnRequestSchema, {
    threadId: "t-child",
    rootThreadId: "t-root",
    historyLength: 7,
    toolCalls: [{ id: "call_1", name: "bash", argsJson: '{"cmd":"make deploy"}' }],
    toolResults: [{ id: "call_1", excerpt: "deployed to staging" }],
    finalText: "Deployed.",
    usage: { inputTokens: 1000, outputTokens: 50, totalTokens: 1050, cachedInputTokens: 800 },
    ...over,
  });
}

// --- harness -----------------------------------------------------------------------------------

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(address = "127.0.0.1:0") {
  const dir = tempDir("imem-grpc-");
  const db = openDatabase(join(dir, "memory.db"));
  const builder = new ScriptedBuilder();
  const traces = new FailableTraces(db);
  const clock = fixedClock(1_700_000_000_000);
  const server = await startContextHookServer({ builder, traces, address, clock });
  const client = new HookClient(server.address, credentials.createInsecure());
  cleanups.push(() => {
    db.close();
  });
  cleanups.push(() => server.close({ graceMs: 500 }));
  cleanups.push(() => client.close());
  return { dir, db, builder, traces, server, client, clock };
}

function expectFullResponse(res: BuildPrefixResponse): void {
  expect(res.text).toBe("## Recalled\n- about deploy the app to staging");
  expect(res.items.map((i) => [i.id, i.type, i.kind, i.score, i.tokens, i.why])).toEqual([
    ["mem_1", PrefixItemType.MEMORY, "preference", 2.5, 12, "matched: deploy"],
    ["skl_1", PrefixItemType.SKILL, "procedure", 0.75, 30, "matched: staging"],
  ]);
  expect(res.tokensUsed).toBe(42);
  expect(res.budgetTokens).toBe(800);
  expect(res.omitted.map((o) => [o.id, o.reason])).toEqual([
    ["mem_2", OmitReason.BUDGET],
    ["mem_3", OmitReason.NEAR_DUPLICATE],
    ["mem_4", OmitReason.IN_HISTORY],
    ["mem_5", OmitReason.BELOW_THRESHOLD],
    ["mem_6", OmitReason.FLAGGED],
    ["mem_7", OmitReason.PENDING],
  ]);
  expect(res.disabled).toBe(false);
}

// --- tests -------------------------------------------------------------------------------------

describe("gRPC ContextHook", () => {
  it("uses the wire paths a tonic client derives from the .proto", () => {
    expect(contextHookService.buildPrefix.path).toBe("/infinity.memory.v1.ContextHook/BuildPrefix");
    expect(contextHookService.recordTurn.path).toBe("/infinity.memory.v1.ContextHook/RecordTurn");
  });

  it("round-trips BuildPrefix over TCP loopback", async () => {
    const { server, client, builder } = await setup();
    expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(server.port).toBeGreaterThan(0);

    const res = await call<BuildPrefixResponse>(client, "buildPrefix", prefixRequest());
    expectFullResponse(res);
    expect(builder.requests).toEqual([
      {
        scope: { user: "alice", project: "/work/app", session: "t-root", thread: "t-child", ancestors: ["t-root", "t-mid"] },
        task: "deploy the app to staging",
        recent: ["we use blue-green deploys"],
        budgetTokens: 800,
      },
    ]);
  });

  it("derives the session and leaves project and budget to the defaults when unset", async () => {
    const { client, builder } = await setup();
    const bare = create(BuildPrefixRequestSchema, { threadId: "t-child", ancestors: ["t-root"], userId: "local", task: "hi" });
    const res = await call<BuildPrefixResponse>(client, "buildPrefix", bare);
    expect(res.budgetTokens).toBe(1200);
    const root = create(BuildPrefixRequestSchema, { threadId: "t-solo", userId: "local", task: "hi", project: "" });
    await call<BuildPrefixResponse>(client, "buildPrefix", root);
    expect(builder.requests.map((r) => [r.scope.session, r.scope.project, r.budgetTokens])).toEqual([
      ["t-root", null, undefined],
      ["t-solo", null, undefined],
    ]);
  });

  it("round-trips BuildPrefix over a Unix socket and removes the socket on close", async () => {
    const dir = tempDir("imem-sock-");
    const path = join(dir, "hook.sock");
    const { server, client } = await setup(`unix:${path}`);
    expect(server.address).toBe(`unix:${path}`);
    expect(server.port).toBeNull();
    expect(lstatSync(path).isSocket()).toBe(true);

    expectFullResponse(await call<BuildPrefixResponse>(client, "buildPrefix", prefixRequest()));

    client.close();
    await server.close();
    expect(existsSync(path)).toBe(false);
  });

  it("replaces a dead server's socket file but refuses a live one or a regular file", async () => {
    const dir = tempDir("imem-sock-");
    const path = join(dir, "hook.sock");
    // A server killed with SIGKILL leaves its socket file behind.
    const child = spawn(process.execPath, ["-e", `require("net").createServer().listen(${JSON.stringify(path)}, () => console.log("up"))`]);
    await new Promise<void>((done, fail) => {
      child.stdout.once("data", () => done());
      child.once("error", fail);
    });
    const exited = new Promise((done) => child.once("exit", done));
    child.kill("SIGKILL");
    await exited;
    expect(lstatSync(path).isSocket()).toBe(true);

    const { client } = await setup(`unix:${path}`);
    expectFullResponse(await call<BuildPrefixResponse>(client, "buildPrefix", prefixRequest()));

    const builder = new ScriptedBuilder();
    const traces: TraceSink = { record: async () => true };
    await expect(startContextHookServer({ builder, traces, address: `unix:${path}` })).rejects.toThrow(/in use/);
    const file = join(dir, "plain.sock");
    writeFileSync(file, "not a socket");
    await expect(startContextHookServer({ builder, traces, address: `unix:${file}` })).rejects.toThrow(/not a socket/);
  });

  it("records a turn once: the identical turn again is a duplicate", async () => {
    const { client, traces, clock } = await setup();
    const first = await call<RecordTurnResponse>(client, "recordTurn", turn());
    expect([first.accepted, first.duplicate]).toEqual([true, false]);
    // A retry arrives later: receipt time is not part of the turn's identity.
    clock.advance(60_000);
    const again = await call<RecordTurnResponse>(client, "recordTurn", turn());
    expect([again.accepted, again.duplicate]).toEqual([false, true]);
    const next = await call<RecordTurnResponse>(client, "recordTurn", turn({ historyLength: 9 }));
    expect([next.accepted, next.duplicate]).toEqual([true, false]);

    const rows = traces.rows();
    expect(rows).toHaveLength(2);
    expect((await traces.store.listByThread("t-child")).map((e) => e.body["historyLength"])).toEqual([7, 9]);
    const row = rows[0]!;
    expect([row.source, row.thread_id, row.root_thread_id, row.kind, row.at]).toEqual([
      "grpc",
      "t-child",
      "t-root",
      "turn",
      1_700_000_000_000,
    ]);
    expect(JSON.parse(row.body)).toEqual({
      historyLength: 7,
      toolCalls: [{ id: "call_1", name: "bash", argsDigest: expect.stringMatching(/^[0-9a-f]{64}$/), argsExcerpt: '{"cmd":"make deploy"}' }],
      toolResults: [{ id: "call_1", excerpt: "deployed to staging" }],
      finalText: "Deployed.",
      usage: { inputTokens: 1000, outputTokens: 50, totalTokens: 1050, cachedInputTokens: 800 },
    });
  });

  it("stores excerpts, not whole payloads, and still tells long turns apart", async () => {
    const { client, traces } = await setup();
    const long = "x".repeat(5000);
    await call<RecordTurnResponse>(client, "recordTurn", turn({ finalText: long, usage: undefined, rootThreadId: "" }));
    // Same first 2000 characters, different tail: a different turn.
    const other = await call<RecordTurnResponse>(client, "recordTurn", turn({ finalText: `${long}y`, usage: undefined, rootThreadId: "" }));
    expect(other.accepted).toBe(true);
    const [row] = traces.rows();
    const body = JSON.parse(row!.body) as { finalText: string; usage: unknown };
    expect(body.finalText).toBe(`${"x".repeat(2000)}…`);
    expect(body.usage).toBeNull();
    expect(row!.root_thread_id).toBe("t-child");
  });

  it.each([
    ["thread_id", { threadId: "" }],
    ["user_id", { userId: "  " }],
    ["task", { task: "" }],
    ["budget_tokens", { budgetTokens: -5 }],
    ["budget_tokens", { budgetTokens: 0 }],
    ["budget_tokens", { budgetTokens: 100_001 }],
    ["ancestors[1]", { ancestors: ["t-root", ""] }],
    ["root_thread_id", { rootThreadId: "t-other" }],
    ["thread_id holds a NUL", { threadId: "t-\u0000child" }],
    ["user_id holds a NUL", { userId: "alice\u0000" }],
    ["ancestors[0] holds a NUL", { ancestors: ["t-\u0000root"], rootThreadId: "" }],
    ["project holds a NUL", { project: "/repo\u0000" }],
    // past what a PostgreSQL index key holds (SQLite took it; the PostgreSQL write failed)
    ["user_id is 600 bytes long; an identifier may be at most 512 bytes", { userId: "é".repeat(300) }],
    ["ancestors[0] is 513 bytes long", { ancestors: ["r".repeat(513)], rootThreadId: "" }],
  ] satisfies [string, PrefixInit][])("answers INVALID_ARGUMENT naming %s", async (field, over) => {
    const { client, builder } = await setup();
    const err = await callError(client, "buildPrefix", prefixRequest(over));
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toContain(field);
    expect(builder.requests).toHaveLength(0);
  });

  it.each([
    ["thread_id", { threadId: "" }],
    ["tool_calls[0].name", { toolCalls: [{ id: "c1", name: "", argsJson: "" }] }],
    ["tool_calls[0].args_json", { toolCalls: [{ id: "c1", name: "bash", argsJson: "{cmd:" }] }],
    ["tool_results[0].id", { toolResults: [{ id: "", excerpt: "ok" }] }],
    ["thread_id holds a NUL", { threadId: "t\u0000" }],
    ["root_thread_id holds a NUL", { rootThreadId: "r\u0000" }],
    ["tool_calls[0].id holds a NUL", { toolCalls: [{ id: "c\u00001", name: "bash", argsJson: "" }] }],
    ["thread_id is 513 bytes long", { threadId: "t".repeat(513) }],
  ] satisfies [string, TurnInit][])("RecordTurn answers INVALID_ARGUMENT naming %s", async (field, over) => {
    const { client, traces } = await setup();
    const err = await callError(client, "recordTurn", turn(over));
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toContain(field);
    expect(traces.rows()).toHaveLength(0);
  });

  it("takes a NUL in the task as a separator: the builder gets the words, not the NUL", async () => {
    const { client, builder } = await setup();
    await call<BuildPrefixResponse>(client, "buildPrefix", prefixRequest({ task: "fix the\u0000deploy script" }));
    expect(builder.requests.at(-1)?.task).toBe("fix the deploy script");
  });

  it("answers INTERNAL when the builder throws, and keeps serving", async () => {
    const { client, builder } = await setup();
    builder.failWith = new Error("index unavailable");
    const err = await callError(client, "buildPrefix", prefixRequest());
    expect(err.code).toBe(status.INTERNAL);
    expect(err.details).toContain("index unavailable");

    builder.failWith = "a thrown string";
    expect((await callError(client, "buildPrefix", prefixRequest())).code).toBe(status.INTERNAL);

    builder.failWith = new CoreError("invalid_argument", "task is too long");
    const invalid = await callError(client, "buildPrefix", prefixRequest());
    expect([invalid.code, invalid.details]).toEqual([status.INVALID_ARGUMENT, "task is too long"]);

    builder.failWith = null;
    expectFullResponse(await call<BuildPrefixResponse>(client, "buildPrefix", prefixRequest()));
  });

  it("answers INTERNAL when the trace store fails", async () => {
    const { client, traces } = await setup();
    traces.fail = true;
    const err = await callError(client, "recordTurn", turn());
    expect(err.code).toBe(status.INTERNAL);
    expect(err.details).toContain("disk I/O error");
  });

  it("survives bytes that are not a request", async () => {
    const { server } = await setup();
    const Raw = makeGenericClientConstructor(
      {
        buildPrefix: {
          ...contextHookService.buildPrefix,
          requestSerialize: () => Buffer.from([0xff, 0xff, 0xff]),
        },
      },
      "ContextHook",
    );
    const raw = new Raw(server.address, credentials.createInsecure());
    cleanups.push(() => raw.close());
    // Undecodable bytes are the caller's fault: INVALID_ARGUMENT naming the decode error (grpc-js
    // alone would answer INTERNAL "Error deserializing request").
    const err = await callError(raw, "buildPrefix", {});
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/^the request is not a valid BuildPrefixRequest protobuf message: /);

    const again = new HookClient(server.address, credentials.createInsecure());
    cleanups.push(() => again.close());
    expectFullResponse(await call<BuildPrefixResponse>(again, "buildPrefix", prefixRequest()));
  });

  it("closes even while a call hangs, after the grace period", async () => {
    const { server, client, builder } = await setup();
    builder.hang = true;
    const pending = callError(client, "buildPrefix", prefixRequest());
    await expect.poll(() => builder.requests.length).toBe(1);
    const started = Date.now();
    await server.close({ graceMs: 200 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await pending).code).not.toBe(status.OK);
  });

  it("refuses addresses it should not bind", async () => {
    const builder = new ScriptedBuilder();
    const traces: TraceSink = { record: async () => true };
    await expect(startContextHookServer({ builder, traces, address: "0.0.0.0:0" })).rejects.toThrow(/non-loopback/);
    await expect(startContextHookServer({ builder, traces, address: "localhost" })).rejects.toThrow(/HOST:PORT/);
    await expect(startContextHookServer({ builder, traces, address: "127.0.0.1:70000" })).rejects.toThrow(/HOST:PORT/);
    await expect(startContextHookServer({ builder, traces, address: "unix:" })).rejects.toThrow(/socket path/);
  });
});

// `serve --grpc`: the ContextHook service next to the memory toolset in one process, building
// prefixes from the same database the toolset writes.
import { create } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, type Client, type ServiceError } from "@grpc/grpc-js";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { contextHookService } from "../../context-hook/grpc/service.js";
import { BuildPrefixRequestSchema, type BuildPrefixResponse } from "../../proto/gen/infinity/memory/v1/context_hook_pb.js";
import { postJson, startCallbackSink } from "../helpers/callback-sink.js";
import { CLI } from "../helpers/cli.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";
import { tempDir } from "../helpers/tmp.js";

const HookClient = makeGenericClientConstructor(contextHookService, "ContextHook");

function buildPrefix(client: Client, req: unknown): Promise<BuildPrefixResponse> {
  return new Promise((resolve, reject) => {
    (client as unknown as { buildPrefix(r: unknown, o: object, cb: (e: ServiceError | null, v: BuildPrefixResponse) => void): void }).buildPrefix(
      req,
      { deadline: Date.now() + 10_000 },
      (e, v) => (e ? reject(e) : resolve(v)),
    );
  });
}

/**
 * `serve --grpc` on this directory's database (or the PostgreSQL database `db` names): its toolset
 * URL, its gRPC address and its exit code.
 */
async function startServe(dir: string, db = join(dir, "m.db")) {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--grpc", "127.0.0.1:0", "--db", db, "--log", join(dir, "s.log")], {
    env: { ...process.env, INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" },
    stdio: ["ignore", "pipe", "ignore"],
  });
  const exited = new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
  const lines: string[] = [];
  const rl = createInterface({ input: child.stdout });
  const ready = new Promise<void>((resolve) => rl.on("line", (l) => (lines.push(l), l.startsWith("ContextHook gRPC:") && resolve())));
  await ready;
  const url = /listening on (http:\/\/\S+)/.exec(lines.join("\n"))![1]!;
  const grpcAddress = /ContextHook gRPC: (\S+)/.exec(lines.join("\n"))![1]!;
  return { child, exited, url, grpcAddress };
}

/** The scenario on a store: `db` is the --db value (undefined: a SQLite file in the directory). */
async function storesThenWarmsUp(db?: string): Promise<void> {
  const dir = tempDir();
  const { child, exited, url, grpcAddress } = await startServe(dir, db);
  const sink = await startCallbackSink();
  try {
    await postJson(`${url}/invoke`, {
      operation: "memory_remember",
      arguments: { content: "User prefers pnpm over npm for JavaScript projects", kind: "preference" },
      id: "tu-1",
      call_id: null,
      callback_url: sink.url,
      group_id: "root-1",
      thread_ancestors: null,
    });
    expect((await sink.next((b) => b.id === "tu-1")).text).toMatch(/^Remembered as mem_/);
    const client = new HookClient(grpcAddress, credentials.createInsecure());
    const res = await buildPrefix(client, create(BuildPrefixRequestSchema, { threadId: "root-2", rootThreadId: "root-2", userId: "alice", task: "install the JavaScript dependencies with npm or pnpm" }));
    expect(res.text).toContain("User prefers pnpm over npm for JavaScript projects");
    expect(res.tokensUsed).toBeGreaterThan(0);
    const other = await buildPrefix(client, create(BuildPrefixRequestSchema, { threadId: "root-3", rootThreadId: "root-3", userId: "bob", task: "install the JavaScript dependencies with npm or pnpm" }));
    expect(other.text).toBe("");
    client.close();
  } finally {
    await sink.close();
    child.kill("SIGINT");
  }
  expect(await exited).toBe(0);
  // The empty database at the first start had nothing to warm up, unless its worker came up only
  // after Alice's write (a loaded machine): then her one scope is all it may have built. The
  // restart below has her scope to warm up, whatever the timing.
  const logFile = join(dir, "s.log");
  const before = readFileSync(logFile, "utf8");
  for (const l of before.split("\n").filter((x) => x.includes("semantic indexes built"))) expect((JSON.parse(l) as { scopes: number }).scopes).toBe(1);
  const again = await startServe(dir, db);
  try {
    let warmed: { scopes: number } | null = null;
    for (let i = 0; i < 100 && !warmed; i++) {
      const line = readFileSync(logFile, "utf8").slice(before.length).split("\n").find((l) => l.includes("semantic indexes built"));
      if (line) warmed = JSON.parse(line) as { scopes: number };
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(warmed?.scopes).toBe(1);
    const client = new HookClient(again.grpcAddress, credentials.createInsecure());
    const res = await buildPrefix(client, create(BuildPrefixRequestSchema, { threadId: "root-4", rootThreadId: "root-4", userId: "alice", task: "which package manager for JavaScript" }));
    expect(res.text).toContain("User prefers pnpm over npm for JavaScript projects");
    client.close();
  } finally {
    again.child.kill("SIGINT");
  }
  expect(await again.exited).toBe(0);
}

const SCENARIO = "answers BuildPrefix with what the memory toolset stored; restarted, it builds the semantic index of the scope written last before any prefix asks";

describe("serve --grpc", () => {
  it(SCENARIO, () => storesThenWarmsUp());
});

describePg("serve --grpc on PostgreSQL", (base) => {
  let drop: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await drop?.();
  });
  it(SCENARIO, async () => {
    const t = await createTestDatabase(base(), "grpc");
    drop = t.drop;
    await storesThenWarmsUp(t.url);
  });
});

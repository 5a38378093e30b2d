// `serve --grpc`: the ContextHook service next to the memory toolset in one process, building
// prefixes from the same database the toolset writes.
import { create } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, type Client, type ServiceError } from "@grpc/grpc-js";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { contextHookService } from "../../context-hook/grpc/service.js";
import { BuildPrefixRequestSchema, type BuildPrefixResponse } from "../../proto/gen/infinity/memory/v1/context_hook_pb.js";
import { postJson, startCallbackSink } from "../helpers/callback-sink.js";
import { CLI } from "../helpers/cli.js";
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

describe("serve --grpc", () => {
  it("answers BuildPrefix with what the memory toolset stored", async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--grpc", "127.0.0.1:0", "--db", join(dir, "m.db"), "--log", join(dir, "s.log")], {
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
  });
});

// `serve --ui --admin-grpc`: the review page's API and the admin gRPC services next to the memory
// toolset in one process, over the database the toolset writes; the page URL carries the token.
import { create } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, Metadata, type ServiceError } from "@grpc/grpc-js";
import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { adminServiceDefinitions } from "../../admin/api/grpc.js";
import { ListMemoriesRequestSchema, type ListMemoriesResponse } from "../../proto/gen/infinity/memory/v1/admin_pb.js";
import { postJson, startCallbackSink } from "../helpers/callback-sink.js";
import { CLI } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

describe("serve --ui --admin-grpc", () => {
  it("prints the page URL with the token and serves both admin transports beside the toolset", async () => {
    const dir = tempDir("imem-admin-serve-");
    const child = spawn(
      process.execPath,
      [CLI, "serve", "--port", "0", "--ui", "--ui-port", "0", "--admin-grpc", "--admin-grpc-port", "0", "--db", join(dir, "m.db"), "--log", join(dir, "s.log")],
      { env: { ...process.env, INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice", INFINITY_HOME: join(dir, "no-daemon") }, stdio: ["ignore", "pipe", "ignore"] },
    );
    const exited = new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
    const lines: string[] = [];
    const rl = createInterface({ input: child.stdout });
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no admin lines within 20 s: ${lines.join("\n")}`)), 20_000);
      rl.on("line", (l) => {
        lines.push(l);
        if (lines.some((x) => x.startsWith("Review page:")) && lines.some((x) => x.startsWith("Admin gRPC:"))) {
          clearTimeout(t);
          resolve();
        }
      });
    });
    const out = lines.join("\n");
    const rap = /listening on (http:\/\/\S+)/.exec(out)![1]!;
    const page = /Review page: (http:\/\/127\.0\.0\.1:\d+\/)#token=([0-9a-f]{64})/.exec(out)!;
    const grpcAddress = /Admin gRPC: (\S+)/.exec(out)![1]!;
    const token = readFileSync(join(dir, "admin.token"), "utf8").trim();
    expect(page[2]).toBe(token);
    expect(statSync(join(dir, "admin.token")).mode & 0o777).toBe(0o600);
    const sink = await startCallbackSink();
    try {
      await postJson(`${rap}/invoke`, {
        operation: "memory_remember",
        arguments: { content: "User prefers pnpm over npm for JavaScript projects", kind: "preference" },
        id: "tu-1",
        call_id: null,
        callback_url: sink.url,
        group_id: "root-1",
        thread_ancestors: null,
      });
      expect((await sink.next((b) => b.id === "tu-1")).text).toMatch(/^Remembered as mem_/);

      const api = `${page[1]}api/v1/MemoryAdmin/ListMemories`;
      expect((await fetch(api, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" })).status).toBe(401);
      const res = await fetch(api, { method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` }, body: "{}" });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { memories: { content: string }[] };
      expect(body.memories.map((m) => m.content)).toEqual(["User prefers pnpm over npm for JavaScript projects"]);

      const Client = makeGenericClientConstructor(adminServiceDefinitions().MemoryAdmin, "MemoryAdmin");
      const client = new Client(grpcAddress, credentials.createInsecure());
      const md = new Metadata();
      md.set("authorization", `Bearer ${token}`);
      const viaGrpc = await new Promise<ListMemoriesResponse>((resolve, reject) =>
        (client as unknown as { listMemories(r: unknown, m: Metadata, cb: (e: ServiceError | null, v: ListMemoriesResponse) => void): void }).listMemories(
          create(ListMemoriesRequestSchema, {}),
          md,
          (e, v) => (e ? reject(e) : resolve(v)),
        ),
      );
      expect(viaGrpc.memories.map((m) => m.content)).toEqual(["User prefers pnpm over npm for JavaScript projects"]);
      client.close();
    } finally {
      await sink.close();
      child.kill("SIGINT");
    }
    expect(await exited).toBe(0);
  });
});

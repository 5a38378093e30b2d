// BuildPrefix over real gRPC (loopback) with the real prefix builder on a SQLite file: the
// request's project must be keyed the way the memory toolset keys it (its own cwd, links
// resolved), or the project's memories never reach the prefix.
import { create } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, type Client, type ServiceError } from "@grpc/grpc-js";
import { mkdirSync, realpathSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startContextHookServer } from "../../context-hook/grpc/server.js";
import { contextHookService } from "../../context-hook/grpc/service.js";
import { MemoryPrefixBuilder } from "../../core/retrieval/prefix.js";
import { loadTokenCounter } from "../../core/retrieval/tokens.js";
import { BuildPrefixRequestSchema, type BuildPrefixResponse } from "../../proto/gen/infinity/memory/v1/context_hook_pb.js";
import { SqliteTraceStore } from "../../stores/sqlite/trace-store.js";
import { modelOrigin, openTestMemory, req } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const HookClient = makeGenericClientConstructor(contextHookService, "ContextHook");

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function buildPrefix(client: Client, body: Parameters<typeof create<typeof BuildPrefixRequestSchema>>[1]): Promise<BuildPrefixResponse> {
  const msg = create(BuildPrefixRequestSchema, body);
  return new Promise((resolve, reject) => {
    (client as unknown as { buildPrefix: (r: unknown, o: object, cb: (e: ServiceError | null, v: BuildPrefixResponse) => void) => void }).buildPrefix(
      msg,
      { deadline: Date.now() + 10_000 },
      (e, v) => (e ? reject(e) : resolve(v)),
    );
  });
}

describe("gRPC BuildPrefix project", () => {
  it("finds the project's memories when the session's cwd names it through a link or with a trailing slash", async () => {
    const dir = tempDir("imem-grpc-proj-");
    const real = join(dir, "checkout-service");
    mkdirSync(real);
    const link = join(dir, "work-link");
    symlinkSync(real, link);
    // what a command server started in {cwd}/.infinity records: its cwd's parent, links resolved
    const project = realpathSync(real);

    const m = openTestMemory(dir);
    cleanups.push(() => m.close());
    await m.service.remember(
      req({ project }),
      { content: "The checkout service deploys through the blue-green pipeline in the ops repo", kind: "project", scope: "project" },
      modelOrigin(),
    );
    const tokens = await loadTokenCounter("o200k_base");
    const builder = new MemoryPrefixBuilder({ service: m.service, toggles: m.toggles, edgesOf: (id) => m.store.edgesOf(id), tokens, config: m.config });
    const server = await startContextHookServer({ builder, traces: new SqliteTraceStore(m.db), address: "127.0.0.1:0" });
    cleanups.push(() => server.close({ graceMs: 500 }));
    const client = new HookClient(server.address, credentials.createInsecure());
    cleanups.push(() => client.close());

    const ask = (p: string) =>
      buildPrefix(client, { threadId: "s9", userId: "alice", project: p, task: "deploy the checkout service with the blue-green pipeline" });
    // the canonical path works either way; the link and the trailing slash name the same directory
    for (const p of [project, `${project}/`, link, `${link}/`]) {
      const res = await ask(p);
      expect(res.text, `project ${p}`).toContain("blue-green pipeline in the ops repo");
    }
    // another project's session still does not see it
    const other = join(dir, "billing");
    mkdirSync(other);
    expect((await ask(other)).text).toBe("");
  });
});

// BuildPrefix over real gRPC (loopback) with the real prefix builder on a SQLite file: the recent
// texts a daemon sends may hold a whole pasted log; the builder gets their heads, as it does from
// the provider proxy, so the prefix stays within the daemon's deadline.
import { create } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, type ServiceError } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { startContextHookServer } from "../../context-hook/grpc/server.js";
import { contextHookService } from "../../context-hook/grpc/service.js";
import { DEFAULT_TASK_OPTIONS } from "../../context-hook/provider-proxy/task.js";
import { MemoryPrefixBuilder } from "../../core/retrieval/prefix.js";
import type { PrefixBuilder, PrefixRequest } from "../../core/retrieval/prefix-types.js";
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

/**
 * The gRPC server over the real prefix builder on `m`, recording each request the builder is
 * handed; `buildPrefix` calls it over loopback as the daemon does.
 */
async function recordingServer(m: ReturnType<typeof openTestMemory>) {
  const tokens = await loadTokenCounter("o200k_base");
  const real = new MemoryPrefixBuilder({ service: m.service, toggles: m.toggles, edgesOf: (id) => m.store.edgesOf(id), tokens, config: m.config });
  const seen: PrefixRequest[] = [];
  const builder: PrefixBuilder = { build: (r) => (seen.push(r), real.build(r)) };
  const server = await startContextHookServer({ builder, traces: new SqliteTraceStore(m.db), address: "127.0.0.1:0" });
  cleanups.push(() => server.close({ graceMs: 500 }));
  const client = new HookClient(server.address, credentials.createInsecure());
  cleanups.push(() => client.close());
  const buildPrefix = (body: unknown) =>
    new Promise<BuildPrefixResponse>((resolve, reject) =>
      (client as unknown as { buildPrefix: (r: unknown, o: object, cb: (e: ServiceError | null, v: BuildPrefixResponse) => void) => void }).buildPrefix(
        body,
        { deadline: Date.now() + 20_000 },
        (e, v) => (e ? reject(e) : resolve(v)),
      ),
    );
  return { seen, buildPrefix };
}

describe("gRPC BuildPrefix recent texts", () => {
  it("hands the builder the heads of huge recent texts and still skips what the history already says", async () => {
    const m = openTestMemory(tempDir());
    cleanups.push(() => m.close());
    await m.service.remember(req(), { content: "The staging cluster is deployed with helm from the ops repo", kind: "project" }, modelOrigin());
    await m.service.remember(req(), { content: "Staging helm releases are pinned to chart version 4.2", kind: "fact" }, modelOrigin());
    const { seen, buildPrefix } = await recordingServer(m);

    // a 3.5 MB pasted log that begins by quoting one of the memories
    const log = `Staging helm releases are pinned to chart version 4.2\n${"helm upgrade staging: waiting for rollout of pod 12345 abcdef\n".repeat(60_000)}`;
    const body = create(BuildPrefixRequestSchema, { threadId: "root-1", userId: "alice", project: "/work/proj-a", task: "deploy staging with helm", recent: [log, "ok, go ahead"] });
    const res = await buildPrefix(body);

    expect(seen).toHaveLength(1);
    const recent = seen[0]!.recent!;
    expect(recent).toHaveLength(2);
    expect(recent[0]!.length).toBeLessThanOrEqual(DEFAULT_TASK_OPTIONS.recentChars);
    expect(recent[0]!.startsWith("Staging helm releases are pinned")).toBe(true);
    expect(recent[1]).toBe("ok, go ahead");
    expect(res.text).toContain("The staging cluster is deployed with helm from the ops repo");
    expect(res.text).not.toContain("chart version 4.2");
  });

  it("hands the builder the head of a task that holds a whole pasted log, so other calls are not held up", async () => {
    const m = openTestMemory(tempDir());
    cleanups.push(() => m.close());
    await m.service.remember(req(), { content: "The staging cluster is deployed with helm from the ops repo", kind: "project" }, modelOrigin());
    const { seen, buildPrefix } = await recordingServer(m);

    // the daemon's latest user message: a question, then a 3.7 MB log pasted under it
    const task = `\n  deploy staging with helm 🚀\n${"helm upgrade staging: waiting for rollout of pod 12345 abcdef\n".repeat(60_000)}`;
    const body = create(BuildPrefixRequestSchema, { threadId: "root-1", userId: "alice", project: "/work/proj-a", task });
    const res = await buildPrefix(body);

    expect(seen).toHaveLength(1);
    // the head the provider proxy keeps of a user message is 4,000 characters, with a window of turns
    expect(seen[0]!.task.length).toBeLessThanOrEqual(2 * DEFAULT_TASK_OPTIONS.userChars);
    expect(seen[0]!.task.startsWith("deploy staging with helm 🚀\nhelm upgrade staging")).toBe(true);
    expect(res.text).toContain("The staging cluster is deployed with helm from the ops repo");
  });
});

// A scripted multi-turn session through the real provider proxy process: the trace events it
// records become episodes and steps with the right boundaries (no conversation store needed).
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { proxyCommand } from "../../context-hook/provider-proxy/providers-json.js";
import { TRACE_ORD_SCALE } from "../../core/learning/turns.js";
import { SqliteTraceStore } from "../../stores/sqlite/trace-store.js";
import {
  assistantMsg,
  call,
  CLI,
  daemonPreamble,
  FIXED_BUILDER,
  HOME,
  invokeLine,
  ROOT,
  SCRIPTED,
  startProcess,
  toolCallMsg,
  toolResultMsg,
  userMsg,
  type Proc,
} from "../context-hook/proxy-helpers.js";
import { openWorld } from "./world.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";

describe("episodes from the provider proxy's trace events", () => {
  const dir = mkdtempSync(join(tmpdir(), "imem-learn-proxy-"));
  let proxy: Proc;

  beforeAll(async () => {
    // The scripted provider answers with a tool call unless the request says #mode=normal.
    const argv = proxyCommand({
      upstream: [process.execPath, SCRIPTED, "--mode", "tool-call"],
      mainScript: CLI,
      proxyArgs: ["--infinity-home", HOME, "--db", join(dir, "memory.db"), "--log", join(dir, "proxy.log"), "--builder-module", FIXED_BUILDER],
    });
    proxy = await startProcess(argv, { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" }, "proxy");
  });

  afterAll(async () => {
    await proxy?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a scripted session yields one episode per task, its tool step, and nothing twice for a retried request", async () => {
    const thread = "learn-proxy-thread";
    const pre = daemonPreamble(thread, ROOT);
    const h1 = [userMsg("Find the config loader")];
    const h2 = [...h1, toolCallMsg("tc-9", "read_file", { path: "src/main.rs" }), toolResultMsg("tc-9", "fn load_config() -> Config { … } #mode=normal")];
    const h3 = [...h2, assistantMsg("Hello, world"), userMsg("Now summarise it")];
    for (const h of [h1, h1, h2, h3]) {
      const r = await call(proxy.socketPath, invokeLine(pre, h));
      expect(r.lines.at(-1)).toBe('"StreamEnd"');
    }
    // the learning stores over the proxy's database file (no conversation store)
    const world = openWorld(dir, { conversation: false });
    const traces = new SqliteTraceStore(world.mem.db);
    const deadline = Date.now() + 5000;
    while ((await traces.listByThread(thread)).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await traces.listByThread(thread)).toHaveLength(3); // the retry was deduplicated upstream

    const pass = await world.worker.drain();
    expect(pass.processed).toBe(1);
    const eps = await world.store.episodesOfThread("provider_proxy", thread);
    expect(eps.map((e) => [e.state, e.rootThreadId, e.finalExcerpt])).toEqual([
      ["done", ROOT, "Hello, world"],
      ["done", ROOT, "Hello, world"],
    ]);
    // boundaries follow the runtime's history positions
    expect(eps.map((e) => Math.floor(e.startOrd / TRACE_ORD_SCALE))).toEqual([1, 5]);
    const steps = await world.store.stepsOf(eps[0]!.id);
    expect(steps).toHaveLength(1);
    expect(steps[0]).toMatchObject({ tool: "read_file", callId: "tc-9", outcome: "ok", argsShape: "<digest>" });
    expect(steps[0]!.excerpt).toContain("fn load_config()");
    expect(steps[0]!.argsDigest).toMatch(/^[0-9a-f]{16,}$/);
    expect(await world.store.stepsOf(eps[1]!.id)).toEqual([]);

    // processed again (a restart, a second worker): the same episodes
    await world.store.enqueue("provider_proxy", thread, ROOT, world.mem.clock.now());
    await world.worker.drain();
    expect(await world.store.episodesOfThread("provider_proxy", thread)).toEqual(eps);
    world.mem.close();
  });
});

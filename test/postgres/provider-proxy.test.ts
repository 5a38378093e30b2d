// The provider proxy over PostgreSQL: started the way the daemon starts a provider (its environment
// carries INFINITY_MEMORY_DB, no --db), it recalls from the same store as the memory command servers
// and records its model-call trace there.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openAnyMemory } from "../../cli/context.js";
import { defaultConfig } from "../../core/config.js";
import { expectStagingRecall, GRAND, HOME, ROOT, SCRIPTED, startProxy } from "../context-hook/proxy-helpers.js";
import { describePg } from "../helpers/postgres.js";
import { migratedTemplate } from "./pg-databases.js";

describePg("provider proxy on PostgreSQL", (base) => {
  const dbs = migratedTemplate(base);
  let url = "";
  let drop: () => Promise<void> = async () => {};
  let dir = "";
  beforeAll(async () => {
    ({ url, drop } = await dbs.fresh());
    dir = mkdtempSync(join(tmpdir(), "imem-pg-proxy-"));
  });
  afterAll(async () => {
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("recalls from INFINITY_MEMORY_DB's store into the preamble and stores the trace there", { timeout: 60_000 }, async () => {
    const seed = await openAnyMemory({ location: url, config: defaultConfig({ localUser: "local" }), env: {} });
    try {
      await seed.service.remember(
        { user: "dana", project: "/work/projects/alpha", session: ROOT, thread: ROOT, ancestors: [] },
        { content: "The staging cluster is deployed with helm from the ops repo", kind: "project" },
        { actor: "model", threadId: ROOT, toolCallId: "tc-seed" },
      );
    } finally {
      await seed.close();
    }
    const records = join(dir, "upstream.jsonl");
    const proxy = await startProxy(
      ["--infinity-home", HOME, "--log", join(dir, "proxy.log"), "--deadline-ms", "3000", "--upstream", process.execPath, SCRIPTED],
      { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_DB: url, INFINITY_MEMORY_USER: "local", SCRIPTED_RECORD_FILE: records },
    );
    try {
      await expectStagingRecall(proxy.socketPath, records, "deployed with helm from the ops repo");
    } finally {
      await proxy.stop();
    }
    const check = await openAnyMemory({ location: url, config: defaultConfig({ localUser: "local" }), env: {} });
    try {
      // the proxy records the call after the stream ended, before it exits on SIGTERM
      const events = await check.backend.traces.listByThread(GRAND);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ source: "provider_proxy", kind: "model_call", rootThreadId: ROOT });
    } finally {
      await check.close();
    }
  });
});

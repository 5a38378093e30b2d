// A forget by query takes at most forget.maxByQuery memories. When more matched, the person was
// asked "Forget all 3?" and the model told "Forgot 3 memories matching …", while the others stayed
// behind unmentioned. Now the question and the result both say more match, and the next forget by
// the same query takes the rest. Real HTTP, a real SQLite file, the daemon's invocation JSON.
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { openMemory, type MemoryContext } from "../../cli/context.js";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import { startRapServer } from "../../toolsets/rap/server.js";
import { memoryToolset } from "../../toolsets/memory/tools.js";
import { startCallbackSink } from "../helpers/callback-sink.js";
import { T0 } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";
import { call, callAnswering, type RapCaller } from "../skills/helpers.js";

let stop: (() => Promise<void>) | null = null;
afterEach(async () => {
  await stop?.();
  stop = null;
});

async function memoryServer(): Promise<RapCaller & { ctx: MemoryContext }> {
  const ctx = openMemory({ dbPath: join(tempDir(), "memory.db"), config: defaultConfig({ localUser: "alice", forget: { maxByQuery: 3 } }), clock: fixedClock(T0), env: {} });
  const sink = await startCallbackSink();
  const toolset = memoryToolset({ service: ctx.service, toggles: ctx.toggles, clock: ctx.clock, localUser: "alice", projectOf: () => "/work/app" });
  const server = await startRapServer({ toolset, db: ctx.db, host: "127.0.0.1", port: 0, logger: pino({ level: "silent" }) });
  stop = async () => {
    await server.close({ graceMs: 1000 });
    await sink.close();
    ctx.close();
  };
  return { ctx, sink, endpoint: `http://127.0.0.1:${server.port}/invoke` };
}

describe("a forget by query that matches more than one forget takes", () => {
  it("says so to the person and the model, and the next forget takes the rest", async () => {
    const r = await memoryServer();
    const plants = ["ferns", "orchids", "cacti", "basil", "mint"];
    for (const p of plants) expect(await call(r, "memory_remember", { content: `Alice waters the ${p} in the greenhouse on Sundays` })).toMatch(/^Remembered as /);
    const left = async () => (r.ctx.db.prepare(`SELECT count(*) FROM memories WHERE content LIKE '%greenhouse%' AND status <> 'deleted'`).pluck().get() as number);

    const first = await callAnswering(r, "memory_forget", { query: "greenhouse" }, [0]);
    expect(first.prompts[0]).toMatch(/^Forget 3 memories matching "greenhouse"\? More than 3 match; the others stay until the next forget\.\n/);
    expect(first.text).toBe('Forgot 3 memories matching "greenhouse" (3 versions removed). More memories match it: call memory_forget with the query again to forget the rest.');
    expect(await left()).toBe(2);

    const second = await callAnswering(r, "memory_forget", { query: "greenhouse" }, [0]);
    expect(second.prompts[0]).toMatch(/^Forget 2 memories matching "greenhouse"\?\n/);
    expect(second.text).toBe('Forgot 2 memories matching "greenhouse" (2 versions removed).');
    expect(await left()).toBe(0);
  });
});

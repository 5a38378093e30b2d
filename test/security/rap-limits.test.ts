// Bounded work on the RAP server: accepted-but-unfinished invocations are capped over all threads
// and per thread, and an optional per-thread rate limit; a refused invocation gets HTTP 429 with
// a message that says which limit and what to do (the runtime turns a non-2xx into an
// "Error: RAP tool … responded with HTTP 429" result), nothing is journaled for it, and the
// server accepts again once calls finish.
import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import pino from "pino";
import { z } from "zod";
import { fixedClock } from "../../core/clock.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { startRapServer, type RapLimits, type RapServer } from "../../toolsets/rap/server.js";
import { defineTool, type Toolset } from "../../toolsets/rap/registry.js";
import { postJson, startCallbackSink, type CallbackSink } from "../helpers/callback-sink.js";
import { tempDir } from "../helpers/tmp.js";

let release: (() => void)[] = [];
const slowToolset: Toolset = {
  name: "slow",
  tools: [
    defineTool({
      name: "wait_here",
      description: "waits until the test releases it",
      input: z.strictObject({}),
      handler: async () => {
        await new Promise<void>((r) => release.push(r));
        return { text: "done" };
      },
    }),
  ],
};

interface Running {
  server: RapServer;
  sink: CallbackSink;
  db: ReturnType<typeof openDatabase>;
  clock: ReturnType<typeof fixedClock>;
}
let running: Running | null = null;

async function start(limits: RapLimits): Promise<Running> {
  const dir = tempDir();
  const db = openDatabase(join(dir, "rap.db"));
  const clock = fixedClock(Date.UTC(2026, 10, 1));
  const sink = await startCallbackSink();
  const server = await startRapServer({ toolset: slowToolset, db, logger: pino({ level: "silent" }), clock, limits });
  running = { server, sink, db, clock };
  return running;
}

afterEach(async () => {
  for (const r of release) r();
  release = [];
  if (running) {
    await running.server.close({ graceMs: 500 });
    await running.sink.close();
    running.db.close();
    running = null;
  }
});

let n = 0;
function invoke(r: Running, group: string, id = `c${++n}`) {
  return postJson(`${r.server.url}/invoke`, {
    operation: "wait_here",
    arguments: {},
    id,
    call_id: null,
    callback_url: r.sink.url,
    group_id: group,
    thread_ancestors: null,
  });
}

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((res) => setTimeout(res, 10));
};

describe("RAP server limits", () => {
  it("caps unfinished calls per thread with a clear 429, other threads unaffected, and recovers", async () => {
    const r = await start({ maxActiveCallsPerThread: 2 });
    expect((await invoke(r, "t1")).status).toBe(200);
    expect((await invoke(r, "t1")).status).toBe(200);
    const third = await invoke(r, "t1", "c-over");
    expect(third.status).toBe(429);
    expect(third.text).toBe("too many tool calls in progress for thread t1 (2, limit 2); try again when some have finished");
    expect((await invoke(r, "t2")).status).toBe(200);
    // the refused call left nothing behind
    const journaled = r.db.prepare("SELECT COUNT(*) n FROM rap_invocations WHERE call_id = 'c-over'").get() as { n: number };
    expect(journaled.n).toBe(0);
    // a duplicate delivery of a call in progress is still acknowledged
    await until(() => release.length === 3);
    // finish them: the thread is accepted again
    for (const f of release.splice(0)) f();
    await r.sink.next((b) => b.type === "tool_result" && b.text === "done");
    await until(() => r.sink.bodies.filter((b) => b.type === "tool_result").length === 3);
    expect((await invoke(r, "t1")).status).toBe(200);
  });

  it("caps unfinished calls over all threads", async () => {
    const r = await start({ maxActiveCalls: 3 });
    for (const g of ["a", "b", "c"]) expect((await invoke(r, g)).status).toBe(200);
    const over = await invoke(r, "d");
    expect(over.status).toBe(429);
    expect(over.text).toBe("too many tool calls in progress (3, limit 3); try again when some have finished");
  });

  it("acknowledges a duplicate of a call in progress even at the limit", async () => {
    const r = await start({ maxActiveCallsPerThread: 1 });
    expect((await invoke(r, "t1", "same")).status).toBe(200);
    expect((await invoke(r, "t1", "same")).status).toBe(200);
    expect((await invoke(r, "t1", "other")).status).toBe(429);
  });

  it("applies an optional per-thread rate limit over a sliding window", async () => {
    const r = await start({ perThreadRate: { calls: 3, windowMs: 1000 } });
    for (let i = 0; i < 3; i++) {
      expect((await invoke(r, "fast")).status).toBe(200);
      for (const f of release.splice(0)) f();
    }
    const limited = await invoke(r, "fast");
    expect(limited.status).toBe(429);
    expect(limited.text).toBe("rate limit: thread fast sent more than 3 tool calls in 1000 ms; slow down");
    expect((await invoke(r, "slow-thread")).status).toBe(200);
    r.clock.advance(1001);
    expect((await invoke(r, "fast")).status).toBe(200);
  });
});

// A tool call whose writes the database refuses for now (another process holds SQLite's write
// lock past the busy timeout: `memory reindex` at 150k memories held it 5.5 s, a large import
// batch longer) answers once the lock is gone, instead of with the engine's "database is
// locked". The memory toolset over real HTTP and a real SQLite file; a second connection holds
// the lock while the person's answer to a forget-by-query arrives, so the forget's writes meet
// the lock (the server gives up on it after 50 ms instead of 5 s).
import { join } from "node:path";
import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { openMemory } from "../../cli/context.js";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import { memoryToolset } from "../../toolsets/memory/tools.js";
import { startRapServer, type RapServer } from "../../toolsets/rap/server.js";
import { postJson, startCallbackSink, type CallbackSink } from "../helpers/callback-sink.js";
import { T0 } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await cleanup?.();
  cleanup = null;
});

const GROUP = "6f1c2c7e-5b7e-4d0b-9a57-2b0c1d7f9e11";

function invocation(sink: CallbackSink, operation: string, args: unknown, id: string): string {
  return JSON.stringify({ operation, arguments: args, id, call_id: null, callback_url: sink.url, group_id: GROUP, thread_ancestors: null });
}

describe("a tool call beside another process's long write", () => {
  it("answers once the lock is gone instead of 'database is locked', and asks the person once", async () => {
    const dbPath = join(tempDir("imem-tool-lock-"), "memory.db");
    const ctx = openMemory({ dbPath, config: defaultConfig({ localUser: "alice" }), clock: fixedClock(T0), env: {} });
    const sink = await startCallbackSink();
    const toolset = memoryToolset({ service: ctx.service, toggles: ctx.toggles, clock: ctx.clock, localUser: "alice", projectOf: () => "/work/app", sessions: null });
    const server: RapServer = await startRapServer({
      toolset,
      db: ctx.db,
      logger: pino({ level: "silent" }),
      completeRetry: { baseDelayMs: 40, maxDelayMs: 160 },
    });
    let locker: Database.Database | null = null;
    cleanup = async () => {
      if (locker?.inTransaction) locker.exec("ROLLBACK");
      locker?.close();
      await server.close({ graceMs: 500 });
      await sink.close();
      ctx.close();
    };
    const endpoint = `${server.url}/invoke`;
    expect((await postJson(endpoint, invocation(sink, "memory_remember", { content: "The staging cluster password rotates every Friday" }, "remember-1"))).status).toBe(200);
    expect((await sink.next((b) => b.type === "tool_result" && b.id === "remember-1")).text).toMatch(/^Remembered as mem_/);

    expect((await postJson(endpoint, invocation(sink, "memory_forget", { query: "staging cluster rotates" }, "forget-1"))).status).toBe(200);
    const question = await sink.next((b) => b.type === "user_choice" && b.id === "forget-1");
    // (once the question's delivery is recorded: this test is about the forget's own writes)
    const asked = ctx.db.prepare(`SELECT count(*) AS n FROM rap_outbox WHERE call_id = 'forget-1' AND status = 'delivered'`).pluck();
    for (let i = 0; i < 200 && asked.get() !== 1; i++) await new Promise((r) => setTimeout(r, 10));
    // another process's long write starts while the person decides
    ctx.db.pragma("busy_timeout = 50");
    locker = new Database(dbPath);
    locker.exec("BEGIN IMMEDIATE");
    expect((await postJson(question.response_url as string, { id: "forget-1", selected: 0 })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 600));
    expect(sink.bodies.filter((b) => b.type === "tool_result" && b.id === "forget-1")).toEqual([]);
    locker.exec("COMMIT");

    const result = await sink.next((b) => b.type === "tool_result" && b.id === "forget-1");
    expect(result.text).toMatch(/^Forgot 1 memory matching "staging cluster rotates"/);
    expect(sink.bodies.filter((b) => b.type === "user_choice")).toHaveLength(1);
    const left = new Database(dbPath, { readonly: true });
    try {
      expect(left.prepare(`SELECT status, content FROM memories`).all()).toEqual([{ status: "deleted", content: "" }]);
    } finally {
      left.close();
    }
  });
});

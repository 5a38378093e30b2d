// Episodes and steps from a scripted conversation: boundaries, step records, provenance edges,
// idempotent and incremental ingestion.
import { describe, expect, it } from "vitest";
import { abstractArgs, argsShape } from "../../core/learning/args.js";
import { classifyResult } from "../../core/learning/outcome.js";
import { SqliteTraceStore } from "../../stores/sqlite/trace-store.js";
import { tempDir } from "../helpers/tmp.js";
import { msg, openWorld } from "./world.js";

const T = "thread-1";

describe("episode boundaries", () => {
  it("cuts a scripted conversation into tasks: done, batched, interrupted and still open", async () => {
    const w = openWorld(tempDir("learn-"));
    await w.append(T, [
      msg.user("Find where the config is loaded"), // 0
      msg.text("Let me search."), // 1
      msg.call("c1", "grep", { pattern: "loadConfig", path: "/work/proj-a/cli" }), // 2
      msg.result("c1", "cli/context.ts:30: export function loadConfig"), // 3
      msg.text("It is loaded in cli/context.ts."), // 4
      msg.user("And the defaults?"), // 5
      msg.user("Also which file holds the schema?"), // 6: batched into the same task
      msg.text("core/config.ts holds both."), // 7
      msg.user("Run the build"), // 8
      msg.call("c2", "shell", { cmd: "npm run build" }), // 9: no result before the next user turn
      msg.user("Stop, run the tests instead"), // 10
      msg.call("c3", "shell", { cmd: "npm test" }), // 11
    ]);
    await w.worker.drain();
    const eps = await w.store.episodesOfThread("conversation", T);
    expect(eps.map((e) => [e.startOrd, e.endOrd, e.state])).toEqual([
      [0, 4, "done"],
      [5, 7, "done"],
      [8, 9, "interrupted"],
      [10, 11, "open"],
    ]);
    expect(eps[1]!.task).toBe("And the defaults?\nAlso which file holds the schema?");
    expect(eps[0]!.finalExcerpt).toBe("It is loaded in cli/context.ts.");

    const steps = await w.store.stepsOf(eps[0]!.id);
    expect(steps).toHaveLength(1);
    expect(steps[0]).toMatchObject({ idx: 0, ord: 2, tool: "grep", callId: "c1", outcome: "ok", excerpt: "cli/context.ts:30: export function loadConfig" });
    expect(steps[0]!.argsShape).toBe('{"path":"<path>","pattern":"loadConfig"}');
    expect((await w.store.stepsOf(eps[2]!.id))[0]!.outcome).toBe("pending");

    // provenance: one edge per message, with the runtime's message ids
    const edges = w.mem.db.prepare(`SELECT ord, message_id, role FROM learning_episode_messages WHERE episode_id = ? ORDER BY ord`).all(eps[0]!.id);
    expect(edges).toEqual([
      { ord: 0, message_id: `${T}-m0`, role: "user" },
      { ord: 1, message_id: `${T}-m1`, role: "assistant" },
      { ord: 2, message_id: `${T}-m2`, role: "tool_call" },
      { ord: 3, message_id: `${T}-m3`, role: "tool_result" },
      { ord: 4, message_id: `${T}-m4`, role: "assistant" },
    ]);
  });

  it("re-ingesting the same experience changes nothing; new messages extend the open episode", async () => {
    const w = openWorld(tempDir("learn-"));
    await w.append(T, [msg.user("List the files"), msg.call("c1", "ls", { dir: "/work/proj-a/src" }), msg.result("c1", "a.ts b.ts")]);
    await w.worker.drain();
    const before = await w.store.episodesOfThread("conversation", T);
    expect(before.map((e) => e.state)).toEqual(["open"]);

    // the same thread processed again (a replay, a second worker): same rows, nothing added
    for (let i = 0; i < 2; i++) {
      await w.store.enqueue("conversation", T, T, w.mem.clock.now());
      await w.worker.drain();
    }
    const count = (table: string) => (w.mem.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    expect(await w.store.episodesOfThread("conversation", T)).toEqual(before);
    expect([count("learning_episodes"), count("learning_steps"), count("learning_episode_messages")]).toEqual([1, 1, 3]);

    await w.append(T, [msg.text("Two files: a.ts and b.ts."), msg.user("Thanks, that works"), msg.text("Glad to help.")]);
    await w.worker.drain();
    const after = await w.store.episodesOfThread("conversation", T);
    expect(after.map((e) => [e.id === before[0]!.id, e.state])).toEqual([
      [true, "done"],
      [false, "done"],
    ]);
    expect(count("learning_steps")).toBe(1);
    expect(await w.store.queueDepth()).toBe(0);
  });

  it("keeps excerpts bounded and never stores raw payloads", async () => {
    const w = openWorld(tempDir("learn-"));
    const big = "x".repeat(50_000);
    await w.append(T, [msg.user(`Summarise ${big}`), msg.call("c1", "write_file", { path: "/tmp/out/a.txt", content: big }), msg.result("c1", big), msg.text(big)]);
    await w.worker.drain();
    const [ep] = await w.store.episodesOfThread("conversation", T);
    const [st] = await w.store.stepsOf(ep!.id);
    expect(ep!.task.length).toBeLessThanOrEqual(w.config.learning.taskChars);
    expect(ep!.finalExcerpt!.length).toBeLessThanOrEqual(w.config.learning.excerptChars);
    expect(st!.excerpt.length).toBeLessThanOrEqual(w.config.learning.excerptChars);
    expect(st!.argsShape).toBe('{"content":"<text>","path":"<path>"}');
  });

  it("keeps a NUL of a binary tool result or a pasted text as a space (PostgreSQL text cannot hold it)", async () => {
    const w = openWorld(tempDir("learn-"));
    await w.append(T, [msg.user("Show me\u0000 the header"), msg.call("c1", "cat", { path: "/bin/tool" }), msg.result("c1", "\u007fELF\u0002\u0001\u0000\u0000 binary"), msg.text("It is an ELF\u0000 binary.")]);
    await w.worker.drain();
    const [ep] = await w.store.episodesOfThread("conversation", T);
    const [st] = await w.store.stepsOf(ep!.id);
    expect([ep!.task, ep!.finalExcerpt, st!.excerpt]).toEqual(["Show me  the header", "It is an ELF  binary.", "\u007fELF\u0002\u0001   binary"]);
  });
});

describe("episodes from gRPC RecordTurn events", () => {
  it("one recorded turn is one episode with its tool steps", async () => {
    const w = openWorld(tempDir("learn-"), { conversation: false });
    const traces = new SqliteTraceStore(w.mem.db);
    const turn = (historyLength: number, finalText: string, calls: { id: string; name: string }[], results: { id: string; excerpt: string }[]) => ({
      source: "grpc" as const,
      dedupKey: `grpc:turn:g-1:${historyLength}`,
      threadId: "g-1",
      rootThreadId: "g-root",
      kind: "turn",
      body: { historyLength, toolCalls: calls.map((c) => ({ ...c, argsDigest: "d".repeat(64), argsExcerpt: "{}" })), toolResults: results, finalText, usage: null },
      at: 1000 + historyLength,
    });
    expect(await traces.record(turn(0, "Two tests fail.", [{ id: "k1", name: "shell" }], [{ id: "k1", excerpt: "Tests  2 failed | 1 passed (3)" }]))).toBe(true);
    expect(await traces.record(turn(4, "Hello.", [], []))).toBe(true);
    await w.worker.drain();
    const eps = await w.store.episodesOfThread("grpc", "g-1");
    expect(eps.map((e) => [e.state, e.rootThreadId, e.reward])).toEqual([
      ["done", "g-root", -1],
      ["done", "g-root", null],
    ]);
    expect((await w.store.stepsOf(eps[0]!.id)).map((s) => [s.tool, s.verdict, s.argsDigest])).toEqual([["shell", "fail", "d".repeat(64)]]);
  });
});

describe("step normalisation", () => {
  it("abstracts constants so the same action on other files has one digest", () => {
    expect(abstractArgs({ cmd: "npx vitest run test/a.test.ts --retry 3", line: 42 })).toEqual({ cmd: "npx vitest run test/<path> --retry <n>", line: "<n>" });
    expect(argsShape({ path: "/a/b/c.ts" }, 300)).toBe(argsShape({ path: "/x/y/z.ts" }, 300));
    expect(argsShape({ path: "/a/b/c.ts" }, 300)).not.toBe(argsShape({ file: "/a/b/c.ts" }, 300));
  });

  it("reads ok/error and test verdicts from tool results", () => {
    expect(classifyResult("Error: no memory with id mem_1")).toEqual({ outcome: "error", verdict: null });
    expect(classifyResult(" Test Files  1 failed (1)\n      Tests  2 failed | 5 passed (7)")).toEqual({ outcome: "ok", verdict: "fail" });
    expect(classifyResult("      Tests  7 passed (7)")).toEqual({ outcome: "ok", verdict: "pass" });
    expect(classifyResult("===== 3 passed in 0.12s =====")).toEqual({ outcome: "ok", verdict: "pass" });
    expect(classifyResult("test result: FAILED. 1 passed; 1 failed")).toMatchObject({ verdict: "fail" });
    expect(classifyResult("make: *** [all] Error 2\nexit code: 2")).toEqual({ outcome: "error", verdict: "fail" });
    expect(classifyResult("HTTP status 200, 3 rows")).toEqual({ outcome: "ok", verdict: null });
  });
});

// Two deciders on one pending memory at once, on PostgreSQL: two servers (two connection pools)
// on one database. The decision that comes second is refused naming the memory and what it is
// now, and the memory keeps what the first decided.
import { afterAll, beforeAll, expect, it } from "vitest";
import { openAnyMemory, type AnyMemoryContext } from "../../cli/context.js";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import { MemoryService } from "../../core/memory/service.js";
import { analyzeQuery } from "../../core/retrieval/analyze.js";
import { StatusChangedError, type AuditEntry, type MemoryStore } from "../../stores/traits.js";
import { pauseAtCall } from "../helpers/paused-call.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";
import { mem } from "../stores/memory-conformance.js";

const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);
const viewer = { owner: "alice", project: null };
const origin = { actor: "user" as const, threadId: null, toolCallId: null };
const audit = (targetId: string, action: AuditEntry["action"]): AuditEntry => ({ at: T0, actor: "tester", action, targetKind: "memory", targetId, detail: {} });

describePg("review decisions racing across servers (PostgreSQL)", (base) => {
  let drop: () => Promise<void>;
  let a: AnyMemoryContext;
  let b: AnyMemoryContext;
  const storeOf = (ctx: AnyMemoryContext): MemoryStore => (ctx as { backend: { memory: MemoryStore } }).backend.memory;
  const serviceOver = (store: MemoryStore) => new MemoryService(store, fixedClock(T0), defaultConfig({ localUser: "alice" }));

  beforeAll(async () => {
    const t = await createTestDatabase(base(), "review_race");
    drop = t.drop;
    const opts = { location: t.url, config: defaultConfig({ localUser: "alice" }), clock: fixedClock(T0), env: {}, onMigration: () => {} };
    a = await openAnyMemory(opts);
    b = await openAnyMemory(opts);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await drop?.();
  });

  async function pending(content: string): Promise<string> {
    const rec = mem(content, { status: "pending" });
    await storeOf(a).insert(rec, audit(rec.id, "create"));
    return rec.id;
  }

  it("a confirm on one server after a reject on another fails naming the memory; it stays forgotten", async () => {
    const id = await pending("Alice's locker code is 1881");
    const paused = pauseAtCall(storeOf(a), "lineage");
    const confirming = serviceOver(paused.target).confirm(viewer, [id], origin);
    await paused.reached;
    await b.service.reject(viewer, [id], origin);
    paused.release();
    await expect(confirming).rejects.toMatchObject({ code: "conflict", message: expect.stringContaining(`memory ${id} is forgotten now, no longer pending`) });
    expect(await storeOf(a).get(id)).toMatchObject({ status: "deleted", content: "" });
  });

  it("a reject on one server after a confirm on another fails naming the memory; the confirmed memory stays", async () => {
    const id = await pending("Alice parks on level 3");
    const paused = pauseAtCall(storeOf(a), "lineage");
    const rejecting = serviceOver(paused.target).reject(viewer, [id], origin);
    await paused.reached;
    await b.service.confirm(viewer, [id], origin);
    paused.release();
    await expect(rejecting).rejects.toMatchObject({ code: "conflict", message: expect.stringContaining(`memory ${id} is active now, no longer pending`) });
    expect(await storeOf(a).get(id)).toMatchObject({ status: "active", trust: "user_confirmed", content: "Alice parks on level 3" });
  });

  it("a reject on one server that loses to a confirm on another cascades nothing; a reject stopped in its cascade is finished by running it again", async () => {
    const sessions = a.backend.sessionIndex;
    const src = await sessions.sourceId("infinity-files", "/tmp/review-race-conversations");
    const say = (threadId: string, text: string) =>
      sessions.append(src, { threadId, rootThreadId: threadId, user: "alice", cwd: null }, [{ ord: 0, messageId: `${threadId}-m0`, role: "user", text }], 1, null, T0);
    const hits = async (words: string) => (await sessions.search({ user: "alice", query: analyzeQuery(words), limit: 10 })).map((h) => h.text);
    const cascading = (store: MemoryStore, fail = false) => {
      const service = serviceOver(store);
      service.onForget({
        beforeForget: async (user, contents, madeFrom) => {
          if (fail) throw new Error("process stopped");
          await sessions.purgeContaining(user, contents, madeFrom);
        },
      });
      return service;
    };

    const id = await pending("Alice's boat is moored at berth 14");
    await say("thr-boat", "Alice's boat is moored at berth 14");
    const paused = pauseAtCall(storeOf(a), "lineage");
    const rejecting = cascading(paused.target).reject(viewer, [id], origin);
    await paused.reached;
    await b.service.confirm(viewer, [id], origin);
    paused.release();
    await expect(rejecting).rejects.toMatchObject({ code: "conflict", message: expect.stringContaining(`memory ${id} is active now, no longer pending`) });
    expect(await hits("berth")).toEqual(["Alice's boat is moored at berth 14"]);

    const other = await pending("Alice's canoe is blue");
    await say("thr-canoe", "Alice's canoe is blue");
    await expect(cascading(storeOf(a), true).reject(viewer, [other], origin)).rejects.toThrow("process stopped");
    await expect(b.service.confirm(viewer, [other], origin)).rejects.toMatchObject({ code: "conflict" });
    expect(await cascading(storeOf(b)).reject(viewer, [other], origin)).toEqual([other]);
    expect(await storeOf(a).get(other)).toMatchObject({ status: "deleted", content: "" });
    expect(await hits("canoe")).toEqual([]);
  });

  it("a confirm of several on one server whose last another server rejected meanwhile confirms none of them", async () => {
    const first = await pending("Alice's bike is the blue one");
    const second = await pending("Alice's gym locker is 12");
    const paused = pauseAtCall(storeOf(a), "lineage", { nth: 2 });
    const confirming = serviceOver(paused.target).confirm(viewer, [first, second], origin);
    await paused.reached;
    await b.service.reject(viewer, [second], origin);
    paused.release();
    await expect(confirming).rejects.toMatchObject({
      code: "conflict",
      message: `memory ${second} is forgotten now, no longer pending: another review decided it first; nothing was confirmed (none of the 2 given).`,
    });
    expect(await storeOf(a).get(first)).toMatchObject({ status: "pending", content: "Alice's bike is the blue one" });
    expect((await storeOf(a).audit(first, 10)).map((e) => e.action)).toEqual(["create"]);
  });

  it("the store's conditional writes from two pools at the same moment: exactly one decides", async () => {
    for (let round = 0; round < 5; round++) {
      const id = await pending(`Alice's desk number is ${round + 40}`);
      const outcomes = await Promise.allSettled([
        storeOf(a).setStatus(id, "active", "user_confirmed", audit(id, "confirm"), { expect: "pending" }),
        storeOf(b).forget([id], audit(id, "forget"), { expect: new Map([[id, "pending" as const]]) }),
      ]);
      const lost = outcomes.filter((o) => o.status === "rejected");
      expect(lost).toHaveLength(1);
      expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(StatusChangedError);
      const now = await storeOf(a).get(id);
      expect(now?.status).toBe(outcomes[0].status === "fulfilled" ? "active" : "deleted");
    }
  });
});

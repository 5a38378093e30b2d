// Two deciders on one pending memory at once: a review decision read in one process while the
// CLI, another process on the same SQLite file, decides the other way. The one that comes second
// is told, and the memory keeps what the first decided (before, both "succeeded": a confirm after
// a reject brought back an empty tombstone as active; a reject after a confirm forgot what the
// person had just confirmed).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryService } from "../../core/memory/service.js";
import { runCli } from "../helpers/cli.js";
import { holding } from "../helpers/holding.js";
import { openTestMemory } from "../helpers/memory.js";
import { pauseAtCall } from "../helpers/paused-call.js";
import { tempDir } from "../helpers/tmp.js";

const viewer = { owner: "alice", project: null };
const origin = { actor: "user" as const, threadId: null, toolCallId: null };

function world(contents: string[]) {
  const home = tempDir();
  const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
  const file = join(home, "candidates.jsonl");
  writeFileSync(file, contents.map((content) => `${JSON.stringify({ content, status: "pending" })}\n`).join(""));
  const imported = runCli(["memory", "import", file], env);
  expect(imported.status, imported.stderr).toBe(0);
  const ctx = openTestMemory(home);
  return { env, ctx, close: () => ctx.close() };
}

async function pendingIds(ctx: ReturnType<typeof openTestMemory>): Promise<string[]> {
  return (await ctx.service.pending(viewer, 10)).items.map((r) => r.id);
}

describe("review decisions racing across processes (SQLite)", () => {
  it("a confirm whose memory another process rejected meanwhile fails naming it, and the memory stays forgotten", async () => {
    const w = world(["Alice's locker code is 1881"]);
    try {
      const [id] = await pendingIds(w.ctx);
      const paused = pauseAtCall(w.ctx.store, "lineage");
      const confirming = new MemoryService(paused.target, w.ctx.clock, w.ctx.config).confirm(viewer, [id!], origin);
      await paused.reached;
      const rejected = runCli(["memory", "review", "--reject", id!], w.env);
      expect(rejected.status, rejected.stderr).toBe(0);
      paused.release();
      await expect(confirming).rejects.toMatchObject({
        code: "conflict",
        message: `memory ${id} is forgotten now, no longer pending: another review decided it first; nothing was confirmed.`,
      });
      expect(await w.ctx.store.get(id!)).toMatchObject({ status: "deleted", content: "" });
    } finally {
      w.close();
    }
  });

  it("a reject whose memory another process confirmed meanwhile fails naming it, and the confirmed memory stays", async () => {
    const w = world(["Alice's locker code is 1881"]);
    try {
      const [id] = await pendingIds(w.ctx);
      const paused = pauseAtCall(w.ctx.store, "lineage");
      const rejecting = new MemoryService(paused.target, w.ctx.clock, w.ctx.config).reject(viewer, [id!], origin);
      await paused.reached;
      const confirmed = runCli(["memory", "review", "--confirm", id!], w.env);
      expect(confirmed.status, confirmed.stderr).toBe(0);
      paused.release();
      await expect(rejecting).rejects.toMatchObject({
        code: "conflict",
        message: `memory ${id} is active now, no longer pending: another review decided it first; nothing was rejected.`,
      });
      expect(await w.ctx.store.get(id!)).toMatchObject({ status: "active", trust: "user_confirmed", content: "Alice's locker code is 1881" });
    } finally {
      w.close();
    }
  });

  it("a confirm of several whose last was decided elsewhere meanwhile confirms none of them", async () => {
    const w = world(["Alice's locker code is 1881", "Alice parks on level 3"]);
    try {
      const [a, b] = await pendingIds(w.ctx);
      // paused after the second id's read: the second is decided elsewhere meanwhile
      const paused = pauseAtCall(w.ctx.store, "lineage", { nth: 2 });
      const confirming = new MemoryService(paused.target, w.ctx.clock, w.ctx.config).confirm(viewer, [a!, b!], origin);
      await paused.reached;
      expect(runCli(["memory", "review", "--reject", b!], w.env).status).toBe(0);
      paused.release();
      await expect(confirming).rejects.toMatchObject({
        code: "conflict",
        message: `memory ${b} is forgotten now, no longer pending: another review decided it first; nothing was confirmed (none of the 2 given).`,
      });
      // the first is still waiting for review, as before the confirm (before, it was confirmed alone)
      expect(await w.ctx.store.get(a!)).toMatchObject({ status: "pending", trust: "imported" });
      expect((await w.ctx.store.audit(a!, 10)).map((e) => e.action)).not.toContain("confirm");
      expect((await w.ctx.store.get(b!))?.status).toBe("deleted");
      // and the person can confirm it now
      expect((await w.ctx.service.confirm(viewer, [a!], origin)).map((r) => r.status)).toEqual(["active"]);
    } finally {
      w.close();
    }
  });

  it("a pending memory the person states again while another process rejects it is not brought back empty", async () => {
    const w = world(["Alice drinks oat milk in her coffee"]);
    try {
      const [id] = await pendingIds(w.ctx);
      const paused = pauseAtCall(w.ctx.store, "get");
      const stating = new MemoryService(paused.target, w.ctx.clock, w.ctx.config).remember(
        { user: "alice", project: null, session: "s1", thread: "s1", ancestors: [] },
        { content: "Alice drinks oat milk in her coffee", scope: "user", userStated: true },
        { actor: "user", threadId: "s1", toolCallId: null },
      );
      await paused.reached;
      expect(runCli(["memory", "review", "--reject", id!], w.env).status).toBe(0);
      paused.release();
      await expect(stating).rejects.toMatchObject({ code: "conflict", message: expect.stringContaining(`memory ${id} was rejected in review while this one was being stored; try again`) });
      expect(await w.ctx.store.get(id!)).toMatchObject({ status: "deleted", content: "" });
    } finally {
      w.close();
    }
  });
});

describe("a memory said again while another process forgets it (SQLite)", () => {
  it("is not answered 'already remembered' as the forgotten one, and leaves no provenance on its tombstone", async () => {
    const home = tempDir();
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    const added = runCli(["memory", "add", "Alice's bike lock code is 7302"], env);
    expect(added.status, added.stderr).toBe(0);
    const id = /mem_\w+/.exec(added.stdout)![0];
    const ctx = openTestMemory(home);
    try {
      // paused once it found the current memory with the same text
      const paused = pauseAtCall(ctx.store, "findDuplicate");
      const saying = new MemoryService(paused.target, ctx.clock, ctx.config).remember(
        { user: "alice", project: null, session: "thr-needle-9", thread: "thr-needle-9", ancestors: [] },
        { content: "Alice's bike lock code is 7302", scope: "user", userStated: true },
        { actor: "user", threadId: "thr-needle-9", toolCallId: null, messageIds: ["msg-needle-9"] },
      );
      await paused.reached;
      const forgot = runCli(["memory", "forget", id], env);
      expect(forgot.status, forgot.stderr).toBe(0);
      paused.release();
      await expect(saying).rejects.toMatchObject({ code: "conflict", message: `memory ${id} was forgotten while this one was being stored; try again` });
      expect(await ctx.store.get(id)).toMatchObject({ status: "deleted", content: "", sources: [] });
      expect(holding(ctx.db, "needle-9")).toEqual([]);
    } finally {
      ctx.close();
    }
  });
});


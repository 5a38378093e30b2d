// A backup taken while a forget was claimed and not yet purged (its cascade under way, or its
// process stopped in it and no server had swept it yet) copied the memory's text, and the messages
// it came from, into the backup file: "forgotten text is not in later backups" did not hold. The
// backup now finishes such forgets in its copy, cascade and all; the live database is left to the
// process that holds the claim (or to serve's sweep).
import Database from "better-sqlite3";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryService } from "../../core/memory/service.js";
import { runCli } from "../helpers/cli.js";
import { holding } from "../helpers/holding.js";
import { openTestMemory, req } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const origin = { actor: "user" as const, threadId: null, toolCallId: null };

describe("backup while a forget is claimed and not purged", () => {
  it("holds none of the forgotten text; the live claim is left as it is", async () => {
    const dir = tempDir();
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const ctx = openTestMemory(dir);
    let id: string;
    try {
      id = (await ctx.service.remember(req(), { content: "Alice's alarm code is 7741", scope: "user" }, origin)).record.id;
      await ctx.service.remember(req(), { content: "Alice's bike is a green Brompton", scope: "user" }, origin);
      const src = await ctx.backend.sessionIndex.sourceId("sqlite", "backup-conversations");
      await ctx.backend.sessionIndex.append(src, { threadId: "thr-alarm", rootThreadId: "thr-alarm", user: "alice", cwd: null }, [{ ord: 0, messageId: "thr-alarm-m0", role: "user", text: "Alice's alarm code is 7741, keep it quiet" }], 1, null, ctx.clock.now());
      // a forget whose process stops in its cascade: claimed, its text kept for the cascade
      const dying = new MemoryService(ctx.store, ctx.clock, ctx.config);
      dying.onForget({ beforeForget: async () => Promise.reject(new Error("process stopped")) });
      await expect(dying.forget({ owner: "alice", project: null }, [id], origin)).rejects.toThrow("process stopped");
    } finally {
      ctx.close();
    }
    const out = join(dir, "b.db");
    const r = runCli(["backup", "--out", out], env);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^backed up 1 memories/);
    const copy = new Database(out, { readonly: true });
    try {
      expect(holding(copy, "7741")).toEqual([]);
      expect(copy.prepare(`SELECT status, content FROM memories WHERE id = ?`).get(id)).toEqual({ status: "deleted", content: "" });
      expect(holding(copy, "Brompton").length).toBeGreaterThan(0);
    } finally {
      copy.close();
    }
    // the live file still holds the claim, for its process (or serve's sweep) to finish
    const live = new Database(join(dir, "memory.db"), { readonly: true });
    try {
      expect(live.prepare(`SELECT status, content FROM memories WHERE id = ?`).get(id)).toEqual({ status: "deleted", content: "Alice's alarm code is 7741" });
    } finally {
      live.close();
    }
  });
});

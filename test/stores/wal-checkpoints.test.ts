// Checkpoints run in a worker thread once the store has written, not inside its commits: the
// connection's automatic checkpoint is off while the worker runs and comes back when it is gone;
// commits reach the main database file once the writers pause (or after a bounded delay under a
// stream of writes); closing the store still leaves no log behind.
import Database from "better-sqlite3";
import { copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { Worker } from "node:worker_threads";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import { MemoryService } from "../../core/memory/service.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteMemoryStore } from "../../stores/sqlite/memory-store.js";
import { CHECKPOINT_MAX_DELAY_MS, CHECKPOINT_START_DELAY_MS, walCheckpoints } from "../../stores/sqlite/wal-checkpoints.js";
import { openTestMemory, req, T0 } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const scope = req({ session: "t1", thread: "t1" });
const user = { actor: "user" as const, threadId: "t1", toolCallId: null };
const autocheckpoint = (db: Database.Database) => db.pragma("wal_autocheckpoint", { simple: true });

/** The row as the main database file alone holds it (a copy without the log). */
function inMainFile(dir: string, id: string): string | undefined {
  const copy = join(tempDir(), "main-only.db");
  copyFileSync(join(dir, "memory.db"), copy);
  const db = new Database(copy, { readonly: true });
  try {
    // a young file's schema may itself still be only in the log
    if (!db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'memories'`).get()) return undefined;
    return (db.prepare(`SELECT content FROM memories WHERE id = ?`).get(id) as { content: string } | undefined)?.content;
  } finally {
    db.close();
  }
}

/** A store on a fresh file that has written once and whose checkpoint worker now runs. */
async function withWorker(dir: string) {
  const ctx = openTestMemory(dir);
  await ctx.service.remember(scope, { content: "a first note starts the worker", kind: "fact" }, user);
  await vi.waitFor(() => expect(walCheckpoints(ctx.db).running).toBe(true), { timeout: 5000 });
  return ctx;
}

describe("WAL checkpoints off the store's thread", () => {
  it("the first write starts the worker, which turns the connection's automatic checkpoint off and moves later commits into the main file", async () => {
    const dir = tempDir();
    const ctx = openTestMemory(dir);
    try {
      // nothing written yet: SQLite's own checkpoint, no thread
      expect(walCheckpoints(ctx.db).running).toBe(false);
      expect(autocheckpoint(ctx.db)).toBe(1000);
      await ctx.service.remember(scope, { content: "the first note starts it", kind: "fact" }, user);
      // not at once: a one-shot command closes before the thread would start
      expect(walCheckpoints(ctx.db).running).toBe(false);
      await vi.waitFor(() => expect(walCheckpoints(ctx.db).running).toBe(true), { timeout: 5000 });
      expect(autocheckpoint(ctx.db)).toBe(0);
      // a handful of pages: far below the 1,000 that SQLite's own checkpoint would wait for
      const r = await ctx.service.remember(scope, { content: "the deploy window moved to Thursday", kind: "fact" }, user);
      expect(inMainFile(dir, r.record.id)).toBeUndefined();
      await vi.waitFor(() => expect(inMainFile(dir, r.record.id)).toBe("the deploy window moved to Thursday"), { timeout: 5000, interval: 50 });
    } finally {
      ctx.close();
    }
  });

  it("under a stream of writes with no pause a commit still reaches the main file within the bounded delay", async () => {
    const dir = tempDir();
    const ctx = await withWorker(dir);
    try {
      const first = await ctx.service.remember(scope, { content: "stream note 0 about the release", kind: "fact" }, user);
      const t0 = performance.now();
      // a write every 20 ms: the worker never sees a tick without a commit
      let i = 1;
      let moved = false;
      while (!moved && performance.now() - t0 < CHECKPOINT_MAX_DELAY_MS * 3) {
        await ctx.service.remember(scope, { content: `stream note ${i++} about the release`, kind: "fact" }, user);
        await new Promise((r) => setTimeout(r, 20));
        // a copy taken while the worker writes the file may be torn: look again next time
        moved = (() => {
          try {
            return inMainFile(dir, first.record.id) !== undefined;
          } catch {
            return false;
          }
        })();
      }
      const waited = performance.now() - t0;
      expect(moved).toBe(true);
      // not before the bound (the writers never paused), and not long after it
      expect(waited).toBeGreaterThanOrEqual(CHECKPOINT_MAX_DELAY_MS - 200);
      expect(waited).toBeLessThan(CHECKPOINT_MAX_DELAY_MS * 2);
    } finally {
      ctx.close();
    }
  });

  it("closing the store stops the worker first, so its close removes the log as before", async () => {
    const dir = tempDir();
    const ctx = await withWorker(dir);
    const r = await ctx.service.remember(scope, { content: "the last note", kind: "fact" }, user);
    expect(existsSync(join(dir, "memory.db-wal"))).toBe(true);
    ctx.close();
    // the store's connection was the last: SQLite checkpointed and deleted the log
    expect(existsSync(join(dir, "memory.db-wal"))).toBe(false);
    expect(inMainFile(dir, r.record.id)).toBe("the last note");
  });

  it("a store closed within the start delay never starts the worker, and removes its log", async () => {
    const dir = tempDir();
    const ctx = openTestMemory(dir);
    await ctx.service.remember(scope, { content: "a one-shot note", kind: "fact" }, user);
    const c = walCheckpoints(ctx.db);
    ctx.close();
    await new Promise((r) => setTimeout(r, CHECKPOINT_START_DELAY_MS + 200));
    expect((c as unknown as { worker: Worker | null }).worker).toBeNull();
    expect(existsSync(join(dir, "memory.db-wal"))).toBe(false);
  });

  it("a worker that dies gives the connection its automatic checkpoint back", async () => {
    const ctx = await withWorker(tempDir());
    try {
      const c = walCheckpoints(ctx.db);
      expect(autocheckpoint(ctx.db)).toBe(0);
      await (c as unknown as { worker: Worker }).worker.terminate();
      await vi.waitFor(() => expect(autocheckpoint(ctx.db)).toBe(1000), { timeout: 5000 });
      expect(c.running).toBe(false);
      // and it does not start again: the connection checkpoints in its commits from now on
      await ctx.service.remember(scope, { content: "another note", kind: "fact" }, user);
      expect(c.running).toBe(false);
      expect(autocheckpoint(ctx.db)).toBe(1000);
    } finally {
      ctx.close();
    }
  });

  it("an in-memory store has no log and starts no worker", async () => {
    const db = openDatabase(":memory:");
    const service = new MemoryService(new SqliteMemoryStore(db), fixedClock(T0), defaultConfig({ localUser: "alice" }));
    await service.remember(scope, { content: "a note in memory", kind: "fact" }, user);
    const c = walCheckpoints(db);
    await new Promise((r) => setTimeout(r, CHECKPOINT_START_DELAY_MS + 200));
    expect(c.running).toBe(false);
    expect((c as unknown as { worker: Worker | null }).worker).toBeNull();
    db.close();
  });
});

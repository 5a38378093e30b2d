// What a forget leaves in the contentless full-text tables (tombstoned rows whose postings stay in
// their segments) is merged away after the forget returns, in small steps; a process that stops
// first leaves a mark the next one takes up, and closing the store finishes it. Checked on the
// bytes of the index and of the database file, not through search (which hides tombstoned rows).
import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { RequestScope } from "../../core/memory/scope.js";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import { MemoryService } from "../../core/memory/service.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { FtsPurge, ftsPurge, PURGE_MAX_DEFER_MS } from "../../stores/sqlite/fts-purge.js";
import { SqliteMemoryStore } from "../../stores/sqlite/memory-store.js";
import { walCheckpoints } from "../../stores/sqlite/wal-checkpoints.js";
import { openTestMemory, req, T0 } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const scope: RequestScope = req({ session: "t1", thread: "t1" });
// a word no other text here shares a prefix with, so its index term shows in full in a leaf page
const SECRET = "Qzxvortlewhisk";
const TOKEN = Buffer.from(SECRET.toLowerCase().slice(0, 10));
const user = { actor: "user" as const, threadId: "t1", toolCallId: null };

async function seeded(dir: string) {
  const ctx = openTestMemory(dir);
  for (let i = 0; i < 40; i++) await ctx.service.remember(scope, { content: `note ${i} about the deploy pipeline and the weather`, kind: "fact" }, user);
  const secret = await ctx.service.remember(scope, { content: `the vault phrase is ${SECRET} twice`, kind: "fact" }, user);
  return { ctx, store: ctx.store as SqliteMemoryStore, id: secret.record.id };
}

/** The same on an in-memory database, where the purge runs on the store's thread. */
async function seededInMemory() {
  const db = openDatabase(":memory:");
  const store = new SqliteMemoryStore(db);
  const service = new MemoryService(store, fixedClock(T0), defaultConfig({ localUser: "alice" }));
  for (let i = 0; i < 40; i++) await service.remember(scope, { content: `note ${i} about the deploy pipeline and the weather`, kind: "fact" }, user);
  const secret = await service.remember(scope, { content: `the vault phrase is ${SECRET} twice`, kind: "fact" }, user);
  return { db, store, id: secret.record.id };
}

/** A forget whose purge never starts, as in a process that stopped right after the forget committed. */
async function forgetUnpurged(store: SqliteMemoryStore, id: string): Promise<void> {
  const run = vi.spyOn(FtsPurge.prototype, "run").mockResolvedValue(undefined);
  try {
    await store.forget([id], { at: 1, actor: "user", action: "forget", targetKind: "memory", targetId: id, detail: {} });
  } finally {
    run.mockRestore();
  }
}

const inIndex = (db: Database.Database) =>
  (db.prepare(`SELECT block FROM memory_fts_data`).all() as { block: Buffer | null }[]).some((r) => r.block !== null && Buffer.from(r.block).includes(TOKEN));
const marks = (db: Database.Database) => db.prepare(`SELECT tbl FROM fts_purge ORDER BY tbl`).pluck().all();
const inFile = (dir: string) =>
  ["memory.db", "memory.db-wal"].map((f) => join(dir, f)).some((f) => existsSync(f) && readFileSync(f).includes(TOKEN));

describe("full-text purge after a forget", () => {
  it("the forget returns before the merge; the purge then leaves no term of the text in the index and clears its mark", async () => {
    const { ctx, store, id } = await seeded(tempDir());
    const mainSteps = vi.spyOn(FtsPurge.prototype as unknown as { stepOnce: () => boolean }, "stepOnce");
    try {
      expect(inIndex(ctx.db)).toBe(true);
      expect(await store.forget([id], { at: 1, actor: "user", action: "forget", targetKind: "memory", targetId: id, detail: {} })).toEqual([id]);
      // its postings wait for the merge, which runs once the forget has returned
      expect(marks(ctx.db)).toEqual(["memory_fts", "memory_tri"]);
      expect(inIndex(ctx.db)).toBe(true);
      // the row is gone from search at once
      expect(await ctx.service.search({ thread: scope }, { query: SECRET })).toEqual([]);
      await store.purged();
      // on a file the merge ran in the purge's worker thread, not on the store's
      expect(mainSteps).not.toHaveBeenCalled();
      expect(inIndex(ctx.db)).toBe(false);
      expect(marks(ctx.db)).toEqual([]);
      // the other memories are untouched
      expect(await ctx.service.search({ thread: scope }, { query: "deploy pipeline weather", limit: 50 })).toHaveLength(40);
    } finally {
      mainSteps.mockRestore();
      ctx.close();
    }
  });

  it("a purge a stopped process left unfinished is finished by the next one to open the file", async () => {
    const dir = tempDir();
    const { ctx, store, id } = await seeded(dir);
    // the process stops right after the forget committed, before its purge ran a step (the
    // connection goes without the store's close)
    await forgetUnpurged(store, id);
    ctx.db.close();
    const raw = new Database(join(dir, "memory.db"), { readonly: true });
    try {
      expect(marks(raw)).toEqual(["memory_fts", "memory_tri"]);
      expect(inIndex(raw)).toBe(true);
    } finally {
      raw.close();
    }
    const next = openTestMemory(dir);
    try {
      // opening the store takes the work up by itself
      await vi.waitFor(() => expect(marks(next.db)).toEqual([]), { timeout: 5000, interval: 20 });
      expect(inIndex(next.db)).toBe(false);
    } finally {
      next.close();
    }
    expect(inFile(dir)).toBe(false);
  });

  it("on the store's own thread (a database in memory), a search in flight holds the next merge step back, for at most PURGE_MAX_DEFER_MS", async () => {
    const ctx = await seededInMemory();
    const { store, id } = ctx;
    try {
      const purge = ftsPurge(ctx.db);
      purge.hold();
      await store.forget([id], { at: 1, actor: "user", action: "forget", targetKind: "memory", targetId: id, detail: {} });
      const started = performance.now();
      await new Promise((r) => setTimeout(r, 20));
      // nothing merged while the search runs
      expect(marks(ctx.db)).toEqual(["memory_fts", "memory_tri"]);
      // a search that never ends does not stop the purge: it steps again once the bound has passed
      await store.purged();
      expect(performance.now() - started).toBeGreaterThanOrEqual(PURGE_MAX_DEFER_MS - 25);
      expect(marks(ctx.db)).toEqual([]);
      expect(inIndex(ctx.db)).toBe(false);
      purge.release();
    } finally {
      store.close();
    }
  });

  it("closing the store right after a forget finishes the purge: no term of the text is left in the file", async () => {
    const dir = tempDir();
    const { ctx, id } = await seeded(dir);
    expect(inFile(dir)).toBe(true);
    await ctx.service.forget({ thread: scope }, [id], user);
    ctx.close();
    expect(inFile(dir)).toBe(false);
    const raw = new Database(join(dir, "memory.db"), { readonly: true });
    try {
      expect(marks(raw)).toEqual([]);
    } finally {
      raw.close();
    }
  });

  it("beside the store's checkpoint worker, the purge's own checkpoint still leaves no term of the text in the file", async () => {
    const dir = tempDir();
    const { ctx, store, id } = await seeded(dir);
    try {
      await vi.waitFor(() => expect(walCheckpoints(ctx.db).running).toBe(true), { timeout: 5000 });
      expect(inFile(dir)).toBe(true);
      await ctx.service.forget({ thread: scope }, [id], user);
      await store.purged();
      // while the store is still open: the log was truncated, the freed pages zeroed
      expect(inFile(dir)).toBe(false);
    } finally {
      ctx.close();
    }
  });

  it("a closing checkpoint that finds another connection's checkpoint under way tries again rather than leave the old pages in the log", async () => {
    const { db, store, id } = await seededInMemory();
    const real = db.pragma.bind(db);
    let busyLeft = 2;
    const calls: string[] = [];
    const pragma = vi.spyOn(db, "pragma").mockImplementation(((sql: string, opts?: Database.PragmaOptions) => {
      if (sql === "wal_checkpoint(TRUNCATE)") {
        calls.push(sql);
        // what SQLite answers while another connection holds the checkpoint lock
        if (busyLeft-- > 0) return [{ busy: 1, log: 10, checkpointed: 0 }];
      }
      return real(sql, opts);
    }) as typeof db.pragma);
    try {
      await store.forget([id], { at: 1, actor: "user", action: "forget", targetKind: "memory", targetId: id, detail: {} });
      await store.purged();
      expect(calls).toHaveLength(3);
      expect(marks(db)).toEqual([]);
    } finally {
      pragma.mockRestore();
      store.close();
    }
  });

  it("its checkpoint does not hold up another process's writes while a reader keeps an older snapshot", async () => {
    // A TRUNCATE checkpoint takes the writers' lock and waits for readers of older snapshots (an
    // export, a backup): under the 5 s busy timeout every writer waited with it, and an /invoke
    // meanwhile got a 503.
    const dir = tempDir();
    const { ctx, store, id } = await seeded(dir);
    const path = join(dir, "memory.db");
    const reader = new Database(path, { readonly: true });
    const writer = spawn(
      process.execPath,
      [
        "-e",
        `const db = new (require("better-sqlite3"))(process.argv[1]); db.pragma("busy_timeout = 10000");
         const row = db.prepare("INSERT INTO audit_log (at, actor, action, target_kind, target_id, detail) VALUES (?, 'user', 'create', 'memory', 'w', '{}')");
         const pause = new Int32Array(new SharedArrayBuffer(4));
         console.log("ready");
         let longest = 0;
         for (const end = Date.now() + 2000; Date.now() < end; Atomics.wait(pause, 0, 0, 10)) {
           const t = Date.now(); row.run(t); longest = Math.max(longest, Date.now() - t);
         }
         console.log(longest);`,
        path,
      ],
      { cwd: process.cwd(), stdio: ["ignore", "pipe", "inherit"] },
    );
    const lines = createInterface({ input: writer.stdout! })[Symbol.asyncIterator]();
    try {
      await forgetUnpurged(store, id);
      // a reader in the middle of a long read, on a snapshot older than the log's end
      reader.exec("BEGIN");
      reader.prepare(`SELECT count(*) FROM memories`).get();
      await ctx.service.remember(scope, { content: "written after the reader began", kind: "fact" }, user);
      expect((await lines.next()).value).toBe("ready");
      // the merge and its checkpoint, while the other process writes every 10 ms
      ftsPurge(ctx.db).finish();
      const longest = Number((await lines.next()).value);
      expect(longest).toBeLessThan(1000);
      expect(inIndex(ctx.db)).toBe(false);
      // the old page images wait in the log for a checkpoint after the reader is done
      reader.exec("COMMIT");
      await ctx.service.forget({ thread: scope }, [(await ctx.service.remember(scope, { content: "one more to forget", kind: "fact" }, user)).record.id], user);
      await store.purged();
      expect(statSync(`${path}-wal`).size).toBe(0);
    } finally {
      if (reader.inTransaction) reader.exec("COMMIT");
      reader.close();
      writer.kill();
      ctx.close();
    }
  });

  it("closing checkpoints after a forget even when another connection did the merge and stopped before its checkpoint", async () => {
    const dir = tempDir();
    const { ctx, store, id } = await seeded(dir);
    // the purge's worker thread, as it would be if stopped between its last step and its checkpoint:
    // another connection merges and clears the marks, and stays open (the store's close is not the
    // last one, so SQLite's own checkpoint on close does not run)
    await forgetUnpurged(store, id);
    const other = new Database(join(dir, "memory.db"));
    try {
      other.pragma("wal_autocheckpoint = 0");
      other.pragma("secure_delete = ON");
      for (const t of ["memory_fts", "memory_tri"]) {
        for (;;) {
          const before = other.prepare(`SELECT total_changes() AS n`).get() as { n: number };
          other.prepare(`INSERT INTO ${t} (${t}, rank) VALUES ('merge', -64)`).run();
          if ((other.prepare(`SELECT total_changes() AS n`).get() as { n: number }).n - before.n < 2) break;
        }
      }
      other.prepare(`DELETE FROM fts_purge`).run();
      expect(inIndex(other)).toBe(false);
      // the log still holds the pages from before the merge
      expect(inFile(dir)).toBe(true);
      ctx.close();
      expect(inFile(dir)).toBe(false);
    } finally {
      other.close();
    }
  });
});

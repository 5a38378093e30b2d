// A memory reindex killed part-way leaves its half-built word index and its pid in the database.
// When another program had since taken that pid, the leftover counted as a running reindex: a new
// reindex and restore refused ("wait for it") for as long as that program ran, and serve did not
// remove it, so every write kept noting its row there. The rebuild now records its process's start
// time with the pid (Linux), as the serving marks do, and a pid that names a process started at
// another time is taken for gone.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { notesDb, seen, startCli, startServer } from "./held-child.js";

/** Run `memory reindex`, kill it outright once its rebuild is under way, and give its recorded pid to `other` (when given). */
async function killedRebuildWithPidOf(db: string, env: Record<string, string>, other: ChildProcess | null): Promise<void> {
  const run = startCli(["memory", "reindex", "--db", db], env);
  const reader = new Database(db, { readonly: true });
  try {
    await seen(run, "its rebuild", () => reader.prepare(`SELECT 1 FROM sqlite_schema WHERE name = 'memory_fts_rebuild_dirty'`).get() !== undefined, { signal: "SIGKILL" });
  } finally {
    reader.close();
  }
  await run.exited;
  if (!other) return;
  // the pid cannot be made to come round again: the state the reindex left is given the pid of
  // another live program instead, which is what a reuse leaves
  const w = new Database(db);
  try {
    expect(w.prepare(`UPDATE memory_fts_rebuild_state SET pid = ?`).run(other.pid!).changes).toBe(1);
  } finally {
    w.close();
  }
}

describe.runIf(process.platform === "linux")("a killed reindex whose pid another program took since", () => {
  it("blocks neither a new reindex nor a restore", async () => {
    const { dir, db, env } = notesDb(4000, { backup: true });
    const other = spawn("sleep", ["120"], { stdio: "ignore" });
    const otherExited = new Promise((r) => other.on("exit", r));
    try {
      await killedRebuildWithPidOf(db, env, other);
      const again = runCli(["memory", "reindex", "--db", db], env);
      expect(again.stderr).toBe("");
      expect(again.stdout).toMatch(/^word index rebuilt in \d+ ms/);
      const after = new Database(db, { readonly: true });
      expect(after.prepare(`SELECT name FROM sqlite_schema WHERE name LIKE 'memory_fts_rebuild%'`).all()).toEqual([]);
      after.close();

      await killedRebuildWithPidOf(db, env, other);
      const r = runCli(["restore", join(dir, "b.db"), "--db", db], env);
      expect(r.stderr).toBe("");
      expect(r.stdout).toMatch(/^restored 4000 memories/);
      expect(runCli(["memory", "search", "Note 1234", "--db", db], env).stdout).toContain("number 1234");
    } finally {
      other.kill("SIGKILL");
      await otherExited;
    }
  }, 120_000);
});

describe("a reindex killed while a server runs", () => {
  it("its half-built word index is removed by the server's next sweep, not only at the server's next start", async () => {
    const { dir, db, env } = notesDb(4000);
    const log = join(dir, "serve.log");
    const server = await startServer(db, log, env);
    try {
      await killedRebuildWithPidOf(db, env, null);
      const leftover = () => {
        const r = new Database(db, { readonly: true });
        try {
          return r.prepare(`SELECT name FROM sqlite_schema WHERE name LIKE 'memory_fts_rebuild%' AND type = 'table'`).all();
        } finally {
          r.close();
        }
      };
      expect(leftover().length).toBeGreaterThan(0);
      const deadline = Date.now() + 90_000;
      while (leftover().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
      expect(leftover()).toEqual([]);
      expect(readFileSync(log, "utf8")).toContain("removed the half-built word index a killed memory reindex left");
    } finally {
      server.child.kill("SIGINT");
      await server.exited;
    }
  }, 150_000);
});

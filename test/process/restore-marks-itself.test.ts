// restore refused while a server ran, but did not mark itself: a server (standalone, a daemon
// command server, provider-proxy) started while a restore was copying was not refused, and got its
// database replaced beneath it. Now a running restore leaves `.NAME.PID.restoring-mark`, a server
// refuses to start while that restore lives (naming its pid; the fix is to wait), a killed
// restore's mark blocks nothing, and restore looks for servers again just before the final copy.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";
import { SCRIPTED, startProxy } from "../context-hook/proxy-helpers.js";
import { appears, fatten, notesDb, seen, startCli, startServer } from "./held-child.js";

/** `serve` that is expected to refuse (a short timeout instead of hanging when it starts). */
function serveOnce(db: string, dir: string, env: Record<string, string>) {
  return spawnSync(process.execPath, [CLI, "serve", "--port", "0", "--db", db, "--log", join(dir, "s.log")], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 15_000 });
}

describe("a restore under way and servers starting", () => {
  it("a server refuses to start while a restore runs; restore catches one started during its staging; a killed restore blocks nothing", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const backup = join(dir, "b.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The standup moved to 9:30", "--db", db], env).status).toBe(0);
    expect(runCli(["backup", "--out", backup, "--db", db], env).status).toBe(0);
    // a large backup, so the restore is caught while it stages its copy
    fatten(backup);
    expect(runCli(["memory", "add", "The retro is on Fridays", "--db", db], env).status).toBe(0);
    // a forget since the backup: the restore stages a copy to forget it again
    const id = (JSON.parse(runCli(["memory", "search", "standup", "--json", "--db", db], env).stdout.split("\n")[0]!) as { id: string }).id;
    expect(runCli(["memory", "forget", id, "--db", db], env).status).toBe(0);

    // 1. a restore frozen mid-staging: serve refuses, naming it
    const run = startCli(["restore", backup, "--db", db], env);
    await appears(dir, /^\.memory\.db\.\d+\.restoring$/, run, "SIGSTOP");
    const mark = `.memory.db.${run.child.pid}.restoring-mark`;
    expect(existsSync(join(dir, mark))).toBe(true);
    const refused = serveOnce(db, dir, env);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`cannot serve ${db}: a restore is replacing it (pid ${run.child.pid}, since `);
    expect(refused.stderr).toContain("wait for the restore to finish, then start again");
    expect(readdirSync(dir).filter((f) => f.endsWith(".serving"))).toEqual([]);

    // 2. a server that started without seeing the mark (here: it is taken away) is caught before the final copy
    rmSync(join(dir, mark));
    const s = await startServer(db, join(dir, "s2.log"), env);
    try {
      run.child.kill("SIGCONT");
      expect((await run.exited).code).toBe(1);
      expect(run.stderr()).toContain(`cannot restore into ${db} while a server uses it: pid ${s.child.pid} (serve --toolset memory`);
      expect(run.stdout()).toBe("");
    } finally {
      s.child.kill("SIGINT");
      await s.exited;
    }
    // nothing was swapped: the memory added after the backup is still there, and nothing is left
    expect(runCli(["memory", "search", "retro", "--db", db], env).stdout).toContain("Fridays");
    expect(readdirSync(dir).filter((f) => f.includes("restoring"))).toEqual([]);

    // 3. a restore killed outright: its mark blocks nothing and goes with the next server
    const killed = startCli(["restore", backup, "--db", db], env);
    await appears(dir, /^\.memory\.db\.\d+\.restoring$/, killed, "SIGKILL");
    await killed.exited;
    expect(readdirSync(dir)).toContain(`.memory.db.${killed.child.pid}.restoring-mark`);
    const s2 = await startServer(db, join(dir, "s2.log"), env);
    s2.child.kill("SIGINT");
    await s2.exited;
    expect(readdirSync(dir).filter((f) => f.includes("restoring"))).toEqual([]);

    // 4. a restore that ran its course leaves no mark
    const done = runCli(["restore", backup, "--db", db], env);
    expect(done.stdout).toMatch(/^restored 0 memories/);
    expect(done.stdout).toContain("1 of them had been forgotten after this backup was made and were forgotten again");
    expect(readdirSync(dir).filter((f) => f.includes("restoring"))).toEqual([]);
  }, 120_000);

  it("provider-proxy refuses to start while a restore runs, naming it, and leaves no mark; once the restore ended it starts and restore refuses under it", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const backup = join(dir, "b.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The standup moved to 9:30", "--db", db], env).status).toBe(0);
    expect(runCli(["backup", "--out", backup, "--db", db], env).status).toBe(0);
    fatten(backup);
    const id = (JSON.parse(runCli(["memory", "search", "standup", "--json", "--db", db], env).stdout.split("\n")[0]!) as { id: string }).id;
    expect(runCli(["memory", "forget", id, "--db", db], env).status).toBe(0);

    const run = startCli(["restore", backup, "--db", db], env);
    await appears(dir, /^\.memory\.db\.\d+\.restoring$/, run, "SIGSTOP");
    const log = join(dir, "proxy.log");
    const proxyArgs = ["--db", db, "--log", log, "--upstream", process.execPath, SCRIPTED];
    try {
      const refused = spawnSync(process.execPath, [CLI, "provider-proxy", ...proxyArgs], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 20_000 });
      expect(refused.status).toBe(1);
      // the daemon reads the socket path from stdout: nothing there
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toContain(`cannot serve ${db}: a restore is replacing it (pid ${run.child.pid}, since `);
      expect(refused.stderr).toContain("wait for the restore to finish, then start again");
      // the daemon keeps a provider's stderr to itself: its log says why
      expect(existsSync(log) ? readFileSync(log, "utf8") : "").toContain("a restore is replacing it");
      expect(readdirSync(dir).filter((f) => f.endsWith(".serving"))).toEqual([]);
    } finally {
      run.child.kill("SIGCONT");
    }
    expect((await run.exited).code).toBe(0);

    // the restore over: the proxy starts, marks the database, and a restore now refuses under it
    const proxy = await startProxy(proxyArgs, env);
    try {
      expect(readdirSync(dir).filter((f) => f.endsWith(".serving"))).toEqual([`.memory.db.${proxy.child.pid}.serving`]);
      const r = runCli(["restore", backup, "--db", db], env);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`cannot restore into ${db} while a server uses it: pid ${proxy.child.pid} (provider-proxy, since `);
    } finally {
      await proxy.stop();
    }
    expect(readdirSync(dir).filter((f) => f.endsWith(".serving"))).toEqual([]);
  }, 120_000);

  it("restore refuses while memory reindex --vectors stores vectors, naming its pid; the reindex refuses while a restore runs", async () => {
    const { dir, db, env } = notesDb(3000, { backup: true });
    // written without an embedder: the reindex embeds them all, a few per transaction
    writeFileSync(join(dir, "config.json"), JSON.stringify({ embedder: { kind: "hashing", hashing: { dimensions: 48 } } }));
    const reindex = startCli(["memory", "reindex", "--vectors", "--batch", "2", "--db", db], env);
    const reader = new Database(db, { readonly: true });
    try {
      // caught once it has stored some vectors and not all
      await seen(reindex, "it storing vectors", () => {
        try {
          return (reader.prepare(`SELECT count(*) AS n FROM memory_vec_rowids`).get() as { n: number }).n > 0;
        } catch {
          return false; // the vector table is not made yet
        }
      }, { signal: "SIGSTOP" });
    } finally {
      reader.close();
    }
    try {
      const r = runCli(["restore", join(dir, "b.db"), "--db", db], env);
      expect(r.stderr).toContain(`cannot restore into ${db} while memory reindex --vectors (pid ${reindex.child.pid}) stores its vectors; wait for the reindex to finish, then restore again; --force restores anyway`);
      expect(r.status).toBe(1);
    } finally {
      reindex.child.kill("SIGCONT");
    }
    expect((await reindex.exited).code).toBe(0);
    expect(reindex.stdout()).toContain("embedded 3000 memories");
    expect(readdirSync(dir).filter((f) => f.endsWith(".reindexing"))).toEqual([]);

    // the other way round: a reindex started while a restore replaces the file refuses, naming it
    // (the restore's mark is this test process's, which lives)
    writeFileSync(join(dir, `.memory.db.${process.pid}.restoring-mark`), `${JSON.stringify({ pid: process.pid, what: "restore", since: "2026-12-07T20:00:00.000Z" })}\n`);
    const refused = runCli(["memory", "reindex", "--vectors", "--db", db], env);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`cannot reindex ${db}: a restore is replacing it (pid ${process.pid}, since 2026-12-07T20:00:00.000Z); wait for the restore to finish, then run the reindex again`);
    expect(readdirSync(dir).filter((f) => f.endsWith(".reindexing"))).toEqual([]);
    rmSync(join(dir, `.memory.db.${process.pid}.restoring-mark`));
    const after = runCli(["restore", join(dir, "b.db"), "--db", db], env);
    expect(after.stdout).toMatch(/^restored 3000 memories/);
  }, 120_000);

  it("restore refuses while memory reindex rebuilds the word index, naming its pid; goes ahead once it finished; the reindex refuses while a restore runs", async () => {
    const { dir, db, env } = notesDb(4000, { backup: true });
    const reindex = startCli(["memory", "reindex", "--db", db], env);
    const reader = new Database(db, { readonly: true });
    try {
      await seen(reindex, "its rebuild", () => reader.prepare(`SELECT 1 FROM sqlite_schema WHERE name = 'memory_fts_rebuild'`).get() !== undefined, { signal: "SIGSTOP" });
    } finally {
      reader.close();
    }
    const r = runCli(["restore", join(dir, "b.db"), "--db", db], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`cannot restore into ${db} while memory reindex (pid ${reindex.child.pid}) rebuilds its word index; wait for the reindex to finish, then restore again`);
    reindex.child.kill("SIGCONT");
    expect((await reindex.exited).code).toBe(0);
    expect(reindex.stderr()).toBe("");
    const after = runCli(["restore", join(dir, "b.db"), "--db", db], env);
    expect(after.stdout).toMatch(/^restored 4000 memories/);
    expect(runCli(["memory", "search", "Note 1234", "--db", db], env).stdout).toContain("number 1234");

    // the other way round: a word-index reindex started while a restore replaces the file refuses,
    // naming it, and starts no rebuild (the restore's mark is this test process's, which lives)
    writeFileSync(join(dir, `.memory.db.${process.pid}.restoring-mark`), `${JSON.stringify({ pid: process.pid, what: "restore", since: "2026-12-07T20:00:00.000Z" })}\n`);
    const refused = runCli(["memory", "reindex", "--if-drift", "0", "--db", db], env);
    expect(refused.stderr).toContain(`cannot reindex ${db}: a restore is replacing it (pid ${process.pid}, since 2026-12-07T20:00:00.000Z); wait for the restore to finish, then run the reindex again`);
    expect(refused.status).toBe(1);
    expect(readdirSync(dir).filter((f) => f.endsWith(".reindexing"))).toEqual([]);
    const untouched = new Database(db, { readonly: true });
    expect(untouched.prepare(`SELECT name FROM sqlite_schema WHERE name LIKE 'memory_fts_rebuild%'`).all()).toEqual([]);
    untouched.close();
    rmSync(join(dir, `.memory.db.${process.pid}.restoring-mark`));
    expect(runCli(["memory", "reindex", "--if-drift", "0", "--db", db], env).stdout).toMatch(/^word index rebuilt in \d+ ms/);
  }, 120_000);
});

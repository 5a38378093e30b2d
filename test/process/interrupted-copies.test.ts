// backup, `memory export --out` and restore write a temporary copy of every memory first. Ctrl-C
// (or the SIGTERM of a service manager) in the middle left it behind, hidden (`.NAME.PID.partial`,
// `.NAME.PID.restoring`) and out of reach of any later forget. Now an interrupted command removes
// its copy and exits 130/143, and a copy left by a run killed outright (SIGKILL) is removed by the
// next of these commands writing into that folder (whatever file it writes: a copy for another
// name used to stay for good), and by `serve` for a restore's.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, readdirSync, statSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

const MEMORIES = 6000;
let base = "";
let baseHome = "";

/** A store large enough that each command is seconds into its copy when the signal comes. */
beforeAll(() => {
  baseHome = tempDir("imem-interrupt-base-");
  base = join(baseHome, "base.db");
  const lines = join(baseHome, "in.jsonl");
  writeFileSync(lines, Array.from({ length: MEMORIES }, (_, i) => JSON.stringify({ content: `Note ${i}: the build server number ${i} runs the nightly job for team ${i % 37}` })).join("\n"));
  const r = runCli(["memory", "import", lines, "--batch", String(MEMORIES), "--db", base], { INFINITY_MEMORY_HOME: baseHome, INFINITY_MEMORY_USER: "alice" });
  expect(r.status, r.stderr).toBe(0);
  // ~40 MB of audit rows: the backup and restore copies take a while
  const db = new Database(base);
  const fill = db.prepare(`INSERT INTO audit_log (at, actor, action, target_kind, target_id, detail) VALUES (?, 'user', 'create', 'memory', ?, ?)`);
  db.transaction(() => {
    for (let i = 0; i < 20_000; i++) fill.run(i, `mem_fill_${i}`, JSON.stringify({ note: "x".repeat(2000) }));
  })();
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
}, 120_000);

function start(args: string[], env: Record<string, string>): { child: ChildProcess; exited: Promise<{ code: number | null; signal: string | null }>; stderr: () => string } {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) => child.on("exit", (code, signal) => r({ code, signal })));
  return { child, exited, stderr: () => err };
}

/** Resolves once a file matching `pattern` (and holding data, if `nonEmpty`) is in `dir`. */
function appears(dir: string, pattern: RegExp, child: ChildProcess, nonEmpty = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const look = () => {
      const name = readdirSync(dir).find((f) => pattern.test(f) && (!nonEmpty || statSync(join(dir, f), { throwIfNoEntry: false })?.size));
      if (!name) return;
      clearInterval(timer);
      watcher.close();
      resolve(name);
    };
    const watcher = watch(dir, look);
    const timer = setInterval(look, 5);
    child.once("exit", (code) => {
      clearInterval(timer);
      watcher.close();
      reject(new Error(`the command ended (${code}) before its temporary file appeared`));
    });
  });
}

describe("an interrupted copy of every memory", () => {
  it("backup: SIGINT mid-copy removes the partial copy and exits 130", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    copyFileSync(base, db);
    const run = start(["backup", "--out", join(dir, "b.db"), "--db", db], { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" });
    await appears(dir, /^\.b\.db\.\d+\.partial$/, run.child);
    run.child.kill("SIGINT");
    expect(await run.exited).toEqual({ code: 130, signal: null });
    expect(run.stderr()).toContain("interrupted by SIGINT");
    // (the live database's -wal and -shm stay, as after any process that had it open)
    expect(readdirSync(dir).filter((f) => f.includes("b.db"))).toEqual([]);
  });

  it("memory export --out: SIGTERM mid-write removes the partial file and exits 143", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    copyFileSync(base, db);
    const run = start(["memory", "export", "--out", join(dir, "all.jsonl"), "--db", db], { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" });
    // memories are already in it
    await appears(dir, /^\.all\.jsonl\.\d+\.partial$/, run.child, true);
    run.child.kill("SIGTERM");
    expect(await run.exited).toEqual({ code: 143, signal: null });
    expect(readdirSync(dir).filter((f) => f.includes("jsonl"))).toEqual([]);
  });

  it("restore: SIGINT while forgetting again removes the staged copy and leaves the database as it was", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    copyFileSync(base, db);
    copyFileSync(base, join(dir, "before.db"));
    const id = (JSON.parse(runCli(["memory", "list", "--json", "--limit", "1", "--db", db], env).stdout.split("\n")[0]!) as { id: string }).id;
    expect(runCli(["memory", "forget", id, "--db", db], env).status).toBe(0);
    const run = start(["restore", join(dir, "before.db"), "--db", db], env);
    await appears(dir, /^\.memory\.db\.\d+\.restoring$/, run.child);
    run.child.kill("SIGINT");
    expect(await run.exited).toEqual({ code: 130, signal: null });
    expect(readdirSync(dir).filter((f) => f.includes("restoring"))).toEqual([]);
    // still forgotten: the live file was not replaced
    expect(runCli(["memory", "show", id, "--json", "--db", db], env).stdout).toContain(`"status": "deleted"`);
  });

  it("what a run killed outright left is removed by the next run into that folder, for any file (and a restore's by serve); a live process's and another program's are kept", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The standup moved to 9:30", "--db", db], env).status).toBe(0);
    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    const live = process.pid;
    const leave = (...names: string[]) => names.forEach((n) => writeFileSync(join(dir, n), "every memory"));
    const left = () => readdirSync(dir).filter((f) => f.startsWith(".")).sort();

    leave(`.b.db.${dead}.partial`, `.b.db.${dead}.partial-journal`, `.b.db.${live}.partial`, `.notes.txt.${dead}.partial`);
    // what a backup to another name (b1.db) and an export killed outright left goes too: every
    // memory, under a name no later run for that file may ever use; another program's file that
    // shares the pattern (.notes.txt…) stays, and so does a live process's
    copyFileSync(base, join(dir, `.b1.db.${dead}.partial`));
    leave(`.b1.db.${dead}.partial-journal`, `.b1.db.${live}.partial-wal`);
    writeFileSync(join(dir, `.old.jsonl.${dead}.partial`), `{"id":"mem_1","content":"every memory"}\n`);
    writeFileSync(join(dir, `.empty.db.${dead}.partial`), "");
    expect(runCli(["backup", "--out", join(dir, "b.db"), "--db", db], env).status).toBe(0);
    expect(left()).toEqual([`.b.db.${live}.partial`, `.b1.db.${live}.partial-wal`, `.notes.txt.${dead}.partial`]);

    leave(`.all.jsonl.${dead}.partial`);
    expect(runCli(["memory", "export", "--out", join(dir, "all.jsonl"), "--db", db], env).status).toBe(0);
    expect(existsSync(join(dir, `.all.jsonl.${dead}.partial`))).toBe(false);

    leave(`.memory.db.${dead}.restoring`, `.memory.db.${dead}.restoring-wal`);
    expect(runCli(["restore", join(dir, "b.db"), "--db", db], env).status).toBe(0);
    expect(left().filter((f) => f.includes("restoring"))).toEqual([]);

    leave(`.memory.db.${dead}.restoring`, `.memory.db.${dead}.restoring-shm`);
    copyFileSync(base, join(dir, `.old.db.${dead}.restoring`));
    const server = spawn(process.execPath, [CLI, "serve", "--port", "0", "--db", db, "--log", join(dir, "s.log")], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "ignore"] });
    const exited = new Promise((r) => server.on("exit", r));
    try {
      await new Promise<void>((resolve) => createInterface({ input: server.stdout! }).on("line", (l) => l.includes("listening on") && resolve()));
      expect(left().filter((f) => f.includes("restoring"))).toEqual([]);
    } finally {
      server.kill("SIGINT");
      await exited;
    }
  });
});

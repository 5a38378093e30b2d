// restore swapped the database under a running server (standalone or a daemon command server)
// without a word: the server kept its caches and open calls over a file whose content changed
// beneath it. Now a server marks the database while it runs (`.NAME.PID.serving`) and restore
// refuses, naming the process and the fix; a mark left by a server killed outright blocks nothing.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { CLI, runCli, spawnCommandServer } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";
import { startServer } from "./held-child.js";

async function standalone(db: string, dir: string, env: Record<string, string>): Promise<{ child: ChildProcess; exited: Promise<unknown> }> {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--db", db, "--log", join(dir, "s.log")], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise((r) => child.on("exit", r));
  await new Promise<void>((resolve) => createInterface({ input: child.stdout! }).on("line", (l) => l.includes("listening on") && resolve()));
  return { child, exited };
}

const marks = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(".serving"));

describe("restore with a server running on the database", () => {
  it("refuses under a running standalone server, naming it; restores once it stopped, or with --force", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The standup moved to 9:30", "--db", db], env).status).toBe(0);
    expect(runCli(["backup", "--out", join(dir, "b.db"), "--db", db], env).status).toBe(0);
    expect(runCli(["memory", "add", "The retro is on Fridays", "--db", db], env).status).toBe(0);
    const s = await standalone(db, dir, env);
    try {
      const r = runCli(["restore", join(dir, "b.db"), "--db", db], env);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`cannot restore into ${db} while a server uses it: pid ${s.child.pid} (serve --toolset memory, since `);
      expect(r.stderr).toContain(`stop it first (Ctrl-C in its terminal, kill ${s.child.pid}, or end the Infinity session that started it), then restore again; --force restores anyway`);
      // nothing was swapped: the memory added after the backup is still there
      expect(runCli(["memory", "search", "retro", "--db", db], env).stdout).toContain("Fridays");
      const forced = runCli(["restore", join(dir, "b.db"), "--db", db, "--force"], env);
      expect(forced.stdout).toMatch(/^restored 1 memories/);
    } finally {
      s.child.kill("SIGINT");
      await s.exited;
    }
    // a stopped server leaves no mark, and restore goes ahead
    expect(marks(dir)).toEqual([]);
    expect(runCli(["restore", join(dir, "b.db"), "--db", db], env).status).toBe(0);
  });

  it("refuses under a daemon command server; the mark of one killed outright blocks nothing and is removed", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The standup moved to 9:30", "--db", db], env).status).toBe(0);
    expect(runCli(["backup", "--out", join(dir, "b.db"), "--db", db], env).status).toBe(0);
    const session = await spawnCommandServer(`exec "${process.execPath}" "${CLI}" serve --toolset memory --db "${db}"`, dir, env);
    try {
      const r = runCli(["restore", join(dir, "b.db"), "--db", db], env);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`while a server uses it: pid ${session.child.pid} (serve --toolset memory (command server), since `);
    } finally {
      session.child.kill("SIGKILL");
      await session.exited;
    }
    expect(marks(dir)).toEqual([`.memory.db.${session.child.pid}.serving`]);
    const r = runCli(["restore", join(dir, "b.db"), "--db", db], env);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^restored 1 memories/);
    expect(marks(dir)).toEqual([]);
  });

  it.runIf(process.platform === "linux")("a killed server's mark whose pid another program took since is not taken for a server", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The standup moved to 9:30", "--db", db], env).status).toBe(0);
    expect(runCli(["backup", "--out", join(dir, "b.db"), "--db", db], env).status).toBe(0);
    const s = await standalone(db, dir, env);
    s.child.kill("SIGKILL");
    await s.exited;
    const left = `.memory.db.${s.child.pid}.serving`;
    const written = readFileSync(join(dir, left), "utf8");
    // the pid cannot be made to come round again: the mark the server left is given the pid of
    // another live program instead, which is what a reuse leaves
    const other = spawn("sleep", ["60"], { stdio: "ignore" });
    const otherExited = new Promise((r) => other.on("exit", r));
    try {
      rmSync(join(dir, left));
      writeFileSync(join(dir, `.memory.db.${other.pid}.serving`), written);
      const r = runCli(["restore", join(dir, "b.db"), "--db", db], env);
      expect(r.stderr).toBe("");
      expect(r.stdout).toMatch(/^restored 1 memories/);
      expect(marks(dir)).toEqual([]);
    } finally {
      other.kill("SIGKILL");
      await otherExited;
    }
  });

  // A server that opened the database through a symbolic link left its mark beside the link, so a
  // restore naming the file itself (or the other way round) saw no server and replaced the file
  // beneath it. The marks are now kept beside the file the links lead to.
  it("refuses when the server and the restore name the database by different paths, one of them a symbolic link", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "data"));
    mkdirSync(join(dir, "home"));
    const real = join(dir, "data", "r.db");
    const link = join(dir, "home", "memory.db");
    const env = { INFINITY_MEMORY_HOME: join(dir, "home"), INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The standup moved to 9:30", "--db", real], env).status).toBe(0);
    symlinkSync(real, link);
    expect(runCli(["backup", "--out", join(dir, "b.db"), "--db", real], env).status).toBe(0);
    expect(runCli(["memory", "add", "The retro is on Fridays", "--db", real], env).status).toBe(0);
    for (const [served, restored] of [[link, real], [real, link]] as const) {
      const s = await startServer(served, join(dir, "s.log"), env);
      try {
        const r = runCli(["restore", join(dir, "b.db"), "--db", restored], env);
        expect(r.stderr).toContain(`while a server uses it: pid ${s.child.pid} (serve --toolset memory`);
        expect(r.status).toBe(1);
      } finally {
        s.child.kill("SIGINT");
        await s.exited;
      }
    }
    expect(runCli(["memory", "search", "retro", "--db", real], env).stdout).toContain("Fridays");
  }, 90_000);
});

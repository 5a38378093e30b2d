// CLI child processes that a test catches at a point of their run: started with their output
// kept, then stopped (SIGSTOP) or killed the moment something shows (a mark file, a table), so the
// test can act while the command is held there.
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";
import { expect } from "vitest";
import { CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

export interface Started {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: string | null }>;
  stdout(): string;
  stderr(): string;
}

/** Start the built CLI with `args`, its output collected. */
export function startCli(args: string[], env: Record<string, string>): Started {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) => child.on("exit", (code, signal) => r({ code, signal })));
  return { child, exited, stdout: () => out, stderr: () => err };
}

/**
 * Resolves with what `look` finds (anything but null, undefined or false) once it finds it,
 * looking every 2 ms (and on every change in `watchDir`, when given); sends `signal` to the child
 * in that same moment, when given. Rejects when the child ends first.
 */
export function seen<T>(run: Started, what: string, look: () => T | null | undefined | false, opts: { signal?: NodeJS.Signals; watchDir?: string } = {}): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const finish = () => {
      done = true;
      clearInterval(timer);
      watcher?.close();
    };
    const check = () => {
      if (done) return;
      const found = look();
      if (found === null || found === undefined || found === false) return;
      if (opts.signal) run.child.kill(opts.signal);
      finish();
      resolve(found);
    };
    const watcher = opts.watchDir ? watch(opts.watchDir, check) : null;
    const timer = setInterval(check, 2);
    void run.exited.then(({ code }) => {
      if (done) return;
      finish();
      reject(new Error(`the command ended (${code}) before ${what} was seen: ${run.stderr()}`));
    });
  });
}

/** Resolves with the name of the file matching `pattern` once it is in `dir`. */
export function appears(dir: string, pattern: RegExp, run: Started, signal?: NodeJS.Signals): Promise<string> {
  return seen(run, String(pattern), () => readdirSync(dir).find((f) => pattern.test(f)), { signal, watchDir: dir });
}

/** A standalone `serve` on a free port, resolved once it listens. */
export async function startServer(db: string, log: string, env: Record<string, string>): Promise<Started> {
  const run = startCli(["serve", "--port", "0", "--db", db, "--log", log], env);
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: run.child.stdout! }).on("line", (l) => l.includes("listening on") && resolve());
    void run.exited.then(({ code }) => reject(new Error(`serve ended (${code}) before it listened: ${run.stderr()}`)));
  });
  return run;
}

/** Adds 10,000 audit rows of 2 kB to a database file, so a restore from it takes long enough to be caught. */
export function fatten(file: string): void {
  const b = new Database(file);
  const fill = b.prepare(`INSERT INTO audit_log (at, actor, action, target_kind, target_id, detail) VALUES (?, 'user', 'create', 'memory', ?, ?)`);
  b.transaction(() => {
    for (let i = 0; i < 10_000; i++) fill.run(i, `mem_fill_${i}`, JSON.stringify({ note: "x".repeat(2000) }));
  })();
  b.close();
}

/**
 * A fresh folder with a database of `count` imported notes ("Note i: the build server number i
 * runs the nightly job"), and with `backup` a backup of it as b.db beside it.
 */
export function notesDb(count: number, opts: { backup?: boolean } = {}): { dir: string; db: string; env: Record<string, string> } {
  const dir = tempDir();
  const db = join(dir, "memory.db");
  const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
  const lines = join(dir, "in.jsonl");
  writeFileSync(lines, Array.from({ length: count }, (_, i) => JSON.stringify({ content: `Note ${i}: the build server number ${i} runs the nightly job` })).join("\n"));
  expect(runCli(["memory", "import", lines, "--batch", String(count), "--db", db], env).status).toBe(0);
  if (opts.backup) expect(runCli(["backup", "--out", join(dir, "b.db"), "--db", db], env).status).toBe(0);
  return { dir, db, env };
}

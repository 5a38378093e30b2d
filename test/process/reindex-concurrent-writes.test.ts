// `memory reindex` rebuilt the word index in one transaction: a running server's writes
// (memory_remember, memory_forget) waited for the whole rebuild, and on a large store ran into the
// 5 s busy timeout. Now the new index is built beside the live one a batch per transaction, and
// what servers write meanwhile is noted by triggers and replayed before a short swap: writes go on
// during the rebuild, each memory written meanwhile is in the new index exactly once, and one
// forgotten meanwhile is not in it.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { postJson, startCallbackSink } from "../helpers/callback-sink.js";
import { CLI, runCli } from "../helpers/cli.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { recreateWordIndex } from "../../stores/sqlite/memory-fts.js";
import { tempDir } from "../helpers/tmp.js";

const MEMORIES = 16_000;

describe("memory reindex beside a running server", () => {
  it("lets remembers and forgets through during the rebuild, each indexed exactly once (or not at all once forgotten)", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const lines = join(dir, "in.jsonl");
    writeFileSync(lines, Array.from({ length: MEMORIES }, (_, i) => JSON.stringify({ content: `Note ${i}: the build server number ${i} runs the nightly job for team ${i % 37}`, tags: [`t${i % 50}`] })).join("\n"));
    expect(runCli(["memory", "import", lines, "--batch", String(MEMORIES), "--db", db], env).status).toBe(0);
    expect(runCli(["memory", "add", "The owl mascot is called Hedwigqz", "--db", db], env).status).toBe(0);

    const server = spawn(process.execPath, [CLI, "serve", "--port", "0", "--db", db, "--log", join(dir, "s.log")], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "ignore"] });
    const serverExited = new Promise((r) => server.on("exit", r));
    const url = await new Promise<string>((resolve) => createInterface({ input: server.stdout }).on("line", (l) => { const m = /listening on (http:\/\/\S+)/.exec(l); if (m) resolve(m[1]!); }));
    const sink = await startCallbackSink();
    let seq = 0;
    const call = async (operation: string, args: unknown) => {
      const id = `c${seq++}`;
      await postJson(`${url}/invoke`, { operation, arguments: args, id, call_id: null, callback_url: sink.url, group_id: "root-1", thread_ancestors: null });
      return (await sink.next((b) => b.id === id)).text as string;
    };
    const reader = new Database(db, { readonly: true });
    const rebuilding = () => reader.prepare(`SELECT 1 FROM sqlite_schema WHERE name = 'memory_fts_rebuild'`).get() !== undefined;
    try {
      const owl = /mem_\w+/.exec(await call("memory_search", { query: "Hedwigqz" }))![0];
      const reindex = spawn(process.execPath, [CLI, "memory", "reindex", "--db", db], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      reindex.stdout.on("data", (d: Buffer) => (out += d.toString()));
      reindex.stderr.on("data", (d: Buffer) => (out += d.toString()));
      let running = true;
      const done = new Promise<number | null>((r) => reindex.on("exit", (c) => { running = false; r(c); }));
      const words: string[] = [];
      const during: { word: string; ms: number }[] = [];
      let forgot = false;
      while (running) {
        const word = `quokkaqz${words.length}`;
        const started = rebuilding();
        const t0 = performance.now();
        expect(await call("memory_remember", { content: `The spare key code is ${word}` })).toMatch(/^Remembered/);
        const ms = performance.now() - t0;
        words.push(word);
        if (started && rebuilding()) {
          during.push({ word, ms: Math.round(ms) });
          if (!forgot) {
            expect(await call("memory_forget", { id: owl })).toMatch(/^Forgot/);
            forgot = rebuilding();
          }
        }
      }
      expect(await done, out).toBe(0);
      expect(out).toMatch(/^word index rebuilt in \d+ ms/);
      // writes went through while the rebuild was under way, not after it
      expect(during.length, JSON.stringify(during)).toBeGreaterThanOrEqual(3);
      expect(forgot).toBe(true);
      reader.close();
      const check = new Database(db, { readonly: true });
      try {
        const hits = (w: string) => (check.prepare(`SELECT count(*) AS n FROM memory_fts WHERE memory_fts MATCH ?`).get(`content : "${w}"`) as { n: number }).n;
        expect(Object.fromEntries(words.map((w) => [w, hits(w)]).filter(([, n]) => n !== 1))).toEqual({});
        expect(hits("hedwigqz")).toBe(0);
        expect(hits("nightly")).toBe(MEMORIES);
        // nothing of the rebuild is left in the schema
        expect(check.prepare(`SELECT name FROM sqlite_schema WHERE name LIKE 'memory_fts_rebuild%'`).all()).toEqual([]);
      } finally {
        check.close();
      }
      // the neighbours' context of the rows written meanwhile is as a rebuild with no writer makes it
      const anyColumn = (file: string) => {
        const d = new Database(file, { readonly: true });
        try {
          return words.map((w) => (d.prepare(`SELECT count(*) AS n FROM memory_fts WHERE memory_fts MATCH ?`).get(`"${w}"`) as { n: number }).n);
        } finally {
          d.close();
        }
      };
      expect(runCli(["backup", "--out", join(dir, "quiet.db"), "--db", db], env).status).toBe(0);
      expect(runCli(["memory", "reindex", "--if-drift", "0", "--db", join(dir, "quiet.db")], env).status).toBe(0);
      expect(anyColumn(db)).toEqual(anyColumn(join(dir, "quiet.db")));
      // and the server searches the new index
      expect(await call("memory_search", { query: words.at(-1)! })).toContain(words.at(-1)!);
    } finally {
      if (reader.open) reader.close();
      await sink.close();
      server.kill("SIGINT");
      await serverExited;
    }
  }, 180_000);

  it("a backup taken during a rebuild carries none of it: the restored database reindexes", () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    for (const text of ["The standup moved to 9:30", "The retro is on Fridays", "Lunch is at noon"]) expect(runCli(["memory", "add", text, "--db", db], env).status).toBe(0);
    const live = openDatabase(db);
    let backedUp = false;
    try {
      // this process rebuilds, and between two of its batches a backup is taken
      recreateWordIndex(live, { pid: process.pid, gone: () => false, batch: 1, pause: () => {
        if (backedUp) return;
        backedUp = true;
        expect(runCli(["backup", "--out", join(dir, "b.db"), "--db", db], env).status).toBe(0);
      } });
    } finally {
      live.close();
    }
    expect(backedUp).toBe(true);
    const copy = new Database(join(dir, "b.db"), { readonly: true });
    expect(copy.prepare(`SELECT name FROM sqlite_schema WHERE name LIKE 'memory_fts_rebuild%'`).all()).toEqual([]);
    copy.close();
    expect(runCli(["restore", join(dir, "b.db"), "--db", join(dir, "restored.db")], env).status).toBe(0);
    const r = runCli(["memory", "reindex", "--if-drift", "0", "--db", join(dir, "restored.db")], env);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^word index rebuilt/);
  }, 60_000);

  it("a server started after a reindex was killed outright removes its half-built index, and leaves a running one's alone", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The standup moved to 9:30", "--db", db], env).status).toBe(0);
    const rebuildTables = (path: string) => {
      const d = new Database(path, { readonly: true });
      try {
        return (d.prepare(`SELECT name FROM sqlite_schema WHERE name LIKE 'memory_fts_rebuild%' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
      } finally {
        d.close();
      }
    };
    const serveOnce = async (path: string) => {
      const server = spawn(process.execPath, [CLI, "serve", "--port", "0", "--db", path, "--log", join(dir, "s.log")], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "ignore"] });
      const exited = new Promise((r) => server.on("exit", r));
      await new Promise<void>((resolve) => createInterface({ input: server.stdout }).on("line", (l) => { if (/listening on/.test(l)) resolve(); }));
      server.kill("SIGINT");
      await exited;
    };
    // a reindex in a process that is gone now, killed between two of its batches
    const dead = spawn(process.execPath, ["-e", ""]);
    await new Promise((r) => dead.on("exit", r));
    const live = openDatabase(db);
    let stopped = false;
    try {
      recreateWordIndex(live, { pid: dead.pid!, gone: () => false, batch: 1, pause: () => {
        // what SIGKILL leaves: the pause never returns and no clean-up runs
        stopped = true;
        live.close();
        throw new Error("killed");
      } });
    } catch {
      // the rebuild's own error clean-up could not run on the closed connection, as after a kill
    }
    expect(stopped).toBe(true);
    expect(rebuildTables(db)).toContain("memory_fts_rebuild_state");
    await serveOnce(db);
    expect(rebuildTables(db)).toEqual([]);
    expect(runCli(["memory", "search", "standup", "--db", db], env).stdout).toContain("The standup moved to 9:30");

    // one whose process still runs (this one) is left to finish
    const again = openDatabase(db);
    try {
      recreateWordIndex(again, { pid: process.pid, gone: () => false, batch: 1, pause: () => {
        again.close();
        throw new Error("paused");
      } });
    } catch {
      // as above
    }
    await serveOnce(db);
    expect(rebuildTables(db)).toContain("memory_fts_rebuild_state");
  }, 60_000);
});

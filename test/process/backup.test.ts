// backup / verify / restore with a server running, and forgotten text absent from later copies.
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import Database from "better-sqlite3";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { postJson, startCallbackSink } from "../helpers/callback-sink.js";
import { CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

describe("backup, verify, restore", () => {
  it("copies online, leaves forgotten text out of a later copy, and restores identical results", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--db", db, "--log", join(dir, "s.log")], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "ignore"],
    });
    const exited = new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
    const url = await new Promise<string>((resolve) => {
      createInterface({ input: child.stdout }).on("line", (l) => {
        const m = /listening on (http:\/\/\S+)/.exec(l);
        if (m) resolve(m[1]!);
      });
    });
    const sink = await startCallbackSink();
    const call = async (id: string, operation: string, args: unknown) => {
      await postJson(`${url}/invoke`, { operation, arguments: args, id, call_id: null, callback_url: sink.url, group_id: "root-1", thread_ancestors: null });
      return (await sink.next((b) => b.id === id)).text as string;
    };
    try {
      await call("a", "memory_remember", { content: "The quarterly report template lives in the finance drive" });
      const secret = await call("b", "memory_remember", { content: "Alice's childhood nickname was Zorblattine" });
      const first = join(dir, "backup-1.db");
      expect(runCli(["backup", "--out", first, "--db", db], env).stdout).toMatch(/backed up 2 memories/);

      const id = /mem_\w+/.exec(secret)![0];
      expect(await call("c", "memory_forget", { id })).toMatch(/^Forgot/);
      await call("d", "memory_remember", { content: "Standup moved to 9:45" });
      const second = join(dir, "backup-2.db");
      expect(runCli(["backup", "--out", second, "--db", db], env).status).toBe(0);
      expect(readFileSync(second).includes("Zorblattine")).toBe(false);
      expect(readFileSync(first).includes("Zorblattine")).toBe(true);

      const v = JSON.parse(runCli(["verify", second], env).stdout) as { integrity: string; memories: number; forgotten: number };
      expect(v).toMatchObject({ integrity: "ok", memories: 2, forgotten: 1 });
      expect(runCli(["backup", "--out", second, "--db", db], env).stderr).toMatch(/exists/);
      // each copy is one self-contained file (not WAL: reading it leaves nothing beside it), and
      // no temporary file is left over
      const copy = new Database(second, { readonly: true });
      expect(copy.pragma("journal_mode", { simple: true })).toBe("delete");
      copy.close();
      expect(readdirSync(dir).filter((f) => f.includes("backup")).sort()).toEqual(["backup-1.db", "backup-2.db"]);
      const nowhere = runCli(["backup", "--out", join(dir, "no", "such", "folder", "b.db"), "--db", db], env);
      expect(nowhere.status).toBe(1);
      expect(nowhere.stderr).toContain(`the folder ${join(dir, "no", "such", "folder")} does not exist; create it first`);
    } finally {
      await sink.close();
      child.kill("SIGINT");
    }
    expect(await exited).toBe(0);

    // restore the second copy into a fresh file: the same answers as the live database
    const restored = join(dir, "restored.db");
    expect(runCli(["restore", join(dir, "backup-2.db"), "--db", restored], env).stdout).toMatch(/restored 2 memories/);
    const live = runCli(["memory", "search", "--json", "standup", "report", "--db", db], env).stdout;
    const back = runCli(["memory", "search", "--json", "standup", "report", "--db", restored], env).stdout;
    expect(back).toBe(live);
    expect(back.split("\n").filter(Boolean)).toHaveLength(2);
  });

  it("verify and restore name a file that is no backup, and restore leaves the database alone", () => {
    const dir = tempDir();
    const env = { INFINITY_MEMORY_HOME: join(dir, "home"), INFINITY_MEMORY_USER: "alice" };
    const db = join(dir, "live.db");
    const lines = join(dir, "in.jsonl");
    writeFileSync(lines, '{"content":"The standup moved to 9:30"}\n');
    const imp = runCli(["memory", "import", lines, "--db", db], env);
    expect(imp.status, imp.stderr).toBe(0);
    const search = () => runCli(["memory", "search", "--json", "standup", "--db", db], env).stdout;
    const before = search();
    expect(before).toContain("9:30");

    const junk = join(dir, "junk.db");
    writeFileSync(junk, "not a database at all\n".repeat(100));
    const other = join(dir, "other.db");
    new Database(other).exec("CREATE TABLE notes (x TEXT)").close();
    const newer = join(dir, "newer.db");
    expect(runCli(["backup", "--out", newer, "--db", db], env).status).toBe(0);
    new Database(newer).pragma("user_version = 999");

    const cases: [string, RegExp][] = [
      [join(dir, "missing.db"), /missing\.db does not exist/],
      [junk, /junk\.db is not a SQLite database/],
      [other, /other\.db is a SQLite database but not an infinity-memory one/],
    ];
    for (const [file, why] of cases) {
      const v = runCli(["verify", file], env);
      expect(v.status, file).toBe(1);
      expect(v.stderr).toMatch(why);
      const r = runCli(["restore", file, "--db", db], env);
      expect(r.status, file).toBe(1);
      expect(r.stderr).toMatch(why);
    }
    const r = runCli(["restore", newer, "--db", db], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/newer\.db has schema 999, newer than this build understands \(\d+\)/);
    expect(search()).toBe(before);
  });

  // backup --out memory.db-wal (a slip) reported "backed up" and wrote the copy under the name of
  // the database's write-ahead log: the database's next open deleted it, and the copy was gone
  it("refuses an --out that is the name of a file SQLite keeps beside the database, and writes nothing", () => {
    const dir = tempDir();
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const db = join(dir, "memory.db");
    expect(runCli(["memory", "add", "The standup moved to 9:30", "--db", db], env).status).toBe(0);
    for (const side of ["wal", "shm", "journal"]) {
      const out = `${db}-${side}`;
      const r = runCli(["backup", "--out", out, "--db", db], env);
      expect(r.stderr).toBe(`infinity-memory: --out ${out} is the name of the ${side} file SQLite keeps beside the database; it would delete or overwrite the copy: give a new file, such as ${db}.backup\n`);
      expect(r.status).toBe(1);
      expect(existsSync(out)).toBe(false);
    }
    expect(readdirSync(dir).filter((f) => f.startsWith(".memory.db"))).toEqual([]);
    const ok = runCli(["backup", "--out", `${db}.backup`, "--db", db], env);
    expect(ok.stdout).toMatch(/^backed up 1 memories/);
    expect(runCli(["memory", "add", "The retro is on Fridays", "--db", db], env).status).toBe(0);
    expect(JSON.parse(runCli(["verify", `${db}.backup`], env).stdout)).toMatchObject({ integrity: "ok", memories: 1 });
  });

  it("refuses an --out naming SQLite's side file through a symbolic link (a linked database, a linked folder)", () => {
    const dir = tempDir();
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const real = join(dir, "real");
    mkdirSync(real);
    const db = join(real, "memory.db");
    expect(runCli(["memory", "add", "The standup moved to 9:30", "--db", db], env).status).toBe(0);
    const linkedDb = join(dir, "link.db");
    symlinkSync(db, linkedDb);
    const linkedFolder = join(dir, "alias");
    symlinkSync(real, linkedFolder);
    // the database opened through its link keeps its side files beside the file the link names
    for (const [from, out] of [
      [linkedDb, `${db}-wal`],
      [db, join(linkedFolder, "memory.db-shm")],
      [linkedDb, join(linkedFolder, "memory.db-journal")],
    ] as const) {
      const r = runCli(["backup", "--out", out, "--db", from], env);
      expect(r.stderr).toContain(`--out ${out} is the name of the `);
      expect(r.status).toBe(1);
      expect(existsSync(out)).toBe(false);
    }
    const ok = runCli(["backup", "--out", join(linkedFolder, "memory.db.backup"), "--db", linkedDb], env);
    expect(ok.stdout).toMatch(/^backed up 1 memories/);
  });

  it("restore names a --db whose folder is missing, is a file, or that is a directory, and writes nothing", () => {
    const dir = tempDir();
    const env = { INFINITY_MEMORY_HOME: join(dir, "home"), INFINITY_MEMORY_USER: "alice" };
    const db = join(dir, "live.db");
    expect(runCli(["memory", "add", "The standup moved to 9:30", "--db", db], env).status).toBe(0);
    const copy = join(dir, "copy.db");
    expect(runCli(["backup", "--out", copy, "--db", db], env).status).toBe(0);
    const cases: [string, string][] = [
      [join(dir, "no such", "memory.db"), `cannot restore into ${join(dir, "no such", "memory.db")}: the folder ${join(dir, "no such")} does not exist; create it first`],
      [join(copy, "memory.db"), `cannot restore into ${join(copy, "memory.db")}: ${copy} is a file, not a folder; check --db`],
      [join(dir, "home"), `cannot restore into ${join(dir, "home")}: it is a directory; give the database file inside it (memory.db)`],
    ];
    mkdirSync(join(dir, "home"));
    for (const [target, why] of cases) {
      const r = runCli(["restore", copy, "--db", target], env);
      expect(r.status, target).toBe(1);
      expect(r.stderr).toBe(`infinity-memory: ${why}\n`);
    }
    expect(existsSync(join(dir, "no such"))).toBe(false);
    expect(readdirSync(join(dir, "home"))).toEqual([]);
  });

  it("a restore forgets again what the database forgot after the backup was made, unless asked to bring it back", () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const add = (text: string) => /remembered as (mem_\w+)/.exec(runCli(["memory", "add", text, "--db", db], env).stdout)![1]!;
    const secret = add("The vault door code is 7731");
    add("Standups are at nine");
    const corrected = runCli(["memory", "correct", secret, "The vault door code is 7731, changed on Fridays", "--db", db], env);
    expect(corrected.status, corrected.stderr).toBe(0);
    expect(runCli(["backup", "--out", join(dir, "before.db"), "--db", db], env).status).toBe(0);
    // forgotten after the backup: every version of it
    expect(runCli(["memory", "forget", secret, "--db", db], env).status).toBe(0);
    expect(runCli(["memory", "forget", secret, "--db", db], env).stdout).toBe("nothing to forget: that memory was forgotten already\n");
    const search = (file: string) => runCli(["memory", "search", "vault", "door", "--history", "--db", file], env).stdout;
    expect(search(db)).toMatch(/no memories match/);

    const r = runCli(["restore", join(dir, "before.db"), "--db", db], env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`restored 1 memories from ${join(dir, "before.db")} (schema now ${/schema now (\d+)/.exec(r.stdout)![1]})\n2 of them had been forgotten after this backup was made and were forgotten again (--bring-back-forgotten keeps them)\n`);
    expect(search(db)).toMatch(/no memories match/);
    expect(runCli(["memory", "search", "standups", "--db", db], env).stdout).toContain("Standups are at nine");

    // to undo a mistaken forget, the person asks for it back
    const undo = runCli(["restore", join(dir, "before.db"), "--db", db, "--bring-back-forgotten"], env);
    expect(undo.stdout).toMatch(/^restored 3 memories/);
    expect(search(db)).toContain("changed on Fridays");
  });

  it("a restore that cannot forget again what was forgotten since the backup leaves the database as it was", () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const add = (text: string) => /remembered as (mem_\w+)/.exec(runCli(["memory", "add", text, "--db", db], env).stdout)![1]!;
    const secret = add("The vault door code is 7731");
    add("Standups are at nine");
    expect(runCli(["backup", "--out", join(dir, "before.db"), "--db", db], env).status).toBe(0);
    expect(runCli(["memory", "forget", secret, "--db", db], env).status).toBe(0);
    // the forget-again step cannot open the restored copy (here: a setting misspelt in config.json)
    writeFileSync(join(dir, "config.json"), '{"serach": {}}');
    const r = runCli(["restore", join(dir, "before.db"), "--db", db], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/"serach" is not a setting/);
    rmSync(join(dir, "config.json"));
    // the live file was not replaced: the forgotten memory is still forgotten, its tombstone kept
    expect(runCli(["memory", "search", "vault", "door", "--history", "--db", db], env).stdout).toMatch(/no memories match/);
    expect(readdirSync(dir).filter((f) => f.includes("restoring"))).toEqual([]);
    const again = runCli(["restore", join(dir, "before.db"), "--db", db], env);
    expect(again.stdout).toMatch(/1 of them had been forgotten after this backup was made and were forgotten again/);
    expect(runCli(["memory", "search", "vault", "door", "--history", "--db", db], env).stdout).toMatch(/no memories match/);
  });
});

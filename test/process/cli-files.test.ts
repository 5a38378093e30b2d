// The command line and the files a person points it at: a mistyped --db, a directory or a text file
// where a database should be, an export into a folder that is not there, `export | head`, and
// INFINITY_MEMORY_DB honoured by every command that takes --db.
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

function lines(n: number): string {
  return Array.from({ length: n }, (_, i) => JSON.stringify({ content: `Plan ${i}: the courier route through district ${i % 17} needs ${i * 3} crates`, kind: "fact" })).join("\n") + "\n";
}

describe("CLI and the files it is given", () => {
  it("a read or review command refuses a database that does not exist, and creates none", () => {
    const dir = tempDir("imem-files-");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const typo = join(dir, "nested", "memroy.db");
    for (const args of [
      ["memory", "list", "--db", typo],
      ["memory", "search", "courier", "--db", typo],
      ["memory", "export", "--db", typo],
      ["memory", "forget", "mem_x", "--db", typo],
      ["memory", "review", "--db", typo],
      ["memory", "reindex", "--db", typo],
      ["skills", "list", "--db", typo],
      ["skills", "requests", "--db", typo],
      ["backup", "--out", join(dir, "b.db"), "--db", typo],
    ]) {
      const r = runCli(args, env);
      expect(r.status, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toContain(`infinity-memory: no database at ${typo}: check --db, INFINITY_MEMORY_DB or INFINITY_MEMORY_HOME`);
    }
    // the default location too (a fresh home): nothing is created by looking
    const fresh = runCli(["memory", "list"], env);
    expect(fresh.status).toBe(1);
    expect(fresh.stderr).toContain(`no database at ${join(dir, "memory.db")}`);
    expect(existsSync(join(dir, "nested"))).toBe(false);
    expect(existsSync(join(dir, "memory.db"))).toBe(false);
    expect(existsSync(join(dir, "b.db"))).toBe(false);

    // the commands that add content still start a new database
    writeFileSync(join(dir, "in.jsonl"), lines(3));
    const imp = runCli(["memory", "import", join(dir, "in.jsonl"), "--db", typo], env);
    expect(imp.status, imp.stderr).toBe(0);
    expect(imp.stdout).toContain("imported 3 memories from 3 lines");
    expect(runCli(["memory", "list", "--db", typo], env).stdout).toMatch(/^3 of 3/);
  });

  it("names the path when --db is a directory or not a database, and changes neither", () => {
    const dir = tempDir("imem-files-");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const folder = join(dir, "folder");
    mkdirSync(folder);
    const asDir = runCli(["memory", "list", "--db", folder], env);
    expect(asDir.status).toBe(1);
    expect(asDir.stderr).toBe(`infinity-memory: cannot open the database ${folder}: it is a directory; give the database file inside it (memory.db)\n`);
    const upgradeDir = runCli(["db", "upgrade", "--db", folder], env);
    expect(upgradeDir.stderr).toBe(`infinity-memory: cannot open the database ${folder}: it is a directory; give the database file inside it (memory.db)\n`);
    expect(runCli(["verify", folder], env).stderr).toBe(`infinity-memory: ${folder} is a directory; give the database or backup file\n`);
    expect(readdirSync(folder)).toEqual([]);

    const notes = join(dir, "notes.txt");
    writeFileSync(notes, "shopping: eggs, flour\n".repeat(200));
    for (const args of [["memory", "list"], ["memory", "import", notes], ["serve", "--port", "0"], ["db", "upgrade"]]) {
      const r = runCli([...args, "--db", notes], env);
      expect(r.status, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toContain(`infinity-memory: ${notes} is not a SQLite database (is the path right?)`);
    }
    expect(readFileSync(notes, "utf8")).toBe("shopping: eggs, flour\n".repeat(200));
  });

  it("another program's SQLite database given as --db is refused, named, and left byte for byte as it was", () => {
    const dir = tempDir("imem-files-");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const other = join(dir, "bookmarks.sqlite");
    const db = new Database(other);
    db.exec(`CREATE TABLE bookmarks (url TEXT, title TEXT); INSERT INTO bookmarks VALUES ('https://example.org', 'Example')`);
    db.close();
    const before = readFileSync(other);
    writeFileSync(join(dir, "in.jsonl"), lines(1));
    for (const args of [["memory", "list"], ["memory", "add", "a fact"], ["memory", "import", join(dir, "in.jsonl")], ["serve", "--port", "0"], ["backup", "--out", join(dir, "b.db")], ["db", "upgrade"]]) {
      const r = runCli([...args, "--db", other], env);
      expect(r.status, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toContain(`infinity-memory: ${other} is a SQLite database of another program (it has tables bookmarks and no infinity-memory schema); nothing was changed in it.`);
    }
    expect(readFileSync(other).equals(before)).toBe(true);
    expect(readdirSync(dir).filter((f) => f.startsWith("bookmarks"))).toEqual(["bookmarks.sqlite"]);
    expect(existsSync(join(dir, "b.db"))).toBe(false);
  });

  it("a database this user may not write (the file, or the folder its -wal and -shm go in) is named with the fix", () => {
    const dir = tempDir("imem-files-");
    const db = join(dir, "ro", "memory.db");
    expect(runCli(["memory", "add", "Courier route 7 needs two vans", "--db", db], { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" }).status).toBe(0);
    // root writes whatever the modes say: the CLI runs as an unprivileged user then
    const root = process.getuid?.() === 0;
    const asUser = (args: string[]) =>
      spawnSync(root ? "runuser" : process.execPath, [...(root ? ["-u", "nobody", "--", process.execPath] : []), CLI, ...args], {
        encoding: "utf8",
        env: { ...process.env, INFINITY_MEMORY_HOME: join(dir, "home"), INFINITY_MEMORY_USER: "alice" },
      });
    chmodSync(dir, 0o777);
    // the folder: SQLite cannot make the -wal and -shm files beside the database
    chmodSync(join(dir, "ro"), 0o555);
    chmodSync(db, 0o666);
    for (const f of ["memory.db-wal", "memory.db-shm"]) rmSync(join(dir, "ro", f), { force: true });
    for (const args of [["memory", "search", "courier"], ["memory", "add", "Van keys are in the office"]]) {
      const r = asUser([...args, "--db", db]);
      expect(r.status, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toBe(
        `infinity-memory: cannot write the database ${db}: its folder ${join(dir, "ro")} is not writable for this user (SQLite keeps memory.db-wal and -shm beside it); give this user write access to the file and its folder, or point --db elsewhere\n`,
      );
    }
    // the file itself: it can be read, a write names it
    chmodSync(join(dir, "ro"), 0o777);
    chmodSync(db, 0o444);
    expect(asUser(["memory", "search", "courier", "--db", db]).stdout).toContain("Courier route 7");
    const readOnly = `cannot write the database ${db}: it is read-only for this user; give this user write access to the file and its folder, or point --db elsewhere`;
    const add = asUser(["memory", "add", "Van keys are in the office", "--db", db]);
    expect(add.status).toBe(1);
    expect(add.stderr).toBe(`infinity-memory: ${readOnly}\n`);
    // a server would answer every call with an error: it does not start, and says why
    const serve = asUser(["serve", "--port", "0", "--log", join(dir, "serve.log"), "--db", db]);
    expect(serve.status).toBe(1);
    expect(serve.stderr).toBe(`infinity-memory: ${readOnly}\n`);
    expect(readFileSync(join(dir, "serve.log"), "utf8")).toContain("cannot write the database; not starting");
    chmodSync(db, 0o644);
    expect(runCli(["memory", "list", "--db", db], { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" }).stdout).toContain("Courier route 7");
  });

  it("memory import names a missing file or a directory in plain words", () => {
    const dir = tempDir("imem-files-");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const missing = runCli(["memory", "import", join(dir, "nope.jsonl")], env);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe(`infinity-memory: ${join(dir, "nope.jsonl")}: no such file or directory\n`);
    const asDir = runCli(["memory", "import", dir], env);
    expect(asDir.status).toBe(1);
    expect(asDir.stderr).toBe(`infinity-memory: ${dir} is a directory; give the JSON-lines file to import (memory export writes one)\n`);
    // a mistyped file name starts no database: the next command still says there is none
    expect(existsSync(join(dir, "memory.db"))).toBe(false);
    expect(runCli(["memory", "list"], env).stderr).toContain(`no database at ${join(dir, "memory.db")}`);
  });

  it("memory export --out writes the whole file or nothing, and export | head ends quietly", () => {
    const dir = tempDir("imem-files-");
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    writeFileSync(join(dir, "in.jsonl"), lines(1500));
    expect(runCli(["memory", "import", join(dir, "in.jsonl")], env).status).toBe(0);

    const bad = runCli(["memory", "export", "--out", join(dir, "no", "such", "x.jsonl")], env);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toBe(`infinity-memory: cannot write ${join(dir, "no", "such", "x.jsonl")}: no such file or directory\n`);

    // an earlier export is replaced only by a complete one; no temporary file is left beside it
    const out = join(dir, "export.jsonl");
    writeFileSync(out, "earlier export\n");
    const ok = runCli(["memory", "export", "--out", out], env);
    expect(ok.status).toBe(0);
    expect(ok.stderr).toBe(`exported 1500 memories to ${out}\n`);
    const exported = readFileSync(out, "utf8").trim().split("\n");
    expect(exported).toHaveLength(1500);
    expect(readdirSync(dir).filter((f) => f.includes("partial"))).toEqual([]);

    // ~700 kB through a pipe that closes after one line: exit 0, nothing on stderr
    const piped = spawnSync("bash", ["-c", `set -o pipefail; "${process.execPath}" "${CLI}" memory export --db "${db}" | head -n 1`], {
      env: { ...process.env, ...env },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(piped.stderr).toBe("");
    expect(piped.status).toBe(0);
    expect(JSON.parse(piped.stdout) as { content: string }).toMatchObject({ content: expect.stringMatching(/^Plan \d+: the courier route/) });
  });

  it("memory export --out refuses to replace the database or a backup with JSON lines", () => {
    const dir = tempDir("imem-files-");
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The courier comes on Tuesdays", "--db", db], env).status).toBe(0);
    const backup = join(dir, "monday.db");
    expect(runCli(["backup", "--out", backup, "--db", db], env).status).toBe(0);
    const before = readFileSync(backup);
    for (const [out, why] of [
      [db, "is the database's own file"],
      [`${db}-wal`, "is the database's own file"],
      [backup, "is a SQLite database (an infinity-memory database or backup?)"],
    ] as const) {
      const r = runCli(["memory", "export", "--out", out, "--db", db], env);
      expect(r.status, out).toBe(1);
      expect(r.stderr).toBe(`infinity-memory: --out ${out} ${why}; the export would replace it: give a new file, such as memories.jsonl\n`);
    }
    expect(runCli(["memory", "search", "courier", "--db", db], env).stdout).toContain("The courier comes on Tuesdays");
    expect(readFileSync(backup).equals(before)).toBe(true);
  });

  it("a conversation source that does not exist is an error, not an empty store", () => {
    const dir = tempDir("imem-files-");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const missing = join(dir, "infinity.db");
    for (const cmd of [["sessions", "index"], ["sessions", "search", "deploy"]]) {
      const r = runCli([...cmd, "--from", `sqlite:${missing}`], env);
      expect(r.status, cmd.join(" ")).toBe(1);
      expect(r.stderr).toBe(`infinity-memory: session source sqlite:${missing}: ${missing} does not exist\n`);
    }
    expect(existsSync(missing)).toBe(false);
    const kind = runCli(["sessions", "index", "--from", "sqllite:x.db"], env);
    expect(kind.status).toBe(1);
    expect(kind.stderr).toBe(`infinity-memory: session source sqllite:x.db: unknown kind "sqllite"; use infinity-home:DIR (the daemon's files) or sqlite:FILE\n`);
  });

  it("a conversation source written as infinity-home:~/… is read from the home folder", () => {
    const dir = tempDir("imem-files-");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice", HOME: dir };
    cpSync(resolve("test/fixtures/infinity-home"), join(dir, ".infinity"), { recursive: true });
    const r = runCli(["sessions", "search", "wind", "speed", "--from", "infinity-home:~/.infinity"], env);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("Also show wind speed in mph");
  });

  it("a damaged thread file in the daemon's home is named and left out; the other conversations are indexed and searched", () => {
    const dir = tempDir("imem-files-");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const home = join(dir, "infinity");
    cpSync(resolve("test/fixtures/infinity-home"), home, { recursive: true });
    const damaged = join(home, "threads", "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35.json");
    writeFileSync(damaged, "{broken");
    const why = `infinity-memory: left out thread 0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35, which could not be read (${damaged}: `;
    const index = runCli(["sessions", "index", "--infinity-home", home], env);
    expect(index.status).toBe(1);
    expect(index.stdout).toMatch(/: 4 threads, 3 changed, \d+ messages added, 1 could not be read\n$/);
    expect(index.stderr).toContain(why);
    const search = runCli(["sessions", "search", "--infinity-home", home, "wind", "speed"], env);
    expect(search.status).toBe(0);
    expect(search.stdout).toContain("Also show wind speed in mph");
    expect(search.stderr).toContain(why);
  });

  it("sessions search shows the --window messages around each match, in text and JSON", () => {
    const dir = tempDir("imem-files-");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const from = ["--infinity-home", resolve("test/fixtures/infinity-home")];
    const text = runCli(["sessions", "search", ...from, "--limit", "1", "--window", "1", "wind", "speed", "mph", "imperial"], env);
    expect(text.stdout.split("\n").slice(1)).toEqual([
      "    #9 assistant: Done: `--units imperial` now prints Fahrenheit; metric stays the default. Tests were added by the sub-thread and pass.",
      "  > #10 user: Also show wind speed in mph when imperial is selected.",
      "    #11 assistant: Wind speed now follows --units: km/h for metric, mph for imperial.",
      "",
    ]);
    expect(runCli(["sessions", "search", ...from, "--limit", "1", "--window", "0", "wind", "speed", "mph", "imperial"], env).stdout.trim().split("\n")).toHaveLength(1);
    const json = JSON.parse(runCli(["sessions", "search", ...from, "--limit", "1", "--json", "wind", "speed", "mph", "imperial"], env).stdout) as { message_index: number; window: { message_index: number; role: string }[] };
    expect(json.message_index).toBe(10);
    expect(json.window.map((w) => [w.message_index, w.role])).toEqual([[9, "assistant"], [10, "user"], [11, "assistant"]]);
  });

  it("points a person at commands, not at the model's tools", () => {
    const dir = tempDir("imem-files-");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    writeFileSync(join(dir, "in.jsonl"), lines(1));
    expect(runCli(["memory", "import", join(dir, "in.jsonl")], env).status).toBe(0);
    const mem = runCli(["memory", "show", "mem_nope"], env);
    expect(mem.status).toBe(1);
    expect(mem.stderr).toBe('infinity-memory: no memory with id "mem_nope" is visible here; find ids with `infinity-memory memory search` or `memory list`.\n');
    const skill = runCli(["skills", "show", "nope"], env);
    expect(skill.status).toBe(1);
    expect(skill.stderr).toBe('infinity-memory: no skill named "nope"; `infinity-memory skills list` shows what exists\n');
  });

  it("backup and restore use INFINITY_MEMORY_DB like every other command", () => {
    const dir = tempDir("imem-files-");
    const live = join(dir, "elsewhere", "live.db");
    // the home's default file must stay untouched: the variable points elsewhere
    const env = { INFINITY_MEMORY_HOME: join(dir, "home"), INFINITY_MEMORY_DB: live, INFINITY_MEMORY_USER: "alice" };
    writeFileSync(join(dir, "in.jsonl"), lines(4));
    expect(runCli(["memory", "import", join(dir, "in.jsonl")], env).status).toBe(0);
    const copy = join(dir, "copy.db");
    const b = runCli(["backup", "--out", copy], env);
    expect(b.status, b.stderr).toBe(0);
    expect(b.stdout).toContain(`backed up 4 memories`);

    const other = join(dir, "other.db");
    const r = runCli(["restore", copy], { ...env, INFINITY_MEMORY_DB: other });
    expect(r.status, r.stderr).toBe(0);
    expect(runCli(["memory", "list"], { ...env, INFINITY_MEMORY_DB: other }).stdout).toMatch(/^4 of 4/);
    expect(existsSync(join(dir, "home", "memory.db"))).toBe(false);

    const pg = runCli(["backup", "--out", join(dir, "pg.db")], { ...env, INFINITY_MEMORY_DB: "postgres://u:secret@127.0.0.1:1/x" });
    expect(pg.status).toBe(1);
    expect(pg.stderr).toContain("backup and restore work on a SQLite file, not postgres://u:***@127.0.0.1:1/x; for PostgreSQL use pg_dump and pg_restore");
  });
});

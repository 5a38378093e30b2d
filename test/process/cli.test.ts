// The person's command line over a real database file.
import { describe, expect, it } from "vitest";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { openMemory } from "../../cli/context.js";
import { CLI, runCli } from "../helpers/cli.js";
import { openTestMemory, req, modelOrigin } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";
import { openDatabase, schemaVersion } from "../../stores/sqlite/database.js";
import { MIGRATIONS } from "../../stores/sqlite/migrations.js";

describe("infinity-memory CLI", () => {
  it("searches, lists, shows, exports, forgets and toggles over the same database", async () => {
    const home = tempDir();
    const m = openTestMemory(home);
    const kept = await m.service.remember(req(), { content: "Alice's cat is called Miso", kind: "fact" }, modelOrigin());
    const gone = await m.service.remember(req(), { content: "Alice's locker code hint is the cat's birthday, quokkaberry" }, modelOrigin());
    m.close();
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };

    const search = runCli(["memory", "search", "cat", "name"], env);
    expect(search.status).toBe(0);
    expect(search.stdout).toContain("Miso");

    const json = runCli(["memory", "search", "--json", "cat"], env);
    const rows = json.stdout.trim().split("\n").map((l) => JSON.parse(l) as { id: string });
    expect(rows.map((r) => r.id).sort()).toEqual([kept.record.id, gone.record.id].sort());

    expect(runCli(["memory", "list"], env).stdout).toMatch(/^2 of 2/);
    // JSON pages: one record per line on stdout, where to continue on stderr
    const page1 = runCli(["memory", "list", "--json", "--limit", "1"], env);
    expect(page1.stdout.trim().split("\n")).toHaveLength(1);
    const cursor = /--cursor (\S+)/.exec(page1.stderr)?.[1];
    expect(cursor).toBeDefined();
    const page2 = runCli(["memory", "list", "--json", "--limit", "1", "--cursor", cursor!], env);
    const ids = [page1.stdout, page2.stdout].map((o) => (JSON.parse(o.trim()) as { id: string }).id);
    expect(ids.sort()).toEqual([kept.record.id, gone.record.id].sort());
    expect(page2.stderr).not.toMatch(/--cursor/);
    expect(runCli(["memory", "show", kept.record.id], env).stdout).toContain("create");
    expect(runCli(["memory", "search", "Miso"], { ...env, INFINITY_MEMORY_USER: "mallory" }).stdout).toMatch(/no memories match/);

    const noYes = runCli(["memory", "forget", "--query", "locker quokkaberry"], env);
    expect(noYes.status).toBe(1);
    expect(noYes.stderr).toMatch(/nothing forgotten/);
    const both = runCli(["memory", "forget", kept.record.id, "--query", "locker quokkaberry", "--yes"], env);
    expect(both.status).toBe(1);
    expect(both.stderr).toBe("infinity-memory: give memory ids or --query, not both\n");
    const forget = runCli(["memory", "forget", "--query", "locker quokkaberry", "--yes"], env);
    expect(forget.stdout).toMatch(/forgot 1 memory/);
    expect(runCli(["memory", "list", "--kind", "preference"], env).stdout).toBe("no memories with kind preference\n");
    expect(runCli(["memory", "search", "--kind", "preference", "cat"], env).stdout).toBe('no memories match "cat" with kind preference\n');

    const out = join(home, "export.jsonl");
    expect(runCli(["memory", "export", "--out", out], env).status).toBe(0);
    const exported = readFileSync(out, "utf8");
    expect(exported).toContain("Miso");
    expect(exported).not.toContain("quokkaberry");
    expect(runCli(["memory", "export"], env).stdout).not.toContain("quokkaberry");

    expect(runCli(["toolset", "disable", "--toolset", "memory", "--thread", "t-1"], env).stdout).toMatch(/disabled for thread t-1/);
    expect(runCli(["toolset", "inherit", "--toolset", "memory", "--thread", "t-1"], env).stdout).toBe("memory: inherits its parent's setting for thread t-1\n");
    const bad = runCli(["toolset", "disable", "--toolset", "nope", "--thread", "t-1"], env);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/unknown toolset "nope"/);
  });

  it("memory forget --query forgets the versions it lists, not the current version of a memory whose old text matched", async () => {
    const home = tempDir();
    const m = openTestMemory(home);
    const v1 = await m.service.remember(req(), { content: "Alice lives in Berlin" }, modelOrigin());
    const v2 = await m.service.update(req(), { id: v1.record.id, content: "Alice moved to Munich in 2026" }, modelOrigin());
    m.close();
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    const forget = runCli(["memory", "forget", "--query", "Berlin", "--yes"], env);
    expect(forget.status, forget.stderr).toBe(0);
    expect(forget.stderr).toContain("Alice lives in Berlin");
    expect(forget.stderr).not.toContain("Munich");
    expect(forget.stdout).toBe("forgot 1 memory (1 versions purged)\n");
    expect(runCli(["memory", "search", "Munich"], env).stdout).toContain(v2.record.id);
    expect(runCli(["memory", "export"], env).stdout).not.toContain("Berlin");
  });

  it("refuses a numeric option that is not a number in range, naming it, before touching the database", async () => {
    const home = tempDir();
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    openTestMemory(home).close();
    expect(runCli(["memory", "list"], env).stdout).toMatch(/^no memories here yet/);
    const m = openTestMemory(home);
    await m.service.remember(req(), { content: "Alice's cat is called Miso", kind: "fact" }, modelOrigin());
    m.close();
    const cases: [string[], RegExp][] = [
      [["memory", "list", "--limit", "abc"], /option '--limit <n>' argument 'abc' is invalid\. expected a whole number of at least 1/],
      [["memory", "list", "--limit", "0"], /argument '0' is invalid/],
      [["memory", "search", "cat", "--limit", "2.5"], /option '--limit <n>' argument '2\.5' is invalid\. expected a whole number of at least 1/],
      [["memory", "reindex", "--if-drift", "lots"], /option '--if-drift <ratio>' argument 'lots' is invalid/],
      [["memory", "import", "x.jsonl", "--batch", "-3"], /option '--batch <n>' argument '-3' is invalid/],
      [["sessions", "search", "cat", "--window", "-1"], /option '--window <n>' argument '-1' is invalid\. expected a whole number of at least 0/],
      [["serve", "--port", "70000"], /option '--port <port>' argument '70000' is invalid\. expected a whole number from 0 to 65535/],
      [["bench", "locomo", "--data", "x.json", "--prefix-budget", "lots"], /option '--prefix-budget <tokens>' argument 'lots' is invalid/],
      [["config", "providers-json", "--upstream", "my-provider", "--deadline-ms", "soon"], /option '--deadline-ms <ms>' argument 'soon' is invalid/],
      [["provider-proxy", "--deadline-ms", "0", "--upstream", "my-provider"], /option '--deadline-ms <ms>' argument '0' is invalid\. expected a whole number from 1 to 2147483647/],
      [["provider-proxy", "--budget", "lots", "--upstream", "my-provider"], /option '--budget <tokens>' argument 'lots' is invalid/],
      // longer than a timer can wait: Node fires it after 1 ms, so every prefix missed its deadline
      [["provider-proxy", "--deadline-ms", "2592000000", "--upstream", "my-provider"], /option '--deadline-ms <ms>' argument '2592000000' is invalid\. expected a whole number from 1 to 2147483647/],
      [["provider-proxy", "--ended-stall-ms", "2592000000", "--upstream", "my-provider"], /argument '2592000000' is invalid\. expected a whole number from 1 to 2147483647/],
      [["config", "providers-json", "--upstream", "my-provider", "--deadline-ms", "2592000000"], /argument '2592000000' is invalid/],
    ];
    for (const [args, why] of cases) {
      const r = runCli(args, env);
      expect(r.status, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toMatch(why);
      expect(r.stderr).not.toMatch(/NaN|no such column/);
    }
    expect(runCli(["memory", "list", "--limit", "1"], env).stdout).toMatch(/^1 of 1/);
    // above the page maximum is no error: the page is capped, as before
    expect(runCli(["memory", "list", "--limit", "1000"], env).stdout).toMatch(/^1 of 1/);
  });

  it("memory import --batch above the import's limit is refused as an option, before a database is made", () => {
    const home = tempDir();
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    const file = join(home, "one.jsonl");
    writeFileSync(file, `${JSON.stringify({ content: "The courier comes on Tuesdays" })}\n`);
    const r = runCli(["memory", "import", file, "--batch", "60000"], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/option '--batch <n>' argument '60000' is invalid\. expected a whole number from 1 to 50000/);
    expect(existsSync(join(home, "memory.db"))).toBe(false);
    expect(runCli(["memory", "import", file, "--batch", "50000"], env).stdout).toMatch(/^imported 1 memory/);
  });

  it("prints rap.json entries in both forms", () => {
    const cmd = JSON.parse(runCli(["config", "rap-json"], {}).stdout) as { tool_sets: { type: string; command: string }[] };
    expect(cmd.tool_sets[0]?.type).toBe("toolset_command");
    expect(cmd.tool_sets[0]?.command).toMatch(/main\.js serve --toolset memory$/);
    const srv = JSON.parse(runCli(["config", "rap-json", "--mode", "server"], {}).stdout) as { tool_sets: { type: string; server_url: string }[] };
    expect(srv.tool_sets[0]).toMatchObject({ type: "toolset_server", server_url: "http://127.0.0.1:7411" });
    // the daemon runs the command in {session cwd}/.infinity: a relative --db is made absolute
    // (and quoted for sh -c); a URL is kept as given
    const rel = JSON.parse(runCli(["config", "rap-json", "--db", "my data/m.db"], {}).stdout) as { tool_sets: { command: string }[] };
    expect(rel.tool_sets[0]?.command).toMatch(new RegExp(`serve --toolset memory --db '${process.cwd()}/my data/m\\.db'$`));
    const url = JSON.parse(runCli(["config", "rap-json", "--db", "postgres://m@db/x"], {}).stdout) as { tool_sets: { command: string }[] };
    expect(url.tool_sets[0]?.command).toMatch(/--db postgres:\/\/m@db\/x$/);
    const wrong = runCli(["config", "rap-json", "--toolset", "memroy"], {});
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain(`unknown toolset "memroy"; this version serves: memory, skills`);
    expect(runCli(["config", "rap-json", "--mode", "server", "--url", "localhost:7411"], {}).stderr).toContain(`--url must be the server's http:// or https:// address (got "localhost:7411")`);
    // the daemon appends /.well-known/rap-toolset to the URL: the /invoke endpoint pasted there
    // would leave every session without the tools
    const endpoint = runCli(["config", "rap-json", "--mode", "server", "--url", "http://127.0.0.1:7411/invoke"], {});
    expect(endpoint.status).toBe(1);
    expect(endpoint.stderr).toContain(`--url is the server's base address, without a path: the daemon adds /.well-known/rap-toolset to it (got "http://127.0.0.1:7411/invoke"; use "http://127.0.0.1:7411")`);
    expect(endpoint.stdout).toBe("");
    // a trailing slash is no path (the daemon trims it)
    const slash = JSON.parse(runCli(["config", "rap-json", "--mode", "server", "--url", "http://127.0.0.1:7411/"], {}).stdout) as { tool_sets: { server_url: string }[] };
    expect(slash.tool_sets[0]?.server_url).toBe("http://127.0.0.1:7411/");
  });

  it("providers-json points the proxy at the daemon's home: $INFINITY_HOME when set, else ~/.infinity", () => {
    const home = tempDir();
    const entry = (env: Record<string, string>) =>
      (JSON.parse(runCli(["config", "providers-json", "--upstream", "my-provider"], env).stdout) as Record<string, { command: string[] }>)["memory-proxy"]!.command;
    const set = entry({ INFINITY_HOME: home });
    expect(set.slice(set.indexOf("--infinity-home"), set.indexOf("--infinity-home") + 2)).toEqual(["--infinity-home", home]);
    const { INFINITY_HOME: _unset, ...rest } = process.env;
    const child = spawnSync(process.execPath, [CLI, "config", "providers-json", "--upstream", "my-provider"], { env: rest, encoding: "utf8" });
    const cmd = (JSON.parse(child.stdout) as Record<string, { command: string[] }>)["memory-proxy"]!.command;
    expect(cmd[cmd.indexOf("--infinity-home") + 1]).toBe(join(homedir(), ".infinity"));
  });

  it("providers-json keeps a PostgreSQL --db as given and makes a file path absolute", () => {
    const dbArg = (db: string) => {
      const cmd = (JSON.parse(runCli(["config", "providers-json", "--upstream", "my-provider", "--db", db], {}).stdout) as Record<string, { command: string[] }>)["memory-proxy"]!.command;
      return cmd[cmd.indexOf("--db") + 1];
    };
    // the proxy opens the same store the toolsets use; a URL made into "{cwd}/postgres:/…" was an empty SQLite file
    expect(dbArg("postgres://m@db:5432/x")).toBe("postgres://m@db:5432/x");
    expect(dbArg("my data/m.db")).toBe(join(process.cwd(), "my data/m.db"));
  });

  it("rap-manifests/ matches the zod schemas", () => {
    const r = runCli(["manifests", "check"], {});
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
  it("says on stderr when it upgrades an existing database, and only then", () => {
    const home = tempDir();
    const latest = Math.max(...MIGRATIONS.map((m) => m.version));
    openDatabase(join(home, "memory.db"), { targetVersion: latest - 1 }).close();
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    const first = runCli(["memory", "list"], env);
    expect(first.status).toBe(0);
    expect(first.stderr).toMatch(new RegExp(`upgrading the database to schema ${latest} \\(`));
    expect(first.stderr).toMatch(new RegExp(`schema ${latest} done in \\d+\\.\\d s`));
    const db = openDatabase(join(home, "memory.db"), { readonly: true });
    expect(schemaVersion(db)).toBe(latest);
    db.close();
    expect(runCli(["memory", "list"], env).stderr).not.toMatch(/upgrading/);
  });

  it("db upgrade brings a file to this build's schema on purpose, says what it did, and refuses --grant", () => {
    const home = tempDir();
    const latest = Math.max(...MIGRATIONS.map((m) => m.version));
    const file = join(home, "memory.db");
    openDatabase(file, { targetVersion: latest - 2 }).close();
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    const up = runCli(["db", "upgrade", "--json"], env);
    expect(up.stderr).toBe("");
    expect(up.status).toBe(0);
    expect(JSON.parse(up.stdout)).toEqual({ engine: "sqlite", location: file, schema: { before: latest - 2, after: latest }, applied: [latest - 1, latest] });
    const db = openDatabase(file, { readonly: true });
    expect(schemaVersion(db)).toBe(latest);
    db.close();
    expect(runCli(["db", "upgrade", "--db", file], env).stdout).toBe(`schema ${latest} is up to date (${file})\n`);
    // a new file, named with --db
    const other = join(home, "other.db");
    const created = runCli(["db", "upgrade", "--db", other], env);
    expect(created.stdout).toBe(`upgraded ${other} from schema 0 to ${latest} (${latest} steps)\n`);
    const refused = runCli(["db", "upgrade", "--db", other, "--grant", "app"], env);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("--grant gives PostgreSQL roles row access; a SQLite file has no roles");
  });

  it("a reader that goes away (`| head`) ends the output quietly; a failing output file fails the command", async () => {
    const home = tempDir();
    const env = { ...process.env, INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The build cache lives on the NAS"], env).status).toBe(0);
    // The read end is closed before the command writes anything, so every write meets EPIPE.
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stderr: string }>((done) => {
        const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
        child.stdout.destroy();
        let stderr = "";
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        child.on("close", (code) => done({ code, stderr }));
      });
    for (const args of [["memory", "list", "--json"], ["memory", "search", "build", "cache"], ["memory", "export"]]) {
      expect(await run(args), args.join(" ")).toEqual({ code: 0, stderr: "" });
    }
    // A write whose confirmation nobody reads is still stored, and the command still succeeds.
    expect(await run(["memory", "add", "Nightly builds start at 02:00"])).toEqual({ code: 0, stderr: "" });
    expect(runCli(["memory", "list"], env).stdout).toContain("Nightly builds start at 02:00");
    if (existsSync("/dev/full")) {
      const full = spawnSync(process.execPath, [CLI, "memory", "list"], { env, stdio: ["ignore", openSync("/dev/full", "w"), "pipe"], encoding: "utf8" });
      expect(full.status).toBe(1);
      expect(full.stderr).toBe("infinity-memory: cannot write the output: ENOSPC: no space left on device, write\n");
    }
  });

  it("config.json: a misspelt setting or a file that is not one object stops the command, naming it", () => {
    const home = tempDir();
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The build cache lives on the NAS"], env).status).toBe(0);
    const file = join(home, "config.json");
    const refused: [string, string][] = [
      // zod drops an unknown key: the search limit would silently stay at its default
      [`{"serach": {"defaultLimit": 3}}`, `"serach" is not a setting (the settings there are localUser, write, search,`],
      [`{"search": {"defaultLimt": 3}}`, `"search.defaultLimt" is not a setting (the settings there are defaultLimit, maxLimit, channels); fix its name or remove it`],
      [`{"embedder": {"kind": "hashing", "hashing": {"dims": 64}}}`, `"embedder.hashing.dims" is not a setting (the settings there are dimensions)`],
      [`[{"localUser": "ana"}]`, `must hold one JSON object of settings, like {"localUser": "ana"}; it holds an array`],
      [`null`, `must hold one JSON object of settings, like {"localUser": "ana"}; it holds null`],
    ];
    for (const [text, why] of refused) {
      writeFileSync(file, text);
      const r = runCli(["memory", "list"], env);
      expect(r.status, text).toBe(1);
      expect(r.stderr, text).toContain(`${file}${why.startsWith("must") ? " " : ": "}${why}`);
    }
    writeFileSync(file, `{"search": {"defaultLimit": 3}, "prefix": {"budgetTokens": 800}}`);
    const ok = runCli(["memory", "list"], env);
    expect(ok.stderr).toBe("");
    expect(ok.stdout).toMatch(/^1 of 1/);
  });

  it("config.json: a deadline longer than a timer can wait stops the command, naming the setting and its maximum", () => {
    // setTimeout fires a delay above 2^31-1 ms after 1 ms: llm.timeoutMs 30 days timed every
    // model call out at once ("no answer within 2592000000 ms"), prefix.deadlineMs every prefix
    const home = tempDir();
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The build cache lives on the NAS"], env).status).toBe(0);
    const file = join(home, "config.json");
    for (const [text, path] of [
      [`{"llm": {"timeoutMs": 2592000000}}`, "llm.timeoutMs"],
      [`{"llm": {"provider": {"startTimeoutMs": 2592000000}}}`, "llm.provider.startTimeoutMs"],
      [`{"prefix": {"deadlineMs": 2592000000}}`, "prefix.deadlineMs"],
      // setInterval the same: a monthly curator ran every millisecond
      [`{"evolution": {"curator": {"intervalMs": 2592000000}}}`, "evolution.curator.intervalMs"],
      [`{"evolution": {"intervalMs": 2592000000}}`, "evolution.intervalMs"],
      [`{"learning": {"worker": {"intervalMs": 2592000000}}}`, "learning.worker.intervalMs"],
      [`{"embedder": {"timeoutMs": 2592000000}}`, "embedder.timeoutMs"],
    ]) {
      writeFileSync(file, text!);
      const r = runCli(["memory", "list"], env);
      expect(r.status, text).toBe(1);
      expect(r.stderr, text).toContain(`${file}: "${path}" must be at most 2147483647 ms (about 24.8 days)`);
    }
    writeFileSync(file, `{"llm": {"timeoutMs": 2147483647}, "prefix": {"deadlineMs": 2147483647}}`);
    expect(runCli(["memory", "list"], env).status).toBe(0);
  });

  it("config.json: a default limit above its maximum stops the command, naming both settings and the fix", () => {
    const home = tempDir();
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The build cache lives on the NAS"], env).status).toBe(0);
    const file = join(home, "config.json");
    const refused: [string, string][] = [
      // searches were cut to maxLimit without a word
      [
        `{"search": {"defaultLimit": 80}}`,
        `"search.defaultLimit" is 80, above "search.maxLimit" (50), which caps every request at 50; set "search.defaultLimit" to at most 50 or raise "search.maxLimit" to at least 80`,
      ],
      [
        `{"list": {"defaultLimit": 30, "maxLimit": 25}}`,
        `"list.defaultLimit" is 30, above "list.maxLimit" (25), which caps every request at 25; set "list.defaultLimit" to at most 25 or raise "list.maxLimit" to at least 30`,
      ],
      // a maximum lowered alone disagrees with the default it leaves in place
      [`{"skills": {"searchMaxLimit": 3}}`, `"skills.searchDefaultLimit" is 5, above "skills.searchMaxLimit" (3), which caps every request at 3;`],
    ];
    for (const [text, why] of refused) {
      writeFileSync(file, text);
      for (const args of [["memory", "list"], ["memory", "search", "cache"]]) {
        const r = runCli(args, env);
        expect(r.status, `${text} ${args.join(" ")}`).toBe(1);
        expect(r.stderr, `${text} ${args.join(" ")}`).toContain(`${file}: ${why}`);
      }
    }
    // equal is agreement; raising the maximum with the default is the fix the message names
    writeFileSync(file, `{"search": {"defaultLimit": 80, "maxLimit": 80}, "list": {"defaultLimit": 25, "maxLimit": 25}}`);
    const ok = runCli(["memory", "list"], env);
    expect(ok.stderr).toBe("");
    expect(ok.stdout).toMatch(/^1 of 1/);
  });

  it("a blank --user is refused before anything is stored; an empty INFINITY_MEMORY_USER counts as unset", () => {
    const home = tempDir();
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The build cache lives on the NAS"], env).status).toBe(0);
    for (const args of [["memory", "add", "--user", " ", "Stored for nobody"], ["memory", "list", "--user", ""], ["skills", "list", "--user", "  "], ["sessions", "search", "--user", "", "cache"]]) {
      const r = runCli(args, env);
      expect(r.status, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toContain("option '--user <id>' argument");
      expect(r.stderr, args.join(" ")).toContain("is invalid. expected a user id (not blank), e.g. --user alice");
    }
    // surrounding spaces are a typo, not another person
    expect(runCli(["memory", "list", "--user", " alice "], env).stdout).toMatch(/^1 of 1/);
    const unset = runCli(["memory", "list"], { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "" });
    expect(unset.stderr).toBe("");
    expect(unset.status).toBe(0);
    expect(runCli(["memory", "list", "--json", "--status", "active,pending,superseded,expired"], { ...env, INFINITY_MEMORY_USER: "alice" }).stdout.trim().split("\n")).toHaveLength(1);
  });

  it("INFINITY_MEMORY_SYNC: full in any case syncs every commit; another value is refused, not read as normal", () => {
    const home = tempDir();
    const open = (value: string | undefined) => openMemory({ dbPath: join(home, "m.db"), env: { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice", ...(value === undefined ? {} : { INFINITY_MEMORY_SYNC: value }) } });
    // PRAGMA synchronous: 1 NORMAL, 2 FULL
    for (const [value, level] of [[undefined, 1], ["normal", 1], ["full", 2], [" FULL ", 2]] as const) {
      const ctx = open(value);
      expect(ctx.db.pragma("synchronous", { simple: true }), String(value)).toBe(level);
      ctx.close();
    }
    expect(() => open("fsync")).toThrow('INFINITY_MEMORY_SYNC must be "full" (fsync every commit) or "normal" (the default); got "fsync"');
    const r = runCli(["memory", "add", "The build cache lives on the NAS"], { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice", INFINITY_MEMORY_SYNC: "ful" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('INFINITY_MEMORY_SYNC must be "full"');
  });
});

// `infinity-memory memory import`: the real CLI in a child process on a real SQLite file.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openMemory } from "../../cli/context.js";
import { defaultConfig } from "../../core/config.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

function setup() {
  const dir = tempDir("imem-import-");
  const db = join(dir, "memory.db");
  const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
  const cli = (...args: string[]) => runCli(["memory", ...args, "--db", db], env);
  const file = (name: string, lines: unknown[]) => {
    const p = join(dir, name);
    writeFileSync(p, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n");
    return p;
  };
  /** Read the database directly, the way another process would. */
  const rows = <T>(sql: string, ...params: unknown[]): T[] => {
    const ctx = openMemory({ dbPath: db, config: defaultConfig({ localUser: "alice" }), env: {} });
    try {
      return ctx.db.prepare(sql).all(...params) as T[];
    } finally {
      ctx.close();
    }
  };
  return { dir, db, cli, file, rows };
}

/** The JSON summary on stdout; a crash shows its stderr instead of a bare parse error. */
function summary(r: { status: number | null; stdout: string; stderr: string }): Record<string, unknown> {
  try {
    return JSON.parse(r.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(`no JSON summary (exit ${r.status}); stderr: ${r.stderr.slice(-2000)}`);
  }
}

const GOOD = [
  { content: "Alice prefers green tea over coffee in the morning", kind: "preference" },
  { content: "The billing service deploys with the zephyrine pipeline", kind: "project", project: "/work/billing" },
  { content: "Met Priya Raman in Lisbon on 12 March 2024 to plan the offsite", kind: "fact", valid_from: "2024-03-12" },
];

describe("memory import", () => {
  it("reads a file saved with a byte-order mark and Windows line ends, and a config.json with a BOM", () => {
    const s = setup();
    // Notepad and Windows PowerShell save UTF-8 this way
    writeFileSync(join(s.dir, "config.json"), `\uFEFF${JSON.stringify({ localUser: "alice", search: { defaultLimit: 5 } })}`);
    const p = join(s.dir, "windows.jsonl");
    writeFileSync(p, `\uFEFF${JSON.stringify(GOOD[0])}\r\n${JSON.stringify({ content: "The VPN gateway is vpn2.example.org" })}\r\n`);
    const r = s.cli("import", p);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("imported 2 memories from 2 lines");
    expect(r.status).toBe(0);
    expect(s.rows<{ content: string }>(`SELECT content FROM memories ORDER BY rowid`).map((x) => x.content)).toEqual([GOOD[0]!.content, "The VPN gateway is vpn2.example.org"]);
  });

  it("names a line that is not UTF-8 (a Latin-1 file) instead of storing U+FFFD for its accents", () => {
    const s = setup();
    const p = join(s.dir, "latin1.jsonl");
    // "Café Müller" saved as Latin-1, between two UTF-8 lines (one with a real U+FFFD in it)
    writeFileSync(
      p,
      Buffer.concat([
        Buffer.from(`${JSON.stringify({ content: "Priya orders at the Zürich office canteen" })}\n`, "utf8"),
        Buffer.from(`${JSON.stringify({ content: "Lunch is at Café Müller on Fridays" })}\n`, "latin1"),
        Buffer.from(`${JSON.stringify({ content: "The old log shows \uFFFD where the sensor failed" })}\n`, "utf8"),
      ]),
    );
    const r = s.cli("import", p, "--json");
    expect(r.status).toBe(1);
    expect(summary(r)).toMatchObject({ lines: 3, imported: 2, failed: 1 });
    expect(r.stderr).toBe('line 2: "(line)": is not UTF-8 text (the file was saved in another encoding, such as Latin-1 or Windows-1252); save the file as UTF-8 and import it again\n');
    expect(s.rows<{ content: string }>(`SELECT content FROM memories ORDER BY rowid`).map((x) => x.content)).toEqual([
      "Priya orders at the Zürich office canteen",
      "The old log shows \uFFFD where the sensor failed",
    ]);
  });

  it("imports the good lines, names line and field of each bad one, and exits 1", { timeout: 60_000 }, () => {
    const s = setup();
    const p = s.file("mixed.jsonl", [
      GOOD[0],
      "{not json",
      { content: "", kind: "fact" },
      GOOD[1],
      { content: "kind is wrong", kind: "opinion" },
      "",
      { content: "The staging api key is sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", kind: "fact" },
      { content: "Bob likes vim", user: "bob" },
      { content: "needs a project", scope: "project" },
      { content: "tags must be strings", tags: [1, 2] },
      { content: "bad date", valid_from: "next tuesday-ish" },
      GOOD[2],
      { content: "a binary\u0000tail" },
      { content: "clean text", tags: ["ok", "n\u0000l"] },
      // Date.parse alone read this as 1 March
      { content: "impossible day", valid_from: "2023-02-29" },
      // epoch milliseconds past year 9999 broke every view of the memory; a relative project matched no session
      { content: "far future", valid_from: 9_000_000_000_000_000 },
      { content: "relative project", kind: "project", project: "billing" },
      // a level or a scope object: the level's names were left out of the message
      { content: "unknown level", scope: "team" },
    ]);
    const r = s.cli("import", p);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("imported 3 memories from 17 lines");
    expect(r.stdout).toContain("14 failed");
    const err = r.stderr.trim().split("\n");
    expect(err).toEqual([
      expect.stringMatching(/^line 2: "\(line\)": not valid JSON/),
      expect.stringMatching(/^line 3: "content": "content" is empty/),
      expect.stringMatching(/^line 5: "kind": must be one of "fact", "preference", /),
      expect.stringMatching(/^line 7: "content": nothing was stored: the content looks like a credential/),
      expect.stringMatching(/^line 8: "user": belongs to user "bob" but the import runs as "alice"; pass --user bob/),
      expect.stringMatching(/^line 9: "scope.project": a project-scope memory needs a project/),
      expect.stringMatching(/^line 10: "tags\[0\]": must be a string \(got number 1\); "tags\[1\]" must be a string/),
      expect.stringMatching(/^line 11: "valid_from": must be an ISO 8601 date/),
      expect.stringMatching(/^line 13: "content": "content" holds a NUL character \(U\+0000\) at character 9; remove it/),
      expect.stringMatching(/^line 14: "tags": tag "n\\0l" holds a NUL character/),
      expect.stringMatching(/^line 15: "valid_from": must be an ISO 8601 date or epoch milliseconds \(got "2023-02-29"\)/),
      expect.stringMatching(/^line 16: "valid_from": 9000000000000000 is outside the years 0 to 9999/),
      expect.stringMatching(/^line 17: "project": "billing" is not an absolute directory path/),
      `line 18: "scope": must be one of "user", "project", "session", "thread" or an object (got the string "team")`,
    ]);
    // The credential never reached the file.
    expect(s.rows<{ n: number }>(`SELECT count(*) AS n FROM memories WHERE content LIKE '%sk-live%'`)[0]!.n).toBe(0);
    const stored = s.rows<{ content: string; level: string; project: string | null; trust: string; valid_from: number | null }>(
      `SELECT content, level, project, trust, valid_from FROM memories ORDER BY rowid`,
    );
    expect(stored.map((x) => x.content)).toEqual(GOOD.map((g) => g.content));
    expect(stored[1]).toMatchObject({ level: "project", project: "/work/billing", trust: "imported" });
    expect(stored[2]!.valid_from).toBe(Date.parse("2024-03-12"));
    // Findable at once through every channel: words, and a partial word via trigrams.
    expect(s.cli("search", "zephyrine", "--project", "/work/billing", "--json").stdout).toContain("zephyrine pipeline");
    expect(s.cli("search", "zephyr", "--project", "/work/billing", "--json").stdout).toContain("zephyrine pipeline");
    expect(s.cli("search", "Priya", "--json").stdout).toContain("Priya Raman");
  });

  it("refuses a valid_from in Unix seconds (it read as January 1970) and keeps epoch milliseconds and ISO dates", () => {
    const s = setup();
    const nov2023 = Date.UTC(2023, 10, 14, 22, 13, 20);
    const p = s.file("epochs.jsonl", [
      { content: "Moved the staging cluster to the Frankfurt region", valid_from: 1_700_000_000 },
      { content: "Renewed the wildcard certificate for example.org", valid_from: -86_400 },
      { content: "Switched the team chat to Matrix", valid_from: nov2023 },
      // what `memory export` writes for an old fact: negative milliseconds
      { content: "The office building was finished in 1950", valid_from: Date.UTC(1950, 0, 1) },
      { content: "Adopted the four-day work week", valid_from: "2023-11-14T22:13:20Z" },
    ]);
    const r = s.cli("import", p);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("imported 3 memories from 5 lines");
    expect(r.stderr.trim().split("\n")).toEqual([
      'line 1: "valid_from": 1700000000 looks like seconds since 1970, not milliseconds (as milliseconds it is 1970-01-20); send epoch milliseconds (1700000000000) or an ISO 8601 string such as "2023-11-14T22:13:20Z"',
      'line 2: "valid_from": -86400 looks like seconds since 1970, not milliseconds (as milliseconds it is 1969-12-31); send epoch milliseconds (-86400000) or an ISO 8601 string such as "1969-12-31T00:00:00Z"',
    ]);
    const stored = s.rows<{ content: string; valid_from: number }>(`SELECT content, valid_from FROM memories ORDER BY rowid`);
    expect(stored.map((x) => [x.content.split(" ")[0], x.valid_from])).toEqual([
      ["Switched", nov2023],
      ["The", Date.UTC(1950, 0, 1)],
      ["Adopted", nov2023],
    ]);
  });

  it("is idempotent: a second run adds no memory, source or audit row", () => {
    const s = setup();
    const p = s.file("good.jsonl", [...GOOD, GOOD[0]]);
    const first = s.cli("import", p, "--json");
    expect(first.status).toBe(0);
    expect(summary(first)).toMatchObject({ lines: 4, imported: 3, duplicates: 1, failed: 0 });
    const count = () =>
      s.rows<{ m: number; s: number; a: number }>(
        `SELECT (SELECT count(*) FROM memories) AS m, (SELECT count(*) FROM memory_sources) AS s, (SELECT count(*) FROM audit_log) AS a`,
      )[0]!;
    const before = count();
    const second = s.cli("import", p, "--json");
    expect(second.status).toBe(0);
    expect(summary(second)).toMatchObject({ lines: 4, imported: 0, duplicates: 4, failed: 0 });
    expect(count()).toEqual(before);
  });

  it("keeps scopes apart: another user's lines need --user, and each user sees only their own", { timeout: 60_000 }, () => {
    const s = setup();
    const p = s.file("bob.jsonl", [
      { content: "Bob keeps the quokka checklist in the wiki", user: "bob" },
      { content: "Bob's team meets on Thursdays about quokka releases", scope: { level: "user", user: "bob" } },
      { content: "Quokka release notes live in docs/releases", kind: "project", project: "/work/quokka", user: "bob" },
    ]);
    const asAlice = s.cli("import", p);
    expect(asAlice.status).toBe(1);
    expect(asAlice.stderr).toMatch(/^line 2: "scope.user": belongs to user "bob"/m);
    expect(asAlice.stdout).toContain("imported 0 memories");
    const asBob = s.cli("import", p, "--user", "bob");
    expect(asBob.status).toBe(0);
    expect(asBob.stdout).toContain("imported 3 memories");
    expect(s.cli("search", "quokka", "--json").stdout.trim()).toBe("");
    const bobs = s.cli("search", "quokka", "--user", "bob", "--project", "/work/quokka", "--json").stdout.trim().split("\n");
    expect(bobs).toHaveLength(3);
    for (const l of bobs) expect((JSON.parse(l) as { scope: { user: string } }).scope.user).toBe("bob");
    // Outside that project, bob's project memory stays out of his results.
    expect(s.cli("search", "quokka", "--user", "bob", "--project", "/work/other", "--json").stdout.trim().split("\n")).toHaveLength(2);
  });

  it("takes `memory export` output back, and many batches keep line numbers right", () => {
    const s = setup();
    const lines: unknown[] = [];
    for (let i = 0; i < 1200; i++) {
      lines.push(i === 777 ? { content: "no kind like this", kind: "rumour" } : { content: `Session ${i % 40} turn ${i}: we compared plan number ${i * 7} with ${i % 13} options`, session: `s-${i % 40}` });
    }
    const p = s.file("many.jsonl", lines);
    const r = s.cli("import", p, "--batch", "300", "--json");
    expect(r.status).toBe(1);
    expect(summary(r)).toMatchObject({ lines: 1200, imported: 1199, failed: 1 });
    expect(r.stderr.trim()).toMatch(/^line 778: "kind": /);
    const out = join(s.dir, "export.jsonl");
    expect(s.cli("export", "--out", out).status).toBe(0);
    // A fresh database from the export: the same memories, and nothing twice.
    const other = join(s.dir, "other.db");
    const env = { INFINITY_MEMORY_HOME: s.dir, INFINITY_MEMORY_USER: "alice" };
    const again = runCli(["memory", "import", out, "--db", other, "--json"], env);
    expect(again.status).toBe(0);
    expect(summary(again)).toMatchObject({ lines: 1199, imported: 1199, duplicates: 0, failed: 0 });
    const hit = runCli(["memory", "search", "plan number 7000", "--db", other, "--json"], env).stdout;
    expect(hit).toContain("plan number 7000");
  }, 90_000);

  it("takes back an exported memory dated 1966 to 1973, whose epoch milliseconds look like seconds", () => {
    const s = setup();
    const env = { INFINITY_MEMORY_HOME: s.dir, INFINITY_MEMORY_USER: "alice" };
    const dates = ["1969-07-20", "1970-01-02", "1972-12-31"];
    const p = s.file("dated.jsonl", dates.map((d) => ({ content: `The event of ${d} happened`, valid_from: d })));
    expect(s.cli("import", p).status).toBe(0);
    const out = join(s.dir, "export.jsonl");
    expect(s.cli("export", "--out", out).status).toBe(0);
    const other = join(s.dir, "other.db");
    const r = runCli(["memory", "import", out, "--db", other], env);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("imported 3 memories from 3 lines");
    const back = runCli(["memory", "export", "--db", other], env).stdout.trim().split("\n").map((l) => JSON.parse(l) as { content: string; valid_from: number });
    expect(back.map((m) => [m.content, m.valid_from]).sort()).toEqual(dates.map((d) => [`The event of ${d} happened`, Date.parse(d)]).sort());
    // a hand-written line with such a number is still asked about
    const hand = s.file("hand.jsonl", [{ content: "Hand-written", valid_from: 86_400_000 }]);
    expect(s.cli("import", hand).stderr).toMatch(/looks like seconds since 1970/);
  });

  it("brings an export back as it was: current versions only, a corrected fact stays corrected, a candidate stays pending", () => {
    const s = setup();
    const env = { INFINITY_MEMORY_HOME: s.dir, INFINITY_MEMORY_USER: "alice" };
    const add = JSON.parse(runCli(["memory", "add", "User prefers spaces in TypeScript", "--db", s.db, "--json"], env).stdout) as { id: string };
    expect(runCli(["memory", "correct", add.id, "User prefers tabs in TypeScript", "--db", s.db], env).status).toBe(0);
    const out = join(s.dir, "export.jsonl");
    expect(s.cli("export", "--out", out).status).toBe(0);
    // the export holds both versions, plus (written by hand here) a candidate no one confirmed
    // and a record whose expiry has passed
    const exported = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(exported.map((l) => l.status).sort()).toEqual(["active", "superseded"]);
    const extra = [
      { ...exported[0], id: "mem_c1", content: "User may prefer dark mode", status: "pending", tags: ["auto_extracted"] },
      { ...exported[0], id: "mem_c2", content: "The sprint ends on Friday", status: "active", expires_at: "2020-01-01T00:00:00.000Z" },
    ];
    const all = s.file("all.jsonl", [...exported, ...extra]);
    const other = join(s.dir, "other.db");
    const r = runCli(["memory", "import", all, "--db", other, "--json"], env);
    expect(r.status, r.stderr).toBe(0);
    expect(summary(r)).toMatchObject({ lines: 4, imported: 2, pending_review: 1, past_versions: 2, failed: 0 });
    const text = runCli(["memory", "import", all, "--db", other], env).stdout;
    expect(text).toMatch(/\(2 already stored, 0 pending review, 2 past versions left out, 0 failed\)/);
    const listed = runCli(["memory", "list", "--db", other, "--status", "active,pending,superseded,expired", "--json"], env)
      .stdout.trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { content: string; status: string });
    expect(listed.map((l) => `${l.status}: ${l.content}`).sort()).toEqual(["active: User prefers tabs in TypeScript", "pending: User may prefer dark mode"]);
    expect(runCli(["memory", "search", "spaces", "TypeScript", "--db", other, "--history", "--json"], env).stdout).not.toContain("spaces");
  });
});

// The admin token file: created once with mode 0600, reused, repaired when its mode widened,
// refused when it holds something else; the bearer check accepts only the exact token.
import { spawn } from "node:child_process";
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { bearerMatches, loadOrCreateToken, tokenMatches } from "../../admin/api/token.js";
import { tempDir } from "../helpers/tmp.js";

describe("admin token", () => {
  it("is created once (0600) and reused; a widened mode is narrowed again", () => {
    const home = join(tempDir(), "nested", "home");
    const a = loadOrCreateToken(home);
    expect(a.created).toBe(true);
    expect(a.token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(a.path).mode & 0o777).toBe(0o600);
    const b = loadOrCreateToken(home);
    expect(b).toMatchObject({ token: a.token, created: false });
    chmodSync(a.path, 0o644);
    expect(loadOrCreateToken(home).token).toBe(a.token);
    expect(statSync(a.path).mode & 0o777).toBe(0o600);
    expect(readFileSync(a.path, "utf8").trim()).toBe(a.token);
  });

  it("refuses a file that does not hold a token instead of overwriting it", () => {
    const home = tempDir();
    writeFileSync(join(home, "admin.token"), "hunter2\n", { mode: 0o600 });
    expect(() => loadOrCreateToken(home)).toThrow(/does not hold a token/);
    expect(readFileSync(join(home, "admin.token"), "utf8")).toBe("hunter2\n");
  });

  it("servers starting at once on a fresh home all get the one token (none reads a file still being written)", async () => {
    // Created exclusively and then written, the file was empty for a moment: a server reading it
    // then refused to start ("does not hold a token"), a few rounds in a hundred.
    const child = resolve(fileURLToPath(new URL(".", import.meta.url)), "../../dist/test/admin/token-child.js");
    if (!existsSync(child)) throw new Error(`${child} is missing: run the build first`);
    const dir = tempDir();
    const PROCESSES = 4;
    const ROUNDS = 300;
    const procs = Array.from({ length: PROCESSES }, () => spawn(process.execPath, [child, dir, String(ROUNDS), "10"], { stdio: ["pipe", "pipe", "inherit"] }));
    const lines = procs.map((p) => {
      const rl = createInterface({ input: p.stdout });
      const ready = new Promise<void>((r) => rl.once("line", () => r()));
      const result = ready.then(() => new Promise<string>((r) => rl.once("line", r)));
      return { ready, result };
    });
    await Promise.all(lines.map((l) => l.ready));
    const start = Date.now() + 300;
    for (const p of procs) p.stdin.end(`${start}\n`);
    const results = (await Promise.all(lines.map((l) => l.result))).map((l) => JSON.parse(l) as { token?: string; created?: boolean; error?: string }[]);
    for (let r = 0; r < ROUNDS; r++) {
      const round = results.map((x) => x[r]!);
      const file = readFileSync(join(dir, String(r), "admin.token"), "utf8").trim();
      expect(file).toMatch(/^[0-9a-f]{64}$/);
      expect(round.map((x) => x.error ?? x.token), `round ${r}`).toEqual(Array(PROCESSES).fill(file));
      expect(round.filter((x) => x.created)).toHaveLength(1);
      // nothing but the token is left in the home
      expect(readdirSync(join(dir, String(r)))).toEqual(["admin.token"]);
    }
  }, 60_000);

  it("matches only the exact bearer token", () => {
    const t = "ab".repeat(32);
    expect(bearerMatches(`Bearer ${t}`, t)).toBe(true);
    expect(bearerMatches(`bearer ${t}`, t)).toBe(true);
    for (const h of [undefined, "", t, `Bearer ${t}x`, `Bearer ${t.slice(1)}`, `Basic ${t}`, `Bearer ${t} extra`]) expect(bearerMatches(h, t)).toBe(false);
    expect(tokenMatches(t, t)).toBe(true);
    expect(tokenMatches(null, t)).toBe(false);
    expect(tokenMatches(t.toUpperCase(), t)).toBe(false);
  });
});

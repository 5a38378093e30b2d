// The admin token file: created once with mode 0600, reused, repaired when its mode widened,
// refused when it holds something else; the bearer check accepts only the exact token.
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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

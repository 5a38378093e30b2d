// The admin access token: 32 random bytes (hex) in $INFINITY_MEMORY_HOME/admin.token, mode 0600,
// created once and reused by every later server, so a bookmarked page URL keeps working.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const TOKEN_FILE = "admin.token";
const TOKEN_RE = /^[0-9a-f]{64}$/;

/** Read the token file, creating it (exclusively, 0600) when absent or unusable. */
export function loadOrCreateToken(home: string): { token: string; path: string; created: boolean } {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const path = join(home, TOKEN_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const token = readFileSync(path, "utf8").trim();
      if (!TOKEN_RE.test(token)) throw new Error(`${path} does not hold a token (64 hex characters); delete it to get a new one`);
      // a copy restored from a backup may have lost its mode: never leave it readable by others
      if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
      return { token, path, created: false };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
    const token = randomBytes(32).toString("hex");
    try {
      // "wx": when two servers start at once, one creates it and the other reads that one
      writeFileSync(path, `${token}\n`, { mode: 0o600, flag: "wx" });
      return { token, path, created: true };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
  throw new Error(`could not create ${path}`);
}

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** Constant-time check of "Bearer <token>" (hashing first makes the lengths equal). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  if (!header) return false;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) return false;
  return timingSafeEqual(digest(m[1]!), digest(token));
}

/** Constant-time check of a bare token (the events stream's ?access_token=). */
export function tokenMatches(value: string | undefined | null, token: string): boolean {
  if (!value) return false;
  return timingSafeEqual(digest(value), digest(token));
}

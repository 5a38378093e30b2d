// The admin access token: 32 random bytes (hex) in $INFINITY_MEMORY_HOME/admin.token, mode 0600,
// created once and reused by every later server, so a bookmarked page URL keeps working.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export const TOKEN_FILE = "admin.token";
const TOKEN_RE = /^[0-9a-f]{64}$/;

/** Read the token file, creating it (0600) when absent. */
export function loadOrCreateToken(home: string): { token: string; path: string; created: boolean } {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const path = join(home, TOKEN_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    const found = readToken(path);
    if (found !== null) return { token: found, path, created: false };
    const token = randomBytes(32).toString("hex");
    if (placeToken(path, token)) return { token, path, created: true };
    // another server placed its token first: that one is read on the next turn
  }
  throw new Error(`could not create ${path}`);
}

/** The token in `path`; null when there is no file. */
function readToken(path: string): string | null {
  let token: string;
  try {
    token = readFileSync(path, "utf8").trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
  if (!TOKEN_RE.test(token)) throw new Error(`${path} does not hold a token (64 hex characters); delete it to get a new one`);
  // a copy restored from a backup may have lost its mode: never leave it readable by others
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  return token;
}

/**
 * Put `token` at `path` unless a file is there already; false when one was. The token is written
 * whole under a name of its own and then linked into place: created exclusively and then written,
 * the file was empty for a moment, and a second server starting at that moment refused to start
 * ("does not hold a token"). A link, unlike a rename, never replaces a token placed meanwhile.
 */
function placeToken(path: string, token: string): boolean {
  const tmp = join(dirname(path), `.${TOKEN_FILE}.${process.pid}.${randomBytes(6).toString("hex")}`);
  writeFileSync(tmp, `${token}\n`, { mode: 0o600, flag: "wx" });
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    // a file system without hard links: an exclusive create, as before
    if (code === "EPERM" || code === "ENOTSUP" || code === "ENOSYS" || code === "EOPNOTSUPP") return createExclusive(path, token);
    throw e;
  } finally {
    rmSync(tmp, { force: true });
  }
}

function createExclusive(path: string, token: string): boolean {
  try {
    writeFileSync(path, `${token}\n`, { mode: 0o600, flag: "wx" });
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
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

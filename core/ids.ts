import { randomBytes } from "node:crypto";

// Time-sortable ids (48-bit ms timestamp + 80 random bits, Crockford base32), so ids sort by
// creation time in indexes and listings.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

export function newId(prefix: string, nowMs: number = Date.now()): string {
  const buf = new Uint8Array(16);
  let t = nowMs;
  for (let i = 5; i >= 0; i--) {
    buf[i] = t % 256;
    t = Math.floor(t / 256);
  }
  buf.set(randomBytes(10), 6);
  return `${prefix}_${base32(buf)}`;
}

/**
 * The longest identifier the runtime may hand us (a thread, call, group or user id), in UTF-8
 * bytes. Infinity's are UUIDs; the bound keeps a key made of several of them inside PostgreSQL's
 * index-row limit (about 2.7 KB), where a longer one failed the write that SQLite took.
 */
export const MAX_EXTERNAL_ID_BYTES = 512;

/** What is wrong with an identifier from outside (said after the field's name), or null. */
export function externalIdProblem(id: string): string | null {
  if (id.includes("\u0000")) return "must not contain a NUL character (U+0000)";
  const bytes = Buffer.byteLength(id, "utf8");
  if (bytes > MAX_EXTERNAL_ID_BYTES) return `is ${bytes} bytes long; an identifier may be at most ${MAX_EXTERNAL_ID_BYTES} bytes (UTF-8)`;
  return null;
}

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

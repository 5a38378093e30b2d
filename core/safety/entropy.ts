// Character statistics used to tell a random-looking credential from a word or an identifier.

/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  if (s.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  const n = [...s].length;
  for (const c of counts.values()) {
    const p = c / n;
    h -= p * Math.log2(p);
  }
  return h;
}

/** How many of {lowercase, uppercase, digit, other} occur in `s`. */
export function charClassCount(s: string): number {
  let n = 0;
  if (/[a-z]/.test(s)) n++;
  if (/[A-Z]/.test(s)) n++;
  if (/[0-9]/.test(s)) n++;
  if (/[^A-Za-z0-9]/.test(s)) n++;
  return n;
}

export function hasDigit(s: string): boolean {
  return /[0-9]/.test(s);
}

export function hasLetter(s: string): boolean {
  return /[A-Za-z]/.test(s);
}

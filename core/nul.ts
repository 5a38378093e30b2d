// A NUL character (U+0000) is refused wherever text enters from outside: no caller needs one, and
// PostgreSQL text cannot store it (SQLite can, so a later migrate would fail). One walker for the
// tool dispatcher and the admin API; each formats the path its own way.

/** The first string anywhere in `value` that holds a NUL: its path of keys and the string. */
export function firstNul(value: unknown, path: PropertyKey[] = []): { path: PropertyKey[]; text: string } | null {
  if (typeof value === "string") return value.includes("\u0000") ? { path, text: value } : null;
  if (value === null || typeof value !== "object") return null;
  for (const [k, v] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    const hit = firstNul(v, [...path, k]);
    if (hit) return hit;
  }
  return null;
}

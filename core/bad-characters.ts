// Characters refused wherever text enters from outside, because no store keeps them as given:
// a NUL (U+0000), which PostgreSQL text cannot hold (SQLite can, so a later migrate would fail),
// and an unpaired UTF-16 surrogate (a "\ud83d" escape in the JSON without its other half), which
// is no character at all: SQLite stored it as invalid UTF-8 and read it back as three U+FFFD where
// PostgreSQL's driver wrote one, so the same call left different text in the two engines. One
// walker for the tool dispatcher and the admin API; each formats the path its own way.

/** a string's first unpaired surrogate (paired ones make one code point, outside \p{Cs}) */
const LONE_SURROGATE = /\p{Cs}/u;

export interface BadCharacter {
  /** the keys down to the string */
  path: PropertyKey[];
  text: string;
  /** UTF-16 index of the character in `text` */
  at: number;
  /** "a NUL character (U+0000)" or "an unpaired surrogate (U+D83D, half of a character)" */
  what: string;
}

function badIn(s: string): { at: number; what: string } | null {
  const nul = s.indexOf("\u0000");
  if (nul >= 0) return { at: nul, what: "a NUL character (U+0000)" };
  const lone = s.search(LONE_SURROGATE);
  if (lone >= 0) return { at: lone, what: `an unpaired surrogate (U+${s.charCodeAt(lone).toString(16).toUpperCase()}, half of a character)` };
  return null;
}

/** The first string anywhere in `value` that holds a NUL or an unpaired surrogate, and where. */
export function firstBadCharacter(value: unknown, path: PropertyKey[] = []): BadCharacter | null {
  if (typeof value === "string") {
    const bad = badIn(value);
    return bad ? { path, text: value, ...bad } : null;
  }
  if (value === null || typeof value !== "object") return null;
  for (const [k, v] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    const hit = firstBadCharacter(v, [...path, k]);
    if (hit) return hit;
  }
  return null;
}

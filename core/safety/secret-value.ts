// Is a captured value a real credential or a placeholder / code reference / prose word?
// Used by the keyword-driven rules, where the value is free-form, and (loosely) by the
// provider rules to skip masked examples such as "ghp_xxxxxxxx…".
import { charClassCount, hasDigit, hasLetter, shannonEntropy } from "./entropy.js";

const PLACEHOLDER_WORDS = new Set([
  "changeme", "change_me", "change-me", "changeit", "password", "passwd", "pass", "passw0rd", "secret",
  "secrets", "token", "apikey", "api_key", "api-key", "key", "example", "sample", "dummy", "fake",
  "test", "testing", "null", "nil", "none", "undefined", "true", "false", "empty", "redacted",
  "removed", "hidden", "masked", "placeholder", "todo", "tbd", "fixme", "default", "string", "str",
  "required", "optional", "value", "foo", "bar", "baz", "foobar", "qwerty", "username", "user",
  "admin", "root", "guest", "secret123", "password123", "notasecret", "mysecret", "mypassword",
]);

const PLACEHOLDER_SHAPES: RegExp[] = [
  /^<[^>]{0,200}>$/, // <your-key>
  /^\[[^\]]{0,200}\]$/, // [API_KEY]
  /^\{\{?[^}]{0,200}\}?\}$/, // {{token}} / {token}
  /^\$\{?[A-Za-z_][A-Za-z0-9_]{0,100}\}?$/, // $TOKEN / ${TOKEN}
  /^%\(?[A-Za-z_]{0,40}\)?[sd]?$/, // %s / %(password)s
  /^(?:your|enter|insert|replace|put|my|example|sample|dummy|fake|test)[-_ ]?(?:own[-_ ]?)?(?:api[-_ ]?)?(?:key|token|secret|pass|password|passwd|pwd|credentials?|value|string)/i,
  /(?:^|[-_ ])(?:here|goes[-_]?here|placeholder|example|redacted)$/i,
  /x{4,}|X{4,}|\*{3,}|•{3,}|\.{3}|…|#{4,}/, // masked or elided
  /^(.)\1{5,}$/, // aaaaaaaa
  /^0123456789?$|^12345678?9?0?$|^abcdefg?h?$/i,
];

/** Template, example and masked values that do not hold a real secret. */
export function isPlaceholder(value: string): boolean {
  const v = value.trim();
  if (v.length === 0) return true;
  if (PLACEHOLDER_WORDS.has(v.toLowerCase())) return true;
  return PLACEHOLDER_SHAPES.some((re) => re.test(v));
}

/** A value that is code, a path or a URL rather than a literal secret (only for unquoted values). */
function isReference(value: string): boolean {
  if (/[()[\]{}]/.test(value)) return true; // call, index or template: os.environ["X"], getenv(...)
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(value)) return true; // config.db.password
  return false;
}

function isPathOrUrl(value: string): boolean {
  return /^(?:[a-z][a-z0-9+.-]{1,20}:\/\/|\/|\.\.?\/|~\/|[A-Za-z]:\\)/i.test(value);
}

export type Strictness = "assignment" | "prose" | "url_password";

/**
 * Plausible secret: not a placeholder, no spaces, and random-looking enough.
 * - assignment (`password = …`): ≥ 8 chars and mixed classes (letters with digits, or three classes) or high entropy;
 * - prose ("my wifi password is …"): the phrase is strong evidence, so ≥ 6 chars and anything beyond a plain word;
 * - url_password (`user:pass@host`): the URL shape is evidence, so anything ≥ 4 chars that is not a placeholder.
 */
export function isPlausibleSecret(value: string, strictness: Strictness, quoted: boolean): boolean {
  const v = value.trim();
  if (isPlaceholder(v)) return false;
  if (/\s/.test(v)) return false;
  if (strictness === "url_password") return v.length >= 4 && !/^\$|^%|^\{/.test(v);
  if (!quoted && isReference(v)) return false;
  if (isPathOrUrl(v)) return false;
  if (strictness === "prose") {
    if (v.length < 6) return false;
    // a plain word, possibly capitalised, is prose ("is Great")
    if (/^[A-Za-z]{1,10}-\d{1,4}$/.test(v)) return false; // model names: ERC-20, COVID-19
    return !/^[A-Za-z][a-z]*$/.test(v) && !/^[A-Z]+$/.test(v) && (hasDigit(v) || charClassCount(v) >= 2);
  }
  if (v.length < 8) return false;
  const classes = charClassCount(v);
  if (classes >= 3) return !looksLikeIdentifierWords(v);
  if (classes === 2 && hasDigit(v) && hasLetter(v)) return !looksLikeIdentifierWords(v);
  return v.length >= 16 && shannonEntropy(v) >= 3.8;
}

/**
 * snake/kebab/dotted names built from words ("my-app-secret-v2", "user_service.prod") are
 * names of secrets, not secrets.
 */
function looksLikeIdentifierWords(v: string): boolean {
  const parts = v.split(/[-_.]/);
  if (parts.length < 2) return false;
  return parts.every((p) => /^(?:[a-z]{2,}|[A-Z]{2,}|[A-Z][a-z]+|v?\d{1,3})$/.test(p));
}

/** Loose check for provider-shaped tokens: reject masked or obviously fake bodies. */
export function looksRandom(body: string): boolean {
  if (isPlaceholder(body)) return false;
  if (/(?:x{6,}|X{6,}|0{8,}|(.)\1{7,})/.test(body)) return false;
  if (/example/i.test(body)) return false; // vendor documentation keys (AKIAIOSFODNN7EXAMPLE)
  return shannonEntropy(body) >= 3.0;
}

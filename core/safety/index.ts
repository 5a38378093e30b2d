// One entry point for the write/import/load/render paths: scan a text for credentials and
// prompt injection and turn the findings into a single verdict.
import { scanInjection, type InjectionFinding } from "./injection.js";
import { scanSecrets, type SecretFinding } from "./secrets.js";

export type { InjectionFinding, InjectionKind, InjectionSeverity } from "./injection.js";
export type { SecretFinding, SecretKind } from "./secrets.js";
export { scanInjection } from "./injection.js";
export { scanSecrets } from "./secrets.js";

export type SafetyVerdict = "ok" | "flag" | "refuse_secret" | "refuse_injection";

export interface ContentScan {
  secrets: SecretFinding[];
  injections: InjectionFinding[];
  verdict: SafetyVerdict;
  /** one sentence naming what was found; never contains the matched text */
  reason: string;
}

/** "a, b and c", de-duplicated, in order of first appearance. */
function listOf(names: string[]): string {
  const unique = [...new Set(names)];
  if (unique.length <= 1) return unique[0] ?? "";
  return `${unique.slice(0, -1).join(", ")} and ${unique[unique.length - 1] ?? ""}`;
}

/** A secret outranks an injection: storing a credential is irreversible once it is exported. */
export function scanContent(text: string): ContentScan {
  const secrets = scanSecrets(text);
  const injections = scanInjection(text);
  const blocks = injections.filter((f) => f.severity === "block");
  const flags = injections.filter((f) => f.severity === "flag");
  if (secrets.length > 0) {
    const what = listOf(secrets.map((s) => s.label));
    return { secrets, injections, verdict: "refuse_secret", reason: `looks like a credential (${what})` };
  }
  if (blocks.length > 0) {
    const what = listOf(blocks.map((f) => f.label));
    return { secrets, injections, verdict: "refuse_injection", reason: `looks like a prompt-injection attempt (${what})` };
  }
  if (flags.length > 0) {
    const what = listOf(flags.map((f) => f.label));
    return { secrets, injections, verdict: "flag", reason: `needs review: contains ${what}` };
  }
  return { secrets, injections, verdict: "ok", reason: "no credentials or injection patterns found" };
}

// Plain prose that reaches every pattern (the rules run on every text; nothing in it matches).
const WARM_TEXT = "We moved the nightly build to Friday; Alice keeps the deploy notes in the team wiki (see https://example.com/notes?page=2).";

/**
 * Run the scan twice on a plain text. V8 compiles a regular expression on its first run and again
 * to native code on a later one: for these tables ~130 ms and then ~40 ms, which a server would
 * otherwise spend inside its first remember or its first prompt prefix (whose deadline is 250 ms).
 */
export function warmSafetyScan(): void {
  for (let i = 0; i < 2; i++) scanContent(WARM_TEXT);
}

/** Replace every detected secret with `[REDACTED:<kind>]`; the rest of the text is unchanged. */
export function redactSecrets(text: string): string {
  const findings = scanSecrets(text).sort((a, b) => a.index - b.index);
  const parts: string[] = [];
  let cursor = 0;
  for (const f of findings) {
    if (f.index < cursor) continue; // overlaps the previous finding
    parts.push(text.slice(cursor, f.index), `[REDACTED:${f.kind}]`);
    cursor = f.index + f.length;
  }
  parts.push(text.slice(cursor));
  return parts.join("");
}

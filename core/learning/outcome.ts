// What a tool result says about the step: did the call fail (ok/error), and does it carry a
// verifiable verdict (a test run or a command's exit status)? Patterns only, no model.
import type { StepOutcome, Verdict } from "./types.js";

// A RAP tool error is "Error: …" by contract; shells and runtimes have their own tells.
const ERROR_PATTERNS: RegExp[] = [
  /^\s*error\b[:!]/i,
  /^\s*(?:fatal|panic|exception)\b[:!]/i,
  /\btraceback \(most recent call last\)/i,
  /\bcommand not found\b/i,
  /\bno such file or directory\b/i,
  /\bpermission denied\b/i,
  /\b(?:exit(?:ed)?(?: with)?(?: code| status)?|exit code|return code)[:=\s]+(?!0\b)[1-9]\d{0,2}\b/i,
  /^\s*(?:\w+)?error: /im,
];

// Failing verdicts are checked first: "3 failed, 10 passed" is a failed run.
const FAIL_PATTERNS: RegExp[] = [
  /\b[1-9]\d* (?:tests? )?(?:failed|failing|failures?|errors?)\b/i,
  /\btests?:\s+[1-9]\d* failed\b/i,
  /\btest result: FAILED\b/,
  /^FAIL\b/m,
  /\bFAILED\b(?: \(failures=\d+)?/,
  /\bbuild failed\b/i,
  /\b(?:exit(?:ed)?(?: with)?(?: code| status)?|exit code|return code)[:=\s]+(?!0\b)[1-9]\d{0,2}\b/i,
];

const PASS_PATTERNS: RegExp[] = [
  /\b[1-9]\d* (?:tests? )?(?:passed|passing)\b/i,
  /\ball (?:\d+ )?tests? passed\b/i,
  /\btest result: ok\b/,
  /^ok\s+\S+/m,
  /\b0 (?:tests? )?(?:failed|failures)\b/i,
  /\bbuild succeeded\b/i,
  /\b(?:exit(?:ed)?(?: with)?(?: code| status)?|exit code|return code)[:=\s]+0\b/i,
];

export interface ResultClass {
  outcome: StepOutcome;
  verdict: Verdict | null;
}

export function classifyResult(text: string, flaggedError = false): ResultClass {
  const head = text.slice(0, 20_000);
  let verdict: Verdict | null = null;
  if (FAIL_PATTERNS.some((p) => p.test(head))) verdict = "fail";
  else if (PASS_PATTERNS.some((p) => p.test(head))) verdict = "pass";
  const error = flaggedError || ERROR_PATTERNS.some((p) => p.test(head));
  // A run that reports a passing verdict did its job even if it printed an error line on the way.
  return { outcome: error && verdict !== "pass" ? "error" : "ok", verdict };
}

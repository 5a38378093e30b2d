// What a user turn says about the previous answer or about memory: corrections, approvals,
// "don't remember this". Patterns over the text; an LLM may refine extraction, never these gates.

const CORRECTION: RegExp[] = [
  /^\s*(?:no|nope|nah)\b[,.!:;\s-]/i,
  /^\s*(?:that'?s|that is|this is|it'?s|it is) (?:not (?:right|correct|what i)|wrong|incorrect|broken)\b/i,
  /\b(?:that'?s|that is|this is) wrong\b/i,
  /\bnot what i (?:asked|wanted|meant)\b/i,
  /\b(?:still|again) (?:fail(?:s|ing)?|broken|doesn'?t work|not working|wrong)\b/i,
  /\b(?:doesn'?t|does not|didn'?t|did not) work\b/i,
  /^\s*(?:try again|redo|undo)\b/i,
  /^\s*(?:wrong|incorrect)\b/i,
];

const APPROVAL: RegExp[] = [
  /^\s*(?:thanks?|thank you|thx|ty)\b.*\b(?:works?|worked|perfect|great|fixed)\b/i,
  /^\s*(?:perfect|great|excellent|awesome|nice|exactly|that works|it works|works now|looks good|lgtm)\b/i,
];

const SUPPRESS: RegExp[] = [
  /\b(?:don'?t|do not|never|no need to|please don'?t)\s+(?:remember|save|store|memori[sz]e|record|keep)\b/i,
  /\bforget (?:this|that|it|what i (?:said|told you))\b/i,
  /\boff the record\b/i,
];

export type Reaction = "correction" | "approval" | null;

function normalized(s: string): string {
  return s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
}

/** how the next user turn reacts to an answer; a verbatim repeat of the task is a retry (a correction) */
export function reactionOf(nextUserText: string, task: string): Reaction {
  if (SUPPRESS.some((p) => p.test(nextUserText)) && !CORRECTION.some((p) => p.test(nextUserText))) return null;
  if (CORRECTION.some((p) => p.test(nextUserText))) return "correction";
  const n = normalized(nextUserText);
  if (n.length > 0 && n === normalized(task)) return "correction";
  // "great, but it broke the linter" is not an approval
  if (APPROVAL.some((p) => p.test(nextUserText)) && !/\b(?:but|however|except|although|though)\b/i.test(nextUserText)) return "approval";
  return null;
}

export function asksNotToRemember(text: string): boolean {
  return SUPPRESS.some((p) => p.test(text));
}

/** the part of a correction after its marker ("no, the config is in /etc" → "the config is in /etc") */
export function correctionBody(text: string): string {
  return text
    .replace(/^\s*(?:no|nope|nah)\b[,.!:;\s-]*/i, "")
    .replace(/^\s*(?:that'?s|that is|this is|it'?s|it is) (?:not right|not correct|wrong|incorrect)\b[,.!:;\s-]*/i, "")
    .replace(/^\s*(?:wrong|incorrect)\b[,.!:;\s-]*/i, "")
    .trim();
}

// What kind of answer a question wants, and whether a memory's text holds one. "When did she
// start?" is answered by a turn that says when ("yesterday", "last June", "3 years ago"), which a
// word match cannot prefer: on the LoCoMo dev questions starting with "when", 77% of evidence turns
// hold a time expression against 17% of all turns. Counting questions ("how many", "how often")
// likewise want a number or a frequency.

export type AnswerKind = "time" | "amount" | "place";

const WHEN_RE = /^\s*(?:when\b|what (?:year|month|date|day|time)\b|which (?:year|month|date|day)\b|since when\b|how long ago\b)/iu;
const AMOUNT_RE = /^\s*(?:how (?:many|much|often|long|old|far)\b)/iu;
// Up to two words may qualify the place noun ("which European countries", "what areas of the U.S.").
const PLACE_RE =
  /^\s*(?:where\b|(?:which|what)\s+(?:[\p{L}.'’-]+\s+){0,2}?(?:cities|city|countries|country|towns?|places?|states?|locations?|areas?|regions?|destinations?)\b)/iu;

/** The answer kind a question asks for; null for every other question. */
export function answerKind(question: string): AnswerKind | null {
  if (WHEN_RE.test(question)) return "time";
  if (AMOUNT_RE.test(question)) return "amount";
  if (PLACE_RE.test(question)) return "place";
  return null;
}

const MONTH = "jan(?:uary)?|feb(?:ruary)?|march|apr(?:il)?|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?";
const WEEKDAY = "monday|tuesday|wednesday|thursday|friday|saturday|sunday";
const TIME_RE = new RegExp(
  `\\b(?:yesterday|today|tonight|tomorrow|recently|ago|weekend|the other day|(?:last|next|this|past) (?:week|month|year|night|morning|evening|afternoon|summer|spring|fall|autumn|winter|${WEEKDAY}|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)|${WEEKDAY}|${MONTH}|(?:19|20)\\d{2}|\\d{1,2}(?:st|nd|rd|th)|(?:\\d+|a few|few|a couple of|couple of|several|two|three|four|five) (?:years?|months?|weeks?|days?))\\b`,
  "iu",
);
const NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|hundred|dozen|once|twice|several|few|couple";
const AMOUNT_RE_TEXT = new RegExp(`\\b(?:\\d+|${NUMBER_WORDS})\\b|\\b(?:daily|weekly|monthly|yearly|every)\\b`, "iu");

// A capitalised name or an acronym after a word of place or motion ("a trip to Rome", "lives in
// Boston", "back from the UK"); case matters here, so this one reads the text as written.
const PLACE_RE_TEXT = /\b(?:to|in|at|from|near|around|visit|visited|visiting)\s+(?:the\s+)?\p{Lu}(?:\p{Ll}+|\p{Lu}+\b)/u;

/** Whether a memory's text holds an answer of this kind. */
export function holdsAnswer(kind: AnswerKind, content: string): boolean {
  if (kind === "time") return TIME_RE.test(content);
  if (kind === "amount") return AMOUNT_RE_TEXT.test(content);
  return PLACE_RE_TEXT.test(content);
}

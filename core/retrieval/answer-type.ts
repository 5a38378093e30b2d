// What kind of answer a question wants, and whether a memory's text holds one. "When did she
// start?" is answered by a turn that says when ("yesterday", "last June", "3 years ago"), which a
// word match cannot prefer: on the LoCoMo dev questions starting with "when", 77% of evidence turns
// hold a time expression against 17% of all turns. Counting questions ("how many", "how often")
// likewise want a number or a frequency. A question asking for a book, film, game or song is
// answered by a turn that names one ("Harry Potter and Game of Thrones", "watched \"Little Women\""):
// on the tuning half of the LoCoMo dev split 62% of such evidence turns hold a title against 5% of
// all turns. A "when" question about something still ahead ("When is she going to…", "When does he
// plan to…") is answered by a turn that says when it will be ("next month", "tomorrow"): on the
// tuning half every such evidence turn holds a future time expression, against 4% of all turns.

import { PLACE_NAMES } from "./categories.js";

export type AnswerKind = "time" | "plan" | "amount" | "place" | "title";

const WHEN_RE = /^\s*(?:when\b|what (?:year|month|date|day|time)\b|which (?:year|month|date|day)\b|since when\b|how long ago\b)/iu;
// A "when" question about the future: "will", "going to", "plan(ning) to/on", or "is/are … -ing"
// ("When is Nate hosting a party?"); "When is her birthday?" stays a time question.
const PLAN_RE = /^\s*when\b(?:.*\b(?:will|going to|plan(?:s|ned|ning)?\s+(?:to|on)|intend(?:s|ed|ing)?\s+to|upcoming)\b|\s+(?:is|are)\s+(?:[\p{L}'’]+\s+){1,4}?\p{L}+ing\b)/iu;
const AMOUNT_RE = /^\s*(?:how (?:many|much|often|long|old|far)\b)/iu;
// Up to two words may qualify the place noun ("which European countries", "what areas of the U.S.").
const PLACE_RE =
  /^\s*(?:where\b|(?:which|what)\s+(?:[\p{L}.'’-]+\s+){0,2}?(?:cities|city|countries|country|towns?|places?|states?|locations?|areas?|regions?|destinations?)\b)/iu;

// Works with titles. "play(s)" stays out: "What instruments does she play?" asks for no title.
const WORK = "(?:books?|novels?|movies?|films?|(?:tv\\s+)?shows?|series|(?:video\\s+|board\\s+)?games?|songs?|albums?|bands?|podcasts?|musicals?|artists?|musicians?|singers?|authors?)";
// a qualifier is never a verb: "What did she watch…" asks for no kind of work
const AUX = "(?:did|does|do|has|have|had|is|are|was|were|will|would|can|could|should|might|may)";
const TITLE_RE = new RegExp(
  `^\\s*(?:(?:what|which)\\s+(?:(?:kinds?|types?|sorts?)\\s+of\\s+)?(?:(?!${AUX}\\b)[\\p{L}\\p{N}'’/-]+\\s+){0,2}?${WORK}\\b|(?:what|which)\\b.*\\bfavou?rite\\s+(?:[\\p{L}'’-]+\\s+)?${WORK}\\b)`,
  "iu",
);

/** The answer kind a question asks for; null for every other question. */
export function answerKind(question: string): AnswerKind | null {
  if (WHEN_RE.test(question)) return PLAN_RE.test(question) ? "plan" : "time";
  if (AMOUNT_RE.test(question)) return "amount";
  if (PLACE_RE.test(question)) return "place";
  if (TITLE_RE.test(question)) return "title";
  return null;
}

const MONTH = "jan(?:uary)?|feb(?:ruary)?|march|apr(?:il)?|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?";
const WEEKDAY = "monday|tuesday|wednesday|thursday|friday|saturday|sunday";
const TIME_RE = new RegExp(
  `\\b(?:yesterday|today|tonight|tomorrow|recently|ago|weekend|the other day|(?:last|next|this|past) (?:week|month|year|night|morning|evening|afternoon|summer|spring|fall|autumn|winter|${WEEKDAY}|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)|${WEEKDAY}|${MONTH}|(?:19|20)\\d{2}|\\d{1,2}(?:st|nd|rd|th)|(?:\\d+|a few|few|a couple of|couple of|several|two|three|four|five) (?:years?|months?|weeks?|days?))\\b`,
  "iu",
);
const FUTURE_RE = new RegExp(
  `\\b(?:tomorrow|tonight|soon|later|upcoming|(?:next|this) (?:week|weekend|month|year|time|summer|spring|fall|autumn|winter|${WEEKDAY})|on (?:${WEEKDAY})|in (?:a|an|one|two|three|four|few|a few|a couple of) (?:days?|weeks?|months?))\\b`,
  "iu",
);
const NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|hundred|dozen|once|twice|several|few|couple";
const AMOUNT_RE_TEXT = new RegExp(`\\b(?:\\d+|${NUMBER_WORDS})\\b|\\b(?:daily|weekly|monthly|yearly|every)\\b`, "iu");

// A capitalised name or an acronym after a word of place or motion ("a trip to Rome", "lives in
// Boston", "back from the UK"), or a country, state or city the category lexicon knows, capitalised
// anywhere ("my home country, Sweden"); case matters here, so this one reads the text as written.
const PLACE_RE_TEXT = /\b(?:to|in|at|from|near|around|visit|visited|visiting)\s+(?:the\s+)?\p{Lu}(?:\p{Ll}+|\p{Lu}+\b)/u;

// A title as written: quoted, or two or more capitalised words in a row ("Game of Thrones"), not
// counting a greeting or an interjection in front of a name ("Hey Joanna", "Thanks Nate").
const QUOTED_RE = /["“][^"”]{2,}["”]/u;
const CAPS_RUN_RE = /\p{Lu}[\p{L}'’]*(?:\s+(?:(?:of|the|and|in|on|a|to|for)\s+)?\p{Lu}[\p{L}'’]*)+/gu;
const NOT_TITLE = new Set(
  "hey hi hello thanks thank wow yeah yes no oh ok okay sure great nice cool awesome good dear so and but i i'm i've i'll i'd it it's that this my we our you your haha omg congrats congratulations".split(" "),
);

function holdsTitle(content: string): boolean {
  if (QUOTED_RE.test(content)) return true;
  for (const m of content.matchAll(CAPS_RUN_RE)) {
    const words = m[0].split(/\s+/).filter((w) => /^\p{Lu}/u.test(w) && !NOT_TITLE.has(w.toLowerCase()));
    if (words.length >= 2) return true;
  }
  return false;
}

/** Whether a memory's text holds an answer of this kind. */
export function holdsAnswer(kind: AnswerKind, content: string): boolean {
  if (kind === "time") return TIME_RE.test(content);
  if (kind === "plan") return FUTURE_RE.test(content);
  if (kind === "amount") return AMOUNT_RE_TEXT.test(content);
  if (kind === "title") return holdsTitle(content);
  return PLACE_RE_TEXT.test(content) || namesKnownPlace(content);
}

const CAP_WORD_RE = /\b\p{Lu}\p{Ll}+\b/gu;
/** A capitalised word that is a known country, state or city ("my home country, Sweden"). */
function namesKnownPlace(content: string): boolean {
  for (const m of content.matchAll(CAP_WORD_RE)) if (PLACE_NAMES.has(m[0].toLowerCase())) return true;
  return false;
}

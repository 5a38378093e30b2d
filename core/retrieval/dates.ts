// Dates a question asks about ("in May 2022", "on 1 May, 2022", "last week"), as time windows over
// the date a memory is about (its valid_from, else when it was written). Something done "last
// week" is usually written down a little after it happened, so each window reaches past its end by
// a grace period.
// Pure: `now` comes from the caller's clock.

const DAY = 86_400_000;
/** how long after the asked-about period a memory written about it may still be dated */
export const DATE_GRACE_DAYS = 14;

const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
const MONTH_RE = `(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)`;
const DAY_RE = `(\\d{1,2})(?:st|nd|rd|th)?`;
const YEAR_RE = `((?:19|20)\\d{2})`;

export interface DateWindow {
  from: number;
  to: number;
}

function monthIndex(word: string): number {
  const w = word.toLowerCase();
  return MONTHS.findIndex((m) => m.startsWith(w.slice(0, 3)));
}

function dayWindow(y: number, m: number, d: number): DateWindow | null {
  if (d < 1 || d > 31) return null;
  const from = Date.UTC(y, m, d);
  return { from: from - DAY, to: from + (DATE_GRACE_DAYS + 1) * DAY };
}

function monthWindow(y: number, m: number): DateWindow {
  return { from: Date.UTC(y, m, 1), to: Date.UTC(y, m + 1, 1) + DATE_GRACE_DAYS * DAY };
}

/**
 * The windows a query names. A month without a year ("in May") is taken in the year of `now` and
 * the year before (a person asking in January about "December" means last year's). A lone year is
 * too broad to help and is ignored. Relative phrases are measured back from `now`.
 */
export function queryDateWindows(text: string, now: number): DateWindow[] {
  const t = text.toLowerCase();
  const out: DateWindow[] = [];
  const taken: [number, number][] = [];
  const free = (i: number, n: number) => !taken.some(([a, b]) => i < b && i + n > a);
  const take = (re: RegExp, f: (m: RegExpExecArray) => DateWindow | DateWindow[] | null) => {
    for (const m of t.matchAll(re)) {
      if (!free(m.index, m[0].length)) continue;
      const w = f(m as RegExpExecArray);
      if (w === null) continue;
      taken.push([m.index, m.index + m[0].length]);
      out.push(...(Array.isArray(w) ? w : [w]));
    }
  };
  const b = (s: string) => new RegExp(`\\b${s}\\b`, "g");
  // "as of December 2023", "by July 10, 2022", "until May": a running total up to that date, not
  // something that happened in it (the answer is spread over everything said before), so these
  // name no window; taken first so the forms below do not read the date on its own.
  const upTo = `(?:as of|by|until|till|up (?:un)?to),? (?:the end of )?`;
  const anyDate = `(?:${DAY_RE}(?: of)? ${MONTH_RE},? ${YEAR_RE}|${MONTH_RE} ${DAY_RE},? ${YEAR_RE}|${MONTH_RE},?(?: of)? ${YEAR_RE}|(?:19|20)\\d{2}-\\d{2}-\\d{2}|${MONTH_RE})`;
  take(b(`${upTo}${anyDate}`), () => []);
  // 1 May 2022, 1 May, 2022, 1st of May 2022
  take(b(`${DAY_RE}(?: of)? ${MONTH_RE},? ${YEAR_RE}`), (m) => dayWindow(Number(m[3]), monthIndex(m[2]!), Number(m[1])));
  // May 1, 2022
  take(b(`${MONTH_RE} ${DAY_RE},? ${YEAR_RE}`), (m) => dayWindow(Number(m[3]), monthIndex(m[1]!), Number(m[2])));
  // 2022-05-01
  take(/\b((?:19|20)\d{2})-(\d{2})-(\d{2})\b/g, (m) => dayWindow(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  // May 2022, May of 2022
  take(b(`${MONTH_RE},?(?: of)? ${YEAR_RE}`), (m) => monthWindow(Number(m[2]), monthIndex(m[1]!)));
  // "in May", "during March": a month word needs a preposition (the verb "may", "march" and names stay out)
  const year = new Date(now).getUTCFullYear();
  take(b(`(?:in|during|since|early|late|mid|of|last) ${MONTH_RE}`), (m) => {
    const mi = monthIndex(m[1]!);
    return [monthWindow(year, mi), monthWindow(year - 1, mi)];
  });
  const rel: [RegExp, number, number][] = [
    [b("today"), 1, 0],
    [b("yesterday"), 2, 0],
    [b("(?:this|last|past) week"), 14, 0],
    [b("(?:this|last|past) month"), 62, 0],
    [b("(?:this|last|past) year"), 730, 0],
  ];
  for (const [re, back] of rel) take(re, () => ({ from: now - back * DAY, to: now + DAY }));
  return out;
}

/**
 * Dated pass: a question that names a period also runs its word query over the memories dated
 * inside it, and those join the cue pool at their own word score. The date cue only re-orders the
 * pool, and a memory from that month that shares only a name with the question ("Where did Joanna
 * travel in July 2022?" -> "Joanna: I went to Woodhaven…") ranks below the pool's 40 best from
 * every other month. LoCoMo dev, R@5/10/25/50: tune unchanged at R@5-25 (R@50 +0.2), holdout
 * +0.0/+0.2/+0.1/+0.3. As deep as the cue pool.
 */
export const DATED_POOL = 40;

/** Whether a date falls in any of the windows. */
export function inWindows(at: number | null, windows: readonly DateWindow[]): boolean {
  if (at === null) return false;
  return windows.some((w) => at >= w.from && at < w.to);
}

/**
 * A period's memories as listed below the word hits: newest first by the date they are about
 * (else when they were written), ties by the later row, at most `n`, all at rank 0 (below every
 * word hit on either store's scale). PostgreSQL hands bigint columns over as strings.
 */
export function newestInPeriod<R extends { rowid: number | string; valid_from: number | string | null; created_at: number | string }>(
  rows: Iterable<R>,
  n: number,
): { row: R; rank: number }[] {
  const dateOf = (r: R) => Number(r.valid_from ?? r.created_at);
  return [...rows]
    .sort((a, b) => dateOf(b) - dateOf(a) || Number(b.rowid) - Number(a.rowid))
    .slice(0, n)
    .map((row) => ({ row, rank: 0 }));
}

/**
 * A date as the words a question would use for it ("4 may 2023"), for the word index's context
 * column: "when" questions and ones naming a day find the memory by its words. Empty for no date.
 */
export function dateWords(ms: number | string | null): string {
  if (ms === null) return "";
  const d = new Date(Number(ms));
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

// ISO 8601 / RFC 3339 times as people and exports write them. Date.parse alone is not enough:
// it rolls an impossible day into the next month ("2027-02-30" is 2 March) and takes many
// non-ISO forms ("Feb 30 2027", "2/30/2027") with the same rollover, so an expiry typed with a
// wrong day was stored as a different date without a word.

const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?(?:[Zz]|[+-](\d{2})(?::?(\d{2}))?)?)?$/;

/** 0000-01-01 and 9999-12-31T23:59:59.999Z: the four-digit years every stored and printed time has */
export const EARLIEST_TIME = Date.parse("0000-01-01T00:00:00Z");
export const LATEST_TIME = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * A stored time brought inside those years. A row written before the bounds were checked (an
 * expiry of "99999999d") was past what Date can print, and every view showing it failed.
 */
export function storedTime(ms: number | null): number | null {
  if (ms === null) return null;
  return Math.min(LATEST_TIME, Math.max(EARLIEST_TIME, ms));
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Epoch milliseconds of an ISO 8601 date ("2027-01-31", read as UTC midnight) or date-time
 * ("2027-01-31T12:00:00Z", "…+02:00", "…+02"; without an offset, local time, as Date.parse reads it);
 * NaN for anything else, including a day the month does not have or an hour past 23.
 */
export function parseIsoTime(value: string): number {
  const m = ISO_RE.exec(value.trim());
  if (!m) return Number.NaN;
  const [, y, mo, d, h, mi, s, oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  if (month < 1 || month > 12) return Number.NaN;
  const day = Number(d);
  if (day < 1 || day > daysIn(year, month)) return Number.NaN;
  if (h !== undefined && (Number(h) > 23 || Number(mi) > 59)) return Number.NaN;
  if (s !== undefined && Number(s) > 59) return Number.NaN;
  if (oh !== undefined && (Number(oh) > 23 || Number(om) > 59)) return Number.NaN;
  // Date.parse wants "T" and a colon in the offset; the fields are checked above
  const normal = value
    .trim()
    .replace(/^(\d{4}-\d{2}-\d{2}) /, "$1T")
    .replace(/(:\d{2}),(\d)/, "$1.$2")
    .replace(/([+-]\d{2})(\d{2})$/, "$1:$2")
    // an offset of whole hours ("+01", which ISO 8601 allows) is one Date.parse does not read
    .replace(/([Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?[+-]\d{2})$/, "$1:00");
  return Date.parse(normal);
}

/**
 * Below this magnitude an epoch number is taken for seconds: as milliseconds it is a moment in
 * 1967–1973, which no memory is about, while as seconds it spans the years 1800 to 5138 (every
 * Unix timestamp a person or another tool writes). Read as milliseconds, 1700000000 (November
 * 2023) was stored as 20 January 1970 without a word.
 */
export const SECONDS_BELOW = 100_000_000_000;

/**
 * What is wrong with a number given as epoch milliseconds, or null when it is a time of the years
 * 0000 to 9999. The message says what to send instead and has no field name (the caller adds it).
 */
export function epochMillisProblem(value: number): string | null {
  if (!Number.isFinite(value)) return `${value} is not a time; give epoch milliseconds or an ISO 8601 string such as "2024-03-12T09:30:00Z"`;
  if (Math.abs(value) < SECONDS_BELOW) {
    const asSeconds = value * 1000;
    const iso = asSeconds >= EARLIEST_TIME && asSeconds <= LATEST_TIME ? new Date(asSeconds).toISOString().replace(".000Z", "Z") : null;
    return (
      `${value} looks like seconds since 1970, not milliseconds (as milliseconds it is ${new Date(value).toISOString().slice(0, 10)}); ` +
      `send epoch milliseconds${iso ? ` (${value * 1000})` : ""} or an ISO 8601 string${iso ? ` such as "${iso}"` : ""}`
    );
  }
  if (value < EARLIEST_TIME || value > LATEST_TIME) return `${value} is outside the years 0 to 9999; give an ISO 8601 date or epoch milliseconds`;
  return null;
}

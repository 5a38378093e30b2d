import { describe, expect, it } from "vitest";
import { epochMillisProblem, parseIsoTime, SECONDS_BELOW } from "../../core/timestamps.js";

describe("parseIsoTime", () => {
  it("reads ISO 8601 dates as UTC and date-times with their offset", () => {
    expect(parseIsoTime("2027-01-31")).toBe(Date.UTC(2027, 0, 31));
    expect(parseIsoTime(" 2028-02-29 ")).toBe(Date.UTC(2028, 1, 29));
    expect(parseIsoTime("2027-01-31T12:00:00Z")).toBe(Date.UTC(2027, 0, 31, 12));
    expect(parseIsoTime("2027-01-31t12:00:00.250z")).toBe(Date.UTC(2027, 0, 31, 12, 0, 0, 250));
    expect(parseIsoTime("2027-01-31T12:00:00,5Z")).toBe(Date.UTC(2027, 0, 31, 12, 0, 0, 500));
    expect(parseIsoTime("2027-01-31 12:00+02:00")).toBe(Date.UTC(2027, 0, 31, 10));
    expect(parseIsoTime("2027-01-31T12:00:00-0530")).toBe(Date.UTC(2027, 0, 31, 17, 30));
    // an offset of whole hours, as ISO 8601 allows (it was refused as "not a date the calendar has")
    expect(parseIsoTime("2027-01-31T12:00:00+02")).toBe(Date.UTC(2027, 0, 31, 10));
    expect(parseIsoTime("2027-01-31t12:00-05")).toBe(Date.UTC(2027, 0, 31, 17));
    expect(parseIsoTime("2027-01-31 12:00:00.5+01")).toBe(Date.UTC(2027, 0, 31, 11, 0, 0, 500));
    // no offset: local time, as Date.parse reads it
    expect(parseIsoTime("2027-01-31T12:00")).toBe(new Date(2027, 0, 31, 12).getTime());
  });

  it("refuses a day, month, hour or minute the calendar does not have (Date.parse rolls them over)", () => {
    for (const v of ["2027-02-29", "2027-02-30", "2027-04-31", "2027-06-31T00:00:00Z", "2027-00-10", "2027-13-01", "2027-01-00", "2027-01-31T24:00", "2027-01-31T23:60", "2027-01-31T23:59:60Z", "2027-01-31T12:00+24:00", "2027-01-31T12:00+24"]) {
      expect(parseIsoTime(v), v).toBeNaN();
    }
  });

  it("refuses forms that are not ISO 8601, which Date.parse guesses at", () => {
    for (const v of ["Feb 3 2027", "2/3/2027", "2027/02/03", "2027-2-3", "2027", "tomorrow", "", "1801396800000"]) {
      expect(parseIsoTime(v), v).toBeNaN();
    }
  });
});

describe("epochMillisProblem", () => {
  it("takes epoch milliseconds of the years 0 to 9999 and refuses Unix seconds, naming the milliseconds to send", () => {
    for (const ms of [Date.UTC(2023, 10, 14), Date.UTC(1950, 0, 1), SECONDS_BELOW, -SECONDS_BELOW, Date.UTC(9999, 11, 31)]) expect(epochMillisProblem(ms), String(ms)).toBeNull();
    expect(epochMillisProblem(1_700_000_000)).toContain("looks like seconds since 1970, not milliseconds (as milliseconds it is 1970-01-20); send epoch milliseconds (1700000000000)");
    expect(epochMillisProblem(0)).toContain("looks like seconds");
    expect(epochMillisProblem(SECONDS_BELOW - 1)).toContain("looks like seconds");
    expect(epochMillisProblem(9e15)).toBe("9000000000000000 is outside the years 0 to 9999; give an ISO 8601 date or epoch milliseconds");
    expect(epochMillisProblem(Number.NaN)).toContain("is not a time");
  });
});

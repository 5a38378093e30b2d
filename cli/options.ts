// Parsers for numeric command-line options and user ids. commander hands option values over as
// strings; a value that is not a number (or is out of range) stops the command with commander's
// own "option '--limit <n>' argument 'abc' is invalid" line instead of reaching a query as NaN.
import { InvalidArgumentError } from "commander";

/** A whole number in [min, max] (max unbounded when omitted). */
export function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER): (v: string) => number {
  return (v: string) => {
    const n = Number(v.trim());
    if (!/^[+-]?\d+$/.test(v.trim()) || n < min || n > max) {
      throw new InvalidArgumentError(max === Number.MAX_SAFE_INTEGER ? `expected a whole number of at least ${min}` : `expected a whole number from ${min} to ${max}`);
    }
    return n;
  };
}

/** A finite number of at least `min`. */
export function numberAtLeast(min: number): (v: string) => number {
  return (v: string) => {
    const n = Number(v.trim());
    if (v.trim() === "" || !Number.isFinite(n) || n < min) throw new InvalidArgumentError(`expected a number of at least ${min}`);
    return n;
  };
}

/** A finite number in [min, max]. */
export function numberBetween(min: number, max: number): (v: string) => number {
  return (v: string) => {
    const n = Number(v.trim());
    if (v.trim() === "" || !Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`expected a number from ${min} to ${max}`);
    return n;
  };
}

/** A TCP port; 0 lets the system pick a free one. */
export const port = wholeNumber(0, 65_535);

/** `--user`: a user id, without surrounding spaces; a blank one stored memories for nobody. */
export function userId(v: string): string {
  const id = v.trim();
  if (id === "" || id.includes("\u0000")) throw new InvalidArgumentError("expected a user id (not blank), e.g. --user alice");
  return id;
}

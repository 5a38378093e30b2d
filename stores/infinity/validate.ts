// Argument checks every writable store applies before touching data, so the in-memory, SQLite and
// later PostgreSQL stores accept and reject exactly the same inputs (Rust's types did this there).
import { InfinityStoreError } from "./errors.js";
import { InfinityMessage, UserChoice } from "./messages.js";

/** Validate a whole batch first, so a bad entry leaves nothing half-appended. */
export function checkMessages(
  threadId: string,
  entries: ReadonlyArray<readonly [unknown, unknown]>,
): [InfinityMessage, string][] {
  return entries.map(([message, id], i) => {
    if (typeof id !== "string") {
      throw new InfinityStoreError("invalid_message", `message ${i} for thread ${threadId} has no string id`);
    }
    const parsed = InfinityMessage.safeParse(message);
    if (!parsed.success) {
      throw new InfinityStoreError(
        "invalid_message",
        `message ${i} (${id}) for thread ${threadId} is not an InfinityMessage: ${parsed.error.issues[0]?.message ?? "invalid"}`,
      );
    }
    return [parsed.data, id];
  });
}

export function checkUserChoice(threadId: string, choice: unknown): UserChoice {
  const parsed = UserChoice.safeParse(choice);
  if (!parsed.success) {
    throw new InfinityStoreError("invalid_message", `user choice for thread ${threadId} is malformed`);
  }
  return parsed.data;
}

/** Orders and cutoffs are Rust `usize` / `i64` message counts. */
export function checkOrder(name: string, n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new InfinityStoreError("invalid_argument", `${name} must be a non-negative integer, got ${n}`);
  }
  return n;
}

export function checkOptionalOrder(name: string, n: number | null | undefined): number | null {
  return n === null || n === undefined ? null : checkOrder(name, n);
}

/**
 * Metadata is a JSON value; pass it through JSON once so every store returns the same thing
 * (`undefined` becomes null, Dates become strings) whatever it stores internally.
 */
export function jsonValue(v: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(v ?? null);
  } catch (e) {
    throw new InfinityStoreError("invalid_argument", `metadata is not JSON: ${(e as Error).message}`);
  }
  return text ?? "null";
}

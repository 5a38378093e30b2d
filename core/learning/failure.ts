// What the learning side keeps about a failure in its rows (queue, dropped threads, events): the
// error's class and code, and the file and position where the error says so, never its message.
// A parser's message quotes its input (Node's JSON.parse: `Unexpected token …, "…" is not valid
// JSON`; a model's refused answer; a database's `invalid input syntax: "…"`), so a conversation's
// text ended up in rows that no forget reaches. The whole message goes to the log only.

const NAME = /^[A-Za-z][A-Za-z0-9]{0,40}$/;
/** codes are identifiers (`corrupt`, `SQLITE_BUSY`, a SQLSTATE): anything else is not kept */
const CODE = /^[A-Za-z0-9_.-]{1,40}$/;

/** what the schema step that brought this in (SQLite 27, PostgreSQL 112) left of a text an older version stored */
export const OLD_ERROR = "(not kept: written by an older version)";

const NOT_AN_ERROR = "a thrown value that is not an Error";

/** failureText's shape: name, code, `in FILE`, `at position N` (a file path holds no quote or line break) */
const FAILURE = /^[A-Za-z][A-Za-z0-9]{0,40}( [A-Za-z0-9_.-]{1,40})?( in [^"\n]+?)?( at position \d+)?$/;

/**
 * Whether `text` is what this version keeps (failureText, or OLD_ERROR), not a message an older
 * version stored whole: a later clean of old texts leaves these as they are.
 */
export function isKeptFailure(text: string): boolean {
  return text === OLD_ERROR || text === NOT_AN_ERROR || FAILURE.test(text);
}

export function failureText(e: unknown): string {
  if (!(e instanceof Error)) return NOT_AN_ERROR;
  const o = e as Error & { code?: unknown; file?: unknown; position?: unknown };
  const parts = [NAME.test(o.name) ? o.name : "Error"];
  if (typeof o.code === "string" && CODE.test(o.code)) parts.push(o.code);
  else if (typeof o.code === "number" && Number.isInteger(o.code)) parts.push(String(o.code));
  if (typeof o.file === "string" && o.file.length > 0) parts.push(`in ${o.file}`);
  if (typeof o.position === "number" && Number.isInteger(o.position)) parts.push(`at position ${o.position}`);
  return parts.join(" ");
}

// Catalog step 113 under the DSQL profile: the error texts older versions kept in the learning
// queue, dropped threads and events (a parser's message quotes the conversation) are cleared, as
// step 112 does on PostgreSQL in one statement each. Aurora DSQL changes at most 3,000 rows in a
// transaction, so here it goes in batches: rows are read in key order, a batch at a time, and those
// holding an old text are rewritten in one transaction (only while they still hold it: a worker's
// newer write wins). What this version writes (core/learning/failure.ts) is left as it is.
import type pg from "pg";
import { OLD_ERROR, isKeptFailure } from "../../core/learning/failure.js";
import { asPgSystem, type PgDb } from "./pool.js";

/** rows read and rewritten per transaction: well under DSQL's 3,000 modified rows */
export const OLD_ERROR_BATCH = 500;

/** Clear the old error texts of the three tables, `batch` rows at a time. */
export async function clearOldErrorsDsql(db: PgDb, batch = OLD_ERROR_BATCH): Promise<void> {
  // the queue is not user-scoped, but a row-level-security run reads every user's rows this way
  await asPgSystem(async () => {
    await keyed(db, batch, "learning_queue", "last_error", () => null);
    await keyed(db, batch, "learning_dropped", "reason", () => OLD_ERROR);
    await events(db, batch);
  });
}

/** learning_queue.last_error and learning_dropped.reason: keyed by (source, thread_id). */
async function keyed(db: PgDb, batch: number, table: "learning_queue" | "learning_dropped", column: "last_error" | "reason", cleared: () => string | null): Promise<void> {
  let after: [string, string] = ["", ""];
  for (;;) {
    const rows = (
      await db.pool.query<{ source: string; thread_id: string; text: string | null }>(
        `SELECT source, thread_id, ${column} AS text FROM ${table} WHERE source > $1 OR (source = $1 AND thread_id > $2) ORDER BY source, thread_id LIMIT $3`,
        [after[0], after[1], batch],
      )
    ).rows;
    if (rows.length === 0) return;
    after = [rows.at(-1)!.source, rows.at(-1)!.thread_id];
    const old = rows.filter((r) => r.text !== null && !isKeptFailure(r.text));
    if (old.length > 0) {
      await db.tx(async (c) => {
        for (const r of old) await c.query(`UPDATE ${table} SET ${column} = $1 WHERE source = $2 AND thread_id = $3 AND ${column} = $4`, [cleared(), r.source, r.thread_id, r.text]);
      });
    }
  }
}

/** learning_events.detail: every `"error":"…"` in the JSON text, as step 112's regexp_replace. */
async function events(db: PgDb, batch: number): Promise<void> {
  let after = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const rows = (
      await db.pool.query<{ id: string; detail: string }>(`SELECT id, detail FROM learning_events WHERE id > $1 ORDER BY id LIMIT $2`, [after, batch])
    ).rows;
    if (rows.length === 0) return;
    after = Number(rows.at(-1)!.id);
    const changed = rows.map((r) => ({ ...r, next: clearedDetail(r.detail) })).filter((r) => r.next !== r.detail);
    if (changed.length > 0) {
      await db.tx(async (c: pg.PoolClient) => {
        for (const r of changed) await c.query(`UPDATE learning_events SET detail = $1 WHERE id = $2 AND detail = $3`, [r.next, r.id, r.detail]);
      });
    }
  }
}

const ERROR_FIELD = /"error":"((?:[^"\\]|\\.)*)"/g;

/** `detail` with each error text that is not one this version writes replaced by OLD_ERROR. */
export function clearedDetail(detail: string): string {
  return detail.replace(ERROR_FIELD, (whole, inner: string) => {
    let text: unknown;
    try {
      text = JSON.parse(`"${inner}"`);
    } catch {
      text = null; // not a JSON string: cleared
    }
    return typeof text === "string" && isKeptFailure(text) ? whole : `"error":${JSON.stringify(OLD_ERROR)}`;
  });
}

// VACUUM (ANALYZE) after a bulk write. Fresh rows have no statistics and no page is marked
// all-visible, so until autovacuum gets there the first searches plan from guesses and read a heap
// row for every match the word planner counts (PostgreSQL 15, 100k memories: search p95 46 ms
// before, 23 ms after). Aurora DSQL has no VACUUM; a role that may not vacuum the tables (not their
// owner) leaves them to autovacuum. Either way the bulk write stands.
import type { PgDb } from "./pool.js";

/** The memory side's tables that a bulk write of memories fills. */
export const MEMORY_WRITE_TABLES = ["memories", "memory_words", "memory_tags", "memory_sources", "memory_source_messages", "audit_log", "edges"] as const;

/**
 * VACUUM (ANALYZE) the named tables (default: the whole database). Returns what was done:
 * "vacuum analyze", or "skipped: <why>" when the server or the role cannot.
 */
export async function vacuumAnalyze(db: PgDb, tables?: readonly string[]): Promise<string> {
  if (db.serverIsDsql) return "skipped: Aurora DSQL maintains its own statistics";
  try {
    // VACUUM passes over a table its role may not vacuum with only a warning: ask first (the
    // table's owner, the database's owner or a superuser may), so the answer says what happened.
    // Tables this schema lacks (the DSQL profile has no word index) are left out.
    const rows = (
      await db.pool.query<{ relname: string; allowed: boolean }>(
        `SELECT c.relname, pg_has_role(c.relowner, 'USAGE')
                OR pg_has_role((SELECT datdba FROM pg_database WHERE datname = current_database()), 'USAGE') AS allowed
         FROM pg_class c WHERE c.oid = ANY(SELECT to_regclass(t) FROM unnest($1::text[]) t)
         ORDER BY c.relname`,
        [[...(tables ?? MEMORY_WRITE_TABLES)]],
      )
    ).rows;
    const denied = rows.filter((r) => !r.allowed).map((r) => r.relname);
    if (denied.length > 0) return `skipped: this role may not vacuum ${denied.join(", ")} (not their owner); autovacuum will analyse the tables later`;
    if (tables && rows.length === 0) return "skipped: none of the tables exists";
    // Its own statement outside any transaction (VACUUM refuses to run inside one); in the whole
    // database, tables of other owners are passed over with a notice.
    await db.pool.query(tables ? `VACUUM (ANALYZE) ${tables.filter((t) => rows.some((r) => r.relname === t)).join(", ")}` : `VACUUM (ANALYZE)`);
    return "vacuum analyze";
  } catch (e) {
    return `skipped: ${(e as Error).message}; autovacuum will analyse the tables later`;
  }
}

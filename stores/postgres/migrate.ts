// Versioned schema migrations for PostgreSQL. Applied versions are rows of schema_migrations;
// the whole run holds a session advisory lock, so several servers starting at once migrate once
// (the others wait, then find nothing left to do). Under the DSQL profile, which has neither
// advisory locks nor multi-statement DDL transactions, every statement is its own idempotent
// transaction (IF NOT EXISTS) retried on optimistic-concurrency conflicts.
import type pg from "pg";
import { StoreError } from "../traits.js";
import { isRetryable, toStoreError, type PgDb } from "./pool.js";

export interface PgMigration {
  version: number;
  name: string;
  /** the step for the "postgres" profile: one transaction, may hold several statements */
  sql: string;
  /** the step under the "dsql" profile, statements separated by `;` at line ends; none: the step cannot run there */
  dsql?: string;
  /**
   * Data work in JavaScript after `sql`, in the same transaction ("postgres" profile): rows
   * rewritten exactly as the stores now write them, where SQL cannot say it (Unicode categories).
   */
  up?: (c: pg.PoolClient) => Promise<void>;
  /**
   * Data work under the "dsql" profile, after `dsql` and before the step is recorded: in
   * transactions of at most a few hundred rows (DSQL's limit is 3,000), converging when run again
   * (a start stopped part-way runs the step again).
   */
  dsqlUp?: (db: PgDb) => Promise<void>;
}

/** any constant: the advisory lock key of migration runs ("imem" in ASCII) */
const LOCK_KEY = 0x696d656d;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The applied schema versions, or null when the database has no `schema_migrations` yet. */
export async function appliedVersionsPg(q: Pick<pg.PoolClient, "query">): Promise<Set<number> | null> {
  const have = (await q.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`)).rows[0]?.t != null;
  if (!have) return null;
  return new Set((await q.query<{ version: number }>(`SELECT version FROM schema_migrations`)).rows.map((r) => r.version));
}

/** Apply every step above the stored version (up to `target`); returns the versions applied. */
export async function migratePg(db: PgDb, steps: PgMigration[], opts: { target?: number } = {}): Promise<number[]> {
  const sorted = [...steps].sort((a, b) => a.version - b.version);
  const seen = new Set<number>();
  for (const s of sorted) {
    if (seen.has(s.version)) throw new StoreError("schema", `two PostgreSQL migrations share version ${s.version}`);
    seen.add(s.version);
  }
  const latest = sorted.at(-1)?.version ?? 0;
  const goal = opts.target ?? latest;
  try {
    return db.profile === "dsql" ? await migrateDsql(db, sorted, latest, goal) : await migrateLocked(db, sorted, latest, goal);
  } catch (e) {
    throw toStoreError(e);
  }
}

function tooNew(current: number, latest: number): StoreError {
  return new StoreError(
    "schema",
    `database schema version ${current} is newer than this build understands (${latest}); upgrade infinity-memory`,
  );
}

/**
 * The refusal for a database a newer build migrated, or null. Compared per side (memory 1–99,
 * catalog 100–199): the highest version overall is the catalog's, so a newer build's memory step
 * (12 beside catalog 106) passed a check against it, and this build ran on a schema it did not know.
 */
function newerSchema(done: Set<number>, steps: PgMigration[], latest: number): StoreError | null {
  for (const v of [...done].sort((a, b) => a - b)) {
    const side = steps.filter((s) => Math.floor(s.version / 100) === Math.floor(v / 100)).map((s) => s.version);
    const known = side.length > 0 ? Math.max(...side) : latest;
    if (v > known) return tooNew(v, known);
  }
  return null;
}

async function migrateLocked(db: PgDb, steps: PgMigration[], latest: number, goal: number): Promise<number[]> {
  const c = await db.pool.connect();
  const applied: number[] = [];
  try {
    await c.query(`SELECT pg_advisory_lock($1)`, [LOCK_KEY]);
    try {
      // Read before writing: a server that runs as a role with row grants only (no CREATE on the
      // schema, owner of nothing) opens a schema that is up to date without any DDL.
      const found = await appliedVersionsPg(c);
      const done = found ?? new Set<number>();
      const current = Math.max(0, ...done);
      const newer = newerSchema(done, steps, latest);
      if (newer) throw newer;
      const pending = steps.filter((s) => !done.has(s.version) && s.version <= goal);
      if (pending.length === 0) return applied;
      try {
        if (found === null) {
          await c.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
            version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`);
        }
        for (const s of pending) {
          await c.query("BEGIN");
          try {
            await c.query(s.sql);
            if (s.up) await s.up(c);
            await c.query(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`, [s.version, s.name, Date.now()]);
            await c.query("COMMIT");
          } catch (e) {
            await c.query("ROLLBACK").catch(() => {});
            if (isPermissionDenied(e)) throw e;
            throw new StoreError("schema", `migration ${s.version} (${s.name}) failed: ${(e as Error).message}`);
          }
          applied.push(s.version);
          db.log.info(`postgres: applied migration ${s.version} (${s.name})`);
        }
      } catch (e) {
        if (!isPermissionDenied(e)) throw e;
        throw await mayNotUpgrade(c, pending.length - applied.length, Math.max(current, ...applied), goal, e);
      }
    } finally {
      await c.query(`SELECT pg_advisory_unlock($1)`, [LOCK_KEY]).catch(() => {});
    }
  } finally {
    c.release();
  }
  return applied;
}

/** The error for a role that may not apply the steps a start needs: who it is and what to run. */
async function mayNotUpgrade(q: Pick<pg.PoolClient, "query">, left: number, at: number, goal: number, cause: unknown): Promise<StoreError> {
  const role = (await q.query<{ u: string }>(`SELECT current_user AS u`).catch(() => null))?.rows[0]?.u ?? "this role";
  return new StoreError(
    "schema",
    `the database schema needs ${left} migration(s) (at ${at}, this build needs ${goal}) and role ${role} may not change it (${(cause as Error).message}); ` +
      `upgrade it once as the tables' owner: infinity-memory db upgrade --db <owner's URL> --grant ${role}`,
  );
}

/** insufficient_privilege: the role may not create or change the object */
export function isPermissionDenied(e: unknown): boolean {
  return (e as { code?: string } | null)?.code === "42501";
}

/** Statements of a DSQL step, each made idempotent so a rerun after a partial run converges. */
export function dsqlStatements(sql: string): string[] {
  return sql
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.replace(/^\s*--.*$/gm, "").trim())
    .filter((s) => s.length > 0)
    .map((s) =>
      s
        .replace(/^CREATE TABLE (?!IF NOT EXISTS)/i, "CREATE TABLE IF NOT EXISTS ")
        .replace(/^CREATE (UNIQUE )?INDEX (ASYNC )?(?!IF NOT EXISTS)/i, (_m, u: string | undefined, a: string | undefined) => `CREATE ${u ?? ""}INDEX ${a ?? ""}IF NOT EXISTS `),
    );
}

async function runRetrying(db: PgDb, sql: string, params: unknown[] = []): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      await db.pool.query(sql, params);
      return;
    } catch (e) {
      if (!isRetryable(e) || i >= 8) throw e;
      await sleep(20 * 2 ** i * Math.random());
    }
  }
}

/** The DSQL profile's applied versions, null without the table; a plain read (no catalog function). */
async function dsqlAppliedVersions(db: PgDb): Promise<Set<number> | null> {
  for (let i = 1; ; i++) {
    try {
      return new Set((await db.pool.query<{ version: number }>(`SELECT version FROM schema_migrations`)).rows.map((r) => r.version));
    } catch (e) {
      if ((e as { code?: string }).code === "42P01") return null;
      if (!isRetryable(e) || i >= 8) throw e;
      await sleep(20 * 2 ** i * Math.random());
    }
  }
}

async function migrateDsql(db: PgDb, steps: PgMigration[], latest: number, goal: number): Promise<number[]> {
  // Read before writing, as on PostgreSQL: a current schema opens with no DDL at all (DSQL runs
  // each DDL statement as its own transaction, and a role without CREATE could not run it).
  const found = await dsqlAppliedVersions(db);
  const done = found ?? new Set<number>();
  const current = Math.max(0, ...done);
  const newer = newerSchema(done, steps, latest);
  if (newer) throw newer;
  const applied: number[] = [];
  if (!steps.some((s) => !done.has(s.version) && s.version <= goal)) return applied;
  if (found === null) {
    await runRetrying(db, `CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`);
  }
  let asyncIndexes = true;
  for (const s of steps) {
    if (done.has(s.version) || s.version > goal) continue;
    if (s.dsql === undefined) {
      throw new StoreError("schema", `migration ${s.version} (${s.name}) has no Aurora DSQL variant; this part of the schema cannot run under profile=dsql yet`);
    }
    for (const st of dsqlStatements(s.dsql)) {
      const plain = st.replace(/^CREATE (UNIQUE )?INDEX ASYNC /i, "CREATE $1INDEX ");
      try {
        try {
          await runRetrying(db, asyncIndexes ? st : plain);
        } catch (e) {
          // Plain PostgreSQL (the profile's local test target) has no CREATE INDEX ASYNC.
          if (!(asyncIndexes && (e as { code?: string }).code === "42601" && plain !== st)) throw e;
          asyncIndexes = false;
          db.log.info("postgres: server has no CREATE INDEX ASYNC (not Aurora DSQL); building DSQL-profile indexes synchronously");
          await runRetrying(db, plain);
        }
      } catch (e) {
        if (isPermissionDenied(e)) {
          const left = steps.filter((x) => !done.has(x.version) && x.version <= goal).length - applied.length;
          throw await mayNotUpgrade(db.pool, left, Math.max(current, ...applied), goal, e);
        }
        throw new StoreError("schema", `migration ${s.version} (${s.name}) failed at: ${(asyncIndexes ? st : plain).slice(0, 120)}: ${(e as Error).message}`);
      }
    }
    if (s.dsqlUp) {
      try {
        await s.dsqlUp(db);
      } catch (e) {
        if (isPermissionDenied(e)) {
          const left = steps.filter((x) => !done.has(x.version) && x.version <= goal).length - applied.length;
          throw await mayNotUpgrade(db.pool, left, Math.max(current, ...applied), goal, e);
        }
        throw new StoreError("schema", `migration ${s.version} (${s.name}) failed in its data work: ${(e as Error).message}`);
      }
    }
    await runRetrying(db, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3) ON CONFLICT (version) DO NOTHING`, [
      s.version,
      s.name,
      Date.now(),
    ]);
    applied.push(s.version);
    db.log.info(`postgres: applied migration ${s.version} (${s.name}) [dsql profile]`);
  }
  return applied;
}

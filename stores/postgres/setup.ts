// Opening a PostgreSQL store: pool → migrations → optional features (pg_trgm, pgvector, detected)
// → row-level security policies when asked. Everything here is idempotent and runs under the
// migration advisory lock, so servers starting together do it once.
import type pg from "pg";
import { isPermissionDenied, migratePg, type PgMigration } from "./migrate.js";
import { PG_MIGRATIONS } from "./migrations.js";
import { PgDb, toStoreError, type PgFeatures, type PgOpenOptions, type Q } from "./pool.js";
import { USER_SCOPED_TABLES } from "./schema-memory.js";
import { StoreError } from "../traits.js";

/** advisory lock key of the optional-feature step (distinct from the migration lock) */
const FEATURE_LOCK = 0x696d6567;

export interface OpenPgOptions extends PgOpenOptions {
  /** stop migrations at this version (tests) */
  targetVersion?: number;
  /** the steps to apply; default every step (memory and catalog) */
  migrations?: PgMigration[];
}

/** Open, migrate and detect features; the returned PgDb is ready for the stores. */
export async function openPg(url: string, opts: OpenPgOptions = {}): Promise<PgDb> {
  const db = PgDb.open(url, opts);
  try {
    await preparePg(db, opts.targetVersion, opts.migrations);
    return db;
  } catch (e) {
    await db.close().catch(() => {});
    throw toStoreError(e);
  }
}

/** Migrate an already opened PgDb and detect its features. */
export async function preparePg(db: PgDb, targetVersion?: number, steps: PgMigration[] = PG_MIGRATIONS): Promise<PgFeatures> {
  // Aurora DSQL keeps its async-index jobs in sys.jobs; plain PostgreSQL has no such relation.
  db.serverIsDsql = (await db.pool.query<{ d: boolean }>(`SELECT to_regclass('sys.jobs') IS NOT NULL AS d`)).rows[0]?.d === true;
  if (db.serverIsDsql && db.profile !== "dsql") {
    throw new StoreError("schema", "this server is Aurora DSQL: add ?profile=dsql to the connection URL");
  }
  await migratePg(db, steps, targetVersion === undefined ? {} : { target: targetVersion });
  db.features = db.profile === "dsql" ? dsqlFeatures() : await withLock(db, (c) => optionalFeatures(db, c));
  for (const r of db.features.reasons) db.log.info(`postgres: ${r}`);
  if (db.rls) await withLock(db, (c) => enableRls(db, c));
  return db.features;
}

function dsqlFeatures(): PgFeatures {
  return {
    trigram: false,
    vector: false,
    reasons: [
      "trigram channel off: the dsql profile has no extensions (pg_trgm); partial words match only through the substring scan",
      "vector channel off: the dsql profile has no pgvector extension",
    ],
  };
}

/** Runs `fn` on one connection holding the feature lock (one connection: works with a pool of 1). */
async function withLock<T>(db: PgDb, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await db.pool.connect();
  try {
    await c.query(`SELECT pg_advisory_lock($1)`, [FEATURE_LOCK]);
    try {
      return await fn(c);
    } finally {
      await c.query(`SELECT pg_advisory_unlock($1)`, [FEATURE_LOCK]).catch(() => {});
    }
  } finally {
    c.release();
  }
}

async function installed(q: Q): Promise<Set<string>> {
  return new Set((await q.query<{ extname: string }>(`SELECT extname FROM pg_extension`)).rows.map((r) => r.extname));
}

async function tryCreateExtension(c: Q, name: string): Promise<string | null> {
  const have = await installed(c);
  if (have.has(name)) return null;
  const avail = await c.query(`SELECT 1 FROM pg_available_extensions WHERE name = $1`, [name]);
  if (avail.rowCount === 0) return `extension ${name} is not installed on this server`;
  try {
    // identifiers cannot be parameters; `name` is one of two constants
    await c.query(`CREATE EXTENSION IF NOT EXISTS ${name === "vector" ? "vector" : "pg_trgm"}`);
    return null;
  } catch (e) {
    return `CREATE EXTENSION ${name} failed (${(e as Error).message}); a superuser can run it once for this database`;
  }
}

/** Whether a table or index of this name exists in the search path. */
async function exists(q: Q, name: string): Promise<boolean> {
  return (await q.query<{ t: string | null }>(`SELECT to_regclass($1)::text AS t`, [name])).rows[0]?.t != null;
}

/**
 * Creates what `sql` creates unless `name` exists already; a role that may not create it gets the
 * reason instead (the channel stays off until the owner runs `db upgrade`).
 */
async function ensure(q: Q, name: string, sql: string): Promise<string | null> {
  if (await exists(q, name)) return null;
  try {
    await q.query(sql);
    return null;
  } catch (e) {
    if (!isPermissionDenied(e)) throw e;
    return `${name} is missing and this role may not create it (${(e as Error).message}); run infinity-memory db upgrade as the tables' owner`;
  }
}

async function optionalFeatures(db: PgDb, c: Q): Promise<PgFeatures> {
  const reasons: string[] = [];
  const trgmWhy =
    (await tryCreateExtension(c, "pg_trgm")) ??
    (await ensure(c, "memories_content_trgm", `CREATE INDEX IF NOT EXISTS memories_content_trgm ON memories USING gin (content gin_trgm_ops)`));
  const vecExtWhy = await tryCreateExtension(c, "vector");
  const vecWhy =
    vecExtWhy === null
      ? ((await ensure(
          c,
          "memory_vectors",
          `CREATE TABLE IF NOT EXISTS memory_vectors (
      rowid bigint PRIMARY KEY REFERENCES memories(rowid) ON DELETE CASCADE,
      user_id text NOT NULL,
      vis_key text NOT NULL,
      embedder text NOT NULL,
      embedding vector NOT NULL)`,
        )) ?? (await ensure(c, "memory_vectors_vis", `CREATE INDEX IF NOT EXISTS memory_vectors_vis ON memory_vectors (vis_key, embedder)`)))
      : `${vecExtWhy}; install pgvector (https://github.com/pgvector/pgvector) and restart to enable it`;
  const trigram = trgmWhy === null;
  const vector = vecWhy === null;
  if (!trigram) reasons.push(`trigram channel off: ${trgmWhy}`);
  if (!vector) reasons.push(`vector channel off: ${vecWhy}`);
  return { trigram, vector, reasons };
}

/**
 * Row-level security on every user-scoped table: a row is visible and writable only when its
 * user_id equals the transaction's `app.user_id`, or the transaction runs as system maintenance.
 * FORCE makes the policies bind the table owner too, when the server connects as the owner; a
 * role with row grants only is bound without it, and finds the owner's policies in place (it may
 * not add them). A superuser still bypasses them, so connect as an ordinary role.
 */
export async function enableRls(db: PgDb, c: Q): Promise<void> {
  // per table: whether it is on, forced, has our policy, and whether this role may alter it
  const state = new Map(
    (
      await c.query<{ relname: string; on: boolean; forced: boolean; policy: boolean; owner: boolean }>(
        `SELECT k.relname, k.relrowsecurity AS on, k.relforcerowsecurity AS forced,
           EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = k.oid AND p.polname = 'imem_user') AS policy,
           pg_has_role(current_user, k.relowner, 'USAGE') AS owner
         FROM pg_class k WHERE k.relnamespace = current_schema()::regnamespace AND k.relkind = 'r'`,
      )
    ).rows.map((r) => [r.relname, r]),
  );
  const rule = `user_id = current_setting('app.user_id', true) OR current_setting('app.system', true) = 'on'`;
  const missing: string[] = [];
  for (const t of USER_SCOPED_TABLES) {
    const st = state.get(t);
    if (!st) continue;
    if (!st.owner) {
      // A role that owns nothing (row grants only) keeps the owner's policies, which bind it
      // without FORCE; it cannot add missing ones.
      if (!(st.on && st.policy)) missing.push(t);
      continue;
    }
    await c.query(`ALTER TABLE ${t} ENABLE ROW LEVEL SECURITY`);
    await c.query(`ALTER TABLE ${t} FORCE ROW LEVEL SECURITY`);
    await c.query(`DROP POLICY IF EXISTS imem_user ON ${t}`);
    await c.query(`CREATE POLICY imem_user ON ${t} USING (${rule}) WITH CHECK (${rule})`);
  }
  if (missing.length > 0) {
    throw new StoreError(
      "schema",
      `rls=1, but ${missing.join(", ")} ${missing.length === 1 ? "has" : "have"} no row-level security policy and this role does not own ${missing.length === 1 ? "it" : "them"}; ` +
        `add the policies once as the tables' owner: infinity-memory db upgrade --db '<owner's URL>?rls=1'`,
    );
  }
  const su = await c.query<{ rolsuper: boolean; rolbypassrls: boolean }>(
    `SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user`,
  );
  if (su.rows[0]?.rolsuper || su.rows[0]?.rolbypassrls) {
    db.log.warn("postgres: rls=1 but the server role is a superuser or has BYPASSRLS, so the policies do not apply; connect as an ordinary role");
  }
}

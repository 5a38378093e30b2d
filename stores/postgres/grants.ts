// Row access for a server role that owns nothing: the schema's owner upgrades it (`db upgrade`)
// and grants a role the rows; servers connect as that role, so a compromised server cannot drop,
// alter or re-police a table (and under rls=1 the policies bind it without FORCE).
import type { Q } from "./pool.js";
import { StoreError } from "../traits.js";

/** A role name as PostgreSQL spells an unquoted identifier (the grant statements quote it). */
export const ROLE_NAME = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

export interface GrantReport {
  role: string;
  schema: string;
  /** tables and sequences the role can now use */
  tables: number;
  sequences: number;
}

const quote = (ident: string) => `"${ident.replace(/"/g, '""')}"`;

/** Refuses a name that is not a role of this cluster (checked before an upgrade changes anything). */
export async function checkRole(q: Q, role: string): Promise<void> {
  if (!ROLE_NAME.test(role)) throw new StoreError("constraint", `--grant: "${role}" is not a role name (letters, digits, _ and $, not starting with a digit)`);
  const found = await q.query(`SELECT 1 FROM pg_roles WHERE rolname = $1`, [role]);
  if (found.rowCount === 0) throw new StoreError("not_found", `--grant: role ${role} does not exist; create it first (CREATE ROLE ${role} LOGIN PASSWORD '…')`);
}

/**
 * Grants `role` USAGE on the current schema, SELECT/INSERT/UPDATE/DELETE on its tables and
 * USAGE/SELECT on its sequences, and the same by default on what this role creates there later
 * (the tables a future upgrade adds). Nothing else: no CREATE, no TRUNCATE, no ownership.
 */
export async function grantServerRole(q: Q, role: string): Promise<GrantReport> {
  await checkRole(q, role);
  const schema = (await q.query<{ s: string }>(`SELECT current_schema() AS s`)).rows[0]!.s;
  const r = quote(role);
  const s = quote(schema);
  await q.query(`GRANT USAGE ON SCHEMA ${s} TO ${r}`);
  await q.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${r}`);
  await q.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${s} TO ${r}`);
  await q.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA ${s} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${r}`);
  await q.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA ${s} GRANT USAGE, SELECT ON SEQUENCES TO ${r}`);
  const count = async (kind: string) =>
    (
      await q.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind = $2`,
        [schema, kind],
      )
    ).rows[0]!.n;
  return { role, schema, tables: await count("r"), sequences: await count("S") };
}

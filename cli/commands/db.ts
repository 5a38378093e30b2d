// `infinity-memory db upgrade`: brings a database's schema up to this build on purpose, instead of
// as a side effect of the first server start. On PostgreSQL it runs as the tables' owner and can
// grant a server role row access only (`--grant`), so servers need not own (or be able to alter)
// anything; `?rls=1` in the URL also installs the row-level security policies.
import type { Command } from "commander";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import Database from "better-sqlite3";
import { backendKindOf, maskLocation } from "../../stores/backend.js";
import type { GrantReport } from "../../stores/postgres/grants.js";
import { openDatabase, schemaVersion } from "../../stores/sqlite/database.js";
import { MIGRATIONS } from "../../stores/sqlite/migrations.js";
import { databaseLocation, printMigration } from "../context.js";

export interface UpgradeSummary {
  engine: "sqlite" | "postgres";
  location: string;
  schema: { before: number; after: number };
  /** the schema steps this run applied */
  applied: number[];
  /** PostgreSQL: optional channels and why one is off */
  features?: { trigram: boolean; vector: boolean; notes: string[] };
  /** PostgreSQL: row-level security policies installed (the URL asked for rls=1) */
  rls?: boolean;
  /** PostgreSQL: roles given row access */
  granted?: GrantReport[];
}

function upgradeSqlite(path: string, quiet: boolean): UpgradeSummary {
  const file = resolve(path);
  let before = 0;
  if (existsSync(file)) {
    // openDatabase names a directory or a file that is not SQLite; this first read must too
    let ro: Database.Database | null = null;
    try {
      ro = new Database(file, { readonly: true, fileMustExist: true });
      before = ro.pragma("user_version", { simple: true }) as number;
    } catch (e) {
      if (statSync(file).isDirectory()) throw new Error(`cannot open the database ${file}: it is a directory; give the database file inside it (memory.db)`);
      if ((e as { code?: unknown }).code === "SQLITE_NOTADB") throw new Error(`${file} is not a SQLite database (is the path right?)`);
      throw e;
    } finally {
      ro?.close();
    }
  }
  // (a new file's steps are not announced; the versions between before and after are what ran)
  const db = openDatabase(file, { onMigration: quiet ? () => {} : printMigration });
  try {
    const after = schemaVersion(db);
    const applied = MIGRATIONS.map((m) => m.version).filter((v) => v > before && v <= after);
    return { engine: "sqlite", location: file, schema: { before, after }, applied };
  } finally {
    db.close();
  }
}

async function upgradePostgres(url: string, grants: string[]): Promise<UpgradeSummary> {
  // The adapter is loaded only when asked for, as the other commands do.
  const { PgDb } = await import("../../stores/postgres/pool.js");
  const { preparePg } = await import("../../stores/postgres/setup.js");
  const { checkRole, grantServerRole } = await import("../../stores/postgres/grants.js");
  const { appliedVersionsPg } = await import("../../stores/postgres/migrate.js");
  const db = PgDb.open(url, { max: 2 });
  try {
    // a role that is not there fails the run before the schema changes
    for (const g of grants) await checkRole(db.pool, g);
    const had = (await appliedVersionsPg(db.pool)) ?? new Set<number>();
    const features = await preparePg(db);
    const granted: GrantReport[] = [];
    for (const role of grants) granted.push(await grantServerRole(db.pool, role));
    const now = (await appliedVersionsPg(db.pool)) ?? new Set<number>();
    return {
      engine: "postgres",
      location: maskLocation(url),
      schema: { before: Math.max(0, ...had), after: Math.max(0, ...now) },
      applied: [...now].filter((v) => !had.has(v)).sort((a, b) => a - b),
      features: { trigram: features.trigram, vector: features.vector, notes: features.reasons },
      rls: db.rls,
      granted,
    };
  } finally {
    await db.close();
  }
}

function describe(s: UpgradeSummary): string {
  const lines = [
    s.applied.length === 0
      ? `schema ${s.schema.after} is up to date (${s.location})`
      : `upgraded ${s.location} from schema ${s.schema.before} to ${s.schema.after} (${s.applied.length} step${s.applied.length === 1 ? "" : "s"})`,
  ];
  for (const n of s.features?.notes ?? []) lines.push(`note: ${n}`);
  if (s.rls) lines.push("row-level security policies are in place (rls=1)");
  for (const g of s.granted ?? []) lines.push(`granted ${g.role} row access to ${g.tables} tables and ${g.sequences} sequences in schema ${g.schema}, and to what later upgrades add`);
  return `${lines.join("\n")}\n`;
}

export function registerDb(program: Command): void {
  const db = program.command("db").description("the database itself: bring its schema up to this build, give a server role row access");
  db.command("upgrade")
    .description("apply this build's schema steps (PostgreSQL: as the tables' owner; servers may then run as a role that owns nothing)")
    .option("--db <location>", "a SQLite file or a postgres:// URL (default: INFINITY_MEMORY_DB, else the data home's file); add ?rls=1 to install the row-level security policies")
    .option("--grant <role...>", "PostgreSQL: give these roles row access only (SELECT, INSERT, UPDATE, DELETE on the tables; USAGE on the sequences), now and on tables later upgrades add")
    .option("--json", "print a JSON summary")
    .action(async (o: { db?: string; grant?: string[]; json?: boolean }) => {
      const location = databaseLocation(o.db);
      const grants = o.grant ?? [];
      let summary: UpgradeSummary;
      if (backendKindOf(location) === "sqlite") {
        if (grants.length > 0) throw new Error("--grant gives PostgreSQL roles row access; a SQLite file has no roles (its file permissions decide who may open it)");
        summary = upgradeSqlite(location, o.json === true);
      } else {
        summary = await upgradePostgres(location, grants);
      }
      process.stdout.write(o.json ? `${JSON.stringify(summary)}\n` : describe(summary));
    });
}

// `infinity-memory migrate --from sqlite:PATH --to postgres://…`: copies every row of a SQLite
// database into an empty PostgreSQL database (same table and column names), in one PostgreSQL
// transaction read from one SQLite snapshot, so a failed run leaves the target empty and can be
// repeated. Then it verifies each table: row counts and an order-independent checksum (the sum
// of the SHA-256 of each row's canonical JSON) computed on both sides, and prints a JSON summary.
import cliProgress from "cli-progress";
import type { Command } from "commander";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import type pg from "pg";
import { backendKindOf, maskLocation } from "../../stores/backend.js";
import type { PgDb } from "../../stores/postgres/pool.js";
import { rebuildDerivedData, type RebuildReport } from "../../stores/postgres/rebuild.js";
import { openPg } from "../../stores/postgres/setup.js";
import { vacuumAnalyze } from "../../stores/postgres/vacuum.js";
import { rebuildSkillSearch } from "../../stores/postgres/skill-store.js";
import { openDatabase, type Db } from "../../stores/sqlite/database.js";

/**
 * SQLite tables whose rows the PostgreSQL store derives its own way (with or without a table of
 * the same name); their rows are not copied (reported as skipped).
 */
const DERIVED_ELSEWHERE: Record<string, string> = {
  memory_vector_meta: "vector index metadata: the PostgreSQL vector channel (pgvector) records its own embedder; run `memory reindex --vectors` there",
  scope_tokens: "change tokens of the semantic channel's in-memory indexes: PostgreSQL's triggers renew its own as the memories are copied",
  fts_purge: "SQLite full-text tables still to merge after a forget: their indexes are not copied but rebuilt from the copied rows",
};

/**
 * Columns only the PostgreSQL schema has, filled from the incoming row `v` during the copy
 * (denormalised owners for row-level security; full-text vectors, recomputed afterwards).
 */
const DERIVED_COLUMNS: Record<string, Record<string, string>> = {
  memory_tags: { user_id: "(SELECT m.user_id FROM memories m WHERE m.rowid = v.memory_rowid)" },
  memory_sources: { user_id: "(SELECT m.user_id FROM memories m WHERE m.rowid = v.memory_rowid)" },
  session_messages: {
    user_id: "(SELECT t.user_id FROM session_threads t WHERE t.source_id = v.source_id AND t.thread_id = v.thread_id)",
    tsv: "setweight(to_tsvector('english', v.text), 'A')",
  },
};

/** parents a derived column reads, copied before the table */
const DERIVED_DEPENDS: Record<string, string[]> = {
  memory_tags: ["memories"],
  memory_sources: ["memories"],
  session_messages: ["session_threads"],
};

export interface TableReport {
  table: string;
  rows: number;
  target_rows: number;
  checksum: string;
  target_checksum: string;
  ok: boolean;
}

export interface MigrateSummary {
  from: string;
  to: string;
  tables: TableReport[];
  skipped: { table: string; reason: string }[];
  /** search indexes and denormalised owners recomputed after the copy */
  rebuilt: RebuildReport;
  /**
   * the copied tables were vacuumed and analysed ("vacuum analyze"), or why not ("skipped: …"):
   * the first searches then plan from statistics and count matches without reading every row
   */
  analyzed: string;
  total_rows: number;
  ok: boolean;
  seconds: number;
}

interface PlannedTable {
  name: string;
  /** columns copied (the SQLite ones), with the PostgreSQL type of each */
  cols: { name: string; udt: string }[];
  derived: Record<string, string>;
  hasRowid: boolean;
  rows: number;
}

/** An order-independent multiset hash: the sum of per-row SHA-256 values mod 2^256. */
class Checksum {
  private sum = 0n;
  private static readonly MOD = 1n << 256n;
  add(canonical: string): void {
    this.sum = (this.sum + BigInt(`0x${createHash("sha256").update(canonical).digest("hex")}`)) % Checksum.MOD;
  }
  hex(): string {
    return this.sum.toString(16).padStart(64, "0");
  }
}

const NUMERIC_UDT = new Set(["int2", "int4", "int8", "float4", "float8", "numeric"]);

/** The row as JSON with keys in column order and values normalised across the two engines. */
function canonical(row: Record<string, unknown>, cols: { name: string; udt: string }[]): string {
  return JSON.stringify(
    cols.map((c) => {
      const v = row[c.name];
      if (v === null || v === undefined) return null;
      if (NUMERIC_UDT.has(c.udt)) return Number(v);
      if (Buffer.isBuffer(v)) return v.toString("base64");
      return String(v);
    }),
  );
}

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unexpected table or column name "${name}"`);
  return `"${name}"`;
}

/** Source tables in an order that satisfies the target's foreign keys (parents first). */
function orderByDependencies(tables: PlannedTable[], fks: { child: string; parent: string }[]): PlannedTable[] {
  const names = new Set(tables.map((t) => t.name));
  const deps = new Map<string, Set<string>>(tables.map((t) => [t.name, new Set(DERIVED_DEPENDS[t.name] ?? [])]));
  for (const { child, parent } of fks) if (child !== parent && names.has(child) && names.has(parent)) deps.get(child)!.add(parent);
  const out: PlannedTable[] = [];
  const done = new Set<string>();
  const visit = (t: PlannedTable, path: Set<string>) => {
    if (done.has(t.name)) return;
    if (path.has(t.name)) throw new Error(`foreign keys form a cycle through ${t.name}`);
    path.add(t.name);
    for (const p of deps.get(t.name) ?? []) {
      const pt = tables.find((x) => x.name === p);
      if (pt) visit(pt, path);
    }
    path.delete(t.name);
    done.add(t.name);
    out.push(t);
  };
  for (const t of [...tables].sort((a, b) => a.name.localeCompare(b.name))) visit(t, new Set());
  return out;
}

async function plan(src: Db, target: PgDb): Promise<{ tables: PlannedTable[]; skipped: { table: string; reason: string }[] }> {
  const all = src.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).all() as { name: string; sql: string }[];
  // Full-text and vector indexes (virtual tables and their shadow tables) are rebuilt, not copied.
  const virtual = all.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql)).map((t) => t.name);
  const pgCols = new Map<string, { name: string; udt: string; required: boolean }[]>();
  for (const r of (
    await target.pool.query<{ table_name: string; column_name: string; udt_name: string; required: boolean }>(
      `SELECT table_name, column_name, udt_name, (is_nullable = 'NO' AND column_default IS NULL) AS required
       FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
    )
  ).rows) {
    const list = pgCols.get(r.table_name) ?? [];
    list.push({ name: r.column_name, udt: r.udt_name, required: r.required });
    pgCols.set(r.table_name, list);
  }
  const tables: PlannedTable[] = [];
  const skipped: { table: string; reason: string }[] = [];
  const problems: string[] = [];
  for (const t of all) {
    if (virtual.includes(t.name)) {
      skipped.push({ table: t.name, reason: "index (virtual table): rebuilt from the copied rows" });
      continue;
    }
    if (virtual.some((v) => t.name.startsWith(`${v}_`))) continue; // shadow tables of an index
    const elsewhere = DERIVED_ELSEWHERE[t.name];
    if (elsewhere) {
      skipped.push({ table: t.name, reason: elsewhere });
      continue;
    }
    const rows = (src.prepare(`SELECT count(*) AS n FROM ${quoteIdent(t.name)}`).get() as { n: number }).n;
    const target = pgCols.get(t.name);
    if (!target) {
      if (rows === 0) skipped.push({ table: t.name, reason: "no PostgreSQL table and no rows" });
      else problems.push(`table ${t.name} (${rows} rows) has no PostgreSQL counterpart`);
      continue;
    }
    const srcCols = (src.prepare(`PRAGMA table_info(${quoteIdent(t.name)})`).all() as { name: string }[]).map((c) => c.name);
    const missing = srcCols.filter((c) => !target.some((p) => p.name === c));
    if (missing.length > 0) problems.push(`table ${t.name}: PostgreSQL has no column ${missing.join(", ")}`);
    const derived = DERIVED_COLUMNS[t.name] ?? {};
    const unfilled = target.filter((p) => p.required && !srcCols.includes(p.name) && !(p.name in derived)).map((p) => p.name);
    if (unfilled.length > 0) problems.push(`table ${t.name}: PostgreSQL requires ${unfilled.join(", ")}, which SQLite does not have`);
    let hasRowid = true;
    try {
      src.prepare(`SELECT rowid FROM ${quoteIdent(t.name)} LIMIT 0`).all();
    } catch {
      hasRowid = false; // WITHOUT ROWID
    }
    tables.push({ name: t.name, cols: srcCols.map((c) => ({ name: c, udt: target.find((p) => p.name === c)?.udt ?? "text" })), derived, hasRowid, rows });
  }
  if (problems.length > 0) throw new Error(`the PostgreSQL schema cannot hold this database:\n  ${problems.join("\n  ")}\nupgrade infinity-memory so both schemas match`);
  const fks = (
    await target.pool.query<{ child: string; parent: string }>(
      `SELECT cl.relname AS child, pcl.relname AS parent FROM pg_constraint co
       JOIN pg_class cl ON cl.oid = co.conrelid JOIN pg_class pcl ON pcl.oid = co.confrelid
       WHERE co.contype = 'f' AND cl.relnamespace = current_schema()::regnamespace`,
    )
  ).rows;
  return { tables: orderByDependencies(tables, fks), skipped };
}

/** Copies one table; returns how many rows it read (from the copy's snapshot). */
async function copyTable(c: pg.PoolClient, src: Db, t: PlannedTable, sum: Checksum, onRows: (n: number) => void): Promise<number> {
  const names = t.cols.map((x) => quoteIdent(x.name));
  const derivedNames = Object.keys(t.derived);
  const insertCols = [...names, ...derivedNames.map(quoteIdent)].join(", ");
  const select = [...t.cols.map((x) => `v.${quoteIdent(x.name)}`), ...derivedNames.map((d) => t.derived[d]!)].join(", ");
  const perBatch = Math.max(1, Math.min(500, Math.floor(30_000 / t.cols.length)));
  let batch: unknown[][] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const params: unknown[] = [];
    const tuples = batch.map((row) => `(${row.map((v, i) => `$${params.push(v)}::${t.cols[i]!.udt}`).join(", ")})`);
    await c.query(`INSERT INTO ${quoteIdent(t.name)} (${insertCols}) SELECT ${select} FROM (VALUES ${tuples.join(", ")}) AS v (${names.join(", ")})`, params);
    onRows(batch.length);
    batch = [];
  };
  // Rowid order is creation order, so a row referring to an older row of its table (a version's
  // parent) comes after it.
  const stmt = src.prepare(`SELECT ${names.join(", ")} FROM ${quoteIdent(t.name)}${t.hasRowid ? " ORDER BY rowid" : ""}`);
  let copied = 0;
  for (const row of stmt.iterate() as Iterable<Record<string, unknown>>) {
    copied++;
    sum.add(canonical(row, t.cols));
    batch.push(t.cols.map((x) => row[x.name] ?? null));
    if (batch.length >= perBatch) await flush();
  }
  await flush();
  return copied;
}

/** Move every sequence of the target past the copied ids. */
async function resetSequences(c: pg.PoolClient, tables: PlannedTable[]): Promise<void> {
  for (const t of tables) {
    for (const col of t.cols) {
      const seq = (await c.query<{ s: string | null }>(`SELECT pg_get_serial_sequence($1, $2) AS s`, [t.name, col.name])).rows[0]?.s;
      if (!seq) continue;
      await c.query(`SELECT setval($1, COALESCE((SELECT max(${quoteIdent(col.name)}) FROM ${quoteIdent(t.name)}), 0) + 1, false)`, [seq]);
    }
  }
}

async function targetChecksum(target: PgDb, t: PlannedTable): Promise<{ rows: number; checksum: string }> {
  const sum = new Checksum();
  const r = await target.pool.query(`SELECT ${t.cols.map((x) => quoteIdent(x.name)).join(", ")} FROM ${quoteIdent(t.name)}`);
  for (const row of r.rows as Record<string, unknown>[]) sum.add(canonical(row, t.cols));
  return { rows: r.rows.length, checksum: sum.hex() };
}

export async function migrateSqliteToPostgres(
  fromPath: string,
  toUrl: string,
  opts: { progress?: boolean } = {},
): Promise<MigrateSummary> {
  const started = Date.now();
  if (!existsSync(fromPath)) throw new Error(`--from: no SQLite database at ${fromPath}`);
  // Opening applies any pending SQLite migrations, so both sides have the current schema.
  const src = openDatabase(fromPath);
  let target: PgDb | null = null;
  try {
    target = await openPg(toUrl);
    const { tables, skipped } = await plan(src, target);
    const busy: string[] = [];
    for (const t of tables) {
      const n = Number((await target.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${quoteIdent(t.name)}`)).rows[0]!.n);
      if (n > 0) busy.push(`${t.name} (${n})`);
    }
    if (busy.length > 0) {
      throw new Error(
        `the target database is not empty: ${busy.join(", ")}. migrate copies into an empty database only; ` +
          `create a new database (createdb …) or drop these rows first`,
      );
    }
    const total = tables.reduce((n, t) => n + t.rows, 0);
    const bar = opts.progress
      ? new cliProgress.SingleBar({ format: "copying [{bar}] {value}/{total} rows  {table}", stream: process.stderr }, cliProgress.Presets.shades_classic)
      : null;
    bar?.start(total, 0, { table: "" });
    const sums = new Map<string, Checksum>();
    const c = await target.pool.connect();
    // One SQLite read transaction: every table is read from the same snapshot while servers write.
    src.exec("BEGIN");
    try {
      await c.query("BEGIN");
      for (const t of tables) {
        const sum = new Checksum();
        sums.set(t.name, sum);
        bar?.update({ table: t.name });
        // rows counted inside the snapshot: servers may have written since the plan was made
        t.rows = await copyTable(c, src, t, sum, (n) => bar?.increment(n));
      }
      await resetSequences(c, tables);
      await rebuildSkillSearch(c);
      await c.query("COMMIT");
    } catch (e) {
      await c.query("ROLLBACK").catch(() => {});
      throw e;
    } finally {
      src.exec("COMMIT");
      c.release();
      bar?.stop();
    }
    // word index, session tsvectors and RLS owners: derived from the copied rows
    const rebuilt = await rebuildDerivedData(target);
    // the copied tables and those rebuilt from them (the word index): the whole database
    const analyzed = await vacuumAnalyze(target);
    const reports: TableReport[] = [];
    for (const t of tables) {
      const got = await targetChecksum(target, t);
      const checksum = sums.get(t.name)!.hex();
      reports.push({ table: t.name, rows: t.rows, target_rows: got.rows, checksum, target_checksum: got.checksum, ok: got.rows === t.rows && got.checksum === checksum });
    }
    reports.sort((a, b) => a.table.localeCompare(b.table));
    return {
      from: `sqlite:${fromPath}`,
      to: maskLocation(toUrl),
      tables: reports,
      skipped,
      rebuilt,
      analyzed,
      total_rows: tables.reduce((n, t) => n + t.rows, 0),
      ok: reports.every((r) => r.ok),
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    src.close();
    await target?.close();
  }
}

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description("copy a SQLite database into an empty PostgreSQL database, then verify counts and checksums")
    .requiredOption("--from <source>", "sqlite:PATH (the database file to copy)")
    .requiredOption("--to <url>", "postgres://user:password@host:port/database (empty; its schema is created)")
    .option("--no-progress", "no progress bar (it is drawn on stderr when that is a terminal)")
    .action(async (o: { from: string; to: string; progress: boolean }) => {
      const m = /^sqlite:(.+)$/.exec(o.from);
      if (!m) throw new Error(`--from must be sqlite:PATH, e.g. --from sqlite:~/.infinity/memory/memory.db (got "${o.from}")`);
      if (backendKindOf(o.to) !== "postgres") throw new Error(`--to must be a postgres:// or postgresql:// URL (got "${maskLocation(o.to)}")`);
      // "sqlite:~/…" (as in the example above): no shell expands a ~ in the middle of a word
      const from = m[1]!.replace(/^~(?=\/|$)/, homedir());
      const summary = await migrateSqliteToPostgres(resolve(from), o.to, { progress: o.progress && process.stderr.isTTY === true });
      process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
      if (!summary.ok) {
        const bad = summary.tables.filter((t) => !t.ok).map((t) => t.table);
        throw new Error(`verification failed for ${bad.join(", ")}: the copy differs from the source`);
      }
    });
}

// PostgreSQL test helpers: the cluster URL from the globalSetup (test/helpers/pg-cluster.ts), a
// fresh database per test file, and `describePg`, which skips a suite with the reason when no
// cluster runs — or fails it when INFINITY_MEMORY_REQUIRE_PG=1 (CI), never passing silently.
import pg from "pg";
import { afterAll, beforeAll, describe, inject, it } from "vitest";
import type { PgDb } from "../../stores/postgres/pool.js";
import { MEMORY_MIGRATIONS } from "../../stores/postgres/schema-memory.js";
import { openPg } from "../../stores/postgres/setup.js";

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string;
    pgSkip: string;
  }
}

export function pgUrl(): string | null {
  return (inject("pgUrl") as string | undefined) ?? null;
}

export function pgSkipReason(): string {
  return (inject("pgSkip") as string | undefined) ?? "no PostgreSQL cluster (vitest globalSetup test/helpers/pg-cluster.ts did not run)";
}

const required = () => process.env.INFINITY_MEMORY_REQUIRE_PG === "1";

/** `describe` when a cluster runs; otherwise skipped with the reason (or failing when required). */
export function describePg(name: string, fn: (url: () => string) => void): void {
  const url = pgUrl();
  if (url) {
    describe(name, () => fn(() => url));
    return;
  }
  const why = pgSkipReason();
  if (required()) {
    describe(name, () => {
      it("needs PostgreSQL (INFINITY_MEMORY_REQUIRE_PG=1)", () => {
        throw new Error(`PostgreSQL required but unavailable: ${why}`);
      });
    });
  } else {
    describe.skip(`${name} [skipped: ${why}]`, () => fn(() => ""));
  }
}

let counter = 0;

/** URL of `base` with another database name (and optional user). */
export function withDatabase(base: string, database: string, user?: string): string {
  const u = new URL(base);
  u.pathname = `/${database}`;
  if (user) u.username = user;
  return u.toString();
}

/** A new empty database on the cluster; `drop` removes it (call it in afterAll). */
export async function createTestDatabase(base: string, prefix = "t"): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter++}`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(base, name),
    drop: async () => {
      const a = new pg.Client({ connectionString: base });
      await a.connect();
      try {
        await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}

/**
 * For a describePg suite: a fresh database with the memory schema, opened before its tests and
 * closed and dropped after them; call the returned function inside a test.
 */
export function memoryDatabase(base: () => string, prefix: string): () => PgDb {
  let db: PgDb | undefined;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const t = await createTestDatabase(base(), prefix);
    drop = t.drop;
    db = await openPg(t.url, { max: 2, migrations: MEMORY_MIGRATIONS });
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });
  return () => db!;
}

// serve's start-up sweep for forgets a stopped process left claimed (unfinishedForgets) read every
// memory to find the few deleted rows still holding their text: a full scan of `memories` at each
// start (seconds at a million memories). Migration 28 adds a partial index of claimed rows only;
// the sweep's statement uses it, on a new database and on one upgraded from before.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase, schemaVersion, type Db } from "../../stores/sqlite/database.js";
import { SqliteMemoryStore } from "../../stores/sqlite/memory-store.js";
import { tempDir } from "../helpers/tmp.js";

/**
 * A store over `db` that notes the SQL and arguments of every statement read while `during` runs;
 * `after` gets them before the store (and with it the database) is closed.
 */
async function statementsRead<T>(db: Db, during: (s: SqliteMemoryStore) => Promise<unknown>, after: (ran: { sql: string; args: unknown[] }[]) => T): Promise<T> {
  const ran: { sql: string; args: unknown[] }[] = [];
  let on = false;
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    const st = prepare(sql);
    for (const m of ["all", "get", "iterate"] as const) {
      const real = (st[m] as (...a: unknown[]) => unknown).bind(st);
      (st as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => {
        if (on) ran.push({ sql, args });
        return real(...args);
      };
    }
    return st;
  }) as Db["prepare"];
  const store = new SqliteMemoryStore(db);
  try {
    on = true;
    await during(store);
    on = false;
    db.prepare = prepare;
    return after(ran);
  } finally {
    db.prepare = prepare;
    store.close();
  }
}

function fill(db: Db, n: number, deleted: (i: number) => "claimed" | "purged" | null): void {
  const ins = db.prepare(`INSERT INTO memories (id, lineage_id, vis_key, level, user_id, kind, content, trust, confidence, status, version, created_at, updated_at, content_hash)
    VALUES (?, ?, 'u:alice', 'user', 'alice', 'fact', ?, 'user_stated', 0.9, ?, 1, ?, ?, 'h')`);
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const d = deleted(i);
      ins.run(`mem_${i}`, `mem_${i}`, d === "purged" ? "" : `Fact number ${i}`, d ? "deleted" : "active", i, i);
    }
  })();
}

function plan(db: Db, sql: string, args: unknown[]): string[] {
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail);
}

/** The plans of the statements the sweep's read runs on `memories` (the store closes `db` after). */
async function sweepPlans(db: Db): Promise<string[]> {
  return statementsRead(
    db,
    async (s) => expect((await s.unfinishedForgets(10)).map((u) => u.record.id)).toEqual(["mem_500", "mem_1500"]),
    (ran) => {
      const onMemories = ran.filter((r) => /\bFROM memories\b/.test(r.sql));
      expect(onMemories.length).toBeGreaterThan(0);
      return onMemories.flatMap((r) => plan(db, r.sql, r.args));
    },
  );
}

describe("the sweep for unfinished forgets (SQLite)", () => {
  it("reads the partial index of claimed rows, not the whole memories table", async () => {
    const db = openDatabase(join(tempDir(), "memory.db"));
    try {
      fill(db, 2000, (i) => (i === 500 || i === 1500 ? "claimed" : i % 3 === 0 ? "purged" : null));
      db.exec("ANALYZE");
      const plans = await sweepPlans(db);
      expect(plans.some((d) => d.includes("USING INDEX memories_unfinished_forgets"))).toBe(true);
      expect(plans.filter((d) => /^SCAN memories\b/.test(d) && !d.includes("USING"))).toEqual([]);
    } finally {
      if (db.open) db.close();
    }
  });

  it("a database made before migration 28 gets the index when it is opened", async () => {
    const path = join(tempDir(), "memory.db");
    const old = openDatabase(path, { targetVersion: 27 });
    expect(schemaVersion(old)).toBeLessThan(28);
    expect(old.prepare(`SELECT 1 FROM sqlite_schema WHERE name = 'memories_unfinished_forgets'`).get()).toBeUndefined();
    fill(old, 2000, (i) => (i === 500 || i === 1500 ? "claimed" : i % 3 === 0 ? "purged" : null));
    old.close();
    const db = openDatabase(path);
    try {
      expect(schemaVersion(db)).toBeGreaterThanOrEqual(28);
      expect(db.prepare(`SELECT sql FROM sqlite_schema WHERE name = 'memories_unfinished_forgets'`).get()).toEqual({
        sql: `CREATE INDEX memories_unfinished_forgets ON memories (updated_at) WHERE status = 'deleted' AND content <> ''`,
      });
      // the claimed rows of before are in it
      expect((db.prepare(`SELECT id FROM memories INDEXED BY memories_unfinished_forgets WHERE status = 'deleted' AND content <> '' ORDER BY updated_at`).all() as { id: string }[]).map((r) => r.id)).toEqual(["mem_500", "mem_1500"]);
      const plans = await sweepPlans(db);
      expect(plans.some((d) => d.includes("USING INDEX memories_unfinished_forgets"))).toBe(true);
    } finally {
      if (db.open) db.close();
    }
  });
});

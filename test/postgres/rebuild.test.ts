// rebuildDerivedData: after rows were copied in by column name (as `migrate --from sqlite:` does),
// the RLS user ids, the word index and the session tsvectors are filled and search works.
import { afterAll, beforeAll, expect, it } from "vitest";
import { visibilityKey } from "../../core/memory/scope.js";
import { analyzeQuery } from "../../core/retrieval/analyze.js";
import { PgMemoryStore } from "../../stores/postgres/memory-store.js";
import type { PgDb } from "../../stores/postgres/pool.js";
import { rebuildDerivedData } from "../../stores/postgres/rebuild.js";
import { MEMORY_MIGRATIONS } from "../../stores/postgres/schema-memory.js";
import { PgSessionIndex } from "../../stores/postgres/session-index.js";
import { openPg } from "../../stores/postgres/setup.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";
import { scopeOf } from "../stores/memory-conformance.js";

describePg("postgres rebuildDerivedData after a bulk copy", (base) => {
  let db: PgDb;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const t = await createTestDatabase(base(), "rebuild");
    drop = t.drop;
    db = await openPg(t.url, { max: 2, migrations: MEMORY_MIGRATIONS });
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it("fills user ids and search indexes of copied rows", async () => {
    const key = visibilityKey(scopeOf("alice"));
    await db.pool.query(
      `INSERT INTO memories (rowid, id, lineage_id, vis_key, level, user_id, kind, content, trust, confidence, status, version, created_at, updated_at)
       VALUES (7, 'mem_a', 'mem_a', $1, 'user', 'alice', 'fact', 'The lighthouse keeper feeds gulls', 'user_stated', 0.9, 'active', 1, 1, 1)`,
      [key],
    );
    await db.pool.query(`INSERT INTO memory_tags (memory_rowid, tag) VALUES (7, 'seabirds')`);
    await db.pool.query(`INSERT INTO memory_sources (id, memory_rowid, thread_id, actor, at) VALUES (3, 7, 't', 'user', 1)`);
    await db.pool.query(`INSERT INTO session_sources (id, kind, location) VALUES (1, 'sqlite', '/x')`);
    await db.pool.query(`INSERT INTO session_threads (source_id, thread_id, root_thread_id, user_id, updated_at) VALUES (1, 't', 't', 'alice', 1)`);
    await db.pool.query(
      `INSERT INTO session_messages (rowid, source_id, thread_id, root_thread_id, ord, message_id, role, text, vis_key, at)
       VALUES (1, 1, 't', 't', 0, 'm0', 'user', 'Who feeds the gulls?', $1, 1)`,
      [key],
    );
    const store = new PgMemoryStore(db);
    const sq = { visibility: { keys: [key] }, query: analyzeQuery("seabirds"), statuses: ["active" as const], includeFlagged: false, now: 2, limit: 5 };
    expect(await store.search(sq)).toEqual([]);
    expect(await rebuildDerivedData(db)).toEqual({ memoryWords: 1, sessionMessages: 1 });
    expect((await store.search(sq)).map((h) => h.record.id)).toEqual(["mem_a"]);
    expect((await new PgSessionIndex(db).search({ user: "alice", query: analyzeQuery("gull"), limit: 5 })).map((h) => h.messageId)).toEqual(["m0"]);
    const users = await db.pool.query(`SELECT (SELECT user_id FROM memory_tags) AS t, (SELECT user_id FROM memory_sources) AS s, (SELECT user_id FROM session_messages) AS m`);
    expect(users.rows[0]).toEqual({ t: "alice", s: "alice", m: "alice" });
  });
});

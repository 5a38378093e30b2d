// After a bulk copy into the PostgreSQL tables (`infinity-memory migrate --from sqlite:…`, which
// copies rows by column name), fill what SQLite does not have: the user_id kept on child tables
// for row-level security, the memory word index and the session messages' tsvector.
import { PgMemoryStore } from "./memory-store.js";
import { asPgSystem, type PgDb } from "./pool.js";
import { PgSessionIndex } from "./session-index.js";

export interface RebuildReport {
  memoryWords: number;
  sessionMessages: number;
}

export async function rebuildDerivedData(db: PgDb): Promise<RebuildReport> {
  return asPgSystem(async () => {
    await db.tx(async (c) => {
      await c.query(`UPDATE memory_tags t SET user_id = m.user_id FROM memories m WHERE m.rowid = t.memory_rowid AND t.user_id <> m.user_id`);
      await c.query(`UPDATE memory_sources s SET user_id = m.user_id FROM memories m WHERE m.rowid = s.memory_rowid AND s.user_id <> m.user_id`);
      await c.query(
        `UPDATE session_messages x SET user_id = t.user_id FROM session_threads t
         WHERE t.source_id = x.source_id AND t.thread_id = x.thread_id AND x.user_id <> t.user_id`,
      );
    });
    const memoryWords = await new PgMemoryStore(db).rebuildWordIndex();
    const sessionMessages = await new PgSessionIndex(db).rebuildIndex();
    return { memoryWords, sessionMessages };
  });
}

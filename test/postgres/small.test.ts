// Toggle, root context, budget and session index conformance on PostgreSQL (both profiles).
import { afterAll, beforeAll } from "vitest";
import { PgMemoryStore } from "../../stores/postgres/memory-store.js";
import type { PgDb } from "../../stores/postgres/pool.js";
import { MEMORY_MIGRATIONS } from "../../stores/postgres/schema-memory.js";
import { PgSessionIndex } from "../../stores/postgres/session-index.js";
import { openPg } from "../../stores/postgres/setup.js";
import { PgLlmBudgetStore, PgRootContexts, PgToggleStore } from "../../stores/postgres/small-stores.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";
import { smallStoreConformance } from "../stores/small-conformance.js";

for (const profile of ["postgres", "dsql"] as const) {
  describePg(`postgres small stores (${profile} profile)`, (base) => {
    let db: PgDb;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      const t = await createTestDatabase(base(), `small_${profile}`);
      drop = t.drop;
      db = await openPg(t.url, { profile, max: 6, migrations: MEMORY_MIGRATIONS });
    });
    afterAll(async () => {
      await db?.close();
      await drop?.();
    });
    smallStoreConformance(
      `postgres/${profile}`,
      async () => {
        await db.pool.query(`TRUNCATE toolset_toggles, root_contexts, llm_budget, session_sources, session_threads, session_messages, session_suppressed CASCADE`);
        await db.pool.query(`DELETE FROM audit_log WHERE target_kind = 'toolset'`).catch(() => {});
        return {
          toggles: new PgToggleStore(db),
          roots: new PgRootContexts(db),
          budget: new PgLlmBudgetStore(db),
          sessions: new PgSessionIndex(db),
          memory: new PgMemoryStore(db),
        };
      },
      { stemming: profile === "postgres" },
    );
  });
}

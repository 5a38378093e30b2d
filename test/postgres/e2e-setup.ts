// Installs the PostgreSQL database source for test/e2e/scenarios.test.ts (see E2eDatabase
// there): each scenario gets a new database on the test cluster, dropped after the file.
import { afterAll, inject } from "vitest";
import type { E2eDatabase } from "../e2e/scenarios.test.js";
import { createTestDatabase, pgSkipReason } from "../helpers/postgres.js";

const url = (inject("pgUrl") as string | undefined) ?? null;
const drops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const d of drops) await d().catch(() => {});
});

const source: E2eDatabase = {
  name: "postgres",
  fresh: async () => {
    const db = await createTestDatabase(url!, "e2e");
    drops.push(db.drop);
    return db.url;
  },
  skip: url ? null : pgSkipReason(),
};
if (!url && process.env.INFINITY_MEMORY_REQUIRE_PG === "1") throw new Error(`PostgreSQL required but unavailable: ${pgSkipReason()}`);
(globalThis as { __imemE2eDatabase?: E2eDatabase }).__imemE2eDatabase = source;

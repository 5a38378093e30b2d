// The MemoryStore conformance suite on SQLite (test/postgres/ runs it on PostgreSQL).
import { describe, expect, it } from "vitest";
import type { MemoryStatus } from "../../core/memory/record.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteMemoryStore } from "../../stores/sqlite/memory-store.js";
import { memoryConformance } from "./memory-conformance.js";

memoryConformance("sqlite", async () => {
  const db = openDatabase(":memory:");
  const store = new SqliteMemoryStore(db);
  return { store, close: async () => store.close() };
});

describe("sqlite memory store: statuses in SQL", () => {
  it("refuses a status outside the closed set instead of writing it into a statement, and lists what is pending", async () => {
    const store = new SqliteMemoryStore(openDatabase(":memory:"));
    try {
      const base = { visibility: { owner: "alice" }, includeFlagged: true, now: 0, limit: 10, order: "oldest" as const };
      const bogus = ["pending') OR 1=1 --"] as unknown as MemoryStatus[];
      await expect(store.list({ ...base, statuses: bogus })).rejects.toMatchObject({ code: "constraint" });
      expect(await store.list({ ...base, statuses: ["pending"] })).toMatchObject({ items: [], total: 0, totalCapped: false });
    } finally {
      store.close();
    }
  });
});

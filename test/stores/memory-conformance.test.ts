// The MemoryStore conformance suite on SQLite (test/postgres/ runs it on PostgreSQL).
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteMemoryStore } from "../../stores/sqlite/memory-store.js";
import { memoryConformance } from "./memory-conformance.js";

memoryConformance("sqlite", async () => {
  const db = openDatabase(":memory:");
  const store = new SqliteMemoryStore(db);
  return { store, close: async () => store.close() };
});

// Toggle, root context, budget and session index conformance on SQLite.
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteLlmBudgetStore } from "../../stores/sqlite/llm-budget.js";
import { SqliteMemoryStore } from "../../stores/sqlite/memory-store.js";
import { SqliteRootContexts } from "../../stores/sqlite/root-contexts.js";
import { SqliteSessionIndex } from "../../stores/sqlite/session-index.js";
import { SqliteToggleStore } from "../../stores/sqlite/toggle-store.js";
import { smallStoreConformance } from "./small-conformance.js";

smallStoreConformance("sqlite", async () => {
  const db = openDatabase(":memory:");
  return {
    toggles: new SqliteToggleStore(db),
    roots: new SqliteRootContexts(db),
    budget: new SqliteLlmBudgetStore(db),
    sessions: new SqliteSessionIndex(db),
    memory: new SqliteMemoryStore(db),
  };
});

// The SQLite backend: every store over one database file (the embedded default).
import type { RetrievalChannels } from "../../core/retrieval/channels.js";
import type { Backend } from "../backend.js";
import { SqliteConversationStore } from "./conversation-store.js";
import { openDatabase, type Db, type OpenOptions } from "./database.js";
import { SqliteEvolutionStore } from "./evolution-store.js";
import { SqliteLearningStore } from "./learning-store.js";
import { SqliteTraceFeed } from "./learning-trace-feed.js";
import { SqliteLlmBudgetStore } from "./llm-budget.js";
import { SqliteMemoryStore } from "./memory-store.js";
import { SqliteRapJournal } from "./rap-journal.js";
import { SqliteRapOutbox } from "./rap-outbox.js";
import { SqliteRapUserChoices } from "./rap-user-choices.js";
import { SqliteRootContexts } from "./root-contexts.js";
import { SqliteSessionIndex } from "./session-index.js";
import { SqliteSkillStore } from "./skill-store.js";
import { SqliteStateStore } from "./state-store.js";
import { SqliteToggleStore } from "./toggle-store.js";
import { SqliteTraceStore } from "./trace-store.js";
import type { VectorChannel } from "./vector-channel.js";

export interface SqliteBackend extends Backend {
  kind: "sqlite";
  db: Db;
  memory: SqliteMemoryStore;
  toggles: SqliteToggleStore;
  skills: SqliteSkillStore;
}

/** Stores over an already opened database (the caller keeps ownership of `db` unless it calls close). */
export function sqliteBackendOver(
  db: Db,
  location: string,
  // [vector channel] the optional embedder channel (stores/embedding/from-config.ts)
  opts: { channels?: Partial<RetrievalChannels>; vectors?: VectorChannel | null } = {},
): SqliteBackend {
  // Statements are prepared lazily per store, so building every store up front costs little.
  let conversations: SqliteConversationStore | null = null;
  let state: SqliteStateStore | null = null;
  const memory = new SqliteMemoryStore(db, opts.channels ?? {}, opts.vectors);
  return {
    kind: "sqlite",
    location,
    db,
    memory,
    toggles: new SqliteToggleStore(db),
    sessionIndex: new SqliteSessionIndex(db),
    journal: new SqliteRapJournal(db),
    outbox: new SqliteRapOutbox(db),
    userChoices: new SqliteRapUserChoices(db),
    traces: new SqliteTraceStore(db),
    traceFeed: new SqliteTraceFeed(db),
    roots: new SqliteRootContexts(db),
    skills: new SqliteSkillStore(db),
    learning: new SqliteLearningStore(db),
    evolution: new SqliteEvolutionStore(db),
    llmBudget: new SqliteLlmBudgetStore(db),
    get conversations() {
      return (conversations ??= new SqliteConversationStore(db));
    },
    get state() {
      return (state ??= new SqliteStateStore(db));
    },
    close: async () => {
      // the memory store stops its semantic worker and closes the database
      memory.close();
    },
  };
}

export function openSqliteBackend(path: string, opts: OpenOptions & { channels?: Partial<RetrievalChannels> } = {}): SqliteBackend {
  return sqliteBackendOver(openDatabase(path, opts), path, opts);
}

// One opened storage backend: every store the server, the CLI and the learning loop use, behind the
// traits in stores/traits.ts. SQLite (embedded default) and PostgreSQL (stores/postgres) both
// produce this shape, so everything above it is engine-neutral.
import type { LlmBudgetStore } from "../core/llm/budget.js";
import type { ConversationReader, ConversationStore, StateStore } from "./infinity/traits.js";
import type {
  EvolutionStore,
  LearningStore,
  MemoryStore,
  RapJournalStore,
  RapOutboxStore,
  RapUserChoiceStore,
  RootContextStore,
  SessionIndexStore,
  SkillStore,
  ToggleStore,
  TraceFeed,
  TraceStore,
} from "./traits.js";

export type BackendKind = "sqlite" | "postgres";

export interface Backend {
  kind: BackendKind;
  /** file path (sqlite) or the connection URL with any password masked (postgres) */
  location: string;
  memory: MemoryStore;
  toggles: ToggleStore;
  sessionIndex: SessionIndexStore;
  journal: RapJournalStore;
  outbox: RapOutboxStore;
  userChoices: RapUserChoiceStore;
  traces: TraceStore;
  traceFeed: TraceFeed;
  roots: RootContextStore;
  skills: SkillStore;
  learning: LearningStore;
  evolution: EvolutionStore;
  llmBudget: LlmBudgetStore;
  /** the Infinity-shaped conversation store, readable for session search */
  conversations: ConversationStore & ConversationReader;
  state: StateStore;
  close(): Promise<void>;
}

/** "postgres://…" or "postgresql://…" selects PostgreSQL; anything else is a SQLite file path. */
export function backendKindOf(location: string): BackendKind {
  return /^postgres(ql)?:\/\//i.test(location) ? "postgres" : "sqlite";
}

/** The URL with its password replaced, for logs and messages. */
export function maskLocation(location: string): string {
  if (backendKindOf(location) === "sqlite") return location;
  try {
    const u = new URL(location);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return location.replace(/:[^:@/]*@/, ":***@");
  }
}

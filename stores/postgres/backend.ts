// The PostgreSQL backend: every store over one connection pool (several servers may share the
// database). Opening runs the migrations under an advisory lock and detects optional features.
import type { RetrievalChannels } from "../../core/retrieval/channels.js";
import { maskLocation, type Backend } from "../backend.js";
import { pgCatalogStores } from "./catalog.js";
import { PgConversationStore, PgStateStore } from "./infinity-stores.js";
import { PgMemoryStore, type PgMemoryStoreOptions } from "./memory-store.js";
import type { PgDb, PgLogger, PgProfile } from "./pool.js";
import { PgSessionIndex } from "./session-index.js";
import { openPg } from "./setup.js";
import { PgLlmBudgetStore, PgRootContexts, PgToggleStore } from "./small-stores.js";

export interface PostgresBackendOptions {
  channels?: Partial<RetrievalChannels>;
  embedder?: PgMemoryStoreOptions["embedder"];
  vectorWeight?: number;
  minSimilarity?: number;
  /** overrides of the URL's settings (?profile=, ?rls=, ?pool_max=) */
  profile?: PgProfile;
  rls?: boolean;
  max?: number;
  logger?: PgLogger;
}

export interface PostgresBackend extends Backend {
  kind: "postgres";
  pg: PgDb;
  memory: PgMemoryStore;
}

/** Stores over an opened, migrated PgDb (close() ends its pool). */
export function postgresBackendOver(db: PgDb, location: string, opts: PostgresBackendOptions = {}): PostgresBackend {
  const memOpts: PgMemoryStoreOptions = {};
  if (opts.channels) memOpts.channels = opts.channels;
  if (opts.embedder !== undefined) memOpts.embedder = opts.embedder;
  if (opts.vectorWeight !== undefined) memOpts.vectorWeight = opts.vectorWeight;
  if (opts.minSimilarity !== undefined) memOpts.minSimilarity = opts.minSimilarity;
  return {
    kind: "postgres",
    location: maskLocation(location),
    pg: db,
    memory: new PgMemoryStore(db, memOpts),
    toggles: new PgToggleStore(db),
    sessionIndex: new PgSessionIndex(db),
    roots: new PgRootContexts(db),
    llmBudget: new PgLlmBudgetStore(db),
    conversations: new PgConversationStore(db),
    state: new PgStateStore(db),
    ...pgCatalogStores(db),
    close: () => db.close(),
  };
}

export async function openPostgresBackend(url: string, opts: PostgresBackendOptions = {}): Promise<PostgresBackend> {
  const open: Parameters<typeof openPg>[1] = {};
  if (opts.profile) open.profile = opts.profile;
  if (opts.rls !== undefined) open.rls = opts.rls;
  if (opts.max !== undefined) open.max = opts.max;
  if (opts.logger) open.logger = opts.logger;
  const db = await openPg(url, open);
  return postgresBackendOver(db, url, opts);
}

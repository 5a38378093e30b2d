// Numbered, transactional schema migrations. Append only: a released step is never edited;
// a change is a new step. `PRAGMA user_version` holds the schema version.
import { cjkBigrams } from "../../core/retrieval/analyze.js";
import { OLD_ERROR } from "../../core/learning/failure.js";
import { projectKey } from "../../core/skills/scope.js";
import { rebuildWordIndex } from "./memory-fts.js";
import type { Db } from "./database.js";

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** data steps SQL cannot express (run after `sql`, in the same transaction) */
  up?: (db: Db) => void;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "memory records, sources, tags, edges, audit, full-text indexes",
    sql: `
CREATE TABLE memories (
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  lineage_id TEXT NOT NULL,
  vis_key TEXT NOT NULL,
  level TEXT NOT NULL CHECK (level IN ('user','project','session','thread')),
  user_id TEXT NOT NULL,
  project TEXT,
  session_id TEXT,
  thread_id TEXT,
  kind TEXT NOT NULL CHECK (kind IN ('fact','preference','project','lesson','procedure','note')),
  content TEXT NOT NULL,
  trust TEXT NOT NULL CHECK (trust IN ('user_confirmed','user_stated','model_inferred','tool_output','imported')),
  confidence REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
  status TEXT NOT NULL CHECK (status IN ('pending','active','superseded','expired','deleted')),
  flags TEXT NOT NULL DEFAULT '',
  version INTEGER NOT NULL,
  supersedes TEXT,
  valid_from INTEGER,
  valid_to INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER,
  content_hash TEXT
) STRICT;
CREATE INDEX memories_dup ON memories (vis_key, content_hash) WHERE status <> 'deleted';
CREATE INDEX memories_user_time ON memories (user_id, updated_at);
CREATE INDEX memories_vis_time ON memories (vis_key, updated_at);
CREATE INDEX memories_lineage ON memories (lineage_id, version);
CREATE INDEX memories_expiry ON memories (expires_at) WHERE expires_at IS NOT NULL AND status IN ('active','pending');

CREATE TABLE memory_tags (
  memory_rowid INTEGER NOT NULL REFERENCES memories(rowid) ON DELETE CASCADE,
  tag TEXT NOT NULL,
  PRIMARY KEY (memory_rowid, tag)
) STRICT, WITHOUT ROWID;

CREATE TABLE memory_sources (
  id INTEGER PRIMARY KEY,
  memory_rowid INTEGER NOT NULL REFERENCES memories(rowid) ON DELETE CASCADE,
  thread_id TEXT,
  tool_call_id TEXT,
  actor TEXT NOT NULL CHECK (actor IN ('user','model','tool','import')),
  at INTEGER NOT NULL
) STRICT;
CREATE INDEX memory_sources_memory ON memory_sources (memory_rowid);
CREATE INDEX memory_sources_call ON memory_sources (thread_id, tool_call_id) WHERE tool_call_id IS NOT NULL;

CREATE TABLE memory_source_messages (
  source_id INTEGER NOT NULL REFERENCES memory_sources(id) ON DELETE CASCADE,
  ord INTEGER NOT NULL,
  message_id TEXT NOT NULL,
  PRIMARY KEY (source_id, ord)
) STRICT, WITHOUT ROWID;

CREATE TABLE edges (
  src TEXT NOT NULL,
  dst TEXT NOT NULL,
  relation TEXT NOT NULL CHECK (relation IN ('supersedes','conflicts_with','derived_from')),
  at INTEGER NOT NULL,
  PRIMARY KEY (src, dst, relation)
) STRICT, WITHOUT ROWID;
CREATE INDEX edges_dst ON edges (dst);

CREATE TABLE audit_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target_kind TEXT NOT NULL,
  target_id TEXT NOT NULL,
  detail TEXT NOT NULL CHECK (json_valid(detail))
) STRICT;
CREATE INDEX audit_target ON audit_log (target_id, seq);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;

-- Word channel: porter-stemmed words, tags, CJK bigrams; vis_key is matched inside the MATCH
-- expression so the scope predicate is part of the index lookup. Contentless: text lives only in
-- memories.content, and a forget deletes the index entries.
CREATE VIRTUAL TABLE memory_fts USING fts5(
  content, tags, cjk, vis_key,
  tokenize = 'porter unicode61 remove_diacritics 2',
  content = '', contentless_delete = 1
);
INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1);

-- Trigram channel: substrings of 3+ characters (partial words, identifiers, CJK).
CREATE VIRTUAL TABLE memory_tri USING fts5(
  content, vis_key,
  tokenize = 'trigram',
  content = '', contentless_delete = 1
);
INSERT INTO memory_tri (memory_tri, rank) VALUES ('secure-delete', 1);
`,
  },
  {
    version: 2,
    name: "RAP invocation journal, callback outbox, user choices, per-thread toolset toggles",
    sql: `
CREATE TABLE rap_invocations (
  toolset TEXT NOT NULL,
  group_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  body TEXT,
  status TEXT NOT NULL CHECK (status IN ('received','done','cancelled','failed')),
  owner TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  finished_at INTEGER,
  PRIMARY KEY (toolset, group_id, call_id)
) STRICT;
CREATE INDEX rap_invocations_open ON rap_invocations (status) WHERE status = 'received';

CREATE TABLE rap_outbox (
  id INTEGER PRIMARY KEY,
  toolset TEXT NOT NULL,
  group_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  callback_url TEXT NOT NULL,
  body TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending','delivered','rejected','dead')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  lease_until INTEGER,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  finished_at INTEGER
) STRICT;
CREATE INDEX rap_outbox_due ON rap_outbox (next_attempt_at) WHERE status = 'pending';

CREATE TABLE rap_user_choices (
  choice_id TEXT NOT NULL,
  toolset TEXT NOT NULL,
  group_id TEXT NOT NULL,
  prompt TEXT NOT NULL,
  choices TEXT NOT NULL CHECK (json_valid(choices)),
  status TEXT NOT NULL CHECK (status IN ('waiting','answered','dismissed')),
  selected INTEGER,
  created_at INTEGER NOT NULL,
  answered_at INTEGER,
  PRIMARY KEY (toolset, choice_id)
) STRICT;

CREATE TABLE toolset_toggles (
  toolset TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  enabled INTEGER NOT NULL CHECK (enabled IN (0,1)),
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (toolset, thread_id)
) STRICT, WITHOUT ROWID;
`,
  },
  {
    version: 3,
    name: "Infinity conversation and state stores (threads, messages, compactions, dedup, metadata, subscriptions, choices)",
    sql: `
-- One row per thread; spawn_message_order = how many parent messages the child inherits.
-- No foreign keys: the reference store lets a child name an unknown parent and lets messages
-- arrive for a thread that has no record yet.
CREATE TABLE conv_threads (
  thread_id TEXT PRIMARY KEY,
  parent_thread_id TEXT,
  root_thread_id TEXT NOT NULL,
  spawn_message_order INTEGER CHECK (spawn_message_order >= 0),
  spawn_tool_call_id TEXT,
  closed INTEGER NOT NULL DEFAULT 0 CHECK (closed IN (0,1)),
  is_subscription_event INTEGER NOT NULL DEFAULT 0 CHECK (is_subscription_event IN (0,1)),
  is_compaction INTEGER NOT NULL DEFAULT 0 CHECK (is_compaction IN (0,1))
) STRICT, WITHOUT ROWID;
CREATE INDEX conv_threads_root ON conv_threads (root_thread_id);
CREATE INDEX conv_threads_parent ON conv_threads (parent_thread_id) WHERE parent_thread_id IS NOT NULL;

-- History: ord is the 0-based store index that cutoffs and up_to_order count in; body is the
-- InfinityMessage JSON exactly as the daemon writes it.
CREATE TABLE conv_messages (
  thread_id TEXT NOT NULL,
  ord INTEGER NOT NULL CHECK (ord >= 0),
  message_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('user','assistant','tool_call','tool_result','subscription_event')),
  body TEXT NOT NULL CHECK (json_valid(body)),
  PRIMARY KEY (thread_id, ord)
) STRICT, WITHOUT ROWID;
-- provenance (memory_source_messages) points at messages by id
CREATE INDEX conv_messages_message_id ON conv_messages (thread_id, message_id);

-- Summaries in push order (seq); the latest pushed one wins, not the largest up_to_order.
CREATE TABLE conv_compactions (
  thread_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  summary TEXT NOT NULL,
  up_to_order INTEGER NOT NULL CHECK (up_to_order >= 0),
  PRIMARY KEY (thread_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE state_processed_ids (
  thread_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('message','tool_call')),
  id TEXT NOT NULL,
  PRIMARY KEY (thread_id, kind, id)
) STRICT, WITHOUT ROWID;

-- keyed by the root thread id; value is the whole JSON document
CREATE TABLE state_metadata (
  root_thread_id TEXT PRIMARY KEY,
  value TEXT NOT NULL CHECK (json_valid(value))
) STRICT, WITHOUT ROWID;

CREATE TABLE state_subscriptions (
  thread_id TEXT NOT NULL,
  tool_call_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (thread_id, tool_call_id)
) STRICT, WITHOUT ROWID;

-- an upsert by choice_id keeps seq, so a replaced choice keeps its place in the list
CREATE TABLE state_user_choices (
  thread_id TEXT NOT NULL,
  choice_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  body TEXT NOT NULL CHECK (json_valid(body)),
  PRIMARY KEY (thread_id, choice_id)
) STRICT, WITHOUT ROWID;
`,
  },
  {
    version: 4,
    name: "session search: indexed conversation messages from Infinity stores, scoped per user",
    sql: `
-- Where conversations are read from: the daemon's files or an Infinity-shaped SQLite store.
CREATE TABLE session_sources (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('infinity-files','sqlite')),
  location TEXT NOT NULL,
  UNIQUE (kind, location)
) STRICT;

-- Per thread: how many of its own messages are indexed and a fingerprint of what was read, so
-- indexing is incremental and re-indexing is idempotent.
CREATE TABLE session_threads (
  source_id INTEGER NOT NULL REFERENCES session_sources(id) ON DELETE CASCADE,
  thread_id TEXT NOT NULL,
  root_thread_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  cwd TEXT,
  indexed_count INTEGER NOT NULL DEFAULT 0,
  fingerprint TEXT,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (source_id, thread_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX session_threads_root ON session_threads (source_id, root_thread_id);

CREATE TABLE session_messages (
  rowid INTEGER PRIMARY KEY,
  source_id INTEGER NOT NULL REFERENCES session_sources(id) ON DELETE CASCADE,
  thread_id TEXT NOT NULL,
  root_thread_id TEXT NOT NULL,
  ord INTEGER NOT NULL,
  message_id TEXT NOT NULL,
  role TEXT NOT NULL,
  text TEXT NOT NULL,
  vis_key TEXT NOT NULL,
  at INTEGER NOT NULL,
  UNIQUE (source_id, thread_id, ord)
) STRICT;
CREATE INDEX session_messages_thread ON session_messages (source_id, thread_id, ord);

-- Messages purged because a memory made from them was forgotten: never indexed again.
CREATE TABLE session_suppressed (
  source_id INTEGER NOT NULL,
  thread_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  PRIMARY KEY (source_id, thread_id, message_id)
) STRICT, WITHOUT ROWID;

CREATE VIRTUAL TABLE session_fts USING fts5(
  text, cjk, vis_key,
  tokenize = 'porter unicode61 remove_diacritics 2',
  content = '', contentless_delete = 1
);
INSERT INTO session_fts (session_fts, rank) VALUES ('secure-delete', 1);
`,
  },
  {
    version: 5,
    name: "trace events relayed by the provider proxy, the gRPC hook and the toolsets",
    sql: `
-- Raw experience for the learning loop. dedup_key makes ingestion idempotent: the same relayed
-- request seen twice is one event. Bodies hold excerpts, never whole payloads.
CREATE TABLE trace_events (
  id INTEGER PRIMARY KEY,
  source TEXT NOT NULL CHECK (source IN ('provider_proxy','grpc','toolset','harness')),
  dedup_key TEXT NOT NULL UNIQUE,
  thread_id TEXT,
  root_thread_id TEXT,
  kind TEXT NOT NULL,
  body TEXT NOT NULL CHECK (json_valid(body)),
  at INTEGER NOT NULL
) STRICT;
CREATE INDEX trace_events_thread ON trace_events (thread_id, id);

-- What the toolsets learned about a session from its invocations (user_id, project), so the
-- context hook can scope a model call when the daemon's own files are not readable.
CREATE TABLE root_contexts (
  root_thread_id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  project TEXT,
  updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
`,
  },
  {
    version: 6,
    name: "skill catalog: skills, immutable versions, files, grants, toggles, trials, search index",
    sql: `
-- A skill is a name and a pointer to its published version; versions never change content.
CREATE TABLE skills (
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL UNIQUE,
  published_version_id TEXT,
  pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0,1)),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE skill_versions (
  id TEXT PRIMARY KEY,
  skill_id TEXT NOT NULL REFERENCES skills(id),
  seq INTEGER NOT NULL,
  content_hash TEXT NOT NULL,
  description TEXT NOT NULL,
  frontmatter TEXT NOT NULL CHECK (json_valid(frontmatter)),
  body TEXT NOT NULL,
  allowed_tools TEXT NOT NULL CHECK (json_valid(allowed_tools)),
  author TEXT NOT NULL CHECK (author IN ('human','agent','import')),
  author_ref TEXT,
  parent_id TEXT REFERENCES skill_versions(id),
  trust TEXT NOT NULL CHECK (trust IN ('user_written','agent_proposed','imported')),
  status TEXT NOT NULL CHECK (status IN ('candidate','probationary','active','retired','rejected')),
  flags TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(flags)),
  eta REAL NOT NULL CHECK (eta >= 0 AND eta <= 1),
  trials INTEGER NOT NULL DEFAULT 0,
  passes INTEGER NOT NULL DEFAULT 0,
  views INTEGER NOT NULL DEFAULT 0,
  uses INTEGER NOT NULL DEFAULT 0,
  successes INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  published_at INTEGER,
  -- position on the skill's publication stack: a publish pushes, a rollback pops the current one
  live_order INTEGER,
  UNIQUE (skill_id, seq),
  UNIQUE (skill_id, content_hash)
) STRICT;

CREATE TABLE skill_files (
  version_id TEXT NOT NULL REFERENCES skill_versions(id),
  path TEXT NOT NULL,
  content TEXT NOT NULL,
  PRIMARY KEY (version_id, path)
) STRICT, WITHOUT ROWID;

-- The permission ceiling: tools a person granted the skill; a version's allowed-tools must fit.
CREATE TABLE skill_grants (
  skill_id TEXT NOT NULL REFERENCES skills(id),
  tool TEXT NOT NULL,
  granted_by TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (skill_id, tool)
) STRICT, WITHOUT ROWID;

-- Enable/disable per scope; scope_key is "level:value" so one index lookup finds a request's rows.
CREATE TABLE skill_toggles (
  skill_id TEXT NOT NULL REFERENCES skills(id),
  scope_key TEXT NOT NULL,
  level TEXT NOT NULL CHECK (level IN ('user','project','session','thread')),
  enabled INTEGER NOT NULL CHECK (enabled IN (0,1)),
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (scope_key, skill_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE skill_trials (
  id INTEGER PRIMARY KEY,
  version_id TEXT NOT NULL REFERENCES skill_versions(id),
  passed INTEGER NOT NULL CHECK (passed IN (0,1)),
  note TEXT,
  thread_id TEXT,
  at INTEGER NOT NULL
) STRICT;
CREATE INDEX skill_trials_version ON skill_trials (version_id, id);

-- Name + description of each skill's published version only (rowid = skills.rowid): an
-- unpublished candidate is invisible to search by construction.
CREATE VIRTUAL TABLE skill_fts USING fts5(
  name, description,
  tokenize = 'porter unicode61 remove_diacritics 2'
);
`,
  },
  {
    version: 7,
    name: "daily model-call budget of the learning loop's LLM",
    sql: `
-- One row per UTC day (YYYY-MM-DD): calls taken so far. Shared by every process on the database.
CREATE TABLE llm_budget (
  day TEXT PRIMARY KEY,
  calls INTEGER NOT NULL CHECK (calls >= 0)
) STRICT, WITHOUT ROWID;
`,
  },
  {
    version: 8,
    name: "learning loop: episodes, steps, reward signals, feedback, candidates, work queue, events",
    sql: `
-- One task in one thread: a user message up to the final answer with no pending call. Keyed by
-- where it was read from and the runtime's own order of its first message, so re-ingesting a
-- thread updates the same rows. Texts are excerpts; raw payloads are never kept.
CREATE TABLE learning_episodes (
  id TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  root_thread_id TEXT NOT NULL,
  start_ord INTEGER NOT NULL CHECK (start_ord >= 0),
  end_ord INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('open','done','interrupted')),
  task TEXT NOT NULL,
  final_excerpt TEXT,
  reward REAL CHECK (reward IS NULL OR (reward >= -1 AND reward <= 1)),
  -- 1 when some signal other than the LLM rubric backs the reward
  grounded INTEGER NOT NULL DEFAULT 0 CHECK (grounded IN (0,1)),
  suppressed INTEGER NOT NULL DEFAULT 0 CHECK (suppressed IN (0,1)),
  candidates_done INTEGER NOT NULL DEFAULT 0 CHECK (candidates_done IN (0,1)),
  content_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (source, thread_id, start_ord)
) STRICT;
CREATE INDEX learning_episodes_thread ON learning_episodes (thread_id, start_ord);

CREATE TABLE learning_steps (
  episode_id TEXT NOT NULL REFERENCES learning_episodes(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL CHECK (idx >= 0),
  ord INTEGER NOT NULL,
  tool TEXT NOT NULL,
  call_id TEXT,
  args_digest TEXT NOT NULL,
  args_shape TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('ok','error','pending')),
  verdict TEXT CHECK (verdict IS NULL OR verdict IN ('pass','fail')),
  excerpt TEXT NOT NULL,
  latency_ms INTEGER,
  alpha REAL NOT NULL CHECK (alpha >= 0 AND alpha <= 1),
  value REAL CHECK (value IS NULL OR (value >= -1 AND value <= 1)),
  PRIMARY KEY (episode_id, idx)
) STRICT, WITHOUT ROWID;

-- Provenance: the messages an episode was built from (edges, not JSON arrays).
CREATE TABLE learning_episode_messages (
  episode_id TEXT NOT NULL REFERENCES learning_episodes(id) ON DELETE CASCADE,
  ord INTEGER NOT NULL,
  message_id TEXT NOT NULL,
  role TEXT NOT NULL,
  PRIMARY KEY (episode_id, ord)
) STRICT, WITHOUT ROWID;
CREATE INDEX learning_episode_messages_id ON learning_episode_messages (message_id);

-- Every reward signal with its source and weight. Derived signals (outcome, tool errors, user
-- reactions) are recomputed when the episode is rebuilt; explicit and rubric ones are kept.
CREATE TABLE learning_signals (
  id INTEGER PRIMARY KEY,
  episode_id TEXT NOT NULL REFERENCES learning_episodes(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('explicit','outcome','tool_error','user_reaction','rubric')),
  source TEXT NOT NULL,
  value REAL NOT NULL CHECK (value >= -1 AND value <= 1),
  weight REAL NOT NULL CHECK (weight >= 0),
  note TEXT,
  dedup_key TEXT NOT NULL UNIQUE,
  at INTEGER NOT NULL
) STRICT;
CREATE INDEX learning_signals_episode ON learning_signals (episode_id);

-- task_feedback calls, kept until the episode they rate is known (the call may arrive before
-- its thread was ingested).
CREATE TABLE learning_feedback (
  thread_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  episode_id TEXT,
  rating REAL NOT NULL CHECK (rating >= -1 AND rating <= 1),
  note TEXT,
  at INTEGER NOT NULL,
  PRIMARY KEY (thread_id, call_id)
) STRICT, WITHOUT ROWID;

-- Memory candidates proposed from an episode (created pending, or merged into an existing memory).
CREATE TABLE learning_candidates (
  episode_id TEXT NOT NULL REFERENCES learning_episodes(id) ON DELETE CASCADE,
  memory_id TEXT NOT NULL,
  disposition TEXT NOT NULL CHECK (disposition IN ('created','merged','withdrawn')),
  at INTEGER NOT NULL,
  PRIMARY KEY (episode_id, memory_id)
) STRICT, WITHOUT ROWID;

-- The work queue on disk: a thread with new experience waits here until processed, so a
-- restart resumes where a killed worker stopped. A lease keeps two workers off one thread.
CREATE TABLE learning_queue (
  source TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  root_thread_id TEXT NOT NULL,
  enqueued_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  lease_until INTEGER,
  last_error TEXT,
  PRIMARY KEY (source, thread_id)
) STRICT, WITHOUT ROWID;

-- How far each source was read: messages of a thread, or trace event ids of a source.
CREATE TABLE learning_cursors (
  source TEXT NOT NULL,
  key TEXT NOT NULL,
  position INTEGER NOT NULL,
  PRIMARY KEY (source, key)
) STRICT, WITHOUT ROWID;

-- What the worker did or failed at, per episode or thread (failures stay isolated).
CREATE TABLE learning_events (
  id INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  kind TEXT NOT NULL,
  thread_id TEXT,
  episode_id TEXT,
  detail TEXT NOT NULL CHECK (json_valid(detail))
) STRICT;
CREATE INDEX learning_events_kind ON learning_events (kind, id);
`,
  },
  {
    version: 9,
    name: "word index gains a context column: neighbouring memories of the same conversation and the memory's date",
    sql: `
DROP TABLE memory_fts;
CREATE VIRTUAL TABLE memory_fts USING fts5(
  content, tags, cjk, context, vis_key,
  tokenize = 'porter unicode61 remove_diacritics 2',
  content = '', contentless_delete = 1
);
INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1);
CREATE INDEX memory_sources_thread ON memory_sources (thread_id, memory_rowid) WHERE thread_id IS NOT NULL;
`,
    up: (db) => rebuildWordIndex(db),
  },
  {
    version: 10,
    name: "skills that evolve: policies with provenance edges, evaluation reports, approval requests, golden tasks",
    sql: `
-- A recurring successful pattern across episodes (core/learning/policy.ts), keyed by signature.
CREATE TABLE learning_policies (
  id TEXT PRIMARY KEY,
  signature TEXT NOT NULL UNIQUE,
  tools TEXT NOT NULL CHECK (json_valid(tools)),
  key_terms TEXT NOT NULL CHECK (json_valid(key_terms)),
  pattern TEXT NOT NULL CHECK (json_valid(pattern)),
  support INTEGER NOT NULL,
  mean_value REAL NOT NULL,
  gain REAL NOT NULL,
  eligible INTEGER NOT NULL CHECK (eligible IN (0,1)),
  content_hash TEXT NOT NULL,
  -- the skill built from it and the policy content it was built from (drift = a different hash)
  skill_name TEXT,
  built_hash TEXT,
  built_gain REAL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX learning_policies_skill ON learning_policies (skill_name) WHERE skill_name IS NOT NULL;

-- Provenance: the episodes a policy was induced from (support) and compared with (counter).
CREATE TABLE learning_policy_episodes (
  policy_id TEXT NOT NULL REFERENCES learning_policies(id) ON DELETE CASCADE,
  episode_id TEXT NOT NULL REFERENCES learning_episodes(id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('support','counter')),
  PRIMARY KEY (policy_id, episode_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX learning_policy_episodes_episode ON learning_policy_episodes (episode_id);

-- Every evaluation of a candidate (passed or not), shown in its approval request.
CREATE TABLE skill_eval_reports (
  id INTEGER PRIMARY KEY,
  skill_name TEXT NOT NULL,
  version_id TEXT,
  baseline_version_id TEXT,
  policy_id TEXT,
  passed INTEGER NOT NULL CHECK (passed IN (0,1)),
  report TEXT NOT NULL CHECK (json_valid(report)),
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX skill_eval_reports_skill ON skill_eval_reports (skill_name, id);

-- What the learning loop and the curator ask a person to decide: publish a candidate, merge two
-- skills, retire a stale one. Decided by the CLI or the skills toolset's user_choice.
CREATE TABLE skill_requests (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('publish','merge','retire')),
  skill_name TEXT NOT NULL,
  version_id TEXT,
  other_skill TEXT,
  policy_id TEXT,
  report_id INTEGER REFERENCES skill_eval_reports(id),
  status TEXT NOT NULL CHECK (status IN ('pending','approved','rejected','superseded')),
  detail TEXT NOT NULL CHECK (json_valid(detail)),
  created_at INTEGER NOT NULL,
  decided_at INTEGER,
  decided_by TEXT
) STRICT;
CREATE INDEX skill_requests_pending ON skill_requests (status, created_at) WHERE status = 'pending';

-- Golden tasks stored with a skill: a candidate that fails one its baseline passes is rejected.
CREATE TABLE skill_golden_tasks (
  id INTEGER PRIMARY KEY,
  skill_name TEXT NOT NULL,
  task TEXT NOT NULL,
  tools TEXT NOT NULL CHECK (json_valid(tools)),
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX skill_golden_tasks_skill ON skill_golden_tasks (skill_name);
`,
  },
  {
    version: 11,
    name: "vector channel metadata: which embedder filled memory_vec, at what dimension",
    sql: `
-- One row: the embedder whose vectors memory_vec holds. The vec0 table itself is created at run
-- time for that dimension (stores/sqlite/vector-index.ts); another embedder id or dimension
-- empties it, and \`memory reindex --vectors\` fills it again.
CREATE TABLE memory_vector_meta (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  embedder_id TEXT NOT NULL,
  dimensions INTEGER NOT NULL CHECK (dimensions > 0),
  created_at INTEGER NOT NULL
) STRICT;
`,
  },
  {
    version: 12,
    name: "semantic channel: a change token per scope",
    sql: `
-- Every write transaction that changes a scope's memories gives the scope a fresh random token
-- (stores/sqlite/memory-store.ts). A process holding a derived index of the scope (the semantic
-- channel's) compares tokens to know whether any connection changed the scope since it read it:
-- a change in one scope no longer invalidates the others. Keys and numbers only, no content.
CREATE TABLE scope_tokens (
  vis_key TEXT PRIMARY KEY,
  token INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
`,
  },
  {
    version: 13,
    name: "memories by date per scope",
    sql: `
-- A scope's memories by the date they are about, else by when they were written: a question naming
-- a period ("what did we do yesterday?") whose words find fewer than it asks for lists that
-- period's memories, newest first (stores/sqlite/memory-store.ts periodMemories).
CREATE INDEX memories_vis_dated ON memories (vis_key, coalesce(valid_from, created_at));
`,
  },
  {
    version: 14,
    name: "word index: a kind token beside the scope key; undated memories dated by the day they were written",
    sql: `
-- The scope column gains a kind token (stores/sqlite/memory-fts.ts kindToken), so a search filtered
-- by kind matches inside the index: one with a kind no memory in the scope has ends at once instead
-- of ranking every word match to filter it away. A memory without valid_from gets its creation
-- day in the context column, as the dated pass (DATED_AT) already dates it. Rows are rewritten.
DROP TABLE memory_fts;
CREATE VIRTUAL TABLE memory_fts USING fts5(
  content, tags, cjk, context, vis_key,
  tokenize = 'porter unicode61 remove_diacritics 2',
  content = '', contentless_delete = 1
);
INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1);
`,
    up: (db) => rebuildWordIndex(db),
  },
  {
    version: 15,
    name: "full-text tables with forgotten rows still to merge away",
    sql: `
-- A forget tombstones its rows in the contentless full-text tables; their postings stay in their
-- segments until merged (stores/sqlite/fts-purge.ts). A table is listed here from the forgetting
-- transaction until a purge has merged it, so a process that stops first leaves the work to the
-- next one. gen moves with every forget, so a purge that started earlier does not clear a newer
-- mark. Table names only.
CREATE TABLE fts_purge (
  tbl TEXT PRIMARY KEY,
  gen INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
`,
  },
  {
    version: 16,
    name: "each scope key's person",
    sql: `
-- A person's view (the review page, the CLI's --user, export, a search of everything they own)
-- starts from their scope keys (stores/sqlite/memory-store.ts ownerKeys). A DISTINCT over their
-- memories read every one: 70 ms for a person with 700k memories, on every page. The change-token
-- table already holds one row per scope, written with each write to it; it now names the scope's
-- person too. Keys written before the tokens existed get a row (token 0: a loaded semantic index
-- reads its scope again once).
ALTER TABLE scope_tokens ADD COLUMN user_id TEXT;
INSERT INTO scope_tokens (vis_key, token, user_id)
  SELECT vis_key, 0, min(user_id) FROM memories WHERE true GROUP BY vis_key
  ON CONFLICT (vis_key) DO UPDATE SET user_id = excluded.user_id;
CREATE INDEX scope_tokens_user ON scope_tokens (user_id, vis_key);
`,
  },
  {
    version: 17,
    name: "pending memories by scope and by person",
    sql: `
-- The review list (memory_review, the review page, \`memory review\`) reads a view's pending
-- memories, oldest first. They are few among many active ones: without these, a view of 490k
-- memories was read whole (0.6-0.8 s) to find none. Partial indexes, so they hold pending rows only.
CREATE INDEX memories_pending_vis ON memories (status, vis_key, updated_at) WHERE status = 'pending';
CREATE INDEX memories_pending_user ON memories (status, user_id, updated_at) WHERE status = 'pending';
`,
  },
  {
    version: 18,
    name: "project skill settings keyed by a JSON pair",
    // A project-level skill setting was keyed "project:" + user + NUL + project; PostgreSQL text
    // cannot hold a NUL, so core/skills/scope.ts projectKey now writes the JSON array [user, project].
    sql: "",
    up: (db) => {
      const rows = db.prepare(`SELECT skill_id, scope_key FROM skill_toggles WHERE level = 'project'`).all() as { skill_id: string; scope_key: string }[];
      const rekey = db.prepare(`UPDATE skill_toggles SET scope_key = ? WHERE scope_key = ? AND skill_id = ?`);
      for (const r of rows) {
        const pair = r.scope_key.slice("project:".length);
        const cut = pair.indexOf("\u0000");
        if (cut >= 0) rekey.run(`project:${projectKey(pair.slice(0, cut), pair.slice(cut + 1))}`, r.scope_key, r.skill_id);
      }
    },
  },
  {
    version: 19,
    name: "trigram index without positions",
    sql: `
-- The trigram channel is a fallback for partial words and CJK runs. Its positions (detail=full)
-- were 65% of its size (394 -> 137 bytes a memory) and most of its write cost; without them a word
-- is matched as all of its trigrams and the rows are then checked for the word itself
-- (memory-store.ts trigramHits). Without positions there are no column filters either, and the
-- scope key column was never matched (scope is filtered in the join): one column. Rebuilt from
-- the memories that had a row (every one not forgotten); a fresh table has no tombstones to merge.
DROP TABLE memory_tri;
CREATE VIRTUAL TABLE memory_tri USING fts5(
  content,
  tokenize = 'trigram',
  content = '', contentless_delete = 1, detail = none
);
INSERT INTO memory_tri (memory_tri, rank) VALUES ('secure-delete', 1);
INSERT INTO memory_tri (rowid, content) SELECT rowid, content FROM memories WHERE status <> 'deleted' AND content <> '' ORDER BY rowid;
DELETE FROM fts_purge WHERE tbl = 'memory_tri';
`,
  },
  {
    version: 20,
    name: "word indexes keep combining marks inside words",
    sql: `
-- unicode61's default categories made a combining mark a separator: a Devanagari, Bengali, Tamil,
-- Thai or vowelled Arabic word was indexed as loose letters and could not be found as a word.
-- The three word indexes get the M* category (stores/sqlite/word-tokenizer.ts) and are rebuilt:
-- memories from the memories table (up), past conversations from the indexed messages (up, which
-- computes their CJK bigrams), skills from the search table's own copy. Fresh tables carry no
-- tombstones, so nothing is left to merge.
DROP TABLE memory_fts;
CREATE VIRTUAL TABLE memory_fts USING fts5(
  content, tags, cjk, context, vis_key,
  tokenize = "porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'",
  content = '', contentless_delete = 1
);
INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1);
DROP TABLE session_fts;
CREATE VIRTUAL TABLE session_fts USING fts5(
  text, cjk, vis_key,
  tokenize = "porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'",
  content = '', contentless_delete = 1
);
INSERT INTO session_fts (session_fts, rank) VALUES ('secure-delete', 1);
CREATE VIRTUAL TABLE skill_fts_marks USING fts5(
  name, description,
  tokenize = "porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'"
);
INSERT INTO skill_fts_marks (rowid, name, description) SELECT rowid, name, description FROM skill_fts;
DROP TABLE skill_fts;
ALTER TABLE skill_fts_marks RENAME TO skill_fts;
DELETE FROM fts_purge WHERE tbl IN ('memory_fts', 'session_fts');
`,
    up: (db) => {
      rebuildWordIndex(db);
      const insert = db.prepare(`INSERT INTO session_fts (rowid, text, cjk, vis_key) VALUES (?, ?, ?, ?)`);
      // in pages: a statement cannot run while another's rows are being read, and all at once
      // would hold every indexed message in memory
      const page = db.prepare(`SELECT rowid, text, vis_key FROM session_messages WHERE rowid > ? ORDER BY rowid LIMIT 1000`);
      for (let after = 0; ; ) {
        const rows = page.all(after) as { rowid: number; text: string; vis_key: string }[];
        if (rows.length === 0) break;
        for (const m of rows) insert.run(m.rowid, m.text, cjkBigrams(m.text).join(" "), m.vis_key);
        after = rows.at(-1)!.rowid;
      }
    },
  },
  {
    version: 21,
    name: "skill search index deletes in place",
    sql: `
-- A forget withdraws a learned skill's version (core/learning/skill-forget.ts) and the search row
-- of its skill changes: with secure-delete, a deleted row's postings leave the index at once
-- instead of staying in its segments until a merge (SQLite's own secure_delete zeroes the freed
-- pages). The merge here takes out what earlier pointer moves left behind.
INSERT INTO skill_fts (skill_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO skill_fts (skill_fts) VALUES ('optimize');
`,
  },
  {
    version: 22,
    name: "session threads know their parent",
    sql: `
-- A memory remembered in a child thread was asked for in the parent: a forget purges the user's
-- turn there (the parent's last user message before the child was spawned). Threads indexed
-- before this step learn their parent the next time they change.
ALTER TABLE session_threads ADD COLUMN parent_thread_id TEXT;
ALTER TABLE session_threads ADD COLUMN spawn_order INTEGER;
`,
  },
  {
    version: 23,
    name: "session threads remember the messages they left out",
    sql: `
-- Messages of a kind the reader did not know (a newer daemon's) were left out and the thread's
-- watermark moved past them: after an upgrade that reads them they were never indexed. The first
-- one left out and the reader's message format then; a reader of another format reads from there.
ALTER TABLE session_threads ADD COLUMN skipped_from INTEGER;
ALTER TABLE session_threads ADD COLUMN skipped_format TEXT;
`,
  },
  {
    version: 24,
    name: "the learning worker remembers the messages it left out",
    sql: `
-- Messages of a kind the worker's reader did not know (a newer daemon's) were left out and the
-- thread's cursor moved past them: after an upgrade that reads them they were never learned from.
-- The first one left out and the reader's message format then; a reader of another format
-- re-learns the episodes from there.
CREATE TABLE learning_skips (
  source TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  skipped_from INTEGER NOT NULL,
  skipped_format TEXT NOT NULL,
  PRIMARY KEY (source, thread_id)
) STRICT, WITHOUT ROWID;
`,
  },
  {
    version: 25,
    name: "the learning worker remembers the threads it dropped",
    sql: `
-- A thread dropped after its retries (a reader that could not read it) was not tried again until a
-- new message arrived, even by a version that reads it. Its reader's format and when it may be
-- tried again (later after each drop); a reader of another format tries it at once.
CREATE TABLE learning_dropped (
  source TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  root_thread_id TEXT NOT NULL,
  format TEXT NOT NULL,
  drops INTEGER NOT NULL,
  retry_at INTEGER NOT NULL,
  reason TEXT NOT NULL,
  PRIMARY KEY (source, thread_id)
) STRICT, WITHOUT ROWID;
`,
  },
  {
    version: 26,
    name: "a skill request being approved says who approves it, since when, from which process",
    sql: `
-- Approving ran the request's action and then recorded the decision: a decline by another process
-- in between left a request "rejected" whose skill was already retired or merged. An approval now
-- claims the request first (these columns, on a row still 'pending': the status CHECK stays as it
-- is, since Aurora DSQL cannot change one), acts, then records "approved" from that claim; a decline
-- meanwhile is refused. A claim left by a process that stopped is finished by the next approval or
-- a server's start-up sweep.
ALTER TABLE skill_requests ADD COLUMN approving_by TEXT;
ALTER TABLE skill_requests ADD COLUMN approving_at INTEGER;
ALTER TABLE skill_requests ADD COLUMN approving_process TEXT;
`,
  },
  {
    version: 27,
    name: "the learning loop keeps no error message text, and the fingerprints of rejected candidates",
    sql: `
-- An error's message can quote what failed (Node's JSON.parse quotes the thread file it could not
-- parse), and these rows outlived a forget of that text. From here on they hold the error's class,
-- code and place only (core/learning/failure.ts); what older versions kept is cleared.
UPDATE learning_queue SET last_error = NULL WHERE last_error IS NOT NULL;
UPDATE learning_dropped SET reason = '${OLD_ERROR}';
UPDATE learning_events SET detail = json_set(detail, '$.error', '${OLD_ERROR}') WHERE json_extract(detail, '$.error') IS NOT NULL;

-- A learned candidate a person rejected (or forgot) came back when its thread was learnt again
-- (after an upgrade that reads more of it): its text was purged, so nothing matched it. Kept: a
-- hash of its normalised text per visibility key (core/learning/candidates.ts), no text.
CREATE TABLE learning_rejected (
  vis_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (vis_key, fingerprint)
) STRICT, WITHOUT ROWID;
-- (a forget asks which of its memories the loop proposed or added evidence to)
CREATE INDEX learning_candidates_memory ON learning_candidates (memory_id);
`,
  },
  {
    version: 28,
    name: "forgets claimed and not yet finished: who claimed them, and an index by claim time",
    sql: `
-- serve's start-up sweep finishes the forgets a stopped process claimed and never purged
-- (MemoryStore.unfinishedForgets): deleted rows that still hold their text. Without an index it
-- read every memory to find the few, at each start. A partial index: it holds claimed rows only
-- (a purge empties the text and takes the row out).
CREATE INDEX memories_unfinished_forgets ON memories (updated_at) WHERE status = 'deleted' AND content <> '';
-- The process holding a claim (core/process-identity.ts), so the sweep leaves a forget
-- whose process still runs its cascade to it instead of running that cascade a second time.
-- Claims made before have none: the sweep finishes them, as it did. Cleared by the purge.
ALTER TABLE memories ADD COLUMN claimed_by TEXT;
`,
  },
];

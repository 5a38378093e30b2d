// Numbered, transactional schema migrations. Append only: a released step is never edited;
// a change is a new step. `PRAGMA user_version` holds the schema version.

export interface Migration {
  version: number;
  name: string;
  sql: string;
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
];

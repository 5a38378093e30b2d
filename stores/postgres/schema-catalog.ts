// PostgreSQL schema of the RAP server state, trace events, skills catalog, learning loop and skill
// evolution (versions 100–199; the memory side owns 1–99 in schema-memory.ts). Append only: a
// released step is never edited. Table and column names mirror stores/sqlite/migrations.ts so
// `infinity-memory migrate` copies rows by name; times are epoch milliseconds (bigint), flags
// 0/1 integers and JSON documents text, exactly as in SQLite.
//
// Each step has a "postgres" text and a "dsql" text (Aurora DSQL: no sequences — the stores
// supply ids —, no foreign keys, triggers, GIN or tsvector columns, no partial indexes; indexes
// built with CREATE INDEX ASYNC). What that costs is listed in stores/postgres/README.md.
import { OLD_ERROR } from "../../core/learning/failure.js";
import type { PgMigration } from "./migrate.js";
import { rebuildSkillSearch } from "./skill-store.js";
import { clearOldErrorsDsql } from "./old-errors.js";

type P = "postgres" | "dsql";

/** an id column: a sequence on PostgreSQL, supplied by the store (RowIds) on DSQL */
const serial = (p: P) => (p === "postgres" ? "bigserial" : "bigint");
const ref = (p: P, target: string, extra = "") => (p === "postgres" ? ` REFERENCES ${target}${extra}` : "");
const idx = (p: P) => (p === "postgres" ? "CREATE INDEX" : "CREATE INDEX ASYNC");
const where = (p: P, cond: string) => (p === "postgres" ? ` WHERE ${cond}` : "");

export type CatalogMigration = PgMigration;

function step(version: number, name: string, ddl: (p: P) => string): PgMigration {
  return { version, name, sql: ddl("postgres"), dsql: ddl("dsql") };
}

export const CATALOG_MIGRATIONS: PgMigration[] = [
  step(100, "RAP invocation journal, callback outbox, user choices; trace events", (p) => `
CREATE TABLE rap_invocations (
  toolset text NOT NULL,
  group_id text NOT NULL,
  call_id text NOT NULL,
  body text,
  status text NOT NULL CHECK (status IN ('received','done','cancelled','failed')),
  owner text NOT NULL,
  received_at bigint NOT NULL,
  finished_at bigint,
  -- SQLite orders open calls by its implicit rowid; here an explicit id does it
  seq ${serial(p)} NOT NULL,
  PRIMARY KEY (toolset, group_id, call_id)
);
${idx(p)} rap_invocations_open ON rap_invocations (toolset, received_at, seq)${where(p, "status = 'received'")};

CREATE TABLE rap_outbox (
  id ${serial(p)} PRIMARY KEY,
  toolset text NOT NULL,
  group_id text NOT NULL,
  call_id text NOT NULL,
  callback_url text NOT NULL,
  body text,
  status text NOT NULL CHECK (status IN ('pending','delivered','rejected','dead')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  lease_until bigint,
  last_error text,
  created_at bigint NOT NULL,
  finished_at bigint
);
${idx(p)} rap_outbox_due ON rap_outbox (${p === "postgres" ? "next_attempt_at, id) WHERE status = 'pending'" : "status, next_attempt_at, id)"};
${idx(p)} rap_outbox_call ON rap_outbox (toolset, group_id, call_id, id)${where(p, "status = 'pending'")};

CREATE TABLE rap_user_choices (
  choice_id text NOT NULL,
  toolset text NOT NULL,
  group_id text NOT NULL,
  prompt text NOT NULL,
  choices text NOT NULL,
  status text NOT NULL CHECK (status IN ('waiting','answered','dismissed')),
  selected integer,
  created_at bigint NOT NULL,
  answered_at bigint,
  PRIMARY KEY (toolset, choice_id)
);

CREATE TABLE trace_events (
  id ${serial(p)} PRIMARY KEY,
  source text NOT NULL CHECK (source IN ('provider_proxy','grpc','toolset','harness')),
  dedup_key text NOT NULL UNIQUE,
  thread_id text,
  root_thread_id text,
  kind text NOT NULL,
  body text NOT NULL,
  at bigint NOT NULL
);
${idx(p)} trace_events_thread ON trace_events (thread_id, id);
`),
  step(101, "skill catalog: skills, immutable versions, files, grants, toggles, trials, search index", (p) => `
CREATE TABLE skills (
  rowid ${serial(p)} NOT NULL UNIQUE,
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  published_version_id text,
  pinned integer NOT NULL DEFAULT 0 CHECK (pinned IN (0,1)),
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);

CREATE TABLE skill_versions (
  id text PRIMARY KEY,
  skill_id text NOT NULL${ref(p, "skills(id)")},
  seq integer NOT NULL,
  content_hash text NOT NULL,
  description text NOT NULL,
  frontmatter text NOT NULL,
  body text NOT NULL,
  allowed_tools text NOT NULL,
  author text NOT NULL CHECK (author IN ('human','agent','import')),
  author_ref text,
  parent_id text${ref(p, "skill_versions(id)")},
  trust text NOT NULL CHECK (trust IN ('user_written','agent_proposed','imported')),
  status text NOT NULL CHECK (status IN ('candidate','probationary','active','retired','rejected')),
  flags text NOT NULL DEFAULT '[]',
  eta double precision NOT NULL CHECK (eta >= 0 AND eta <= 1),
  trials integer NOT NULL DEFAULT 0,
  passes integer NOT NULL DEFAULT 0,
  views integer NOT NULL DEFAULT 0,
  uses integer NOT NULL DEFAULT 0,
  successes integer NOT NULL DEFAULT 0,
  failures integer NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  published_at bigint,
  live_order integer,
  UNIQUE (skill_id, seq),
  UNIQUE (skill_id, content_hash)
);
${
  p === "postgres"
    ? `
-- Versions never change content: an UPDATE touching a content column is refused.
CREATE FUNCTION skill_versions_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.content_hash IS DISTINCT FROM OLD.content_hash OR NEW.body IS DISTINCT FROM OLD.body
     OR NEW.description IS DISTINCT FROM OLD.description OR NEW.frontmatter IS DISTINCT FROM OLD.frontmatter
     OR NEW.allowed_tools IS DISTINCT FROM OLD.allowed_tools OR NEW.skill_id IS DISTINCT FROM OLD.skill_id
     OR NEW.seq IS DISTINCT FROM OLD.seq THEN
    RAISE EXCEPTION 'skill versions are immutable';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER skill_versions_immutable BEFORE UPDATE ON skill_versions
  FOR EACH ROW EXECUTE FUNCTION skill_versions_immutable();`
    : ""
}

CREATE TABLE skill_files (
  version_id text NOT NULL${ref(p, "skill_versions(id)")},
  path text NOT NULL,
  content text NOT NULL,
  PRIMARY KEY (version_id, path)
);

CREATE TABLE skill_grants (
  skill_id text NOT NULL${ref(p, "skills(id)")},
  tool text NOT NULL,
  granted_by text NOT NULL,
  at bigint NOT NULL,
  PRIMARY KEY (skill_id, tool)
);

CREATE TABLE skill_toggles (
  skill_id text NOT NULL${ref(p, "skills(id)")},
  scope_key text NOT NULL,
  level text NOT NULL CHECK (level IN ('user','project','session','thread')),
  enabled integer NOT NULL CHECK (enabled IN (0,1)),
  updated_at bigint NOT NULL,
  PRIMARY KEY (scope_key, skill_id)
);

CREATE TABLE skill_trials (
  id ${serial(p)} PRIMARY KEY,
  version_id text NOT NULL${ref(p, "skill_versions(id)")},
  passed integer NOT NULL CHECK (passed IN (0,1)),
  note text,
  thread_id text,
  at bigint NOT NULL
);
${idx(p)} skill_trials_version ON skill_trials (version_id, id);
${
  p === "postgres"
    ? `
-- Name + description of each skill's published version only (PostgreSQL-only table, derived:
-- rebuilt from skills + skill_versions after a migration). Name words weigh more (A) than
-- description words (B), as the SQLite index weighs its columns 3:1. (DSQL: no tsvector; the
-- store matches words in the published rows directly.)
CREATE TABLE skill_search (
  skill_id text PRIMARY KEY REFERENCES skills(id),
  doc tsvector NOT NULL
);
CREATE INDEX skill_search_doc ON skill_search USING gin (doc);`
    : ""
}
`),
  step(102, "learning loop: episodes, steps, reward signals, feedback, candidates, work queue, events", (p) => `
CREATE TABLE learning_episodes (
  id text PRIMARY KEY,
  source text NOT NULL,
  thread_id text NOT NULL,
  root_thread_id text NOT NULL,
  start_ord integer NOT NULL CHECK (start_ord >= 0),
  end_ord integer NOT NULL,
  state text NOT NULL CHECK (state IN ('open','done','interrupted')),
  task text NOT NULL,
  final_excerpt text,
  reward double precision CHECK (reward IS NULL OR (reward >= -1 AND reward <= 1)),
  grounded integer NOT NULL DEFAULT 0 CHECK (grounded IN (0,1)),
  suppressed integer NOT NULL DEFAULT 0 CHECK (suppressed IN (0,1)),
  candidates_done integer NOT NULL DEFAULT 0 CHECK (candidates_done IN (0,1)),
  content_hash text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  UNIQUE (source, thread_id, start_ord)
);
${idx(p)} learning_episodes_thread ON learning_episodes (thread_id, start_ord);
${idx(p)} learning_episodes_updated ON learning_episodes (updated_at);

CREATE TABLE learning_steps (
  episode_id text NOT NULL${ref(p, "learning_episodes(id)", " ON DELETE CASCADE")},
  idx integer NOT NULL CHECK (idx >= 0),
  ord integer NOT NULL,
  tool text NOT NULL,
  call_id text,
  args_digest text NOT NULL,
  args_shape text NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('ok','error','pending')),
  verdict text CHECK (verdict IS NULL OR verdict IN ('pass','fail')),
  excerpt text NOT NULL,
  latency_ms integer,
  alpha double precision NOT NULL CHECK (alpha >= 0 AND alpha <= 1),
  value double precision CHECK (value IS NULL OR (value >= -1 AND value <= 1)),
  PRIMARY KEY (episode_id, idx)
);
${idx(p)} learning_steps_call ON learning_steps (call_id)${where(p, "call_id IS NOT NULL")};

CREATE TABLE learning_episode_messages (
  episode_id text NOT NULL${ref(p, "learning_episodes(id)", " ON DELETE CASCADE")},
  ord integer NOT NULL,
  message_id text NOT NULL,
  role text NOT NULL,
  PRIMARY KEY (episode_id, ord)
);
${idx(p)} learning_episode_messages_id ON learning_episode_messages (message_id);

CREATE TABLE learning_signals (
  id ${serial(p)} PRIMARY KEY,
  episode_id text NOT NULL${ref(p, "learning_episodes(id)", " ON DELETE CASCADE")},
  kind text NOT NULL CHECK (kind IN ('explicit','outcome','tool_error','user_reaction','rubric')),
  source text NOT NULL,
  value double precision NOT NULL CHECK (value >= -1 AND value <= 1),
  weight double precision NOT NULL CHECK (weight >= 0),
  note text,
  dedup_key text NOT NULL UNIQUE,
  at bigint NOT NULL
);
${idx(p)} learning_signals_episode ON learning_signals (episode_id);

CREATE TABLE learning_feedback (
  thread_id text NOT NULL,
  call_id text NOT NULL,
  episode_id text,
  rating double precision NOT NULL CHECK (rating >= -1 AND rating <= 1),
  note text,
  at bigint NOT NULL,
  PRIMARY KEY (thread_id, call_id)
);

CREATE TABLE learning_candidates (
  episode_id text NOT NULL${ref(p, "learning_episodes(id)", " ON DELETE CASCADE")},
  memory_id text NOT NULL,
  disposition text NOT NULL CHECK (disposition IN ('created','merged','withdrawn')),
  at bigint NOT NULL,
  PRIMARY KEY (episode_id, memory_id)
);

-- The work queue: claimed with FOR UPDATE SKIP LOCKED plus a lease (DSQL: an optimistic
-- claim retried on conflict), so each thread is processed by one worker at a time across every
-- server sharing the database.
CREATE TABLE learning_queue (
  source text NOT NULL,
  thread_id text NOT NULL,
  root_thread_id text NOT NULL,
  enqueued_at bigint NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  lease_until bigint,
  last_error text,
  PRIMARY KEY (source, thread_id)
);
${idx(p)} learning_queue_due ON learning_queue (enqueued_at, thread_id);

CREATE TABLE learning_cursors (
  source text NOT NULL,
  key text NOT NULL,
  position bigint NOT NULL,
  PRIMARY KEY (source, key)
);

CREATE TABLE learning_events (
  id ${serial(p)} PRIMARY KEY,
  at bigint NOT NULL,
  kind text NOT NULL,
  thread_id text,
  episode_id text,
  detail text NOT NULL
);
${idx(p)} learning_events_kind ON learning_events (kind, id);
`),
  step(103, "skills that evolve: policies with provenance edges, evaluation reports, approval requests, golden tasks", (p) => `
CREATE TABLE learning_policies (
  id text PRIMARY KEY,
  signature text NOT NULL UNIQUE,
  tools text NOT NULL,
  key_terms text NOT NULL,
  pattern text NOT NULL,
  support integer NOT NULL,
  mean_value double precision NOT NULL,
  gain double precision NOT NULL,
  eligible integer NOT NULL CHECK (eligible IN (0,1)),
  content_hash text NOT NULL,
  skill_name text,
  built_hash text,
  built_gain double precision,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
${idx(p)} learning_policies_skill ON learning_policies (skill_name)${where(p, "skill_name IS NOT NULL")};

CREATE TABLE learning_policy_episodes (
  policy_id text NOT NULL${ref(p, "learning_policies(id)", " ON DELETE CASCADE")},
  episode_id text NOT NULL${ref(p, "learning_episodes(id)", " ON DELETE CASCADE")},
  role text NOT NULL CHECK (role IN ('support','counter')),
  PRIMARY KEY (policy_id, episode_id)
);
${idx(p)} learning_policy_episodes_episode ON learning_policy_episodes (episode_id);

CREATE TABLE skill_eval_reports (
  id ${serial(p)} PRIMARY KEY,
  skill_name text NOT NULL,
  version_id text,
  baseline_version_id text,
  policy_id text,
  passed integer NOT NULL CHECK (passed IN (0,1)),
  report text NOT NULL,
  created_at bigint NOT NULL
);
${idx(p)} skill_eval_reports_skill ON skill_eval_reports (skill_name, id);

CREATE TABLE skill_requests (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('publish','merge','retire')),
  skill_name text NOT NULL,
  version_id text,
  other_skill text,
  policy_id text,
  report_id bigint${ref(p, "skill_eval_reports(id)")},
  status text NOT NULL CHECK (status IN ('pending','approved','rejected','superseded')),
  detail text NOT NULL,
  created_at bigint NOT NULL,
  decided_at bigint,
  decided_by text
);
${idx(p)} skill_requests_pending ON skill_requests (status, created_at)${where(p, "status = 'pending'")};

CREATE TABLE skill_golden_tasks (
  id ${serial(p)} PRIMARY KEY,
  skill_name text NOT NULL,
  task text NOT NULL,
  tools text NOT NULL,
  created_at bigint NOT NULL
);
${idx(p)} skill_golden_tasks_skill ON skill_golden_tasks (skill_name);
`),
  // The search documents of published versions as the store now writes them: ASCII punctuation
  // read as spaces (stores/postgres/words.ts), so the words inside a file name, path or host name
  // of a description are found. DSQL keeps no search documents.
  step(104, "skill search: words inside file names, paths and host names", (p) =>
    p === "postgres"
      ? `
UPDATE skill_search ss
  SET doc = setweight(to_tsvector('english', translate(s.name, '!"#$%&''()*+,-./:;<=>?@[\\]^_\`{|}~', '                                ')), 'A')
    || setweight(to_tsvector('english', translate(v.description, '!"#$%&''()*+,-./:;<=>?@[\\]^_\`{|}~', '                                ')), 'B')
  FROM skills s JOIN skill_versions v ON v.id = s.published_version_id
  WHERE s.id = ss.skill_id;
`
      : `-- none under the DSQL profile (no search documents)`,
  ),
  // The search documents of published versions whose text has letters outside ASCII, folded as
  // the store now folds them (lower-cased before the parser), in a database whose locale does not
  // fold them (the C locale), with ICU's root locale when the server has it.
  step(105, "skill search: letters outside ASCII folded under a C locale", (p) =>
    p === "postgres"
      ? `
DO $fold$
BEGIN
  IF lower('ÄΣМ') = 'äσм' OR NOT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') THEN
    RETURN;
  END IF;
  EXECUTE $q$UPDATE skill_search ss
    SET doc = setweight(to_tsvector('english', translate(lower(s.name COLLATE "und-x-icu"), '!"#$%&''()*+,-./:;<=>?@[\\]^_\`{|}~', '                                ')), 'A')
      || setweight(to_tsvector('english', translate(lower(v.description COLLATE "und-x-icu"), '!"#$%&''()*+,-./:;<=>?@[\\]^_\`{|}~', '                                ')), 'B')
    FROM skills s JOIN skill_versions v ON v.id = s.published_version_id
    WHERE s.id = ss.skill_id AND v.description ~ '[^\\x01-\\x7f]'$q$;
END
$fold$;
`
      : `-- none under the DSQL profile (no search documents)`,
  ),
  // A forget withdraws a version the learning loop (or the model) wrote from the forgotten text
  // (core/learning/skill-forget.ts): its texts are blanked in place, the one change the trigger
  // lets through besides counters and status. DSQL has no trigger.
  step(106, "skill versions: a forget may blank a version the agent wrote", (p) =>
    p === "postgres"
      ? `
CREATE OR REPLACE FUNCTION skill_versions_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.content_hash IS DISTINCT FROM OLD.content_hash OR NEW.body IS DISTINCT FROM OLD.body
     OR NEW.description IS DISTINCT FROM OLD.description OR NEW.frontmatter IS DISTINCT FROM OLD.frontmatter
     OR NEW.allowed_tools IS DISTINCT FROM OLD.allowed_tools OR NEW.skill_id IS DISTINCT FROM OLD.skill_id
     OR NEW.seq IS DISTINCT FROM OLD.seq THEN
    -- withdrawn after a forget: the agent's text blanked, rejected, marked by its hash; once
    IF OLD.author = 'agent' AND NEW.author = 'agent' AND NEW.status = 'rejected' AND NEW.content_hash = 'withheld:' || NEW.id
       AND OLD.content_hash IS DISTINCT FROM NEW.content_hash
       AND NEW.allowed_tools IS NOT DISTINCT FROM OLD.allowed_tools AND NEW.skill_id IS NOT DISTINCT FROM OLD.skill_id
       AND NEW.seq IS NOT DISTINCT FROM OLD.seq THEN
      RETURN NEW;
    END IF;
    RAISE EXCEPTION 'skill versions are immutable';
  END IF;
  RETURN NEW;
END $$;
`
      : `-- none under the DSQL profile (no triggers)`,
  ),
  // The search documents of published versions as the store now writes them (words.ts
  // sqliteWords): under the C locale "Book the “Atlas” room—weekly" was found by neither "atlas"
  // nor "weekly", and under any locale "zurich" did not find "Zürich". Rebuilt in JavaScript (a
  // catalog is small), as rebuildSkillSearch does after a copy. DSQL keeps none.
  {
    ...step(107, "skill search: words beside typographic punctuation and emoji, Latin diacritics folded", (p) =>
      p === "postgres" ? `SELECT 1;` : `-- none under the DSQL profile (no search documents)`,
    ),
    up: (c) => rebuildSkillSearch(c),
  },
  // Counters and measures that grow with use were 32-bit: a skill version's views, uses and
  // trials, a delivery's or a queued thread's attempts, a step's latency in milliseconds (past
  // 24.8 days between a call and its result), and the message positions of episodes, which come
  // from a client's history length (gRPC RecordTurn's uint32). Past 2^31 - 1 the write failed
  // ("integer out of range") where SQLite stores 64 bits. Left 32-bit: 0/1 flags, a chosen
  // option's index, and numbers bounded by the rows they number (versions, step indexes, a
  // pointer's order). DSQL cannot change a column's type.
  step(108, "64-bit counters, attempts, latencies and episode positions", (p) =>
    p === "postgres"
      ? `
ALTER TABLE rap_outbox ALTER COLUMN attempts TYPE bigint;
ALTER TABLE learning_queue ALTER COLUMN attempts TYPE bigint;
ALTER TABLE skill_versions ALTER COLUMN trials TYPE bigint, ALTER COLUMN passes TYPE bigint, ALTER COLUMN views TYPE bigint,
  ALTER COLUMN uses TYPE bigint, ALTER COLUMN successes TYPE bigint, ALTER COLUMN failures TYPE bigint;
ALTER TABLE learning_episodes ALTER COLUMN start_ord TYPE bigint, ALTER COLUMN end_ord TYPE bigint;
ALTER TABLE learning_steps ALTER COLUMN ord TYPE bigint, ALTER COLUMN latency_ms TYPE bigint;
ALTER TABLE learning_episode_messages ALTER COLUMN ord TYPE bigint;
ALTER TABLE learning_policies ALTER COLUMN support TYPE bigint;
`
      : `-- none under the DSQL profile (ALTER COLUMN … TYPE is not supported; these stay integer there)`,
  ),
  // Messages of a kind the learning worker's reader did not know were never learned from after
  // an upgrade that reads them: the first one left out and the reader's format then.
  step(109, "the learning worker remembers the messages it left out", () => `
CREATE TABLE learning_skips (
  source text NOT NULL,
  thread_id text NOT NULL,
  skipped_from bigint NOT NULL,
  skipped_format text NOT NULL,
  PRIMARY KEY (source, thread_id)
);
`),
  // A thread dropped after its retries was not tried again until a new message arrived, even by a
  // version that reads it: its reader's format and when it may be tried again.
  step(110, "the learning worker remembers the threads it dropped", () => `
CREATE TABLE learning_dropped (
  source text NOT NULL,
  thread_id text NOT NULL,
  root_thread_id text NOT NULL,
  format text NOT NULL,
  drops bigint NOT NULL,
  retry_at bigint NOT NULL,
  reason text NOT NULL,
  PRIMARY KEY (source, thread_id)
);
`),
  // Approving ran the action and then recorded the decision: a decline between the two left a
  // request "rejected" whose skill was retired or merged already. An approval now claims the
  // request first (these columns, on a row still 'pending': DSQL cannot change the status CHECK),
  // acts, then records "approved" from its claim (SQLite migration 26).
  step(111, "a skill request being approved says who approves it, since when, from which process", () => `
ALTER TABLE skill_requests ADD COLUMN IF NOT EXISTS approving_by text;
ALTER TABLE skill_requests ADD COLUMN IF NOT EXISTS approving_at bigint;
ALTER TABLE skill_requests ADD COLUMN IF NOT EXISTS approving_process text;
`),
  // An error's message can quote what failed (the thread file JSON.parse could not parse), and
  // these rows outlived a forget of that text: from here on they hold the error's class, code and
  // place only (core/learning/failure.ts); what older versions kept is cleared.
  // (Under DSQL a data step is left out: a transaction there may change only a few thousand rows.)
  // A learned candidate a person rejected (or forgot) came back when its thread was learnt again:
  // its text was purged, so nothing matched it. Kept: a hash of its normalised text per
  // visibility key (core/learning/candidates.ts), no text.
  step(112, "the learning loop keeps no error message text, and the fingerprints of rejected candidates", (p) => `
CREATE TABLE learning_rejected (
  vis_key text NOT NULL,
  fingerprint text NOT NULL,
  at bigint NOT NULL,
  PRIMARY KEY (vis_key, fingerprint)
);
${idx(p)} learning_candidates_memory ON learning_candidates (memory_id);
${
  p === "postgres"
    ? `
UPDATE learning_queue SET last_error = NULL WHERE last_error IS NOT NULL;
UPDATE learning_dropped SET reason = '${OLD_ERROR}';
UPDATE learning_events SET detail = regexp_replace(detail, '"error":"(?:[^"\\\\]|\\\\.)*"', '"error":"${OLD_ERROR}"') WHERE detail LIKE '%"error":%';
`
    : `-- (the texts: none under the DSQL profile, no data steps there)`
}`),
  // Under DSQL step 112 left the old error texts where they were (its data statements change every
  // row at once, past DSQL's row limit): cleared here in batches (old-errors.ts), keeping what this
  // version writes. On PostgreSQL step 112 did it already.
  {
    ...step(113, "under the DSQL profile, the learning loop's old error texts are cleared too", (p) =>
      p === "postgres" ? `SELECT 1;` : `-- data only: dsqlUp`,
    ),
    dsqlUp: (db) => clearOldErrorsDsql(db),
  },
];

// PostgreSQL schema of the memory side: records, provenance, tags, edges, audit, the word index,
// toolset toggles, root contexts, the LLM budget, the session index and the Infinity
// conversation/state stores (versions 1–99; the catalog side owns 100–199 in schema-catalog.ts).
// Append only: a released step is never edited. Table and column names mirror
// stores/sqlite/migrations.ts so `infinity-memory migrate` copies rows by name; times are epoch
// milliseconds (bigint), flags 0/1 integers, JSON documents text, as in SQLite.
//
// Each step has a "postgres" text and a "dsql" text (Aurora DSQL: no sequences, foreign keys,
// triggers, extensions, GIN or tsvector columns; indexes built with CREATE INDEX ASYNC).
import type { PgMigration } from "./migrate.js";
import type { Q } from "./pool.js";
import { headOf } from "../../core/text.js";
import { TSV_CHARS, tsvText } from "./session-index.js";
import { sqliteWords, splitPunct } from "./words.js";

type P = "postgres" | "dsql";

const id = (p: P) => (p === "postgres" ? "bigserial" : "bigint");
const fk = (p: P, ref: string) => (p === "postgres" ? ` REFERENCES ${ref} ON DELETE CASCADE` : "");
const idx = (p: P) => (p === "postgres" ? "CREATE INDEX" : "CREATE INDEX ASYNC");
/** partial indexes stay on PostgreSQL; DSQL gets the plain index */
const where = (p: P, cond: string) => (p === "postgres" ? ` WHERE ${cond}` : "");

function memoryCore(p: P): string {
  return `
CREATE TABLE memories (
  rowid ${id(p)} PRIMARY KEY,
  id text NOT NULL UNIQUE,
  lineage_id text NOT NULL,
  vis_key text NOT NULL,
  level text NOT NULL CHECK (level IN ('user','project','session','thread')),
  user_id text NOT NULL,
  project text,
  session_id text,
  thread_id text,
  kind text NOT NULL CHECK (kind IN ('fact','preference','project','lesson','procedure','note')),
  content text NOT NULL,
  trust text NOT NULL CHECK (trust IN ('user_confirmed','user_stated','model_inferred','tool_output','imported')),
  confidence double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
  status text NOT NULL CHECK (status IN ('pending','active','superseded','expired','deleted')),
  flags text NOT NULL DEFAULT '',
  version integer NOT NULL,
  supersedes text,
  valid_from bigint,
  valid_to bigint,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  expires_at bigint,
  content_hash text
);
${idx(p)} memories_dup ON memories (vis_key, content_hash)${where(p, "status <> 'deleted'")};
${idx(p)} memories_user_time ON memories (user_id, updated_at);
${idx(p)} memories_vis_time ON memories (vis_key, updated_at);
${idx(p)} memories_lineage ON memories (lineage_id, version);
${idx(p)} memories_expiry ON memories (expires_at)${where(p, "expires_at IS NOT NULL AND status IN ('active','pending')")};

-- user_id is repeated on the child tables so row-level security can key on it without a join
-- (default '' only for bulk copies from SQLite, which rebuildDerivedData() then fills in).
CREATE TABLE memory_tags (
  memory_rowid bigint NOT NULL${fk(p, "memories(rowid)")},
  user_id text NOT NULL DEFAULT '',
  tag text NOT NULL,
  PRIMARY KEY (memory_rowid, tag)
);

CREATE TABLE memory_sources (
  id ${id(p)} PRIMARY KEY,
  memory_rowid bigint NOT NULL${fk(p, "memories(rowid)")},
  user_id text NOT NULL DEFAULT '',
  thread_id text,
  tool_call_id text,
  actor text NOT NULL CHECK (actor IN ('user','model','tool','import')),
  at bigint NOT NULL
);
${idx(p)} memory_sources_memory ON memory_sources (memory_rowid);
${idx(p)} memory_sources_call ON memory_sources (thread_id, tool_call_id)${where(p, "tool_call_id IS NOT NULL")};
${idx(p)} memory_sources_thread ON memory_sources (thread_id, memory_rowid)${where(p, "thread_id IS NOT NULL")};

CREATE TABLE memory_source_messages (
  source_id bigint NOT NULL${fk(p, "memory_sources(id)")},
  ord integer NOT NULL,
  message_id text NOT NULL,
  PRIMARY KEY (source_id, ord)
);

CREATE TABLE edges (
  src text NOT NULL,
  dst text NOT NULL,
  relation text NOT NULL CHECK (relation IN ('supersedes','conflicts_with','derived_from')),
  at bigint NOT NULL,
  PRIMARY KEY (src, dst, relation)
);
${idx(p)} edges_dst ON edges (dst);

CREATE TABLE audit_log (
  seq ${id(p)} PRIMARY KEY,
  at bigint NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  target_kind text NOT NULL,
  target_id text NOT NULL,
  detail text NOT NULL
);
${idx(p)} audit_target ON audit_log (target_id, seq);
${
  p === "postgres"
    ? `
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$;
CREATE TRIGGER audit_no_update BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

-- Word channel: content (weight B), tags (A), CJK bigrams (C, 'simple' parser), neighbour context
-- and date words (D). Rebuilt by the store whenever a neighbour changes (see pg memory-store.ts).
CREATE TABLE memory_words (
  rowid bigint PRIMARY KEY${fk(p, "memories(rowid)")},
  user_id text NOT NULL,
  vis_key text NOT NULL,
  tsv tsvector NOT NULL
);
CREATE INDEX memory_words_tsv ON memory_words USING gin (tsv);
CREATE INDEX memory_words_vis ON memory_words (vis_key);`
    : ""
}`;
}

function small(p: P): string {
  return `
CREATE TABLE toolset_toggles (
  toolset text NOT NULL,
  thread_id text NOT NULL,
  enabled integer NOT NULL CHECK (enabled IN (0,1)),
  updated_at bigint NOT NULL,
  PRIMARY KEY (toolset, thread_id)
);

CREATE TABLE root_contexts (
  root_thread_id text PRIMARY KEY,
  user_id text NOT NULL,
  project text,
  updated_at bigint NOT NULL
);

CREATE TABLE llm_budget (
  day text PRIMARY KEY,
  calls integer NOT NULL
);
${p === "dsql" ? "" : ""}`;
}

function sessions(p: P): string {
  return `
CREATE TABLE session_sources (
  id ${id(p)} PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('infinity-files','sqlite')),
  location text NOT NULL,
  UNIQUE (kind, location)
);

CREATE TABLE session_threads (
  source_id bigint NOT NULL${fk(p, "session_sources(id)")},
  thread_id text NOT NULL,
  root_thread_id text NOT NULL,
  user_id text NOT NULL,
  cwd text,
  indexed_count integer NOT NULL DEFAULT 0,
  fingerprint text,
  updated_at bigint NOT NULL,
  PRIMARY KEY (source_id, thread_id)
);
${idx(p)} session_threads_root ON session_threads (source_id, root_thread_id);

CREATE TABLE session_messages (
  rowid ${id(p)} PRIMARY KEY,
  source_id bigint NOT NULL${fk(p, "session_sources(id)")},
  thread_id text NOT NULL,
  root_thread_id text NOT NULL,
  ord integer NOT NULL,
  message_id text NOT NULL,
  role text NOT NULL,
  text text NOT NULL,
  vis_key text NOT NULL,
  user_id text NOT NULL DEFAULT '',
  at bigint NOT NULL,${p === "postgres" ? "\n  tsv tsvector NOT NULL DEFAULT ''::tsvector," : ""}
  UNIQUE (source_id, thread_id, ord)
);
${idx(p)} session_messages_vis ON session_messages (vis_key, rowid);
${p === "postgres" ? "CREATE INDEX session_messages_tsv ON session_messages USING gin (tsv);" : ""}

CREATE TABLE session_suppressed (
  source_id bigint NOT NULL,
  thread_id text NOT NULL,
  message_id text NOT NULL,
  PRIMARY KEY (source_id, thread_id, message_id)
);`;
}

const conversations = (p: P) => `
CREATE TABLE conv_threads (
  thread_id text PRIMARY KEY,
  parent_thread_id text,
  root_thread_id text NOT NULL,
  spawn_message_order integer CHECK (spawn_message_order >= 0),
  spawn_tool_call_id text,
  closed integer NOT NULL DEFAULT 0 CHECK (closed IN (0,1)),
  is_subscription_event integer NOT NULL DEFAULT 0 CHECK (is_subscription_event IN (0,1)),
  is_compaction integer NOT NULL DEFAULT 0 CHECK (is_compaction IN (0,1))
);
${idx(p)} conv_threads_root ON conv_threads (root_thread_id);

CREATE TABLE conv_messages (
  thread_id text NOT NULL,
  ord integer NOT NULL CHECK (ord >= 0),
  message_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('user','assistant','tool_call','tool_result','subscription_event')),
  body text NOT NULL,
  PRIMARY KEY (thread_id, ord)
);
${idx(p)} conv_messages_message_id ON conv_messages (thread_id, message_id);

CREATE TABLE conv_compactions (
  thread_id text NOT NULL,
  seq integer NOT NULL,
  summary text NOT NULL,
  up_to_order integer NOT NULL CHECK (up_to_order >= 0),
  PRIMARY KEY (thread_id, seq)
);

CREATE TABLE state_processed_ids (
  thread_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('message','tool_call')),
  id text NOT NULL,
  PRIMARY KEY (thread_id, kind, id)
);

CREATE TABLE state_metadata (
  root_thread_id text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE state_subscriptions (
  thread_id text NOT NULL,
  tool_call_id text NOT NULL,
  seq integer NOT NULL,
  PRIMARY KEY (thread_id, tool_call_id)
);

CREATE TABLE state_user_choices (
  thread_id text NOT NULL,
  choice_id text NOT NULL,
  seq integer NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (thread_id, choice_id)
);`;

// Every transaction that changes a scope's memories gives the scope a fresh change token (from a
// sequence), keeping the one it replaces, whichever connection, process or server wrote. A process
// holding a derived index of the scope (the semantic channel's, stores/postgres/semantic-index.ts)
// compares tokens to know whether anyone changed the scope since it read it. The triggers are
// deferred to commit, so a write holds the scope's token row only while it commits (writers of one
// scope do not queue behind each other's whole transactions), and renew each scope once per
// transaction (a transaction-local list of the scopes done). The row names the transaction that
// renewed it last. A writer that follows its scope's index fires the triggers just before its
// commit (SET CONSTRAINTS … IMMEDIATE) and reads its own row: `prev` is the token just before its write. Keys and numbers only, no content. DSQL has no triggers or
// sequences: the table only, and the channel is off there.
const scopeTokens = (p: P) => `
CREATE TABLE scope_tokens (
  vis_key text PRIMARY KEY,
  user_id text NOT NULL,
  token bigint NOT NULL,
  prev bigint,
  by_xact text
);
${
  p === "dsql"
    ? ""
    : `CREATE SEQUENCE scope_token_seq;

CREATE FUNCTION renew_scope_token(k text, u text) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  done text := coalesce(current_setting('imem.renewed_scopes', true), '');
BEGIN
  IF position(E'\\n' || k || E'\\n' IN done) > 0 THEN
    RETURN;
  END IF;
  INSERT INTO scope_tokens (vis_key, user_id, token, by_xact) VALUES (k, u, nextval('scope_token_seq'), pg_current_xact_id()::text)
    ON CONFLICT (vis_key) DO UPDATE SET prev = scope_tokens.token, token = excluded.token, by_xact = excluded.by_xact;
  PERFORM set_config('imem.renewed_scopes', CASE WHEN done = '' THEN E'\\n' ELSE done END || k || E'\\n', true);
END
$fn$;

CREATE FUNCTION renew_scope_tokens() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM scope_tokens;
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM renew_scope_token(OLD.vis_key, OLD.user_id);
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    PERFORM renew_scope_token(NEW.vis_key, NEW.user_id);
  END IF;
  RETURN NULL;
END
$fn$;

CREATE CONSTRAINT TRIGGER memories_scope_insert AFTER INSERT ON memories DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION renew_scope_tokens();
-- an update counts where what the channel reads changed (a bump of updated_at alone does not)
CREATE CONSTRAINT TRIGGER memories_scope_update AFTER UPDATE ON memories DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN ((NEW.content, NEW.status, NEW.vis_key, NEW.flags, NEW.trust) IS DISTINCT FROM (OLD.content, OLD.status, OLD.vis_key, OLD.flags, OLD.trust))
  EXECUTE FUNCTION renew_scope_tokens();
CREATE CONSTRAINT TRIGGER memories_scope_delete AFTER DELETE ON memories DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION renew_scope_tokens();
CREATE TRIGGER memories_scope_truncate AFTER TRUNCATE ON memories
  FOR EACH STATEMENT EXECUTE FUNCTION renew_scope_tokens();`
}`;

/**
 * A scope's memories by the date they are about, else by when they were written: a question naming
 * a period whose words find fewer than it asks for lists that period's memories, newest first
 * (PgMemoryStore.periodMemories). DSQL has no expression indexes: there the listing reads the
 * scope's rows, as its word scan does.
 */
const datedIndex = (p: P) =>
  p === "postgres"
    ? `CREATE INDEX memories_vis_dated ON memories (vis_key, (coalesce(valid_from, created_at)));`
    : `-- none under the DSQL profile (no expression indexes; its search does not list a period)`;

/**
 * The context of a memory with no date of its own (valid_from) now holds the day it was written, as
 * the dated pass already dates it: existing word rows gain those date words. DSQL keeps no word rows.
 */
const writtenDateWords = (p: P) =>
  p === "postgres"
    ? `UPDATE memory_words w
  SET tsv = w.tsv || setweight(to_tsvector('english',
    extract(day FROM m.t)::int || ' ' || lower(to_char(m.t, 'FMMonth')) || ' ' || extract(year FROM m.t)::int), 'D')
  FROM (SELECT rowid, to_timestamp(created_at / 1000.0) AT TIME ZONE 'UTC' AS t FROM memories WHERE valid_from IS NULL) m
  WHERE m.rowid = w.rowid;`
    : `-- none under the DSQL profile (no word rows)`;

/**
 * The review list (a view's pending memories, oldest first) from indexes of pending rows only: with
 * none pending among 490k active memories, the (vis_key, updated_at) index made it read every row
 * of the view to find none. The store writes `m.status = 'pending'` as a literal, which the
 * planner needs to prove the partial index applies. DSQL has no partial indexes: status leads the
 * plain index instead.
 */
const pendingIndexes = (p: P) => `
${idx(p)} memories_pending_vis ON memories (status, vis_key, updated_at)${where(p, "status = 'pending'")};
${idx(p)} memories_pending_user ON memories (status, user_id, updated_at)${where(p, "status = 'pending'")};`;

/**
 * Session messages indexed before are tokenized as new ones are (PgSessionIndex's TSV): ASCII
 * punctuation read as spaces, so the words inside an address, host name, path or dashed number are
 * found, and a forget's candidates (the forgotten text's words) match. The CJK bigrams (weight B)
 * are kept as they were; as system maintenance, so row-level security (rls=1) hides no row from
 * it. DSQL keeps no tsvector.
 */
const sessionWordsSplit = (p: P) =>
  p === "postgres"
    ? `SELECT set_config('app.system', 'on', true);
UPDATE session_messages SET tsv = setweight(to_tsvector('english',
    translate(left(text, 100000), '!"#$%&''()*+,-./:;<=>?@[\\]^_\`{|}~', '                                ')), 'A')
  || ts_filter(tsv, '{b}');`
    : `-- none under the DSQL profile (no tsvector)`;

/**
 * serve's start-up sweep (PgMemoryStore.unfinishedForgets) reads the forgets a stopped process
 * claimed and never purged: deleted rows that still hold their text. Without an index it read
 * every memory to find the few. The partial index holds claimed rows only (as SQLite's step 28);
 * DSQL has no partial indexes: there status leads a plain index. claimed_by names the process
 * holding a claim, so the sweep leaves a forget whose process still runs its cascade to it.
 */
const unfinishedForgets = (p: P) => `
${idx(p)} memories_unfinished_forgets ON memories (${p === "postgres" ? "updated_at, rowid" : "status, updated_at, rowid"})${where(p, "status = 'deleted' AND content <> ''")};
ALTER TABLE memories ADD COLUMN IF NOT EXISTS claimed_by text;`;

// Messages of a kind the reader did not know, left out: where the first one was and the reader's
// message format then, so a reader of another format reads them (as SQLite's step 23).
const threadSkips = (): string => `
ALTER TABLE session_threads ADD COLUMN IF NOT EXISTS skipped_from integer;
ALTER TABLE session_threads ADD COLUMN IF NOT EXISTS skipped_format text;
`;

/**
 * Word rows and session messages written before the stores lower-cased their text, in a database
 * whose locale does not fold letters outside ASCII (the C locale: 'Übungsraum' was indexed as
 * written and "übungsraum" found nothing), folded with ICU's root locale when the server has it.
 * Only rows holding such letters change; a memory's context (neighbours, weight D) and its tags
 * and CJK bigrams are kept. Nothing to do where the locale folds, or without ICU (documented).
 */
const foldedWords = (p: P) =>
  p === "postgres"
    ? `DO $fold$
BEGIN
  IF lower('ÄΣМ') = 'äσм' OR NOT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') THEN
    RETURN;
  END IF;
  PERFORM set_config('app.system', 'on', true);
  EXECUTE $q$UPDATE session_messages SET tsv = setweight(to_tsvector('english',
      translate(lower(left(text, 100000) COLLATE "und-x-icu"), '!"#$%&''()*+,-./:;<=>?@[\\]^_\`{|}~', '                                ')), 'A')
    || ts_filter(tsv, '{b}')
    WHERE text ~ '[^\\x01-\\x7f]'$q$;
  EXECUTE $q$UPDATE memory_words w SET tsv = setweight(to_tsvector('english', lower(m.content COLLATE "und-x-icu")), 'B')
    || ts_filter(w.tsv, '{a,c,d}')
    FROM memories m WHERE m.rowid = w.rowid AND m.content ~ '[^\\x01-\\x7f]'$q$;
END
$fold$;`
    : `-- none under the DSQL profile (no tsvector)`;

/**
 * Word rows written before the store read ASCII punctuation as spaces (PgMemoryStore.writeWordRows):
 * the parser kept 'vpn.acme-corp.io', 'billing@northwind.com', 'package.json' and '4417-9921'
 * whole, so "acme certificate" found the memory by "certificate" alone. A memory's own text
 * (weight B) and tags (A) holding punctuation are tokenized again, lower-cased as the store does
 * (with ICU's root locale where the database's locale does not fold letters outside ASCII, as in
 * step 10); its CJK bigrams (C) and context (D, its neighbours' words) are kept as they were, and
 * take the new form when a neighbour next changes. As system maintenance, so row-level security
 * hides no row from it.
 */
const memoryWordsSplit = (p: P) => {
  if (p !== "postgres") return `-- none under the DSQL profile (no word rows)`;
  const update = (fold: string) => `UPDATE memory_words w SET tsv =
      setweight(to_tsvector('english', ${splitPunct(`lower(m.content${fold})`)}), 'B')
      || setweight(to_tsvector('english', ${splitPunct(`lower(coalesce((SELECT string_agg(t.tag, ' ' ORDER BY t.tag) FROM memory_tags t WHERE t.memory_rowid = m.rowid), '')${fold})`)}), 'A')
      || ts_filter(w.tsv, '{c,d}')
    FROM memories m
    WHERE m.rowid = w.rowid
      AND (m.content ~ '[[:punct:]]' OR EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_rowid = m.rowid AND t.tag ~ '[[:punct:]]'))`;
  return `DO $split$
BEGIN
  PERFORM set_config('app.system', 'on', true);
  IF lower('ÄΣМ') <> 'äσм' AND EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') THEN
    EXECUTE $q$${update(' COLLATE "und-x-icu"')}$q$;
  ELSE
    ${update("")};
  END IF;
END
$split$;`;
};

// A child thread's parent and spawn point: a forget purges the user's turn in the parent that led
// to a memory remembered in the child (as SQLite's step 22).
const threadParents = (): string => `
ALTER TABLE session_threads ADD COLUMN IF NOT EXISTS parent_thread_id text;
ALTER TABLE session_threads ADD COLUMN IF NOT EXISTS spawn_order integer;
`;

/**
 * Word rows and session messages written before the stores read text as SQLite's tokenizer does
 * (words.ts sqliteWords): where the parser reads the characters outside ASCII as letters (the C
 * locale), '“Atlas”', 'deploy—tomorrow' or '🚀today' were one word each, and under any locale a
 * Latin letter kept its diacritics ("zurich" did not find "Zürich"). Rows with characters outside
 * ASCII are tokenized again in JavaScript, exactly as the stores write them: a memory's text (B)
 * and tags (A), a message's text (A); CJK bigrams and a memory's context (neighbours' words, D)
 * are kept, the latter until a neighbour next changes. As system maintenance (the step's SQL), so
 * row-level security hides no row from it.
 */
async function sqliteWordRows(c: Q): Promise<void> {
  const outsideAscii = `~ '[^\\x01-\\x7f]'`;
  for (let after = 0; ; ) {
    const rows = (
      await c.query<{ rowid: number; content: string; tags: string | null }>(
        `SELECT m.rowid, m.content, (SELECT string_agg(t.tag, ' ' ORDER BY t.tag) FROM memory_tags t WHERE t.memory_rowid = m.rowid) AS tags
         FROM memory_words w JOIN memories m ON m.rowid = w.rowid
         WHERE w.rowid > $1 AND (m.content ${outsideAscii} OR EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_rowid = m.rowid AND t.tag ${outsideAscii}))
         ORDER BY w.rowid LIMIT 1000`,
        [after],
      )
    ).rows;
    if (rows.length === 0) break;
    await c.query(
      `UPDATE memory_words w SET tsv = setweight(to_tsvector('english', u.t), 'B') || setweight(to_tsvector('english', u.g), 'A') || ts_filter(w.tsv, '{c,d}')
       FROM unnest($1::bigint[], $2::text[], $3::text[]) AS u(r, t, g) WHERE w.rowid = u.r`,
      [rows.map((r) => r.rowid), rows.map((r) => sqliteWords(r.content.toLowerCase())), rows.map((r) => sqliteWords((r.tags ?? "").toLowerCase()))],
    );
    after = Number(rows.at(-1)!.rowid);
  }
  for (let after = 0; ; ) {
    const rows = (
      await c.query<{ rowid: number; head: string }>(
        `SELECT rowid, left(text, ${TSV_CHARS}) AS head FROM session_messages WHERE rowid > $1 AND text ${outsideAscii} ORDER BY rowid LIMIT 200`,
        [after],
      )
    ).rows;
    if (rows.length === 0) break;
    await c.query(
      `UPDATE session_messages s SET tsv = setweight(to_tsvector('english', u.t), 'A') || ts_filter(s.tsv, '{b}')
       FROM unnest($1::bigint[], $2::text[]) AS u(r, t) WHERE s.rowid = u.r`,
      [rows.map((r) => r.rowid), rows.map((r) => tsvText(headOf(r.head, TSV_CHARS)))],
    );
    after = Number(rows.at(-1)!.rowid);
  }
}

/**
 * Numbers that grow with use or come from the runtime as a Rust usize were 32-bit: a compaction
 * point, a spawn point or a subscription's place past 2^31 - 1 failed the write ("integer out of
 * range") where SQLite stores 64 bits, and `migrate --from sqlite` could not copy such a row.
 * These tables hold a row per thread or per day, so the rewrite is short. Left 32-bit on purpose:
 * 0/1 flags, and positions bounded by rows of the big tables (memories.version,
 * memory_source_messages.ord, session_messages.ord, conv_messages.ord), whose rewrite would hold
 * them locked for no reachable value. DSQL cannot change a column's type (no ALTER COLUMN … TYPE).
 */
const wideCounters = (p: P) =>
  p === "postgres"
    ? `ALTER TABLE llm_budget ALTER COLUMN calls TYPE bigint;
ALTER TABLE session_threads ALTER COLUMN indexed_count TYPE bigint, ALTER COLUMN spawn_order TYPE bigint;
ALTER TABLE conv_threads ALTER COLUMN spawn_message_order TYPE bigint;
ALTER TABLE conv_compactions ALTER COLUMN seq TYPE bigint, ALTER COLUMN up_to_order TYPE bigint;
ALTER TABLE state_subscriptions ALTER COLUMN seq TYPE bigint;
ALTER TABLE state_user_choices ALTER COLUMN seq TYPE bigint;`
    : `-- none under the DSQL profile (ALTER COLUMN … TYPE is not supported; these stay integer there)`;

function step(version: number, name: string, ddl: (p: P) => string): PgMigration {
  return { version, name, sql: ddl("postgres"), dsql: ddl("dsql") };
}

export const MEMORY_MIGRATIONS: PgMigration[] = [
  step(1, "memory records, sources, tags, edges, audit, word index", memoryCore),
  step(2, "toolset toggles, root contexts, LLM budget", small),
  step(3, "session search index", sessions),
  step(4, "Infinity conversation and state stores", conversations),
  step(5, "semantic channel: a change token per scope", scopeTokens),
  step(6, "memories by date per scope", datedIndex),
  step(7, "word rows of undated memories hold the day they were written", writtenDateWords),
  step(8, "pending memories by scope and by person", pendingIndexes),
  step(9, "session messages: words inside addresses, host names and paths", sessionWordsSplit),
  step(10, "word rows and session messages: letters outside ASCII folded under a C locale", foldedWords),
  step(11, "word rows: words inside addresses, host names and paths", memoryWordsSplit),
  {
    ...step(12, "word rows and session messages: words beside typographic punctuation and emoji, Latin diacritics folded", (p) =>
      p === "postgres" ? `SELECT set_config('app.system', 'on', true);` : `-- none under the DSQL profile (no word rows or tsvector)`,
    ),
    up: sqliteWordRows,
  },
  step(13, "session threads know their parent", threadParents),
  step(14, "64-bit counters, compaction and spawn points, subscription and choice places", wideCounters),
  step(15, "session threads remember the messages they left out", threadSkips),
  step(16, "forgets claimed and not yet finished, by claim time", unfinishedForgets),
];

/** Tables whose rows belong to one user (column user_id): the row-level security set. */
export const USER_SCOPED_TABLES = [
  "memories",
  "memory_tags",
  "memory_sources",
  "memory_words",
  "memory_vectors",
  "session_threads",
  "session_messages",
  "root_contexts",
  "scope_tokens",
] as const;

// PostgreSQL implementation of MemoryStore, with the semantics of stores/sqlite/memory-store.ts:
// records, provenance, tags, edges, audit, the word index (tsvector + GIN, weighted fields) and
// the trigram channel (pg_trgm, when the server has it). Every multi-row change is one
// transaction; the scope predicate sits inside every search and list query.
// Under the DSQL profile (no tsvector columns, GIN or extensions) the word channel is a
// substring scan over the rows of the requesting scope; see README.md for the trade-offs.
import type pg from "pg";
import { visibilityKey } from "../../core/memory/scope.js";
import type { MemoryRecord, MemorySource, MemoryStatus, NewMemory, Trust } from "../../core/memory/record.js";
import { cjkBigrams, hasCjk } from "../../core/retrieval/analyze.js";
import { CONTEXT_TERM_MAX_DF, DEFAULT_CHANNELS, type RetrievalChannels } from "../../core/retrieval/channels.js";
import { addAssociationHits, addMissing, addRanks, rrf } from "../../core/retrieval/fusion.js";
import { addedWords } from "../../core/retrieval/added-words.js";
import { applyCues, CUE_POOL, queryCues, SMALL_STORE_CUE_POOL } from "../../core/retrieval/cues.js";
import { DATED_POOL, dateWords, newestInPeriod, type DateWindow } from "../../core/retrieval/dates.js";
import { asks, spreadHead, spreadScores, type Sides } from "../../core/retrieval/spread.js";
import { mmr, proximityRerank } from "../../core/retrieval/rerank.js";
import { joinsIndex, WARM_UP, type IndexDelta } from "../../core/retrieval/association-cache.js";
import { DEFAULT_ASSOCIATIONS } from "../../core/retrieval/associations.js";
import {
  DuplicateMemoryError,
  StatusChangedError,
  StoreError,
  type AuditEntry,
  type BatchInsertItem,
  type BatchInsertOutcome,
  type Edge,
  type ListPage,
  type ListQuery,
  type MemoryStore,
  type SearchHit,
  type SearchQuery,
  type StatusChange,
  type UnfinishedForget,
  type StoredAuditEntry,
  type Visibility,
} from "../traits.js";
import type { Embedder } from "../../core/embedding/embedder.js";
import { EmbedderGuard, isUsable } from "../../core/embedding/guard.js";
import { asPgSystem, type PgDb, type Q } from "./pool.js";
import { PgSemanticIndexes } from "./semantic-index.js";
import { holdsWord, sqliteWords } from "./words.js";
import { cappedTotal, purgedRow, DATED_AT, LIST_KEY_BRANCHES, decodeCursor, encodeCursor, exportAllVia, pushTo, totalCapOf, recordOf, sourcesByMemory, statusPredicate, type MemoryRow } from "../memory-rows.js";


/** memories on each side of a memory, in each of its conversations, that join its context */
export const CONTEXT_NEIGHBOURS = 2;
// ts_rank weights {D, C, B, A}: context 0.15, CJK 0.5, content 0.5, tags 1.0 — the ratios of the
// SQLite bm25 column weights (0.3 : 1 : 1 : 2).
const RANK_WEIGHTS = "{0.15,0.5,0.5,1.0}";
/** word-index rows below which the corpus size for IDF is counted rather than estimated */
const EXACT_COUNT_BELOW = 50_000;
/** how long a word's document count (and the corpus size) is reused for IDF */
const DF_TTL_MS = 60_000;
const DF_CACHE_MAX = 20_000;

/** a query word and the text-search configuration that stems it */
interface QueryWord {
  config: "english" | "simple";
  text: string;
}
const wordKey = (w: QueryWord) => `${w.config}:${w.text}`;
/** Whether the semantic index holds a memory (what PgSemanticIndexes reads when it builds). */
const TRIGRAM_WHEN_FEWER = 10;
/** memories per insertMany under the DSQL profile (3,000 modified rows per transaction) */
export const DSQL_MAX_BATCH = 400;
// The conversation channel groups the cue pool's word hits, as on SQLite (a deeper word pass of its
// own cost time for no recall there).
const SESSION_DEPTH = CUE_POOL;
const SESSION_TOP = 3;
const CURRENT = `('active','pending')`;


/** Positional parameters built up alongside the SQL text. */
class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/** a query word as a parameterised tsquery */
/**
 * A query word as the word rows hold it: ASCII punctuation is a space there ("acme-corp" is the
 * words acme and corp, as in "vpn.acme-corp.io"; SQLite's tokenizer splits the same way).
 */
const indexedText = (w: QueryWord) => (w.config === "english" ? sqliteWords(w.text) : w.text);
const tsqueryOf = (w: QueryWord, p: Params) => `plainto_tsquery('${w.config}', ${p.add(indexedText(w))})`;
/** The word matched in a memory's own text or tags only (weights A-C; the context column is D). */
const ownTextQuery = (w: QueryWord, p: Params) =>
  `to_tsquery('${w.config}', ${p.add(`'${indexedText(w).replace(/\\/g, "\\\\").replace(/'/g, "''")}':ABC`)})`;

/**
 * Rows the word channel may rank per query. ts_rank costs a few µs per matching row (it reads the
 * row's tsvector), so on a large table a common word would dominate the latency while its IDF is
 * near zero: 100k memories, three words in 3-10% of them, 57 ms. The same rule as the SQLite planner.
 */
export const WORD_POSTINGS_BUDGET = 3000;
/** document counts stop here (see wordStats) */
const DF_COUNT_CAP = WORD_POSTINGS_BUDGET + 1;
/**
 * A word the table's statistics put at this many rows or more is past the budget without a count
 * (wordStats). The margin over the cap covers sampling error and a table grown or shrunk since
 * ANALYZE (autovacuum runs again after 10% of rows change).
 */
const STATS_PAST_BUDGET = Math.ceil(DF_COUNT_CAP * 1.25);
/** rank of every row of the newest-mentions walk (higher is better here; cues multiply it) */
const NEWEST_RANK = 1;

/**
 * Which words rank (indexes into the counted words): all of them on a table within the budget; else the
 * rarest within it (words found nowhere drop out); when even the rarest is too common, that
 * search takes the newest mentions of every word instead.
 */
export function planWords(stats: { df: number[]; n: number }, budget = WORD_POSTINGS_BUDGET): { words: number[]; newest: boolean } {
  const all = stats.df.map((_d, i) => i);
  if (stats.n <= WORD_POSTINGS_BUDGET) return { words: all, newest: false };
  const found = all.filter((i) => stats.df[i]! > 0).sort((a, b) => stats.df[a]! - stats.df[b]! || a - b);
  const kept: number[] = [];
  let spent = 0;
  for (const i of found) {
    if (spent + stats.df[i]! > budget) continue;
    spent += stats.df[i]!;
    kept.push(i);
  }
  if (kept.length > 0) return { words: kept.sort((a, b) => a - b), newest: false };
  return { words: found, newest: found.length > 0 };
}

const likePattern = (s: string) => `%${s.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export interface PgMemoryStoreOptions {
  channels?: Partial<RetrievalChannels>;
  /** turns on the vector channel when the server has pgvector (detected); see vectorStatus() */
  embedder?: Embedder | null;
  /** RRF weight of the vector channel relative to the word channel; default 1 */
  vectorWeight?: number;
  /** cosine similarity below which a neighbour is dropped; default none */
  minSimilarity?: number;
}

/** pgvector's text form of a vector */
export const vectorLiteral = (v: Float32Array): string => `[${Array.from(v, (x) => (Number.isFinite(x) ? x : 0)).join(",")}]`;

/**
 * A duplicate is a current record ($3 = now): the same text said after its record was superseded
 * or expired is current again. (status <> 'deleted' repeats the partial index's predicate.)
 */
const CURRENT_DUP = `status <> 'deleted' AND status IN ('active','pending') AND (expires_at IS NULL OR expires_at > $3)`;

/** The tokens one transaction gave the scopes it changed, with the ones they replaced (PgMemoryStore.ownTokens). */
type OwnTokens = Map<string, { token: number; prev: number | null }>;

export class PgMemoryStore implements MemoryStore {
  /** a DSQL transaction may modify at most 3,000 rows; each memory writes about six */
  readonly maxBatch: number | undefined;
  private readonly channels: RetrievalChannels;
  private readonly fts: boolean;
  private readonly embedder: Embedder | null;
  /** asks the embedder without letting it stall or break writes and searches (core/embedding/guard.ts) */
  private readonly guard: EmbedderGuard | null;
  private readonly vectorWeight: number;
  private readonly minSimilarity: number | null;
  /** document counts per query word, for IDF and the postings budget (see wordStats) */
  private readonly dfCache = new Map<string, { df: number; at: number }>();
  private corpus: { n: number; at: number; user: string | undefined } | null = null;
  private pastBudget: { lexemes: string[]; at: number } | null = null;
  /** the last embedding failure, for status output */
  lastVectorError: string | null = null;
  /** [semantic channel] per-scope association indexes in this process (off under DSQL) */
  private readonly semantic: PgSemanticIndexes | null;

  constructor(
    private readonly db: PgDb,
    opts: PgMemoryStoreOptions = {},
  ) {
    this.channels = { ...DEFAULT_CHANNELS, ...opts.channels, lexical: true };
    this.fts = db.profile === "postgres";
    this.maxBatch = db.profile === "dsql" ? DSQL_MAX_BATCH : undefined;
    // The semantic channel needs the scope change tokens that triggers keep, which DSQL lacks;
    // said only when asked for by name (it is on in the defaults).
    if (opts.channels?.semantic === true && !this.fts) process.emitWarning("the semantic channel is not available under the DSQL profile; search runs without it");
    this.semantic = this.channels.semantic && this.fts ? new PgSemanticIndexes(db) : null;
    this.embedder = opts.embedder ?? null;
    this.guard = this.embedder
      ? new EmbedderGuard(this.embedder, {
          onFailure: (what, e) => {
            this.lastVectorError = `${what}: ${e instanceof Error ? e.message : String(e)}`;
            db.log.warn(`postgres: ${this.lastVectorError}`);
          },
        })
      : null;
    this.vectorWeight = opts.vectorWeight ?? 1;
    this.minSimilarity = opts.minSimilarity ?? null;
    if (this.embedder && !db.features.vector) {
      db.log.warn(`postgres: ${this.vectorStatus().reason}`);
    }
  }

  // ---- vector channel (pgvector) ----------------------------------------------------------------

  /** Whether the vector channel runs, and why not when it does not. */
  vectorStatus(): { enabled: boolean; reason: string } {
    if (!this.embedder) return { enabled: false, reason: "vector channel off: no embedder configured" };
    if (!this.db.features.vector) {
      const why = this.db.features.reasons.find((r) => r.startsWith("vector channel off")) ?? "vector channel off: the pgvector extension is not available";
      return { enabled: false, reason: why };
    }
    return { enabled: true, reason: `vector channel on (${this.embedder.id}, pgvector)` };
  }

  /** The embedder whose vectors this store writes and queries (null: none configured). */
  vectorEmbedder(): { id: string; dimensions: number } | null {
    return this.embedder ? { id: this.embedder.id, dimensions: this.embedder.dimensions } : null;
  }

  private get vectorsOn(): boolean {
    return this.embedder !== null && this.db.features.vector;
  }

  /**
   * Vectors for texts about to be written; nulls where embedding failed (a write never fails for
   * it, and an unreachable endpoint is not asked again for a while: no write waits on it).
   */
  private async vectorsFor(texts: string[]): Promise<(Float32Array | null)[]> {
    if (!this.vectorsOn || texts.length === 0) return texts.map(() => null);
    return this.guard!.forWrite(texts);
  }

  /** Row-locked to the commit, each still has the status its caller read, or StatusChangedError. */
  private async lockExpected(c: Q, expect: ReadonlyMap<string, MemoryStatus> | undefined): Promise<void> {
    for (const [id, want] of expect ?? []) {
      const now = (await c.query<{ status: MemoryStatus }>(`SELECT status FROM memories WHERE id = $1 FOR UPDATE`, [id])).rows[0]?.status ?? null;
      if (now !== want) throw new StatusChangedError(id, want, now);
    }
  }

  private async putVector(c: Q, rowid: number, rec: NewMemory, v: Float32Array | null | undefined): Promise<void> {
    // an all-zero vector points nowhere: it would score every query alike
    if (!isUsable(v) || !this.vectorsOn) return;
    await c.query(
      `INSERT INTO memory_vectors (rowid, user_id, vis_key, embedder, embedding) VALUES ($1, $2, $3, $4, $5::vector)
       ON CONFLICT (rowid) DO UPDATE SET embedder = excluded.embedder, embedding = excluded.embedding`,
      [rowid, rec.scope.user, visibilityKey(rec.scope), this.embedder!.id, vectorLiteral(v)],
    );
  }

  /**
   * KNN by cosine distance with the scope predicate and the record filters in the same query
   * (exact scan of the viewer's rows; pgvector's HNSW index is not used with these filters).
   */
  private async vectorChannel(c: Q, q: SearchQuery, limit: number): Promise<{ row: MemoryRow; rank: number }[]> {
    if (!this.vectorsOn || q.wordsOnly) return [];
    const text = q.text ?? [...q.query.terms, ...q.query.cjk].join(" ");
    if (text.trim() === "") return [];
    // at most a short deadline, and not at all while the endpoint rests: the search runs without it
    const v = await this.guard!.forQuery(text);
    if (!v) return [];
    const p = new Params();
    const qv = p.add(vectorLiteral(v));
    const maxDist = this.minSimilarity === null ? "" : ` AND (v.embedding <=> ${qv}::vector) <= ${p.add(1 - this.minSimilarity)}`;
    const sql = `SELECT m.*, (v.embedding <=> ${qv}::vector) AS rank FROM memory_vectors v JOIN memories m ON m.rowid = v.rowid
      WHERE v.embedder = ${p.add(this.embedder!.id)} AND ${this.scope(q.visibility, p, "v")} AND ${this.filters(q, p)}${maxDist}
      ORDER BY v.embedding <=> ${qv}::vector LIMIT ${Math.max(1, Math.floor(limit))}`;
    return (await c.query<MemoryRow & { rank: number }>(sql, p.values)).rows.map((r) => ({ row: r, rank: r.rank }));
  }

  /** Embed every live memory without a vector of the current embedder, `batch` per transaction. */
  async backfillVectors(batch = 64): Promise<{ embedded: number; skipped?: number; reason?: string }> {
    return asPgSystem(() => this.backfill(batch));
  }

  private async backfill(batch: number): Promise<{ embedded: number; skipped?: number; reason?: string }> {
    const st = this.vectorStatus();
    if (!st.enabled) throw new StoreError("schema", st.reason);
    let embedded = 0;
    let after = 0;
    // texts the embedder refused (too long for the model, say): left without a vector, said why
    let skipped = 0;
    let reason: string | null = null;
    const done = () => (skipped > 0 ? { embedded, skipped, reason: reason ?? "refused by the embedder" } : { embedded });
    for (;;) {
      const rows = await this.db.query<MemoryRow>(
        `SELECT m.* FROM memories m WHERE m.rowid > $1 AND m.status <> 'deleted'
           AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.rowid = m.rowid AND v.embedder = $2)
         ORDER BY m.rowid LIMIT $3`,
        [after, this.embedder!.id, batch],
      );
      if (rows.length === 0) return done();
      // an unreachable embedder throws: the backfill stops and can be run again
      const got = await this.guard!.forBackfill(rows.map((r) => r.content));
      reason ??= got.refused;
      const vecs = got.vectors;
      await this.db.tx(async (c) => {
        for (const [i, r] of rows.entries()) {
          // the row may have been forgotten while the batch was embedding
          const cur = (await c.query<{ status: string }>(`SELECT status FROM memories WHERE rowid = $1 FOR UPDATE`, [r.rowid])).rows[0];
          if (!cur || cur.status === "deleted") continue;
          const v = vecs[i];
          if (!isUsable(v)) {
            skipped++;
            continue;
          }
          await c.query(
            `INSERT INTO memory_vectors (rowid, user_id, vis_key, embedder, embedding) VALUES ($1, $2, $3, $4, $5::vector)
             ON CONFLICT (rowid) DO UPDATE SET embedder = excluded.embedder, embedding = excluded.embedding`,
            [r.rowid, r.user_id, r.vis_key, this.embedder!.id, vectorLiteral(v)],
          );
          embedded++;
        }
      });
      after = rows.at(-1)!.rowid;
    }
  }

  // ---- writes ---------------------------------------------------------------------------------

  private async insertBaseRow(c: Q, rec: NewMemory, key: string): Promise<number> {
    return (await this.insertBaseRows(c, [{ rec, key }]))[0]!;
  }

  private async insertSourceRow(c: Q, rowid: number, user: string, s: MemorySource): Promise<void> {
    const dsql = this.db.profile === "dsql";
    const r = await c.query<{ id: number }>(
      `INSERT INTO memory_sources (${dsql ? "id, " : ""}memory_rowid, user_id, thread_id, tool_call_id, actor, at)
       VALUES (${dsql ? "$7, " : ""}$1, $2, $3, $4, $5, $6) RETURNING id`,
      [rowid, user, s.threadId, s.toolCallId, s.actor, s.at, ...(dsql ? [this.db.rowIds.next()] : [])],
    );
    if (s.messageIds.length > 0) {
      await c.query(
        `INSERT INTO memory_source_messages (source_id, ord, message_id)
         SELECT $1, o - 1, m FROM unnest($2::text[]) WITH ORDINALITY AS u(m, o)`,
        [r.rows[0]!.id, s.messageIds],
      );
    }
  }

  private async writeAudit(c: Q, a: AuditEntry): Promise<void> {
    await this.writeAudits(c, [a]);
  }

  /** Many records with their tags, sources and message ids in five statements; rowids in input order. */
  private async insertBaseRows(c: Q, rows: { rec: NewMemory; key: string }[]): Promise<number[]> {
    const dsql = this.db.profile === "dsql";
    const col = <T>(f: (r: NewMemory, key: string) => T) => rows.map(({ rec, key }) => f(rec, key));
    const arrays: [string, unknown[]][] = [
      ["id text", col((r) => r.id)],
      ["lineage_id text", col((r) => r.lineageId)],
      ["vis_key text", col((_r, k) => k)],
      ["level text", col((r) => r.scope.level)],
      ["user_id text", col((r) => r.scope.user)],
      ["project text", col((r) => r.scope.project)],
      ["session_id text", col((r) => r.scope.session)],
      ["thread_id text", col((r) => r.scope.thread)],
      ["kind text", col((r) => r.kind)],
      ["content text", col((r) => r.content)],
      ["trust text", col((r) => r.trust)],
      ["confidence float8", col((r) => r.confidence)],
      ["status text", col((r) => r.status)],
      ["flags text", col((r) => r.flags.join(","))],
      ["version int", col((r) => r.version)],
      ["supersedes text", col((r) => r.supersedes)],
      ["valid_from bigint", col((r) => r.validFrom)],
      ["valid_to bigint", col((r) => r.validTo)],
      ["created_at bigint", col((r) => r.createdAt)],
      ["updated_at bigint", col((r) => r.createdAt)],
      ["expires_at bigint", col((r) => r.expiresAt)],
      ["content_hash text", col((r) => r.contentHash)],
    ];
    if (dsql) arrays.unshift(["rowid bigint", rows.map(() => this.db.rowIds.next())]);
    const names = arrays.map(([d]) => d.split(" ")[0]!);
    const ins = await c.query<{ rowid: number; id: string }>(
      `INSERT INTO memories (${names.join(", ")})
       SELECT * FROM unnest(${arrays.map(([d], i) => `$${i + 1}::${d.split(" ")[1]}[]`).join(", ")})
       RETURNING rowid, id`,
      arrays.map(([, v]) => v),
    );
    const byId = new Map(ins.rows.map((r) => [r.id, r.rowid]));
    const rowids = rows.map(({ rec }) => byId.get(rec.id)!);
    const tags = rows.flatMap(({ rec }, i) => rec.tags.map((t) => [rowids[i]!, rec.scope.user, t] as const));
    if (tags.length > 0) {
      await c.query(
        `INSERT INTO memory_tags (memory_rowid, user_id, tag) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING`,
        [tags.map((t) => t[0]), tags.map((t) => t[1]), tags.map((t) => t[2])],
      );
    }
    const src = rows.map(({ rec }) => rec.source);
    const srcIds = dsql ? rows.map(() => this.db.rowIds.next()) : null;
    const sres = await c.query<{ id: number; memory_rowid: number }>(
      `INSERT INTO memory_sources (${dsql ? "id, " : ""}memory_rowid, user_id, thread_id, tool_call_id, actor, at)
       SELECT * FROM unnest(${dsql ? "$7::bigint[], " : ""}$1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])
       RETURNING id, memory_rowid`,
      [rowids, rows.map(({ rec }) => rec.scope.user), src.map((s) => s.threadId), src.map((s) => s.toolCallId), src.map((s) => s.actor), src.map((s) => s.at), ...(srcIds ? [srcIds] : [])],
    );
    const sourceOf = new Map(sres.rows.map((r) => [r.memory_rowid, r.id]));
    const msgs = rows.flatMap(({ rec }, i) => rec.source.messageIds.map((m, ord) => [sourceOf.get(rowids[i]!)!, ord, m] as const));
    if (msgs.length > 0) {
      await c.query(`INSERT INTO memory_source_messages (source_id, ord, message_id) SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[])`, [
        msgs.map((m) => m[0]),
        msgs.map((m) => m[1]),
        msgs.map((m) => m[2]),
      ]);
    }
    return rowids;
  }

  private async writeAudits(c: Q, entries: AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const dsql = this.db.profile === "dsql";
    await c.query(
      `INSERT INTO audit_log (${dsql ? "seq, " : ""}at, actor, action, target_kind, target_id, detail)
       SELECT * FROM unnest(${dsql ? "$7::bigint[], " : ""}$1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])`,
      [
        entries.map((a) => a.at),
        entries.map((a) => a.actor),
        entries.map((a) => a.action),
        entries.map((a) => a.targetKind),
        entries.map((a) => a.targetId),
        entries.map((a) => JSON.stringify(a.detail)),
        ...(dsql ? [entries.map(() => this.db.rowIds.next())] : []),
      ],
    );
  }

  private async addEdgeIn(c: Q, e: Edge): Promise<void> {
    await c.query(`INSERT INTO edges (src, dst, relation, at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, [e.src, e.dst, e.relation, e.at]);
  }

  // ---- word index (neighbour context, as memory-fts.ts does for SQLite) ----------------------

  /**
   * The neighbours of each memory in each conversation it came from (current versions, same
   * scope), CONTEXT_NEIGHBOURS on each side per conversation: one query for any number of memories.
   */
  private async neighboursOf(c: Q, rowids: number[]): Promise<Map<number, { rowid: number; content: string }[]>> {
    const out = new Map<number, { rowid: number; content: string }[]>();
    if (!this.fts || !this.channels.context || rowids.length === 0) return out;
    const r = await c.query<{ of: number; rowid: number; content: string }>(
      `SELECT DISTINCT me.rowid AS of, x.rowid, x.content
       FROM memories me
       JOIN LATERAL (SELECT DISTINCT thread_id FROM memory_sources WHERE memory_rowid = me.rowid AND thread_id IS NOT NULL) th ON true
       JOIN LATERAL (
         (SELECT m.rowid, m.content FROM memory_sources s JOIN memories m ON m.rowid = s.memory_rowid
          WHERE s.thread_id = th.thread_id AND s.memory_rowid < me.rowid AND m.vis_key = me.vis_key AND m.status IN ${CURRENT}
          GROUP BY m.rowid, m.content ORDER BY m.rowid DESC LIMIT ${CONTEXT_NEIGHBOURS})
         UNION ALL
         (SELECT m.rowid, m.content FROM memory_sources s JOIN memories m ON m.rowid = s.memory_rowid
          WHERE s.thread_id = th.thread_id AND s.memory_rowid > me.rowid AND m.vis_key = me.vis_key AND m.status IN ${CURRENT}
          GROUP BY m.rowid, m.content ORDER BY m.rowid ASC LIMIT ${CONTEXT_NEIGHBOURS})) x ON true
       WHERE me.rowid = ANY($1::bigint[])
       ORDER BY 1, 2`,
      [rowids],
    );
    for (const n of r.rows) (out.get(n.of) ?? out.set(n.of, []).get(n.of)!).push({ rowid: n.rowid, content: n.content });
    return out;
  }

  /**
   * Spreading's view of the neighbours (core/retrieval/spread.ts): for each memory, in each of its
   * conversations, the two current memories of the same scope before it (nearest first) and after.
   */
  private async spreadSides(c: Q, rowids: number[]): Promise<Map<number, Sides[]>> {
    const out = new Map<number, Sides[]>();
    if (rowids.length === 0) return out;
    const r = await c.query<{ of: string | number; thread_id: string; side: number; rowid: string | number }>(
      `SELECT me.rowid AS of, th.thread_id, x.side, x.rowid
       FROM memories me
       JOIN LATERAL (SELECT DISTINCT thread_id FROM memory_sources WHERE memory_rowid = me.rowid AND thread_id IS NOT NULL) th ON true
       JOIN LATERAL (
         (SELECT -1 AS side, m.rowid FROM memory_sources s JOIN memories m ON m.rowid = s.memory_rowid
          WHERE s.thread_id = th.thread_id AND s.memory_rowid < me.rowid AND m.vis_key = me.vis_key AND m.status IN ${CURRENT}
          GROUP BY m.rowid ORDER BY m.rowid DESC LIMIT 2)
         UNION ALL
         (SELECT 1 AS side, m.rowid FROM memory_sources s JOIN memories m ON m.rowid = s.memory_rowid
          WHERE s.thread_id = th.thread_id AND s.memory_rowid > me.rowid AND m.vis_key = me.vis_key AND m.status IN ${CURRENT}
          GROUP BY m.rowid ORDER BY m.rowid ASC LIMIT 2)) x ON true
       WHERE me.rowid = ANY($1::bigint[])`,
      [rowids],
    );
    const byThread = new Map<string, Sides>();
    for (const n of r.rows) {
      const of = Number(n.of);
      const k = `${of}\u0000${n.thread_id}`;
      let sides = byThread.get(k);
      if (!sides) {
        sides = { before: [], after: [] };
        byThread.set(k, sides);
        (out.get(of) ?? out.set(of, []).get(of)!).push(sides);
      }
      (n.side < 0 ? sides.before : sides.after).push(Number(n.rowid));
    }
    for (const list of out.values()) for (const sides of list) {
      sides.before.sort((a, b) => b - a);
      sides.after.sort((a, b) => a - b);
    }
    return out;
  }

  /** The word hits after neighbour spreading; neighbours pass the same scope and filters as any hit. */
  private async spreadNeighbours(c: Q, hits: { row: MemoryRow; rank: number }[], q: SearchQuery, depth: number): Promise<{ row: MemoryRow; rank: number }[]> {
    if (hits.length === 0) return hits;
    const asSpread = hits.map((h) => ({ rowid: Number(h.row.rowid), score: h.rank, asks: asks(h.row.content) }));
    const sides = await this.spreadSides(c, spreadHead(asSpread).map((h) => h.rowid));
    const spread = spreadScores(asSpread, (rowid) => sides.get(rowid) ?? []);
    const rows = new Map(hits.map((h) => [Number(h.row.rowid), h.row]));
    const missing = spread.slice(0, Math.max(hits.length, depth)).map((h) => h.rowid).filter((r) => !rows.has(r));
    if (missing.length > 0) {
      const p = new Params();
      const sql = `SELECT m.* FROM memories m WHERE m.rowid = ANY(${p.add(missing)}::bigint[]) AND ${this.scope(q.visibility, p, "m")} AND ${this.filters(q, p)}`;
      for (const row of (await c.query<MemoryRow>(sql, p.values)).rows) rows.set(Number(row.rowid), row);
    }
    return spread.flatMap((h) => (rows.has(h.rowid) ? [{ row: rows.get(h.rowid)!, rank: h.score }] : []));
  }

  private async neighbours(c: Q, rowid: number): Promise<{ rowid: number; content: string }[]> {
    return (await this.neighboursOf(c, [rowid])).get(rowid) ?? [];
  }

  /**
   * (Re)write the word rows of these memories in three statements; deleted memories get none.
   * Returns every neighbour whose context holds one of them.
   */
  private async writeWordRows(c: Q, rowids: number[]): Promise<number[]> {
    if (!this.fts || rowids.length === 0) return [];
    this.wordsChanged();
    const ids = [...new Set(rowids)];
    const bases = (
      await c.query<{ rowid: number; content: string; vis_key: string; user_id: string; status: string; valid_from: number | null; created_at: number; tags: string | null }>(
        `SELECT rowid, content, vis_key, user_id, status, valid_from, created_at,
           (SELECT string_agg(tag, ' ' ORDER BY tag) FROM memory_tags WHERE memory_rowid = m.rowid) AS tags
         FROM memories m WHERE rowid = ANY($1::bigint[])`,
        [ids],
      )
    ).rows;
    // rowid order: concurrent writers lock shared neighbours' rows in the same order
    const live = bases.filter((b) => b.status !== "deleted").sort((a, b) => a.rowid - b.rowid);
    const gone = ids.filter((id) => !live.some((b) => b.rowid === id));
    if (gone.length > 0) await c.query(`DELETE FROM memory_words WHERE rowid = ANY($1::bigint[])`, [gone.sort((a, b) => a - b)]);
    if (live.length === 0) return [];
    const near = await this.neighboursOf(c, live.map((b) => b.rowid));
    await c.query(
      `INSERT INTO memory_words (rowid, user_id, vis_key, tsv)
       SELECT r, u, k, setweight(to_tsvector('english', t), 'B') || setweight(to_tsvector('english', g), 'A')
         || setweight(to_tsvector('simple', j), 'C') || setweight(to_tsvector('english', x), 'D')
       FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) AS u(r, u, k, t, g, j, x)
       ON CONFLICT (rowid) DO UPDATE SET vis_key = excluded.vis_key, user_id = excluded.user_id, tsv = excluded.tsv`,
      [
        live.map((b) => b.rowid),
        live.map((b) => b.user_id),
        live.map((b) => b.vis_key),
        // lower-cased here: the parser folds letters outside ASCII only under a locale that knows
        // them ('Übungsraum' stayed unfound by "übungsraum" in a C-locale database; migration 10);
        // ASCII punctuation as spaces: the parser keeps 'vpn.acme-corp.io', 'package.json' or
        // '4417-9921' whole, so the words inside were found by no search (migration 11)
        live.map((b) => sqliteWords(b.content.toLowerCase())),
        live.map((b) => sqliteWords((b.tags ?? "").toLowerCase())),
        live.map((b) => cjkBigrams(b.content).join(" ")),
        live.map((b) => sqliteWords([...(near.get(b.rowid) ?? []).map((n) => n.content), dateWords(b.valid_from ?? b.created_at)].join(" ").toLowerCase())),
      ],
    );
    return [...new Set([...near.values()].flat().map((n) => n.rowid))];
  }

  private async writeWordRow(c: Q, rowid: number): Promise<number[]> {
    return this.writeWordRows(c, [rowid]);
  }

  private async refresh(c: Q, rowids: Iterable<number>): Promise<void> {
    await this.writeWordRows(c, [...rowids]);
  }

  /**
   * Transaction-scoped locks on the scopes about to be written, in one order (no deadlock); one
   * per scope, not per memory, so a large import takes a few. DSQL has no advisory locks.
   */
  private async lockScopes(c: Q, keys: string[]): Promise<void> {
    if (this.db.profile !== "postgres") return;
    const distinct = [...new Set(keys)].sort();
    await c.query(`SELECT pg_advisory_xact_lock(hashtext('memory-scope:' || k)) FROM unnest($1::text[]) AS k ORDER BY k`, [distinct]);
  }

  private async insertRow(c: Q, rec: NewMemory, vector?: Float32Array | null): Promise<number> {
    const rowid = await this.insertBaseRow(c, rec, visibilityKey(rec.scope));
    // The neighbours' context now includes this memory.
    await this.refresh(c, await this.writeWordRow(c, rowid));
    await this.putVector(c, rowid, rec, vector);
    return rowid;
  }

  async insert(rec: NewMemory, audit: AuditEntry, edges: Edge[] = [], opts: { expect?: ReadonlyMap<string, MemoryStatus> } = {}): Promise<MemoryRecord> {
    const [vec] = await this.vectorsFor([rec.content]);
    const key = visibilityKey(rec.scope);
    // [semantic channel] the row and transaction of the attempt that committed
    const mine: { rowid?: number; tokens?: OwnTokens } = {};
    const out = await this.db.tx(async (c) => {
      // Writers of one scope take turns here, so the duplicate check below sees what another
      // server (or CLI) committed a moment ago; READ COMMITTED alone let both insert.
      await this.lockScopes(c, [key]);
      // row-locked until commit: a forget (or correction) of what this record proposes to correct,
      // made since the caller read it, leaves nothing in that lineage to be confirmed back later
      await this.lockExpected(c, opts.expect);
      const dup = (await c.query<{ id: string }>(`SELECT id FROM memories WHERE vis_key = $1 AND content_hash = $2 AND ${CURRENT_DUP} LIMIT 1`, [key, rec.contentHash, rec.createdAt])).rows[0];
      if (dup) throw new DuplicateMemoryError(dup.id);
      mine.rowid = await this.insertRow(c, rec, vec);
      for (const e of edges) await this.addEdgeIn(c, e);
      await this.writeAudit(c, audit);
      const made = await this.mustGet(c, rec.id);
      mine.tokens = await this.ownTokens(c);
      return made;
    }, rec.scope.user);
    if (mine.rowid !== undefined && mine.tokens !== undefined) {
      this.followIndex(key, mine.tokens, { remove: [], add: joinsIndex(rec) ? [{ rowid: mine.rowid, thread: rec.source.threadId, content: rec.content }] : [] });
    }
    return out;
  }

  /**
   * [semantic channel] After a commit: each scope this transaction changed has the token it gave the
   * scope and the one just before (read inside the transaction, `ownTokens`), so the loaded index
   * follows by `delta`; a scope without them is rebuilt when next searched.
   */
  private followIndex(key: string, tokens: OwnTokens, delta: IndexDelta): void {
    this.followIndexes(new Map([[key, delta]]), tokens);
  }

  /** followIndex for several scopes changed by one transaction. */
  private followIndexes(deltas: Map<string, IndexDelta>, tokens: OwnTokens): void {
    if (!this.semantic) return;
    for (const [key, delta] of deltas) {
      const t = tokens.get(key);
      if (t) this.semantic.updated(key, t.prev, t.token, delta);
      else this.semantic.changed([key]);
    }
  }

  /** The scope → delta map of memories that left their scopes' indexes (forget, expiry). */
  private static leaving(rows: Iterable<{ vis_key: string; rowid: number | string }>): Map<string, IndexDelta> {
    const removed = new Map<string, number[]>();
    for (const r of rows) pushTo(removed, r.vis_key, Number(r.rowid));
    return new Map([...removed].map(([key, remove]): [string, IndexDelta] => [key, { remove, add: [] }]));
  }

  /**
   * The tokens this transaction gave the scopes it changed, and the ones before them (only when
   * there is an index to follow); called after the transaction's last change to memories. The
   * renewal triggers, deferred to commit, fire here instead, and the scope's token row stays locked
   * until the commit, so `prev` is the token of the write just before this one. Read after the
   * commit (as it was), another transaction had often renewed the token in between, and the index
   * was dropped: with several writes to one scope at a time, nearly every search rebuilt it.
   */
  private async ownTokens(c: Q): Promise<OwnTokens | undefined> {
    if (!this.semantic) return undefined;
    await c.query(`SET CONSTRAINTS memories_scope_insert, memories_scope_update, memories_scope_delete IMMEDIATE`);
    const rows = await c.query<{ vis_key: string; token: string; prev: string | null }>(
      `SELECT vis_key, token, prev FROM scope_tokens
       WHERE vis_key = ANY(string_to_array(current_setting('imem.renewed_scopes', true), E'\\n')) AND by_xact = pg_current_xact_id()::text`,
    );
    return new Map(rows.rows.map((r) => [r.vis_key, { token: Number(r.token), prev: r.prev === null ? null : Number(r.prev) }]));
  }

  async insertMany(items: BatchInsertItem[]): Promise<BatchInsertOutcome[]> {
    if (items.length === 0) return [];
    if (this.maxBatch !== undefined && items.length > this.maxBatch) {
      throw new StoreError("constraint", `insertMany: ${items.length} memories in one transaction exceed Aurora DSQL's row limit; send at most ${DSQL_MAX_BATCH} per batch`);
    }
    const users = new Set(items.map((i) => i.rec.scope.user));
    // one owner: its RLS setting; a mixed batch is an import across users (system maintenance)
    const user = users.size === 1 ? [...users][0]! : null;
    const vecs = await this.vectorsFor(items.map((i) => i.rec.content));
    // [semantic channel] what each scope's index gains, and the transaction that committed it
    const done: { joined: Map<string, IndexDelta>; tokens?: OwnTokens } = { joined: new Map() };
    const run = async (c: pg.PoolClient) => {
      done.joined = new Map();
      delete done.tokens;
      const keys = items.map((i) => visibilityKey(i.rec.scope));
      await this.lockScopes(c, keys);
      // (vis_key, content hash) → id of a record in the store or written earlier in this batch
      const seen = new Map<string, string>();
      const existing = await c.query<{ vis_key: string; content_hash: string; id: string }>(
        `SELECT DISTINCT ON (vis_key, content_hash) vis_key, content_hash, id FROM memories
         WHERE status <> 'deleted' AND status IN ('active','pending') AND (expires_at IS NULL OR expires_at > $3)
           AND (vis_key, content_hash) IN (SELECT * FROM unnest($1::text[], $2::text[]))
         ORDER BY vis_key, content_hash, rowid`,
        [keys, items.map((i) => i.rec.contentHash), items[0]?.rec.createdAt ?? 0],
      );
      for (const r of existing.rows) seen.set(`${r.vis_key}\u0000${r.content_hash}`, r.id);
      const out: BatchInsertOutcome[] = [];
      const fresh: number[] = [];
      for (const [i, { rec }] of items.entries()) {
        const k = `${keys[i]}\u0000${rec.contentHash}`;
        const prior = seen.get(k);
        if (prior !== undefined) {
          out.push({ status: "duplicate", id: prior });
          continue;
        }
        seen.set(k, rec.id);
        fresh.push(i);
        out.push({ status: "created", id: rec.id });
      }
      if (fresh.length === 0) return out;
      const rowids = await this.insertBaseRows(c, fresh.map((i) => ({ rec: items[i]!.rec, key: keys[i]! })));
      for (const [j, i] of fresh.entries()) await this.putVector(c, rowids[j]!, items[i]!.rec, vecs[i]);
      await this.writeAudits(c, fresh.map((i) => items[i]!.audit));
      // word rows once every row and source exists; each older neighbour is rewritten once
      const freshSet = new Set(rowids);
      await this.refresh(c, (await this.writeWordRows(c, rowids)).filter((n) => !freshSet.has(n)));
      for (const [j, i] of fresh.entries()) {
        const rec = items[i]!.rec;
        const delta = done.joined.get(keys[i]!) ?? done.joined.set(keys[i]!, { remove: [], add: [] }).get(keys[i]!)!;
        // a fresh row's only source is the one it came with
        if (joinsIndex(rec)) delta.add.push({ rowid: rowids[j]!, thread: rec.source.threadId, content: rec.content });
      }
      done.tokens = await this.ownTokens(c);
      return out;
    };
    const out = await (user !== null ? this.db.tx(run, user) : this.db.tx(run));
    if (done.tokens !== undefined) this.followIndexes(done.joined, done.tokens);
    else this.semantic?.changed(done.joined.keys());
    return out;
  }

  async supersede(previousId: string, next: NewMemory, audit: AuditEntry, opts: { expect?: MemoryStatus } = {}): Promise<MemoryRecord> {
    const [vec] = await this.vectorsFor([next.content]);
    const nextKey = visibilityKey(next.scope);
    const done: { prev?: MemoryRow; rowid?: number; tokens?: OwnTokens } = {};
    const out = await this.db.tx(async (c) => {
      const prev = (await c.query<MemoryRow>(`SELECT * FROM memories WHERE id = $1 FOR UPDATE`, [previousId])).rows[0];
      if (!prev || (prev.status !== "active" && prev.status !== "pending")) {
        throw new StoreError("constraint", `memory ${previousId} is not current (status ${prev?.status ?? "missing"})`);
      }
      if (opts.expect !== undefined && prev.status !== opts.expect) throw new StatusChangedError(previousId, opts.expect, prev.status);
      const around = (await this.neighbours(c, prev.rowid)).map((n) => n.rowid);
      await c.query(`UPDATE memories SET status = 'superseded', updated_at = $1 WHERE rowid = $2`, [next.createdAt, prev.rowid]);
      await this.refresh(c, around);
      done.rowid = await this.insertRow(c, next, vec);
      await this.addEdgeIn(c, { src: next.id, dst: previousId, relation: "supersedes", at: next.createdAt });
      await this.writeAudit(c, audit);
      done.prev = prev;
      done.tokens = await this.ownTokens(c);
      return this.mustGet(c, next.id);
    }, next.scope.user);
    // the old version leaves its scope's index and the new one joins its own (mostly the same scope)
    if (done.prev && done.rowid !== undefined && done.tokens !== undefined) {
      const joins = joinsIndex(next) ? [{ rowid: done.rowid, thread: next.source.threadId, content: next.content }] : [];
      const old = Number(done.prev.rowid);
      if (done.prev.vis_key === nextKey) this.followIndex(nextKey, done.tokens, { remove: [old], add: joins });
      else {
        this.followIndex(done.prev.vis_key, done.tokens, { remove: [old], add: [] });
        this.followIndex(nextKey, done.tokens, { remove: [], add: joins });
      }
    } else this.semantic?.changed([nextKey, ...(done.prev ? [done.prev.vis_key] : [])]);
    return out;
  }

  async addSource(id: string, source: MemorySource, audit: AuditEntry): Promise<void> {
    await this.db.tx(async (c) => {
      const row = (await c.query<MemoryRow>(`SELECT * FROM memories WHERE id = $1 FOR UPDATE`, [id])).rows[0];
      if (!row) throw new StoreError("not_found", `memory ${id} not found`);
      // forgotten since the caller found it: no provenance is written onto the tombstone
      if (row.status === "deleted") throw new StoreError("not_found", `memory ${id} was forgotten`);
      await this.insertSourceRow(c, row.rowid, row.user_id, source);
      await c.query(`UPDATE memories SET updated_at = $1 WHERE rowid = $2`, [source.at, row.rowid]);
      // A source in another conversation gives it neighbours there too.
      await this.refresh(c, await this.writeWordRow(c, row.rowid));
      await this.writeAudit(c, audit);
    });
  }

  async setStatus(
    id: string,
    status: MemoryStatus,
    trust: Trust | null,
    audit: AuditEntry,
    opts: { supersede?: string; expect?: MemoryStatus } = {},
  ): Promise<MemoryRecord> {
    const [rec] = await this.setStatuses([{ id, status, trust, audit, ...opts }]);
    return rec!;
  }

  async setStatuses(changes: StatusChange[]): Promise<MemoryRecord[]> {
    if (changes.some((c) => c.status === "deleted")) throw new StoreError("constraint", "use forget() to delete a memory");
    const done: { deltas?: Map<string, IndexDelta>; keys: string[]; tokens?: OwnTokens } = { keys: [] };
    // one transaction: a change that fails (another server decided first) rolls back the ones before it
    const out = await this.db.tx(async (c) => {
      done.keys = [];
      const deltas = new Map<string, IndexDelta>();
      const recs: MemoryRecord[] = [];
      for (const change of changes) recs.push(await this.statusIn(c, change, deltas, done.keys));
      done.deltas = deltas;
      done.tokens = await this.ownTokens(c);
      return recs;
    });
    if (done.deltas && done.tokens !== undefined) this.followIndexes(done.deltas, done.tokens);
    else this.semantic?.changed(done.keys);
    return out;
  }

  /** Inside a transaction: one status change (setStatuses); `deltas` and `keys` collect what the indexes must follow. */
  private async statusIn(c: Q, { id, status, trust, audit, supersede, expect }: StatusChange, deltas: Map<string, IndexDelta>, keys: string[]): Promise<MemoryRecord> {
    const row = (await c.query<MemoryRow>(`SELECT * FROM memories WHERE id = $1 FOR UPDATE`, [id])).rows[0];
    if (!row) throw new StoreError("not_found", `memory ${id} not found`);
    // read under the row lock: another server's decision committed since the caller's read shows here
    if (expect !== undefined && row.status !== expect) throw new StatusChangedError(id, expect, row.status);
    keys.push(row.vis_key);
    const around = (await this.neighbours(c, row.rowid)).map((n) => n.rowid);
    if (supersede !== undefined) {
      const old = (await c.query<MemoryRow>(`SELECT * FROM memories WHERE id = $1 FOR UPDATE`, [supersede])).rows[0];
      if (!old || (old.status !== "active" && old.status !== "pending")) {
        throw new StoreError("constraint", `memory ${supersede} is not current (status ${old?.status ?? "missing"})`);
      }
      around.push(...(await this.neighbours(c, old.rowid)).map((n) => n.rowid));
      await c.query(`UPDATE memories SET status = 'superseded', updated_at = $1 WHERE rowid = $2`, [audit.at, old.rowid]);
      const theirs = deltas.get(old.vis_key) ?? deltas.set(old.vis_key, { remove: [], add: [] }).get(old.vis_key)!;
      theirs.remove.push(Number(old.rowid));
      keys.push(old.vis_key);
    }
    await c.query(`UPDATE memories SET status = $1, trust = COALESCE($2, trust), updated_at = $3 WHERE rowid = $4`, [status, trust, audit.at, row.rowid]);
    const after = await this.writeWordRow(c, row.rowid);
    await this.refresh(c, new Set([...around, ...after]));
    await this.writeAudit(c, audit);
    const rec = await this.mustGet(c, id);
    // the memory joins its scope's index again as it now stands, or leaves it
    const rowid = Number(row.rowid);
    const thread = (await c.query<{ t: string | null }>(`SELECT (array_agg(thread_id ORDER BY id))[1] AS t FROM memory_sources WHERE memory_rowid = $1 AND thread_id IS NOT NULL`, [rowid])).rows[0]?.t ?? null;
    const mine = deltas.get(row.vis_key) ?? deltas.set(row.vis_key, { remove: [], add: [] }).get(row.vis_key)!;
    if (joinsIndex(rec)) mine.add.push({ rowid, thread, content: rec.content });
    else mine.remove.push(rowid);
    return rec;
  }

  async claimForget(
    ids: string[],
    at: number,
    opts: { expect?: ReadonlyMap<string, MemoryStatus>; owner?: string | null; heldBy?: ReadonlyMap<string, { by: string | null; at: number }> } = {},
  ): Promise<MemoryRecord[]> {
    const left: { vis_key: string; rowid: number }[] = [];
    const done: { tokens?: OwnTokens } = {};
    const owner = opts.owner ?? null;
    const out = await this.db.tx(async (c) => {
      left.length = 0;
      // locked and checked before any claim; the rows stay locked to the commit
      await this.lockExpected(c, opts.expect);
      const claimed: MemoryRow[] = [];
      const around = new Set<number>();
      for (const id of ids) {
        const row = (await c.query<MemoryRow>(`SELECT * FROM memories WHERE id = $1 FOR UPDATE`, [id])).rows[0];
        if (!row || purgedRow(row)) continue;
        if (row.status !== "deleted") {
          for (const n of await this.neighbours(c, row.rowid)) around.add(n.rowid);
          // deleted for everyone from now; the text stays for the forget's cascade until forget() purges it;
          // who claimed it and when, so a sweep leaves a claim alone while its process lives
          await c.query(`UPDATE memories SET status = 'deleted', updated_at = $1, claimed_by = $2 WHERE rowid = $3`, [at, owner, row.rowid]);
          row.status = "deleted";
          left.push(row);
        } else {
          // claimed by a forget that has not finished: taken over (a sweep's only from the owner it saw)
          const held = opts.heldBy?.get(id);
          if (held && (held.by !== (row.claimed_by ?? null) || held.at !== Number(row.updated_at))) continue;
          await c.query(`UPDATE memories SET updated_at = $1, claimed_by = $2 WHERE rowid = $3`, [at, owner, row.rowid]);
        }
        claimed.push(row);
      }
      // its word row goes (a deleted memory has none); its neighbours' context loses its text
      await this.refresh(c, [...left.map((r) => Number(r.rowid)), ...around]);
      if (left.length > 0) done.tokens = await this.ownTokens(c);
      return this.hydrateAll(c, claimed);
    });
    const leaving = PgMemoryStore.leaving(left);
    if (done.tokens !== undefined) this.followIndexes(leaving, done.tokens);
    else this.semantic?.changed(leaving.keys());
    return out;
  }

  /** a sweep across every user's records: runs as system maintenance under RLS */
  async unfinishedForgets(limit: number, after?: { updatedAt: number; id: string }): Promise<UnfinishedForget[]> {
    return asPgSystem(() =>
      this.db.read(async (c) => {
        const rows = (
          after
            ? // the next page: past the last record of the one before (in the same order)
              await c.query<MemoryRow>(
                `SELECT * FROM memories WHERE status = 'deleted' AND content <> ''
                   AND (updated_at, rowid) > ($2, (SELECT rowid FROM memories WHERE id = $3)) ORDER BY updated_at, rowid LIMIT $1`,
                [limit, after.updatedAt, after.id],
              )
            : await c.query<MemoryRow>(`SELECT * FROM memories WHERE status = 'deleted' AND content <> '' ORDER BY updated_at, rowid LIMIT $1`, [limit])
        ).rows;
        return (await this.hydrateAll(c, rows)).map((record, i) => ({ record, claimedBy: rows[i]!.claimed_by ?? null }));
      }),
    );
  }

  async forget(ids: string[], audit: AuditEntry, opts: { expect?: ReadonlyMap<string, MemoryStatus> } = {}): Promise<string[]> {
    const left: { vis_key: string; rowid: number }[] = [];
    const done: { tokens?: OwnTokens } = {};
    const out = await this.db.tx(async (c) => {
      left.length = 0;
      // locked and checked before any purge; the rows stay locked to the commit
      await this.lockExpected(c, opts.expect);
      const purged: string[] = [];
      const around = new Set<number>();
      for (const id of ids) {
        const row = (await c.query<MemoryRow>(`SELECT * FROM memories WHERE id = $1 FOR UPDATE`, [id])).rows[0];
        // (one a claimForget left deleted with its text is purged now)
        if (!row || purgedRow(row)) continue;
        // Neighbours carry this memory's text in their context: collected before the sources go.
        for (const n of await this.neighbours(c, row.rowid)) around.add(n.rowid);
        if (this.fts) {
          this.wordsChanged();
          await c.query(`DELETE FROM memory_words WHERE rowid = $1`, [row.rowid]);
        }
        if (this.db.features.vector) await c.query(`DELETE FROM memory_vectors WHERE rowid = $1`, [row.rowid]);
        await c.query(`DELETE FROM memory_tags WHERE memory_rowid = $1`, [row.rowid]);
        await c.query(`DELETE FROM memory_source_messages WHERE source_id IN (SELECT id FROM memory_sources WHERE memory_rowid = $1)`, [row.rowid]);
        await c.query(`DELETE FROM memory_sources WHERE memory_rowid = $1`, [row.rowid]);
        await c.query(
          `UPDATE memories SET content = '', content_hash = NULL, flags = '', status = 'deleted', updated_at = $1, claimed_by = NULL WHERE rowid = $2`,
          [audit.at, row.rowid],
        );
        around.delete(row.rowid);
        purged.push(id);
        left.push(row);
      }
      await this.refresh(c, around);
      await this.writeAudit(c, { ...audit, detail: { ...audit.detail, ids: purged } });
      done.tokens = await this.ownTokens(c);
      return purged;
    });
    // [semantic channel] nothing of a forgotten memory waits in memory for the next search: it leaves
    // the loaded index in place, words and all (or the index goes, when another writer came between)
    const leaving = PgMemoryStore.leaving(left);
    if (done.tokens !== undefined) this.followIndexes(leaving, done.tokens);
    else this.semantic?.changed(leaving.keys());
    return out;
  }

  /** a sweep across every user's records: runs as system maintenance under RLS */
  async expireDue(now: number, actor: string): Promise<number> {
    const left: { vis_key: string; rowid: number }[] = [];
    const done: { tokens?: OwnTokens } = {};
    const n = await asPgSystem(() => this.db.tx(async (c) => {
      left.length = 0;
      const due = await c.query<{ rowid: number; id: string; vis_key: string }>(
        `SELECT rowid, id, vis_key FROM memories WHERE expires_at IS NOT NULL AND expires_at <= $1 AND status IN ${CURRENT}
         ORDER BY rowid LIMIT 500 FOR UPDATE${this.db.profile === "dsql" ? "" : " SKIP LOCKED"}`,
        [now],
      );
      for (const r of due.rows) {
        await c.query(`UPDATE memories SET status = 'expired', updated_at = $1 WHERE rowid = $2`, [now, r.rowid]);
        await this.writeAudit(c, { at: now, actor, action: "expire", targetKind: "memory", targetId: r.id, detail: {} });
        left.push(r);
      }
      if (due.rows.length > 0) done.tokens = await this.ownTokens(c);
      return due.rows.length;
    }));
    const leaving = PgMemoryStore.leaving(left);
    if (done.tokens !== undefined) this.followIndexes(leaving, done.tokens);
    else this.semantic?.changed(leaving.keys());
    return n;
  }

  async addEdge(edge: Edge): Promise<void> {
    await this.db.tx((c) => this.addEdgeIn(c, edge));
  }

  async edgesOf(id: string): Promise<Edge[]> {
    return this.db.query<Edge>(
      `SELECT src, dst, relation, at FROM (
         SELECT src, dst, relation, at FROM edges WHERE src = $1
         UNION ALL SELECT src, dst, relation, at FROM edges WHERE dst = $1 AND src <> dst) e ORDER BY at`,
      [id],
    );
  }

  async audit(targetId: string, limit: number): Promise<StoredAuditEntry[]> {
    type Row = { seq: number; at: number; actor: string; action: string; target_kind: string; target_id: string; detail: string };
    const rows = await this.db.query<Row>(`SELECT * FROM audit_log WHERE target_id = $1 ORDER BY seq DESC LIMIT $2`, [targetId, Math.max(0, Math.floor(limit))]);
    return rows.map((r) => ({
      seq: r.seq,
      at: r.at,
      actor: r.actor,
      action: r.action as StoredAuditEntry["action"],
      targetKind: r.target_kind as StoredAuditEntry["targetKind"],
      targetId: r.target_id,
      detail: JSON.parse(r.detail) as Record<string, unknown>,
    }));
  }

  // ---- reads ----------------------------------------------------------------------------------

  async get(id: string): Promise<MemoryRecord | null> {
    return this.db.read(async (c) => {
      const row = (await c.query<MemoryRow>(`SELECT * FROM memories WHERE id = $1`, [id])).rows[0];
      return row ? (await this.hydrateAll(c, [row]))[0]! : null;
    });
  }

  private async mustGet(c: Q, id: string): Promise<MemoryRecord> {
    const row = (await c.query<MemoryRow>(`SELECT * FROM memories WHERE id = $1`, [id])).rows[0];
    if (!row) throw new StoreError("not_found", `memory ${id} not found`);
    return (await this.hydrateAll(c, [row]))[0]!;
  }

  private async one(sql: string, params: unknown[]): Promise<MemoryRecord | null> {
    return this.db.read(async (c) => {
      const row = (await c.query<MemoryRow>(sql, params)).rows[0];
      return row ? (await this.hydrateAll(c, [row]))[0]! : null;
    });
  }

  async findDuplicate(key: string, contentHash: string, now: number): Promise<MemoryRecord | null> {
    return this.one(
      `SELECT * FROM memories WHERE vis_key = $1 AND content_hash = $2 AND ${CURRENT_DUP}
       ORDER BY (status = 'active') DESC, version DESC LIMIT 1`,
      [key, contentHash, now],
    );
  }

  async findByToolCall(threadId: string, toolCallId: string): Promise<MemoryRecord | null> {
    return this.one(
      `SELECT m.* FROM memory_sources s JOIN memories m ON m.rowid = s.memory_rowid
       WHERE s.thread_id = $1 AND s.tool_call_id = $2 ORDER BY m.version DESC LIMIT 1`,
      [threadId, toolCallId],
    );
  }

  async lineage(lineageId: string): Promise<MemoryRecord[]> {
    return this.db.read(async (c) =>
      this.hydrateAll(c, (await c.query<MemoryRow>(`SELECT * FROM memories WHERE lineage_id = $1 ORDER BY version`, [lineageId])).rows),
    );
  }

  /** the user a visibility belongs to, when it names one (the RLS setting of the query) */
  private userOf(v: Visibility): string | undefined {
    return "owner" in v ? v.owner : undefined;
  }

  /** Scope predicate over alias `a` (memories or memory_words: both carry vis_key and user_id). */
  private scope(v: Visibility, p: Params, a: string): string {
    if ("keys" in v) return v.keys.length === 0 ? "FALSE" : `${a}.vis_key = ANY(${p.add(v.keys)}::text[])`;
    return `${a}.user_id = ${p.add(v.owner)}`;
  }

  /** Status, kinds, levels, flags, expiry and project filters over `m`. */
  private filters(q: Pick<SearchQuery, "kinds" | "levels" | "statuses" | "includeFlagged" | "now" | "visibility">, p: Params): string {
    const where: string[] = [];
    const wantExpired = q.statuses.includes("expired");
    // Literal statuses: "pending" alone reads the partial indexes of migration 8.
    where.push(statusPredicate(q.statuses));
    if (!wantExpired) where.push(`(m.expires_at IS NULL OR m.expires_at > ${p.add(q.now)})`);
    // A flagged record reaches results only once a person confirmed it.
    if (!q.includeFlagged) where.push(`(m.flags = '' OR m.trust = 'user_confirmed')`);
    if (q.kinds && q.kinds.length > 0) where.push(`m.kind = ANY(${p.add(q.kinds)}::text[])`);
    if (q.levels && q.levels.length > 0) where.push(`m.level = ANY(${p.add(q.levels)}::text[])`);
    if (!("keys" in q.visibility) && q.visibility.project) where.push(`(m.project = ${p.add(q.visibility.project)} OR m.level = 'user')`);
    return where.join(" AND ");
  }

  /**
   * Inverse document frequency of each query word over the word index, as bm25 (SQLite FTS5)
   * computes it: ts_rank alone has none, so a word in every memory counted like a name. Counts are
   * read over the matching rows (up to DF_COUNT_CAP) in one statement and kept per word until this
   * store writes word rows, or for DF_TTL_MS (other servers' writes: a minute-old count moves a weight by a hair);
   * the corpus size is the planner's row estimate on a large table, an exact count on a small one
   * (where the estimate may not exist yet).
   */
  private async wordStats(c: Q, words: QueryWord[], now: number, user: string | undefined): Promise<{ idf: number[]; df: number[]; n: number }> {
    // Under row-level security a count covers the acting user's rows only: kept per user.
    const key = (w: QueryWord) => `${user ?? ""}|${wordKey(w)}`;
    const missing = [...new Map(words.filter((w) => !this.dfFresh(key(w), now)).map((w) => [key(w), w])).values()];
    if (missing.length > 0) {
      const p = new Params();
      // Counted up to one past the budget: a word past it never ranks (planWords), so its exact
      // count (a read of every match: 30-50 ms for a word in 10-40% of 100k memories) buys nothing.
      const counts = missing.map((w) => `(SELECT count(*) FROM (SELECT 1 FROM memory_words w WHERE w.tsv @@ ${tsqueryOf(w, p)} LIMIT ${DF_COUNT_CAP}) s)`);
      // Even capped, counting a common word reads (and rechecks) up to 3,001 rows: 10-35 ms at
      // 100k memories. The table's statistics (ANALYZE's most common lexemes, with the share of rows
      // holding each) already know the common words: one they put past the budget by a margin
      // (frequency × rows ≥ STATS_PAST_BUDGET) takes the capped count a read would give, and only
      // the rest are counted. So a ranking never depends on whether (or when) autovacuum analysed
      // the table: estimates that would feed an IDF (a sampled, possibly stale share) are not used.
      // Not under RLS (the statistics span every user; a count covers one) nor before the first
      // ANALYZE (no statistics: every word is counted).
      const past = this.db.profile === "postgres" && !this.db.rls ? await this.wordsPastBudget(c, now) : [];
      const pastParam = past.length > 0 ? p.add(past) : null;
      const sel = missing.map((w, i) => {
        if (pastParam === null) return `${counts[i]}::float8 AS d${i}`;
        const lexeme = `(SELECT l[1] FROM (SELECT tsvector_to_array(to_tsvector('${w.config}', ${p.add(indexedText(w))})) AS l) x WHERE cardinality(l) = 1)`;
        // an uncorrelated subquery in an untaken CASE branch is never run
        return `(CASE WHEN ${lexeme} = ANY(${pastParam}::text[]) THEN ${DF_COUNT_CAP} ELSE ${counts[i]} END)::float8 AS d${i}`;
      });
      const row = (await c.query<Record<string, number>>(`SELECT ${sel.join(", ")}`, p.values)).rows[0]!;
      if (this.dfCache.size + missing.length > DF_CACHE_MAX) this.dfCache.clear();
      missing.forEach((w, i) => this.dfCache.set(key(w), { df: row[`d${i}`] ?? 0, at: now }));
    }
    if (this.corpus === null || this.corpus.user !== user || now - this.corpus.at >= DF_TTL_MS) {
      const est = (await c.query<{ n: number | null }>(`SELECT reltuples::float8 AS n FROM pg_class WHERE oid = 'memory_words'::regclass`)).rows[0]?.n ?? 0;
      const n = est >= EXACT_COUNT_BELOW ? est : (await c.query<{ n: number }>(`SELECT count(*)::float8 AS n FROM memory_words`)).rows[0]!.n;
      this.corpus = { n, at: now, user };
    }
    const n = this.corpus.n;
    const df = words.map((w) => this.dfCache.get(key(w))?.df ?? 0);
    return { idf: df.map((d) => Math.max(1e-6, Math.log((n - d + 0.5) / (d + 0.5)))), df, n };
  }

  /**
   * The lexemes the word index's statistics put past the budget (see wordStats), read once per
   * DF_TTL_MS: pg_stats is a view whose planning alone costs ~3 ms, paid on every recount (after
   * each write of this server) when it was joined into the count statement. Statistics change only
   * with ANALYZE.
   */
  private async wordsPastBudget(c: Q, now: number): Promise<string[]> {
    if (this.pastBudget && now - this.pastBudget.at < DF_TTL_MS) return this.pastBudget.lexemes;
    const r = await c.query<{ lexemes: string[] | null }>(
      `SELECT array(SELECT u.e FROM unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS u(e, f)
                    WHERE u.e IS NOT NULL AND u.f * c.reltuples >= $1) AS lexemes
       FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
       JOIN pg_stats s ON s.schemaname = ns.nspname AND s.tablename = c.relname AND s.attname = 'tsv'
       WHERE c.oid = 'memory_words'::regclass AND c.reltuples > 0 AND s.most_common_elems IS NOT NULL`,
      [STATS_PAST_BUDGET],
    );
    this.pastBudget = { lexemes: r.rows[0]?.lexemes ?? [], at: now };
    return this.pastBudget.lexemes;
  }

  private dfFresh(key: string, now: number): boolean {
    const e = this.dfCache.get(key);
    return e !== undefined && now - e.at < DF_TTL_MS;
  }

  /** This store changed the word index: its cached counts start over (other servers': DF_TTL_MS). */
  private wordsChanged(): void {
    this.dfCache.clear();
    this.corpus = null;
  }

  /**
   * `ownText`: match memories' own text and tags only (never the neighbours' context). `dated`:
   * only memories dated inside these windows (the dated pass; none when every word is too common).
   */
  private async wordChannel(
    c: Q,
    q: SearchQuery,
    terms: string[],
    cjk: string[],
    limit: number,
    ownText = false,
    dated?: readonly DateWindow[],
    budget = WORD_POSTINGS_BUDGET,
  ): Promise<{ row: MemoryRow; rank: number }[]> {
    const all: QueryWord[] = [...terms.map((text) => ({ config: "english" as const, text })), ...cjk.map((text) => ({ config: "simple" as const, text }))];
    if (all.length === 0) return [];
    const stats = await this.wordStats(c, all, Date.now(), this.userOf(q.visibility));
    const plan = planWords(stats, budget);
    if (plan.words.length === 0) return [];
    const words = plan.words.map((i) => all[i]!);
    const idf = plan.words.map((i) => stats.idf[i]!);
    const p = new Params();
    const k = Math.max(1, Math.floor(limit));
    const inPeriod = () => (dated ? ` AND (${dated.map((d) => `(${DATED_AT} >= ${p.add(d.from)} AND ${DATED_AT} < ${p.add(d.to)})`).join(" OR ")})` : "");
    const inScope = () => `${this.scope(q.visibility, p, "w")} AND ${this.filters(q, p)}${inPeriod()}`;
    if (plan.newest && dated) return [];
    if (plan.newest) {
      // Every word too common to rank by: the newest memories naming one in their own text or
      // tags (a neighbour's mention would rank alike), walked newest first; they rank alike and
      // cues and spreading order them, as on SQLite.
      // The words carry the own-text weights (A-C) in the tsquery itself: a ts_filter() predicate
      // had no selectivity estimate, and PostgreSQL then read every match (100k memories: 27 ms
      // against 1.2 for the newest-first walk it picks with the weighted query).
      const own = words.map((w) => ownTextQuery(w, p)).join(" || ");
      const sql = `SELECT m.*, ${NEWEST_RANK}::float8 AS rank FROM (SELECT (${own}) AS q) qq,
          memory_words w JOIN memories m ON m.rowid = w.rowid
        WHERE w.tsv @@ qq.q AND ${inScope()}
        ORDER BY m.rowid DESC LIMIT ${k}`;
      return (await c.query<MemoryRow & { rank: number }>(sql, p.values)).rows.map((r) => ({ row: r, rank: r.rank }));
    }
    const noContext = ownText || q.wordsOnly || !this.channels.context;
    // past the budget, a word in more than CONTEXT_TERM_MAX_DF memories matches own text and tags only (as on SQLite)
    const ownOnly = plan.words.map((i) => !noContext && stats.n > WORD_POSTINGS_BUDGET && all[i]!.config === "english" && stats.df[i]! > CONTEXT_TERM_MAX_DF);
    const parts = words.map((w, j) => (ownOnly[j] ? ownTextQuery(w, p) : tsqueryOf(w, p)));
    const doc = noContext ? `ts_filter(w.tsv, '{a,b,c}')` : "w.tsv";
    // bm25-like: each word's ts_rank (weighted frequency over log length) times its IDF
    const rank = parts
      .map((_q, i) => `${p.add(idf[i])}::float8 * ts_rank('${RANK_WEIGHTS}', ${ownOnly[i] ? `ts_filter(w.tsv, '{a,b,c}')` : doc}, qq.q${i}, 1)`)
      .join(" + ");
    const sql = `SELECT m.*, (${rank}) AS rank
      FROM (SELECT ${parts.map((part, i) => `${part} AS q${i}`).join(", ")}, (${parts.join(" || ")}) AS q) qq,
        memory_words w JOIN memories m ON m.rowid = w.rowid
      WHERE w.tsv @@ qq.q${noContext ? ` AND ${doc} @@ qq.q` : ""} AND ${inScope()}
      ORDER BY rank DESC, m.rowid DESC LIMIT ${k}`;
    const rows = (await c.query<MemoryRow & { rank: number }>(sql, p.values)).rows;
    return rows.map((r) => ({ row: r, rank: r.rank }));
  }

  /**
   * The query words the word index holds (`held`) and those it holds past the postings budget
   * (`common`, left out of the ranking), on a table past the budget (`large`); on a smaller one
   * every word ranks and `common` is empty.
   */
  private async heldWords(c: Q, q: SearchQuery, terms: string[]): Promise<{ large: boolean; held: Set<string>; common: string[] }> {
    const all: QueryWord[] = terms.map((text) => ({ config: "english" as const, text }));
    const stats = await this.wordStats(c, all, Date.now(), this.userOf(q.visibility));
    const large = stats.n > WORD_POSTINGS_BUDGET;
    const ranked = new Set(planWords(stats).words);
    const held = new Set(terms.filter((_t, i) => stats.df[i]! > 0));
    const common = large ? terms.filter((_t, i) => stats.df[i]! > 0 && !ranked.has(i)) : [];
    return { large, held, common };
  }

  /** The word hits, then the newest memories naming a word left out as too common (own text and tags). */
  private async withCommonWords(
    c: Q,
    hits: { row: MemoryRow; rank: number }[],
    common: string[],
    q: SearchQuery,
    depth: number,
  ): Promise<{ row: MemoryRow; rank: number }[]> {
    const have = new Set(hits.map((h) => Number(h.row.rowid)));
    // every word here is past the budget, so the channel walks their newest own-text mentions
    const newest = await this.wordChannel(c, q, common, [], depth, true);
    // below every word hit: ranks are higher-better and positive here
    const floor = hits.reduce((m, h) => Math.min(m, h.rank), Infinity);
    const below = Number.isFinite(floor) ? floor / 2 : NEWEST_RANK;
    return [...hits, ...newest.filter((h) => !have.has(Number(h.row.rowid))).map((h) => ({ ...h, rank: below }))].slice(0, depth);
  }

  private async trigramChannel(c: Q, q: SearchQuery, subs: string[], limit: number): Promise<{ row: MemoryRow; rank: number }[]> {
    const p = new Params();
    const pats = subs.slice(0, 16).map((s) => ({ pat: p.add(likePattern(s)), len: s.length }));
    if (pats.length === 0) return [];
    const any = pats.map((x) => `m.content ILIKE ${x.pat}`).join(" OR ");
    const score = pats.map((x) => `(CASE WHEN m.content ILIKE ${x.pat} THEN ${x.len} ELSE 0 END)`).join(" + ");
    const sql = `SELECT m.*, (${score})::float8 / (1 + ln(1 + length(m.content))) AS rank FROM memories m
      WHERE (${any}) AND ${this.scope(q.visibility, p, "m")} AND ${this.filters(q, p)}
      ORDER BY rank DESC, m.rowid DESC LIMIT ${Math.max(1, Math.floor(limit))}`;
    const rows = (await c.query<MemoryRow & { rank: number }>(sql, p.values)).rows;
    return rows.map((r) => ({ row: r, rank: r.rank }));
  }

  /**
   * DSQL word channel: no stored index, so it scans the requesting scope (vis_key/user_id are
   * indexed) and counts the query words found in content (1) and tags (2). No stemming.
   */
  /**
   * `words`: scan for these instead of the query's (the added words); `dated`: only memories dated
   * inside these windows (the dated pass).
   */
  private async scanChannel(
    c: Q,
    q: SearchQuery,
    limit: number,
    opts: { words?: string[]; dated?: readonly DateWindow[] } = {},
  ): Promise<{ row: MemoryRow; rank: number }[]> {
    const words = [...new Set(opts.words ?? [...q.query.terms, ...q.query.cjk])].slice(0, 32);
    if (words.length === 0) return [];
    const p = new Params();
    const add = (v: string) => p.add(v);
    const tags = `coalesce((SELECT string_agg(tag, ' ') FROM memory_tags t WHERE t.memory_rowid = m.rowid), '')`;
    // letters outside ASCII in either case, whatever the database's locale folds (holdsWord)
    const score = words.map((w) => `(CASE WHEN ${holdsWord("m.content", w.toLowerCase(), add)} THEN 1 ELSE 0 END) + (CASE WHEN ${holdsWord(tags, w.toLowerCase(), add)} THEN 2 ELSE 0 END)`).join(" + ");
    const inPeriod = opts.dated
      ? ` AND (${opts.dated.map((d) => `(${DATED_AT} >= ${p.add(d.from)} AND ${DATED_AT} < ${p.add(d.to)})`).join(" OR ")})`
      : "";
    const sql = `SELECT * FROM (SELECT m.*, (${score})::float8 AS rank FROM memories m
      WHERE ${this.scope(q.visibility, p, "m")} AND ${this.filters(q, p)}${inPeriod}) s
      WHERE s.rank > 0 ORDER BY s.rank DESC, s.rowid DESC LIMIT ${Math.max(1, Math.floor(limit))}`;
    const rows = (await c.query<MemoryRow & { rank: number }>(sql, p.values)).rows;
    return rows.map((r) => ({ row: r, rank: r.rank }));
  }

  async search(q: SearchQuery): Promise<SearchHit[]> {
    const depth = Math.max(q.limit, 10);
    // [semantic channel] the scopes' own word associations expand the query. It reads tokens (and
    // builds what changed) on a connection of its own, so it finishes before this search takes
    // one: awaited while holding a connection, it waited for a free one, and with every connection
    // held by such searches (a pool of one, or as many searches as connections) each waited out
    // the pool's connection timeout.
    const keys = "keys" in q.visibility ? q.visibility.keys : null;
    const semJob =
      this.semantic && !q.wordsOnly && keys && keys.length > 0 && q.query.terms.length > 0
        ? this.semantic.score(keys, q.query.terms.join(" "), depth * 2, this.userOf(q.visibility)).catch((e: unknown) => {
            this.db.log.warn(`postgres: semantic channel skipped for this search: ${(e as Error).message}`);
            return [];
          })
        : null;
    const associations = semJob ? await semJob : null;
    return this.db.read(async (c) => {
      const ch = this.channels;
      const lex = q.query;
      const deep = ch.session && !q.wordsOnly ? Math.max(depth, SESSION_DEPTH) : depth;
      // Question cues (speaker, dates, answer kind) re-order a deeper pool of word hits.
      const cues = ch.cues && !q.wordsOnly && q.text ? queryCues(q.text, lex.terms, q.now) : null;
      // a store within the postings budget re-orders a deeper pool (as on SQLite; DSQL's scan keeps CUE_POOL)
      const small = cues !== null && this.fts && (await this.wordStats(c, [], Date.now(), this.userOf(q.visibility))).n <= WORD_POSTINGS_BUDGET;
      const pool = cues ? Math.max(deep, small ? SMALL_STORE_CUE_POOL : CUE_POOL) : deep;
      const raw = this.fts ? await this.wordChannel(c, q, lex.terms, lex.cjk, pool) : await this.scanChannel(c, q, pool);
      // Lower-weight words, as on SQLite: [categories] a question naming a kind of thing also finds
      // turns naming its members; an irregular verb's other forms find turns that tell in the past;
      // then everyday near-synonyms. Each pass at its weight of the word score (own text and tags only).
      // (Under DSQL the scope scan looks for them as for the query's words.)
      let withMembers = raw;
      for (const pass of q.wordsOnly ? [] : addedWords(q.text, lex.terms, ch.categories)) {
        const hits = this.fts ? await this.wordChannel(c, q, pass.words, [], pool, true, undefined, pass.budget) : await this.scanChannel(c, q, pool, { words: pass.words });
        withMembers = addRanks(withMembers, hits, pass.weight, "higher");
      }
      // [semantic channel] memories the scope's word associations tie to the query rise in the pool
      const pooled = associations ? await this.withAssociations(c, withMembers, associations, q, pool) : withMembers;
      // [cues] a question naming a period also searches the memories dated inside it (dates.ts)
      const dated =
        cues && cues.windows.length > 0
          ? addMissing(
              pooled,
              this.fts
                ? await this.wordChannel(c, q, lex.terms, lex.cjk, DATED_POOL, false, cues.windows)
                : await this.scanChannel(c, q, DATED_POOL, { dated: cues.windows }),
              "higher",
            )
          : pooled;
      const lexicalDeep = cues ? applyCues(dated, cues, "higher") : dated;
      // Neighbour spreading re-scores the word channel: the reply after a matching question rises.
      const spreading = ch.neighbours && !q.wordsOnly;
      const spread = (spreading ? await this.spreadNeighbours(c, lexicalDeep, q, depth) : lexicalDeep).slice(0, depth);
      // When the words found fewer than asked for: which of them the word index holds, and which it
      // left out as too common to rank (counts cached from the word channel's own plan).
      const words = this.fts && lex.terms.length > 0 && spread.length < q.limit ? await this.heldWords(c, q, lex.terms) : null;
      // Words left out as too common come back when the kept ones found too little in this scope
      // ("pipeline zebrafish" where only another scope has a zebrafish): the newest memories naming
      // them in their own text follow the word hits.
      const common = words?.common ?? [];
      const withCommon = common.length > 0 ? await this.withCommonWords(c, spread, common, q, depth) : spread;
      // [cues] a question naming a period that its words answer with fewer than asked for ("what
      // did we do yesterday?") also lists the period's memories, newest first, below every word hit
      const lexical =
        cues && cues.windows.length > 0 && withCommon.length < q.limit && keys && keys.length > 0
          ? [...withCommon, ...(await this.periodMemories(c, q, keys, cues.windows, q.limit - withCommon.length, new Set(withCommon.map((h) => Number(h.row.rowid)))))]
          : withCommon;
      const session = ch.session && !q.wordsOnly ? await this.sessionChannel(c, lexicalDeep, depth) : [];
      // The trigram channel finds partial words (and CJK runs) the word channel misses, when it came
      // up short. On a table past the postings budget the words the index holds stay out of it, as
      // on SQLite: their ILIKE patterns would read much of the scope for rows the word channel
      // already weighed (or, for words too common to rank, for nearly every row).
      const triWords = words?.large ? lex.trigrams.filter((t) => hasCjk(t) || !words.held.has(t)) : lex.trigrams;
      const needTri =
        this.db.features.trigram && ch.trigram && !q.wordsOnly && triWords.length > 0 && spread.length < Math.min(q.limit, TRIGRAM_WHEN_FEWER);
      const tri = needTri ? await this.trigramChannel(c, q, triWords, depth) : [];
      const vec = await this.vectorChannel(c, q, depth);
      if (tri.length === 0 && session.length === 0 && vec.length === 0 && !ch.proximity && !ch.mmr) {
        const top = lexical.slice(0, q.limit);
        const recs = await this.hydrateAll(c, top.map((h) => h.row));
        return top.map((h, i) => ({ record: recs[i]!, score: h.rank, channel: "lexical" as const }));
      }
      const asList = (hs: { row: MemoryRow }[]) => hs.map((h) => ({ key: h.row.rowid, item: h.row }));
      let fused = rrf([
        { name: "lexical", weight: 1, hits: asList(lexical) },
        { name: "trigram", weight: 1, hits: asList(tri) },
        { name: "session", weight: 1, hits: asList(session) },
        { name: "vector", weight: this.vectorWeight, hits: asList(vec) },
      ]).sort((a, b) => b.score - a.score || b.item.updated_at - a.item.updated_at);
      if (ch.proximity) fused = proximityRerank(fused, lex.terms);
      if (ch.mmr) fused = mmr(fused, q.limit);
      const top = fused.slice(0, q.limit);
      const recs = await this.hydrateAll(c, top.map((h) => h.item));
      return top.map((h, i) => {
        const lexicalHit = h.from.has("lexical") || h.from.has("session");
        const triHit = h.from.has("trigram");
        if (!lexicalHit && !triHit) return { record: recs[i]!, score: h.score, channel: "vector" as const };
        return { record: recs[i]!, score: h.score, channel: lexicalHit && triHit ? ("both" as const) : lexicalHit ? ("lexical" as const) : ("trigram" as const) };
      });
    }, this.userOf(q.visibility));
  }

  /**
   * The newest `n` memories dated inside the windows (by what they are about, else when they were
   * written) that pass the search's filters and are not in `have`: one walk of memories_vis_dated
   * per key and window, ranked below every word hit (scores are positive).
   */
  private async periodMemories(
    c: Q,
    q: SearchQuery,
    keys: string[],
    windows: readonly DateWindow[],
    n: number,
    have: Set<number>,
  ): Promise<{ row: MemoryRow; rank: number }[]> {
    const found = new Map<number, MemoryRow>();
    for (const w of windows) {
      const p = new Params();
      const sql = `SELECT m.* FROM unnest(${p.add(keys)}::text[]) k(key) CROSS JOIN LATERAL (
          SELECT m.* FROM memories m WHERE m.vis_key = k.key AND ${DATED_AT} >= ${p.add(w.from)} AND ${DATED_AT} < ${p.add(w.to)} AND ${this.filters(q, p)}
          ORDER BY ${DATED_AT} DESC LIMIT ${p.add(n + have.size)}) m`;
      for (const r of (await c.query<MemoryRow>(sql, p.values)).rows) if (!have.has(Number(r.rowid))) found.set(Number(r.rowid), r);
    }
    return newestInPeriod(found.values(), n);
  }

  /**
   * The word pool with the semantic channel's memories added, as on SQLite (core/retrieval/fusion.ts
   * addAssociationHits); its memories pass the search's scope and filters like any hit.
   */
  private async withAssociations(
    c: Q,
    pool: { row: MemoryRow; rank: number }[],
    scored: { rowid: number; score: number }[],
    q: SearchQuery,
    depth: number,
  ): Promise<{ row: MemoryRow; rank: number }[]> {
    if ((scored[0]?.score ?? 0) <= 0) return pool;
    // rows the pool holds passed the filters already; only the others are read (often none)
    const rows = new Map(pool.map((h) => [Number(h.row.rowid), h.row]));
    const missing = scored.map((h) => h.rowid).filter((r) => !rows.has(r));
    if (missing.length > 0) {
      const p = new Params();
      const sql = `SELECT m.* FROM memories m WHERE m.rowid = ANY(${p.add(missing)}::bigint[]) AND ${this.scope(q.visibility, p, "m")} AND ${this.filters(q, p)}`;
      for (const r of (await c.query<MemoryRow>(sql, p.values)).rows) rows.set(Number(r.rowid), r);
    }
    return addAssociationHits(pool, scored, rows, depth, DEFAULT_ASSOCIATIONS.poolWeight, "higher");
  }

  /** Conversation channel: threads scored by their best few word hits, best conversation first. */
  private async sessionChannel<T extends { row: MemoryRow; rank: number }>(c: Q, hits: T[], limit: number): Promise<T[]> {
    if (hits.length === 0) return [];
    const rows = await c.query<{ memory_rowid: number; thread_id: string }>(
      `SELECT DISTINCT ON (memory_rowid) memory_rowid, thread_id FROM memory_sources
       WHERE memory_rowid = ANY($1::bigint[]) AND thread_id IS NOT NULL ORDER BY memory_rowid, id`,
      [hits.map((h) => h.row.rowid)],
    );
    const threads = new Map(rows.rows.map((r) => [r.memory_rowid, r.thread_id]));
    const byThread = new Map<string, T[]>();
    for (const h of hits) {
      const t = threads.get(h.row.rowid) ?? `#${h.row.rowid}`;
      (byThread.get(t) ?? byThread.set(t, []).get(t)!).push(h);
    }
    const score = (hs: T[]) => hs.slice(0, SESSION_TOP).reduce((s, h) => s + h.rank, 0);
    return [...byThread.values()].sort((a, b) => score(b) - score(a)).flat().slice(0, limit);
  }

  async list(q: ListQuery): Promise<ListPage> {
    return this.db.read(async (c) => {
      const cp = new Params();
      const cap = totalCapOf(q);
      const counted = Number(
        (await c.query<{ n: number | string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM memories m WHERE ${this.scope(q.visibility, cp, "m")} AND ${this.filters(q, cp)} LIMIT ${cap + 1}) capped`, cp.values)).rows[0]!.n,
      );
      const p = new Params();
      let cursorSql = "";
      if (q.cursor) {
        const cur = decodeCursor(q.cursor);
        cursorSql = ` AND (m.updated_at, m.rowid) ${q.order === "newest" ? "<" : ">"} (${p.add(cur.t)}, ${p.add(cur.r)})`;
      }
      const dir = q.order === "newest" ? "DESC" : "ASC";
      const limit = Math.max(1, Math.floor(q.limit));
      const order = `ORDER BY updated_at ${dir}, rowid ${dir} LIMIT ${limit + 1}`;
      const filters = this.filters(q, p);
      // A thread's few scope keys are read one key at a time in (vis_key, updated_at) index order
      // and merged, as on SQLite: one read of them all sorts every matching row first.
      const keys = "keys" in q.visibility ? q.visibility.keys : [];
      const sql =
        keys.length > 1 && keys.length <= LIST_KEY_BRANCHES
          ? `${keys.map((k) => `(SELECT m.* FROM memories m WHERE m.vis_key = ${p.add(k)} AND ${filters}${cursorSql} ${order})`).join(" UNION ALL ")} ${order}`
          : `SELECT m.* FROM memories m WHERE ${this.scope(q.visibility, p, "m")} AND ${filters}${cursorSql} ${order}`;
      const rows = (await c.query<MemoryRow>(sql, p.values)).rows;
      const more = rows.length > limit;
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        items: await this.hydrateAll(c, page),
        nextCursor: more && last ? encodeCursor(last.updated_at, last.rowid) : null,
        ...cappedTotal(counted, cap),
      };
    }, this.userOf(q.visibility));
  }

  exportAll(visibility: Visibility): AsyncIterable<MemoryRecord> {
    return exportAllVia((q) => this.list(q), visibility);
  }

  /** Rebuild every word row from the memories table (after a bulk copy, e.g. `migrate --from`). */
  async rebuildWordIndex(): Promise<number> {
    if (!this.fts) return 0;
    return asPgSystem(() => this.db.tx(async (c) => {
      this.wordsChanged();
      await c.query(`DELETE FROM memory_words`);
      const rows = (await c.query<{ rowid: number }>(`SELECT rowid FROM memories WHERE status <> 'deleted' ORDER BY rowid`)).rows;
      for (const r of rows) await this.writeWordRow(c, r.rowid);
      return rows.length;
    }));
  }

  /** The pool belongs to the backend, which ends it once for every store. */
  /** [semantic channel] build the indexes of the scopes written last, in the background; resolves with their keys */
  warm(): Promise<string[]> {
    return this.semantic ? this.semantic.warm(WARM_UP.scopes, WARM_UP.memories).catch(() => []) : Promise.resolve([]);
  }

  close(): void {
    this.semantic?.clear();
  }

  /** Rows → records with tags and sources, in three queries however many rows there are. */
  private async hydrateAll(c: Q, rows: MemoryRow[]): Promise<MemoryRecord[]> {
    if (rows.length === 0) return [];
    const rowids = rows.map((r) => r.rowid);
    const tags = new Map<number, string[]>();
    for (const t of (await c.query<{ memory_rowid: number; tag: string }>(
      `SELECT memory_rowid, tag FROM memory_tags WHERE memory_rowid = ANY($1::bigint[]) ORDER BY tag COLLATE "C"`,
      [rowids],
    )).rows) {
      pushTo(tags, t.memory_rowid, t.tag);
    }
    const sourceRows = (
      await c.query<{ id: number; memory_rowid: number; thread_id: string | null; tool_call_id: string | null; actor: string; at: number }>(
        `SELECT * FROM memory_sources WHERE memory_rowid = ANY($1::bigint[]) ORDER BY id`,
        [rowids],
      )
    ).rows;
    const msgs = new Map<number, string[]>();
    if (sourceRows.length > 0) {
      for (const m of (await c.query<{ source_id: number; message_id: string }>(
        `SELECT source_id, message_id FROM memory_source_messages WHERE source_id = ANY($1::bigint[]) ORDER BY source_id, ord`,
        [sourceRows.map((s) => s.id)],
      )).rows) {
        pushTo(msgs, m.source_id, m.message_id);
      }
    }
    const sources = sourcesByMemory(sourceRows, msgs);
    return rows.map((row) => recordOf(row, tags.get(row.rowid) ?? [], sources.get(row.rowid) ?? []));
  }
}



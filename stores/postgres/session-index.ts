// PostgreSQL session index: conversation messages copied from an Infinity store, searchable by
// the user who owns the session (the user's key is part of every lookup), with the semantics of
// stores/sqlite/session-index.ts. Full text: a tsvector column with a GIN index; under the DSQL
// profile a substring scan over the user's messages.
import { forgetNeedles, MAX_PARENT_HOPS, needleWords } from "../../core/sessions/forget-needles.js";
import { visibilityKey } from "../../core/memory/scope.js";
import { cjkBigrams } from "../../core/retrieval/analyze.js";
import { headOf } from "../../core/text.js";
import { eitherCase, holdsWord, sqliteWords } from "./words.js";
import type { IndexedMessage, LexicalQuery, MessageRef, SessionHit, SessionIndexStore, SessionThreadState, SkippedMessages, ThreadParent } from "../traits.js";
import type { PgDb, Q } from "./pool.js";

interface Row {
  rowid: number;
  source_id: number;
  thread_id: string;
  root_thread_id: string;
  ord: number;
  message_id: string;
  role: string;
  text: string;
  at: number;
  rank?: number;
}

function userKeyOf(user: string): string {
  return visibilityKey({ level: "user", user, project: null, session: null, thread: null });
}

/** A message counts as quoted when this much of its (normalised) start appears elsewhere. */
const QUOTE_CHARS = 120;
const MIN_QUOTE_CHARS = 24;
// $TEXT is the text as SQLite's tokenizer splits it (words.ts sqliteWords; migrations 9 and 12
// gave older rows the same), lower-cased: the parser folds letters outside ASCII only under a
// locale that knows them (migration 10 folded older rows where it could)
const TSV = `setweight(to_tsvector('english', $TEXT), 'A') || setweight(to_tsvector('simple', $CJK), 'B')`;
/** a message's (head's) text as TSV reads it */
export const tsvText = (head: string) => sqliteWords(head.toLowerCase());
/**
 * A message's tsvector holds its first TSV_CHARS characters: a tsvector cannot pass 1 MB, and a
 * pasted log of 1.7 MB (its distinct words) failed the append, leaving that thread and every one
 * after it unindexed. 100,000 characters make at most ~650 KB (CJK pairs and bigrams, the worst
 * case measured). SQLite indexes the whole text; a forget checks the rest here too (candidates).
 */
export const TSV_CHARS = 100_000;
const likePattern = (s: string) => `%${s.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
const norm = (t: string) => t.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();

function toHit(r: Row): SessionHit {
  return {
    sourceId: r.source_id,
    threadId: r.thread_id,
    rootThreadId: r.root_thread_id,
    ord: r.ord,
    messageId: r.message_id,
    role: r.role,
    text: r.text,
    at: r.at,
    score: r.rank ?? 0,
  };
}

export class PgSessionIndex implements SessionIndexStore {
  private readonly fts: boolean;

  constructor(private readonly db: PgDb) {
    this.fts = db.profile === "postgres";
  }

  async sourceId(kind: "infinity-files" | "sqlite", location: string, formerLocation?: string): Promise<number> {
    const dsql = this.db.profile === "dsql";
    if (formerLocation !== undefined && formerLocation !== location) {
      await this.db.query(
        `UPDATE session_sources SET location = $2 WHERE kind = $1 AND location = $3
         AND NOT EXISTS (SELECT 1 FROM session_sources WHERE kind = $1 AND location = $2)`,
        [kind, location, formerLocation],
      );
    }
    const rows = await this.db.query<{ id: number }>(
      `INSERT INTO session_sources (${dsql ? "id, " : ""}kind, location) VALUES (${dsql ? "$3, " : ""}$1, $2)
       ON CONFLICT (kind, location) DO UPDATE SET kind = excluded.kind RETURNING id`,
      [kind, location, ...(dsql ? [this.db.rowIds.next()] : [])],
    );
    return rows[0]!.id;
  }

  async threadState(sourceId: number, threadId: string): Promise<SessionThreadState | null> {
    const r = (
      await this.db.query<{ indexed_count: number; fingerprint: string | null; user_id: string; skipped_from: number | null; skipped_format: string | null }>(
        `SELECT indexed_count, fingerprint, user_id, skipped_from, skipped_format FROM session_threads WHERE source_id = $1 AND thread_id = $2`,
        [sourceId, threadId],
      )
    )[0];
    if (!r) return null;
    const skipped = r.skipped_from === null ? null : { from: r.skipped_from, format: r.skipped_format ?? "" };
    return { indexedCount: r.indexed_count, fingerprint: r.fingerprint, user: r.user_id, skipped };
  }

  async append(
    sourceId: number,
    thread: { threadId: string; rootThreadId: string; user: string; cwd: string | null; parent?: ThreadParent | null; skipped?: SkippedMessages | null },
    messages: IndexedMessage[],
    indexedCount: number,
    fingerprint: string | null,
    at: number,
  ): Promise<number> {
    const key = userKeyOf(thread.user);
    const dsql = this.db.profile === "dsql";
    return this.db.tx(async (c) => {
      const suppressed = new Set(
        (
          await c.query<{ message_id: string }>(`SELECT message_id FROM session_suppressed WHERE source_id = $1 AND thread_id = $2`, [sourceId, thread.threadId])
        ).rows.map((r) => r.message_id),
      );
      let added = 0;
      for (const m of messages) {
        if (suppressed.has(m.messageId) || m.text.trim().length === 0) continue;
        const cols = ["source_id", "thread_id", "root_thread_id", "ord", "message_id", "role", "text", "vis_key", "user_id", "at"];
        const vals: unknown[] = [sourceId, thread.threadId, thread.rootThreadId, m.ord, m.messageId, m.role, m.text, key, thread.user, at];
        const exprs = vals.map((_, i) => `$${i + 1}`);
        if (this.fts) {
          const head = headOf(m.text, TSV_CHARS);
          vals.push(tsvText(head), cjkBigrams(head).join(" "));
          cols.push("tsv");
          exprs.push(TSV.replace("$TEXT", `$${vals.length - 1}`).replace("$CJK", `$${vals.length}`));
        }
        if (dsql) {
          vals.push(this.db.rowIds.next());
          cols.push("rowid");
          exprs.push(`$${vals.length}`);
        }
        const r = await c.query(
          `INSERT INTO session_messages (${cols.join(", ")}) VALUES (${exprs.join(", ")})
           ON CONFLICT (source_id, thread_id, ord) DO NOTHING`,
          vals,
        );
        added += r.rowCount ?? 0;
      }
      await c.query(
        `INSERT INTO session_threads (source_id, thread_id, root_thread_id, user_id, cwd, indexed_count, fingerprint, updated_at, parent_thread_id, spawn_order,
           skipped_from, skipped_format)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (source_id, thread_id) DO UPDATE SET root_thread_id = excluded.root_thread_id, user_id = excluded.user_id,
           cwd = excluded.cwd, indexed_count = excluded.indexed_count, fingerprint = excluded.fingerprint, updated_at = excluded.updated_at,
           parent_thread_id = excluded.parent_thread_id, spawn_order = excluded.spawn_order,
           skipped_from = excluded.skipped_from, skipped_format = excluded.skipped_format`,
        [
          sourceId,
          thread.threadId,
          thread.rootThreadId,
          thread.user,
          thread.cwd,
          indexedCount,
          fingerprint,
          at,
          thread.parent?.threadId ?? null,
          thread.parent?.spawnOrder ?? null,
          thread.skipped?.from ?? null,
          thread.skipped?.format ?? null,
        ],
      );
      return added;
    }, thread.user);
  }

  async resetThread(sourceId: number, threadId: string): Promise<void> {
    await this.db.tx(async (c) => {
      await c.query(`DELETE FROM session_messages WHERE source_id = $1 AND thread_id = $2`, [sourceId, threadId]);
      await c.query(`DELETE FROM session_threads WHERE source_id = $1 AND thread_id = $2`, [sourceId, threadId]);
    });
  }

  async indexedThreads(sourceId: number): Promise<string[]> {
    return (await this.db.query<{ thread_id: string }>(`SELECT thread_id FROM session_threads WHERE source_id = $1`, [sourceId])).map((r) => r.thread_id);
  }

  async sources(kind: "infinity-files" | "sqlite" | "postgres"): Promise<{ id: number; location: string }[]> {
    // ids as sourceId() gives them (a bigint comes back as a string, as everywhere in this store)
    return this.db.query<{ id: number; location: string }>(`SELECT id, location FROM session_sources WHERE kind = $1`, [kind]);
  }

  async mergeSource(fromId: number, intoId: number): Promise<void> {
    if (String(fromId) === String(intoId)) return;
    await this.db.tx(async (c) => {
      await c.query(
        `INSERT INTO session_suppressed (source_id, thread_id, message_id) SELECT $2, thread_id, message_id FROM session_suppressed WHERE source_id = $1 ON CONFLICT DO NOTHING`,
        [fromId, intoId],
      );
      // what a forget purged under the old location and the new one indexed again
      await c.query(
        `DELETE FROM session_messages m USING session_suppressed s
         WHERE m.source_id = $1 AND s.source_id = m.source_id AND s.thread_id = m.thread_id AND s.message_id = m.message_id`,
        [intoId],
      );
      await c.query(`DELETE FROM session_messages WHERE source_id = $1`, [fromId]);
      await c.query(`DELETE FROM session_threads WHERE source_id = $1`, [fromId]);
    });
  }

  async search(q: { user: string; query: LexicalQuery; rootThreadId?: string | undefined; excludeRootThreadId?: string | undefined; limit: number }): Promise<SessionHit[]> {
    const terms = q.query.terms;
    const cjk = q.query.cjk;
    if (terms.length === 0 && cjk.length === 0) return [];
    const params: unknown[] = [userKeyOf(q.user)];
    const add = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    let extra = "";
    if (q.rootThreadId) extra += ` AND m.root_thread_id = ${add(q.rootThreadId)}`;
    if (q.excludeRootThreadId) extra += ` AND m.root_thread_id <> ${add(q.excludeRootThreadId)}`;
    const limit = Math.max(1, Math.floor(q.limit));
    let sql: string;
    if (this.fts) {
      const tq = [...terms.map((t) => `plainto_tsquery('english', ${add(sqliteWords(t))})`), ...cjk.map((t) => `plainto_tsquery('simple', ${add(t)})`)].join(" || ");
      sql = `SELECT m.*, ts_rank(m.tsv, qq.q, 1) AS rank FROM (SELECT (${tq}) AS q) qq, session_messages m
        WHERE m.vis_key = $1 AND m.tsv @@ qq.q${extra} ORDER BY rank DESC, m.rowid LIMIT ${limit}`;
    } else {
      const score = [...terms, ...cjk].slice(0, 32).map((t) => `(CASE WHEN ${holdsWord("m.text", t, add)} THEN 1 ELSE 0 END)`).join(" + ");
      sql = `SELECT * FROM (SELECT m.*, (${score})::float8 AS rank FROM session_messages m WHERE m.vis_key = $1${extra}) s
        WHERE s.rank > 0 ORDER BY s.rank DESC, s.rowid LIMIT ${limit}`;
    }
    const found = await this.db.query<Row>(sql, params, q.user);
    return [...found, ...(this.fts ? await this.loneCjk(q, found) : [])].map(toHit);
  }

  /**
   * A query's lone CJK character ("猫") is a word of its own, but the tsvector holds CJK as pairs,
   * so it matched only a message where it stood alone: such a character is looked for in the text
   * of the user's messages, after the ranked hits, newest first (the DSQL profile's scan finds it).
   */
  private async loneCjk(q: { user: string; query: LexicalQuery; rootThreadId?: string | undefined; excludeRootThreadId?: string | undefined; limit: number }, found: Row[]): Promise<Row[]> {
    const chars = q.query.cjk.filter((c) => [...c].length === 1);
    const want = Math.max(1, Math.floor(q.limit)) - found.length;
    if (chars.length === 0 || want <= 0) return [];
    const params: unknown[] = [userKeyOf(q.user), chars];
    let extra = "";
    if (q.rootThreadId) extra += ` AND m.root_thread_id = $${params.push(q.rootThreadId)}`;
    if (q.excludeRootThreadId) extra += ` AND m.root_thread_id <> $${params.push(q.excludeRootThreadId)}`;
    const seen = new Set(found.map((r) => String(r.rowid)));
    const rows = await this.db.query<Row>(
      `SELECT m.*, 0::float8 AS rank FROM session_messages m WHERE m.vis_key = $1 AND EXISTS (SELECT 1 FROM unnest($2::text[]) c WHERE strpos(m.text, c) > 0)${extra}
       ORDER BY m.rowid DESC LIMIT ${want + found.length}`,
      params,
      q.user,
    );
    return rows.filter((r) => !seen.has(String(r.rowid))).slice(0, want);
  }

  async window(sourceId: number, threadId: string, fromOrd: number, toOrd: number): Promise<SessionHit[]> {
    return (
      await this.db.query<Row>(
        `SELECT * FROM session_messages WHERE source_id = $1 AND thread_id = $2 AND ord BETWEEN $3 AND $4 ORDER BY ord`,
        [sourceId, threadId, fromOrd, toOrd],
      )
    ).map(toHit);
  }

  async find(sourceId: number | null, threadId: string, ref: { ord?: number; messageId?: string }, user: string): Promise<SessionHit | null> {
    const byMid = ref.messageId !== undefined;
    const r = (
      await this.db.query<Row>(
        `SELECT * FROM session_messages WHERE ($1::bigint IS NULL OR source_id = $1) AND thread_id = $2
         AND ${byMid ? "message_id = $3" : "ord = $3"} AND vis_key = $4 ORDER BY rowid LIMIT 1`,
        [sourceId, threadId, byMid ? ref.messageId : (ref.ord ?? 0), userKeyOf(user)],
        user,
      )
    )[0];
    return r ? toHit(r) : null;
  }

  /** Messages of the user holding every word (and CJK bigram) of `needle`: the exact check follows. */
  private async candidates(c: Q, key: string, needle: string): Promise<Row[]> {
    const cjk = cjkBigrams(needle).filter((b) => [...b].length === 2).slice(0, 8);
    const { words, scanAll } = needleWords(needle, cjk);
    if (scanAll) return (await c.query<Row>(`SELECT * FROM session_messages WHERE vis_key = $1`, [key])).rows;
    if (words.length === 0 && cjk.length === 0) return [];
    // lower() and the parser fold ASCII under every locale, other letters only under one that
    // knows them (Aurora DSQL and a C-locale database keep 'Ü' or 'М'): a word with such letters
    // is matched by a pattern taking either case, and only ASCII words go to the tsvector.
    const ascii = words.filter((w) => /^[\x00-\x7f]+$/.test(w));
    const params: unknown[] = [key, [...ascii, ...cjk].map((w) => likePattern(w)), words.filter((w) => !ascii.includes(w)).map(eitherCase)];
    const scan = `lower(text) LIKE ALL($2::text[]) AND lower(text) ~ ALL($3::text[])`;
    const config = ascii.length > 0 ? "english" : "simple";
    const tsWords = (ascii.length > 0 ? ascii : cjk).join(" ");
    // The parser drops stop words: of a text made of them only ("it was not them") it makes an
    // empty query, which matches nothing, so the text stayed searchable after its forget (SQLite's
    // index keeps every word). Such a text is looked for by the scan instead.
    const stopWordsOnly = async () =>
      (await c.query<{ e: boolean }>(`SELECT numnode(plainto_tsquery('${config}', $1)) = 0 AS e`, [tsWords])).rows[0]!.e;
    if (this.fts && (ascii.length > 0 || cjk.length > 0) && !(await stopWordsOnly())) {
      params.push(tsWords);
      // A message longer than its tsvector's head is checked whole (octet_length, never below the
      // length in UTF-16 units, reads no toasted text).
      return (
        await c.query<Row>(
          `SELECT m.* FROM session_messages m WHERE m.rowid IN (
             SELECT rowid FROM session_messages WHERE vis_key = $1 AND tsv @@ plainto_tsquery('${config}', $4)
             UNION SELECT rowid FROM session_messages WHERE vis_key = $1 AND octet_length(text) > ${TSV_CHARS} AND ${scan})`,
          params,
        )
      ).rows;
    }
    return (await c.query<Row>(`SELECT m.* FROM session_messages m WHERE m.vis_key = $1 AND ${scan}`, params)).rows;
  }

  async purgeContaining(user: string, texts: string[], madeFrom: MessageRef[] = []): Promise<number> {
    const key = userKeyOf(user);
    return this.db.tx(async (c) => {
      const purged: Row[] = [];
      const purgeRow = async (r: Row) => {
        await c.query(`DELETE FROM session_messages WHERE rowid = $1`, [r.rowid]);
        await c.query(`INSERT INTO session_suppressed (source_id, thread_id, message_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
          r.source_id,
          r.thread_id,
          r.message_id,
        ]);
        purged.push(r);
      };
      const round = async (needles: string[]): Promise<Row[]> => {
        const found: Row[] = [];
        for (const raw of needles) {
          const needle = norm(raw);
          if (needle.length === 0) continue;
          for (const r of await this.candidates(c, key, needle)) {
            if (purged.some((p) => p.rowid === r.rowid) || !norm(r.text).includes(needle)) continue;
            await purgeRow(r);
            found.push(r);
          }
        }
        return found;
      };
      // 0. the messages the memories were made from (a learning candidate's user turn)
      if (madeFrom.length > 0) {
        const made = await c.query<Row>(
          `SELECT m.* FROM session_messages m JOIN unnest($2::text[], $3::text[]) AS r (thread_id, message_id)
             ON m.thread_id = r.thread_id AND m.message_id = r.message_id
           WHERE m.vis_key = $1`,
          [key, madeFrom.map((r) => r.threadId), madeFrom.map((r) => r.messageId)],
        );
        for (const r of made.rows) if (!purged.some((p) => p.rowid === r.rowid)) await purgeRow(r);
      }
      // 1. messages that carry the forgotten text (the remember call, results that echoed it)
      const first = await round(forgetNeedles(texts));
      // 2. the user turn that led to a remember call: what the memory was made from; in a child
      // thread with none of its own, the parent's last one before the child was spawned (as in SQLite)
      const previousUser = async (sourceId: unknown, threadId: string, ord: number) =>
        (
          await c.query<Row>(
            `SELECT * FROM session_messages WHERE source_id = $1 AND thread_id = $2 AND ord < $3 AND role = 'user' ORDER BY ord DESC LIMIT 1`,
            [sourceId, threadId, ord],
          )
        ).rows[0];
      for (const r of first.filter((x) => x.role === "tool_call")) {
        let prev = await previousUser(r.source_id, r.thread_id, r.ord);
        let thread = r.thread_id;
        for (let depth = 0; !prev && depth < MAX_PARENT_HOPS; depth++) {
          const up = (
            await c.query<{ parent_thread_id: string | null; spawn_order: number | null }>(
              `SELECT parent_thread_id, spawn_order FROM session_threads WHERE source_id = $1 AND thread_id = $2`,
              [r.source_id, thread],
            )
          ).rows[0];
          if (!up?.parent_thread_id || up.spawn_order === null) break;
          thread = up.parent_thread_id;
          prev = await previousUser(r.source_id, thread, up.spawn_order);
        }
        if (prev && !purged.some((p) => p.rowid === prev.rowid)) await purgeRow(prev);
      }
      // 3. messages that quote a purged message (e.g. an earlier session_search result)
      await round(purged.map((r) => norm(r.text).slice(0, QUOTE_CHARS)).filter((t) => t.length >= MIN_QUOTE_CHARS));
      return purged.length;
    }, user);
  }

  async forgottenMessages(threadId: string): Promise<Set<string>> {
    const r = await this.db.query<{ message_id: string }>(`SELECT message_id FROM session_suppressed WHERE thread_id = $1`, [threadId]);
    return new Set(r.map((x) => x.message_id));
  }

  async counts(): Promise<{ threads: number; messages: number }> {
    return (await this.db.query<{ threads: number; messages: number }>(
      `SELECT (SELECT count(*) FROM session_threads) AS threads, (SELECT count(*) FROM session_messages) AS messages`,
    ))[0]!;
  }

  /** Recompute every message's tsvector (after a bulk copy, e.g. `migrate --from`). */
  async rebuildIndex(): Promise<number> {
    if (!this.fts) return 0;
    return this.db.tx(async (c) => {
      const rows = (await c.query<{ rowid: number; text: string }>(`SELECT rowid, text FROM session_messages`)).rows;
      for (const r of rows) {
        const head = headOf(r.text, TSV_CHARS);
        await c.query(`UPDATE session_messages SET tsv = ${TSV.replace("$TEXT", "$2").replace("$CJK", "$3")} WHERE rowid = $1`, [
          r.rowid,
          tsvText(head),
          cjkBigrams(head).join(" "),
        ]);
      }
      return rows.length;
    });
  }
}

// Bounded-work planning for the word channel. BM25 over an OR query costs time in proportion to
// the postings of every term, so at 100k+ memories a few very common terms would dominate the
// latency while adding little to the ranking (their IDF is near zero). The planner looks up each
// term's document frequency in the index vocabulary, keeps the rarest terms within a postings
// budget, and decides whether the scope keys prune enough to belong in the MATCH expression or
// are cheaper as a join predicate. Results stay exact with respect to scope; only which common
// terms take part in ranking changes, and only for large stores.
import { CONTEXT_TERM_MAX_DF } from "../../core/retrieval/channels.js";
import type { Db } from "./database.js";
import { plainWordToken } from "./porter-token.js";
import { WORD_TOKENIZE_OPTION } from "./word-tokenizer.js";

/**
 * Postings the word channel may score per query (~0.7 µs each on the reference machine). 3,000
 * against 4,000: search p95 at 100k memories 4.3 -> 3.6 ms, source memory in the top 10 for
 * multi-word queries 0.88 -> 0.86 (100k) and 0.73 -> 0.72 (1M), in-process A/B on one file.
 */
export const POSTINGS_BUDGET = 3000;
/** scope keys go into MATCH only when they cover less than this share of the corpus */
const KEY_SHARE_FOR_MATCH = 0.3;
/**
 * A token's document frequency costs a scan of its whole doclist (as much as querying it: ~1.5 ms
 * for a common word at 100k memories, ten times that at 1M), so it is cached. An entry read before
 * the database last changed (this connection's writes and other connections' commits both count)
 * is still used, if the token was in the index, while the memories added since number at most
 * DF_STALE_SHARE of its count, or at most DF_STALE_ROWS in its first DF_STALE_MS, and never past
 * DF_MAX_AGE_MS. An insert adds at most one to a count, so that bound holds the drift to a few per
 * cent or a few dozen (forgets, which take counts down, are bounded by the age), and a common word,
 * whose count is the costly one, is read again about once per 5% of growth instead of on its first
 * search after each write. A count a few writes old moves a weight by a hair, while reading it
 * again after every write cost remember-then-search 11 ms at 1M memories. (Until the row bound, a
 * count was used for a minute whatever was written: a bulk import planned its first searches with
 * counts read while it ran, e.g. a word read at 5 and in 5,000 memories by then scored as rare.) A
 * token the index did not hold is looked up again after any change, so a word just written is
 * never planned as absent. At most DF_CACHE_MAX tokens are kept.
 */
const DF_CACHE_MAX = 20_000;
const DF_STALE_MS = 60_000;
const DF_MAX_AGE_MS = 10 * 60_000;
const DF_STALE_SHARE = 0.05;
const DF_STALE_ROWS = 50;

/** The planner's state when counts began to be read elsewhere (prefillMark). */
export interface DfMark {
  version: number;
  at: number;
  rows: number;
}

export interface WordPlan {
  terms: string[];
  cjk: string[];
  /** put the scope keys inside the MATCH expression (else filter by vis_key in the join) */
  keysInMatch: boolean;
  /**
   * Even the rarest term is more common than the budget: its IDF is near zero and bm25 would
   * order little, so the word channel takes the newest matches instead of scoring any.
   */
  newest: boolean;
  /** terms left out for being too common (the index holds them past the budget); absent terms are not among them */
  common: string[];
  /** the terms were looked up and pruned (a store past POSTINGS_BUDGET); else all were kept unread */
  pruned: boolean;
  /** kept terms too common to match the neighbour context (CONTEXT_TERM_MAX_DF): own text and tags only */
  ownTextOnly: string[];
}

export class FtsPlanner {
  private readonly insertTok;
  private readonly clearTok;
  private readonly readTok;
  private readonly dfStmt;
  private readonly versionStmt;
  private readonly dfCache = new Map<string, { df: number; version: number; at: number; rows: number }>();
  /** bumped whenever the database changed since the last look; df entries of this version are exact */
  private version = 0;
  private seen = { v: -1, c: -1, n: 0 };

  constructor(db: Db) {
    // A scratch FTS table with the same tokenizer turns query words into the index's own tokens
    // (porter stems), so their frequencies can be read from the vocabulary.
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.q_tokens USING fts5(x, ${WORD_TOKENIZE_OPTION});
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.q_tokens_v USING fts5vocab(temp, q_tokens, 'instance');
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.memory_fts_v USING fts5vocab(main, memory_fts, 'row');`);
    this.insertTok = db.prepare(`INSERT INTO temp.q_tokens (rowid, x) VALUES (?, ?)`);
    this.clearTok = db.prepare(`DELETE FROM temp.q_tokens`);
    this.readTok = db.prepare(`SELECT doc, term FROM temp.q_tokens_v`);
    this.dfStmt = db.prepare(`SELECT doc FROM temp.memory_fts_v WHERE term = ?`);
    // With the look for commits, the store's size. A memory's row is never deleted (a forget
    // blanks it), and rowids are assigned one past the largest, so the largest rowid is the row
    // count: read from the end of the b-tree, where a count(*) walks every page of an index. That
    // walk ran on the first plan after each size cache expiry, from a page cache another
    // connection's commit (a purge step, another process) had emptied: 5-8 ms of a search at 100k
    // memories, ~60 ms at 1M.
    this.versionStmt = db.prepare(
      `SELECT data_version AS v, total_changes() AS c, (SELECT coalesce(max(rowid), 0) FROM memories) AS n FROM pragma_data_version`,
    );
    this.scratch = db.transaction((texts: string[]) => {
      this.clearTok.run();
      texts.forEach((t, i) => this.insertTok.run(i + 1, t));
      const out: string[][] = texts.map(() => []);
      for (const r of this.readTok.all() as { doc: number; term: string }[]) out[r.doc - 1]?.push(r.term);
      this.clearTok.run();
      return out;
    });
  }

  private readonly scratch: (texts: string[]) => string[][];

  /** The index tokens of each text (a text of several words: in the index's term order). */
  tokenize(texts: string[]): string[][] {
    // The tokenizer is a pure function of the text: cached texts skip the scratch table, and so do
    // plain ASCII words (porter-token.ts), which are most query words.
    const found = new Map<string, string[]>();
    const missing: string[] = [];
    for (const t of new Set(texts)) {
      const hit = this.tokenCache.get(t);
      const plain = hit ? null : plainWordToken(t);
      if (hit) found.set(t, hit);
      else if (plain !== null) found.set(t, [plain]);
      else missing.push(t);
    }
    if (missing.length > 0) {
      this.checkWrites();
      const toks = this.scratch(missing);
      // The scratch table's writes (FTS5 flushes them at commit) are not a change to the memories.
      this.seen = this.versionStmt.get() as { v: number; c: number; n: number };
      missing.forEach((t, i) => found.set(t, toks[i] ?? []));
    }
    if (this.tokenCache.size + found.size > DF_CACHE_MAX) this.tokenCache.clear();
    for (const [t, toks] of found) this.tokenCache.set(t, toks);
    return texts.map((t) => found.get(t) ?? []);
  }

  private readonly tokenCache = new Map<string, string[]>();

  /** Documents of the word index holding this index token (any column). */
  df(token: string): number {
    this.checkWrites();
    return this.cachedDf(token);
  }

  /** A df() for many tokens in a row (a feedback pass weighs dozens): one look for new commits first. */
  dfReader(): (token: string) => number {
    this.checkWrites();
    return (token) => this.cachedDf(token);
  }

  /**
   * df() without the look for new commits: for a caller that looked once for all its tokens
   * (one plan reads up to a dozen; the look is a statement, 15 µs each at 100k memories).
   */
  private cachedDf(token: string): number {
    const hit = this.dfCache.get(token);
    const now = performance.now();
    if (hit && (hit.version === this.version || (hit.df > 0 && this.fresh(hit, now)))) return hit.df;
    const df = (this.dfStmt.get(token) as { doc: number } | undefined)?.doc ?? 0;
    if (this.dfCache.size >= DF_CACHE_MAX) this.dfCache.clear();
    this.dfCache.set(token, { df, version: this.version, at: now, rows: this.seen.n });
    return df;
  }

  /**
   * Where the counts stand before they are read on another connection (df-prefill.ts): that
   * connection's read starts after this, so it sees at least what this one does.
   */
  prefillMark(): DfMark {
    this.checkWrites();
    return { version: this.version, at: performance.now(), rows: this.seen.n };
  }

  /** Whether the memories changed since the mark (this connection's writes or another's commits). */
  changedSince(mark: DfMark): boolean {
    this.checkWrites();
    return this.version !== mark.version;
  }

  /**
   * Counts read on another connection after `mark`, taken as if read at the mark: exact while
   * nothing changes here after it, then as stale as any count read then (DF_STALE_MS). A count
   * this connection read after the mark is kept, and the cache is never cleared to make room.
   */
  prefill(counts: Iterable<readonly [string, number]>, mark: DfMark): number {
    let installed = 0;
    for (const [token, df] of counts) {
      if (this.dfCache.size >= DF_CACHE_MAX) break;
      const hit = this.dfCache.get(token);
      if (hit && hit.at >= mark.at) continue;
      this.dfCache.set(token, { df, version: mark.version, at: mark.at, rows: mark.rows });
      installed++;
    }
    return installed;
  }

  /** A count read before the last change, still good enough (see DF_STALE_MS). */
  private fresh(hit: { df: number; at: number; rows: number }, now: number): boolean {
    const age = now - hit.at;
    const grown = this.seen.n - hit.rows;
    return age < DF_MAX_AGE_MS && (grown <= DF_STALE_SHARE * hit.df || (age < DF_STALE_MS && grown <= DF_STALE_ROWS));
  }

  /**
   * Notices commits since the last look (other connections: data_version; this one: the change
   * counter, which the scratch table's own writes also move, hence the resync in tokenize).
   */
  private checkWrites(): void {
    const r = this.versionStmt.get() as { v: number; c: number; n: number };
    if (r.v !== this.seen.v || r.c !== this.seen.c) this.version += 1;
    this.seen = r;
  }

  private readonly stemCache = new Map<string, string>();

  /** The index stem of each word (words that yield no token are left out); cached. */
  stems(words: string[]): Map<string, string> {
    const out = new Map<string, string>();
    const missing: string[] = [];
    for (const w of words) {
      const s = this.stemCache.get(w);
      if (s !== undefined) out.set(w, s);
      else missing.push(w);
    }
    if (missing.length > 0) {
      if (this.stemCache.size > 50_000) this.stemCache.clear();
      const toks = this.tokenize(missing);
      missing.forEach((w, i) => {
        const t = toks[i]?.[0];
        if (t === undefined) return;
        this.stemCache.set(w, t);
        out.set(w, t);
      });
    }
    return out;
  }

  /**
   * The number of memories (every row: forgotten ones keep theirs), read with the look for new
   * commits that the counts after it rely on.
   */
  corpus(): { n: number } {
    this.checkWrites();
    return { n: this.seen.n };
  }

  /**
   * Whether a kind filter belongs in the MATCH expression (as kind tokens of the scope column):
   * when its kinds cover less than KEY_SHARE_FOR_MATCH of the corpus, as for scope keys; on a
   * small store always. A kind most memories have prunes nothing and is cheaper in the join.
   */
  kindsInMatch(kindTokens: string[]): boolean {
    const { n } = this.corpus();
    if (n <= POSTINGS_BUDGET) return true;
    const toks = this.tokenize(kindTokens);
    const docs = toks.reduce((sum, ts) => sum + ts.reduce((a, t) => a + this.cachedDf(t), 0), 0);
    return docs < KEY_SHARE_FOR_MATCH * n;
  }

  /** `budget`: postings to score (a second pass may take less than the first). */
  plan(terms: string[], cjk: string[], keys: string[] | null, budget = POSTINGS_BUDGET): WordPlan {
    const { n } = this.corpus();
    const all = [...terms, ...cjk];
    // Small stores: every term, keys in MATCH; no lookups needed.
    if (n <= POSTINGS_BUDGET) return { terms, cjk, keysInMatch: keys !== null, newest: false, common: [], pruned: false, ownTextOnly: [] };
    const toks = this.tokenize([...all, ...(keys ?? [])]);
    const dfOf = (i: number) => {
      const ts = toks[i] ?? [];
      return ts.length === 0 ? 0 : Math.min(...ts.map((t) => this.cachedDf(t)));
    };
    const ranked = all.map((t, i) => ({ t, df: dfOf(i), cjk: i >= terms.length })).sort((a, b) => a.df - b.df);
    // A term the index does not hold (df 0) matches nothing and costs nothing: it must not use up
    // the "always keep the rarest term" slot, or a query like "what did Alice say?" would keep only
    // "say" (absent) and drop "alice", and the word channel would come back empty.
    const kept: typeof ranked = [];
    let postings = 0;
    let matching = 0;
    for (const r of ranked) {
      if (r.df === 0) continue;
      if (matching > 0 && postings + r.df > budget) continue;
      kept.push(r);
      matching += 1;
      postings += r.df;
    }
    const keyDocs = keys ? keys.reduce((s, _k, i) => s + dfOf(all.length + i), 0) : 0;
    const keysInMatch = keys !== null && keyDocs < KEY_SHARE_FOR_MATCH * n;
    const keep = new Set(kept.map((k) => k.t));
    return {
      terms: terms.filter((t) => keep.has(t)),
      cjk: cjk.filter((t) => keep.has(t)),
      keysInMatch,
      newest: (kept[0]?.df ?? 0) > budget,
      common: ranked.filter((r) => r.df > 0 && !keep.has(r.t)).map((r) => r.t),
      pruned: true,
      ownTextOnly: kept.filter((k) => !k.cjk && k.df > CONTEXT_TERM_MAX_DF).map((k) => k.t),
    };
  }
}

// Full-text search over past conversations, scoped to the sessions of the asking user, kept
// apart from the fact store: results are messages with where they were said and a window of
// the conversation around them.
import type { Clock } from "../clock.js";
import { CoreError } from "../errors.js";
import { analyzeQuery, cjkBigrams, isEmptyQuery, words } from "../retrieval/analyze.js";
import type { SessionHit, SessionIndexStore } from "../../stores/traits.js";
import type { IndexReport, SessionIndexer, SessionSource } from "./indexer.js";
import { headOf, sliceOf } from "../text.js";

export interface SessionMatch {
  hit: SessionHit;
  snippet: string;
  window: SessionHit[];
}

export interface SessionSearchOptions {
  /** re-index at most this often when searches come in quick succession */
  refreshIntervalMs: number;
  maxWindow: number;
}

const SNIPPET = 160;
/**
 * Read mode shows the message itself, up to this much: user and assistant texts are indexed whole,
 * and a pasted multi-megabyte log came back as one tool result, larger than any model's context.
 */
export const READ_MAX_CHARS = 8000;

/** the message as read mode shows it: whole, or its head and how much was left out */
export function readText(text: string): string {
  if (text.length <= READ_MAX_CHARS) return text;
  const head = headOf(text, READ_MAX_CHARS);
  return `${head}… [${text.length - head.length} more characters not shown]`;
}

/** A form without accents or compatibility forms ("Ｃａｆé" as "Cafe"). */
function stripMarks(s: string): string {
  return s.normalize("NFKD").replace(/\p{M}/gu, "");
}

/** The Latin letters that fold to each ASCII letter, the letter first: "e" → "eÈÉÊË…ｅ". */
const LETTER_FORMS: ReadonlyMap<string, string> = (() => {
  const forms = new Map<string, string>();
  for (const [from, to] of [[0xc0, 0x24f], [0x1e00, 0x1eff], [0xff21, 0xff5a]] as const) {
    for (let cp = from; cp <= to; cp++) {
      const ch = String.fromCodePoint(cp);
      const base = stripMarks(ch).toLowerCase();
      if (/^[a-z]$/.test(base)) forms.set(base, (forms.get(base) ?? base) + ch);
    }
  }
  return forms;
})();

/**
 * A word as the index matches it: any case, accents and compatibility forms folded ("cafe" finds
 * "Café", "zurich" finds "Zürich"), so the snippet shows the match the index found.
 */
function foldedPattern(word: string): RegExp {
  let src = "";
  for (const ch of stripMarks(word)) {
    const forms = LETTER_FORMS.get(ch.toLowerCase());
    src += `${forms ? `[${forms}]` : ch.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\p{M}*`;
  }
  return new RegExp(src, "iu");
}

/** ±SNIPPET characters around the first query word found in `text`. */
export function snippet(text: string, query: string): string {
  let at = -1;
  for (const w of words(query)) {
    if (w.length < 3) continue;
    // matched case-insensitively in the text itself: a lower-cased copy can be longer ('İ' is
    // two code units lower-cased), and its offsets put the snippet past the word
    const prefix = w.slice(0, Math.max(3, Math.min(w.length, 6)));
    const i = foldedPattern(prefix).exec(text)?.index ?? -1;
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  // CJK is searched by character pairs: the words above never held them, so a long message
  // matched in Chinese or Japanese showed its opening instead of the match
  for (const pair of cjkBigrams(query)) {
    const i = text.indexOf(pair);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  if (at < 0) at = 0;
  const start = Math.max(0, at - SNIPPET);
  const end = Math.min(text.length, at + SNIPPET);
  return `${start > 0 ? "…" : ""}${sliceOf(text, start, end).replace(/\s+/g, " ").trim()}${end < text.length ? "…" : ""}`;
}

export class SessionSearch {
  private lastRefresh = -Infinity;
  private refreshing: Promise<IndexReport[]> | null = null;
  /** told about threads a refresh could not read (they stay as indexed before; searching goes on) */
  onSkipped: ((location: string, skipped: IndexReport["skipped"]) => void) | null = null;
  /** told about threads whose messages of unknown kinds (a newer daemon's) a refresh left out */
  onUnknownKinds: ((location: string, threads: IndexReport["unknownKinds"]) => void) | null = null;

  constructor(
    private readonly index: SessionIndexStore,
    private readonly indexer: SessionIndexer,
    private readonly sources: SessionSource[],
    private readonly clock: Clock,
    private readonly opts: SessionSearchOptions = { refreshIntervalMs: 2000, maxWindow: 10 },
  ) {}

  get configured(): boolean {
    return this.sources.length > 0;
  }

  /**
   * Bring the index up to date (incremental; concurrent callers share one run). A forced refresh
   * (a forget's, before its purge) reads what the sources hold now: it shares only a run that
   * started after it was asked, since one already under way may have read a thread before the
   * message that said the forgotten text.
   */
  async refresh(force = false): Promise<IndexReport[]> {
    if (force) {
      const asked = this.runsStarted;
      while (this.refreshing && this.runningId <= asked) await this.refreshing.catch(() => undefined);
      if (this.refreshing) return this.refreshing;
      return this.startRun();
    }
    if (this.refreshing) return this.refreshing;
    if (this.clock.now() - this.lastRefresh < this.opts.refreshIntervalMs) return [];
    return this.startRun();
  }

  private runsStarted = 0;
  private runningId = 0;

  private startRun(): Promise<IndexReport[]> {
    // .finally's callback always runs later, once `run` is assigned
    const run: Promise<IndexReport[]> = this.runAll().finally(() => {
      this.lastRefresh = this.clock.now();
      if (this.refreshing === run) this.refreshing = null;
    });
    this.runningId = ++this.runsStarted;
    this.refreshing = run;
    return run;
  }

  private async runAll(): Promise<IndexReport[]> {
    const out: IndexReport[] = [];
    for (const s of this.sources) {
      const report = await this.indexer.run(s);
      if (report.skipped.length > 0) this.onSkipped?.(s.location, report.skipped);
      if (report.unknownKinds.length > 0) this.onUnknownKinds?.(s.location, report.unknownKinds);
      out.push(report);
    }
    return out;
  }

  /**
   * `sessionId`: only that session; `excludeSessionId`: every session but that one (the current
   * conversation is already in the model's context).
   */
  async search(
    user: string,
    q: { query: string; limit: number; window: number; sessionId?: string | undefined; excludeSessionId?: string | undefined },
  ): Promise<SessionMatch[]> {
    const query = analyzeQuery(q.query);
    if (isEmptyQuery(query)) throw new CoreError("invalid_argument", `"query" has no searchable words; give words that were said in the conversation.`);
    await this.refresh();
    const hits = await this.index.search({ user, query, rootThreadId: q.sessionId, excludeRootThreadId: q.excludeSessionId, limit: q.limit });
    const w = Math.min(q.window, this.opts.maxWindow);
    return Promise.all(
      hits.map(async (hit) => ({
        hit,
        snippet: snippet(hit.text, q.query),
        window: w > 0 ? await this.index.window(hit.sourceId, hit.threadId, hit.ord - w, hit.ord + w) : [hit],
      })),
    );
  }

  /** A window around one message of one of this user's threads. */
  async read(user: string, ref: { threadId: string; ord?: number; messageId?: string; window: number }): Promise<SessionMatch> {
    await this.refresh();
    const hit = await this.index.find(null, ref.threadId, { ord: ref.ord, messageId: ref.messageId }, user);
    if (!hit) {
      throw new CoreError(
        "not_found",
        `no message ${ref.messageId !== undefined ? `"${ref.messageId}"` : `#${ref.ord ?? 0}`} in thread "${ref.threadId}" is visible to you; use session_search with a query to find one.`,
      );
    }
    const w = Math.min(ref.window, this.opts.maxWindow);
    return { hit, snippet: readText(hit.text), window: await this.index.window(hit.sourceId, hit.threadId, hit.ord - w, hit.ord + w) };
  }

  /** Forgetting a memory also removes the messages that said it from this index. */
  async purge(user: string, texts: string[]): Promise<number> {
    return this.index.purgeContaining(user, texts);
  }
}

export type { SessionSource };

// Which retrieval channels and passes memory search uses. Every switch exists so a benchmark can
// measure it off and on (`bench locomo --channels ...`); the defaults are the measured best.
export const CHANNEL_NAMES = ["lexical", "context", "trigram", "neighbours", "cues", "categories", "semantic", "prf", "proximity", "mmr", "session"] as const;
export type ChannelName = (typeof CHANNEL_NAMES)[number];

export interface RetrievalChannels {
  /** FTS5 word channel over content and tags (always on: the other passes build on it) */
  lexical: boolean;
  /** the neighbour/date `context` column takes part in word matching */
  context: boolean;
  /** trigram channel for partial words and CJK runs */
  trigram: boolean;
  /** a word hit passes a share of its score to the turns next to it (the answer after a question) */
  neighbours: boolean;
  /** question cues re-order the word hits: the speaker it names, the period it names, the kind of answer it wants */
  cues: boolean;
  /** a question naming a kind of thing ("which instruments…") also searches for its members (categories.ts) */
  categories: boolean;
  /** corpus-trained term associations of the scope's own text: an expanded query as its own channel */
  semantic: boolean;
  /** pseudo-relevance feedback: a second word pass with terms from the first pass's top hits */
  prf: boolean;
  /** re-rank the head by how many query terms a memory holds in its own text (phrase/proximity) */
  proximity: boolean;
  /** maximal marginal relevance: near-duplicates do not crowd the top k */
  mmr: boolean;
  /** conversation channel: memories of the conversations whose turns match best, ranked together */
  session: boolean;
}

// Chosen on the tuning half of the LoCoMo dev split (bench/locomo-ablation.ts --split tune), the
// held-out half only reported: neighbours raised R@5/10/25 (71.2/79.2/87.7 → 71.7/80.6/89.0),
// cues raised them again (→ 73.6/82.4/89.2); categories raised tune 77.3/85.0/89.8 →
// 77.8/85.4/90.1 (multi-hop +2.6/+2.4/+1.9, single-hop unchanged; holdout 71.4/77.8/84.0 →
// 71.9/78.2/84.1);
// the title cue raised tune R@10 85.3 -> 85.9; semantic, added to the word pool rather than fused by
// rank, raised tune R@5 77.8 -> 79.1 (R@10/25 -0.2/-0.1; holdout 72.3/79.6/84.4 -> 72.9/79.4/85.2)
// for ~0.5 ms more p95 at 100k memories (it runs in a worker beside the word channel) and a
// per-scope index build on a scope's first search (~0.3 s at its 20k-memory cap; SQLite only);
// prf, proximity, mmr and session lowered recall.
export const DEFAULT_CHANNELS: RetrievalChannels = {
  lexical: true,
  context: true,
  trigram: true,
  neighbours: true,
  cues: true,
  categories: true,
  semantic: true,
  prf: false,
  proximity: false,
  mmr: false,
  session: false,
};

/** "lexical,context,trigram" → that set on, every other channel off. */
export function parseChannels(list: string): RetrievalChannels {
  const names = list.split(",").map((s) => s.trim()).filter(Boolean);
  for (const n of names) {
    if (!(CHANNEL_NAMES as readonly string[]).includes(n)) throw new Error(`unknown channel "${n}" (known: ${CHANNEL_NAMES.join(", ")})`);
  }
  const on = new Set(names);
  const out = {} as RetrievalChannels;
  for (const n of CHANNEL_NAMES) out[n] = on.has(n);
  out.lexical = true;
  return out;
}

export function channelList(c: RetrievalChannels): string[] {
  return CHANNEL_NAMES.filter((n) => c[n]);
}

/**
 * [context] On a store past the word postings budget, a query word found in more memories than this
 * matches memories' own text and tags only, not their neighbours' context. A neighbour's mention of
 * a word that common carries little (its IDF is low and the context weighs 0.3), costs most of the
 * word channel (about four of every five of its matches are context-only: 100k memories, common-word
 * queries 4.6 -> 3.3 ms mean, search p95 7.4 -> 5.5 ms, the same source-in-top-10 for every query
 * kind), and the turn answering a matching one still rises by neighbour spreading. A third of the
 * postings budget (3,000, both stores); rarer words keep matching the context.
 */
export const CONTEXT_TERM_MAX_DF = 1000;

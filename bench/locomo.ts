// LoCoMo retrieval benchmark (turn-level evidence recall, no LLM). Each conversation is its own
// user scope; each LoCoMo session is a thread with its date; each turn is one memory written the
// way a conversation would write it, with the turn's dia_id as the message id. Questions go
// through the same retrieval as memory_search. The data is read at run time, never committed.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixedClock } from "../core/clock.js";
import { defaultConfig } from "../core/config.js";
import type { RequestScope } from "../core/memory/scope.js";
import { MemoryService } from "../core/memory/service.js";
import pg from "pg";
import { z } from "zod";
import { openDatabase } from "../stores/sqlite/database.js";
import { SqliteMemoryStore } from "../stores/sqlite/memory-store.js";
import { PgMemoryStore } from "../stores/postgres/memory-store.js";
import { MEMORY_MIGRATIONS } from "../stores/postgres/schema-memory.js";
import { openPg } from "../stores/postgres/setup.js";
import type { MemoryStore, ToggleStore } from "../stores/traits.js";
import { percentile } from "./stats.js";
import { SqliteToggleStore } from "../stores/sqlite/toggle-store.js";
import { MemoryPrefixBuilder } from "../core/retrieval/prefix.js";
import { loadTokenCounter } from "../core/retrieval/tokens.js";
import { DEFAULT_CHANNELS, channelList, type RetrievalChannels } from "../core/retrieval/channels.js";

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

interface QA {
  question: string;
  evidence?: string[];
  category: number;
}

interface Conversation {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: QA[];
}

// The parts of a LoCoMo file the benchmark reads (other fields are left alone), so a wrong file
// is named with what is missing instead of failing somewhere inside the run.
const LocomoFile = z
  .array(
    z.looseObject({
      sample_id: z.string(),
      conversation: z.record(z.string(), z.unknown()),
      qa: z.array(z.looseObject({ question: z.string(), evidence: z.array(z.string()).optional(), category: z.number() })),
    }),
  )
  .min(1);

function readLocomo(file: string): Conversation[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new Error(`${file}: ${(e as { code?: unknown }).code === "ENOENT" ? "no such file" : `not readable as JSON (${(e as Error).message})`}`);
  }
  const parsed = LocomoFile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${file} is not a LoCoMo file (a JSON array of conversations with sample_id, conversation and qa): ${issue.path.length ? `at ${issue.path.join(".")}: ` : ""}${issue.message}`);
  }
  return parsed.data as Conversation[];
}

export const CATEGORY_NAMES: Record<number, string> = {
  1: "multi-hop",
  2: "temporal",
  3: "open-domain",
  4: "single-hop",
  5: "adversarial",
};

export interface LocomoOptions {
  data: string;
  ks: number[];
  /** also build a context prefix of this many tokens per question and score what lands in it */
  prefixBudget?: number;
  /** retrieval channels (default: the store's defaults) */
  channels?: RetrievalChannels;
  /** also score these channel sets (ablation) */
  ablation?: RetrievalChannels[];
  /**
   * Which conversations: "tune" (1st, 3rd, 5th … by sample id), "holdout" (the others) or "all".
   * Constants are chosen on "tune"; "holdout" checks they carry over to conversations not looked at.
   */
  split?: LocomoSplit;
  /** only these sample ids (after the split) */
  conversations?: string[];
  /**
   * Run on PostgreSQL: a server URL; a fresh database is created on it for the run and dropped
   * afterwards. Default: a fresh SQLite file.
   */
  pgUrl?: string;
  /** every scored question with its ranked message ids (failure analysis) */
  onQuestion?: (q: LocomoQuestion) => void;
  onProgress?: (done: number, total: number, phase: string) => void;
}

/** A scored question: its evidence turn ids and the message ids of its results, best first. */
export interface LocomoQuestion {
  sample: string;
  question: string;
  category: string;
  evidence: string[];
  ranked: string[];
}

export const LOCOMO_SPLITS = ["tune", "holdout", "all"] as const;
export type LocomoSplit = (typeof LOCOMO_SPLITS)[number];

/** The conversations of a split: sorted by sample id, alternate ones go to tune and holdout. */
export function splitConversations<T extends { sample_id: string }>(convs: T[], split: LocomoSplit, only?: string[]): T[] {
  const sorted = [...convs].sort((a, b) => (a.sample_id < b.sample_id ? -1 : a.sample_id > b.sample_id ? 1 : 0));
  const picked = split === "all" ? sorted : sorted.filter((_c, i) => (i % 2 === 0) === (split === "tune"));
  return only && only.length > 0 ? picked.filter((c) => only.includes(c.sample_id)) : picked;
}

export interface LocomoResult {
  questions: number;
  recall: Record<string, number>;
  latency_ms: { p50: number; p95: number };
  by_category: Record<string, { questions: number; recall: Record<string, number> }>;
  ingest: { conversations: number; turns: number; memories: number; refused: number; flagged: number; ms: number };
  channels: string[];
  /** the store engine the questions ran on */
  engine: "sqlite" | "postgres";
  split: LocomoSplit;
  /** sample ids of the conversations scored */
  conversations: string[];
  /** the same questions with other channel sets, on the same ingested store */
  ablation?: { channels: string[]; recall: Record<string, number>; latency_ms: { p50: number; p95: number }; by_category: Record<string, Record<string, number>> }[];
  prefix?: { budget_tokens: number; recall_at_budget: number; mean_items: number; mean_tokens: number; empty: number; latency_ms: { p50: number; p95: number } };
}

/** "D8:6; D9:17" or "(D3:13)" → ["D8:6","D9:17"] / ["D3:13"]. */
export function evidenceIds(raw: string[] | undefined): string[] {
  const out: string[] = [];
  for (const e of raw ?? []) {
    for (const part of e.split(/[;,\s]+/)) {
      const id = part.replace(/[()]/g, "").trim();
      if (/^D\d+:\d+$/.test(id)) out.push(id);
    }
  }
  return [...new Set(out)];
}

/** "1:56 pm on 8 May, 2023" → epoch ms (LoCoMo's date format); null when unparseable. */
export function parseLocomoDate(s: unknown): number | null {
  if (typeof s !== "string") return null;
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})/i.exec(s);
  if (!m) {
    const t = Date.parse(s);
    return Number.isNaN(t) ? null : t;
  }
  const months = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
  const month = months.indexOf(m[5]!.toLowerCase());
  if (month < 0) return null;
  let hour = Number(m[1]) % 12;
  if (m[3]!.toLowerCase() === "pm") hour += 12;
  return Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
}

function sessionsOf(conv: Record<string, unknown>): { n: number; date: number | null; turns: Turn[] }[] {
  const out: { n: number; date: number | null; turns: Turn[] }[] = [];
  for (const [key, value] of Object.entries(conv)) {
    const m = /^session_(\d+)$/.exec(key);
    if (!m || !Array.isArray(value)) continue;
    const n = Number(m[1]);
    out.push({ n, date: parseLocomoDate(conv[`session_${n}_date_time`]), turns: value as Turn[] });
  }
  return out.sort((a, b) => a.n - b.n);
}

export function turnText(t: Turn): string {
  return `${t.speaker}: ${t.text}${t.blip_caption ? ` [image: ${t.blip_caption}]` : ""}`;
}

const round1 = (x: number) => Math.round(x * 10) / 10;

export async function runLocomo(opts: LocomoOptions): Promise<LocomoResult> {
  const split = opts.split ?? "all";
  const convs = splitConversations(readLocomo(opts.data), split, opts.conversations);
  if (convs.length === 0) throw new Error(`no conversations in split "${split}"${opts.conversations ? ` with ids ${opts.conversations.join(",")}` : ""}`);
  if (opts.pgUrl && opts.prefixBudget !== undefined) throw new Error("--prefix-budget runs on SQLite only; leave out the PostgreSQL URL");
  const stores = opts.pgUrl ? await postgresStores(opts.pgUrl) : sqliteStores();
  const channels = opts.channels ?? DEFAULT_CHANNELS;
  const store = stores.open(channels);
  const clock = fixedClock(Date.UTC(2023, 0, 1));
  const config = defaultConfig({ localUser: "locomo" });
  const service = new MemoryService(store, clock, config);
  const prefixBuilder =
    opts.prefixBudget !== undefined && stores.toggles
      ? new MemoryPrefixBuilder({
          service,
          toggles: stores.toggles,
          edgesOf: (id) => store.edgesOf(id),
          tokens: await loadTokenCounter(config.prefix.tokenizer),
          config,
        })
      : null;
  const pre = { sum: 0, items: 0, tokens: 0, empty: 0, n: 0, lat: [] as number[] };
  const maxK = Math.max(...opts.ks);
  const ingest = { conversations: convs.length, turns: 0, memories: 0, refused: 0, flagged: 0, ms: 0 };
  const memoryIds = new Set<string>();
  const t0 = performance.now();
  const totalTurns = convs.reduce((n, c) => n + sessionsOf(c.conversation).reduce((m, s) => m + s.turns.length, 0), 0);
  try {
    for (const conv of convs) {
      const user = `locomo:${conv.sample_id}`;
      for (const session of sessionsOf(conv.conversation)) {
        const thread = `${conv.sample_id}:session_${session.n}`;
        const req: RequestScope = { user, project: null, session: thread, thread, ancestors: [] };
        if (session.date !== null) clock.set(session.date);
        for (const turn of session.turns) {
          ingest.turns++;
          clock.advance(1000);
          try {
            const r = await service.remember(
              req,
              { content: turnText(turn), kind: "note", scope: "user", userStated: true, validFrom: session.date },
              { actor: "user", threadId: thread, toolCallId: null, messageIds: [turn.dia_id] },
            );
            memoryIds.add(r.record.id);
            if (r.flagged) ingest.flagged++;
          } catch {
            ingest.refused++;
          }
          opts.onProgress?.(ingest.turns, totalTurns, "ingest");
        }
      }
    }
    ingest.memories = memoryIds.size;
    ingest.ms = Math.round(performance.now() - t0);

    const evaluate = async (svc: MemoryService, withPrefix: boolean) => {
    const latencies: number[] = [];
    const sums: Record<string, number> = {};
    const cat: Record<string, { questions: number; sums: Record<string, number> }> = {};
    let questions = 0;
    const allQs = convs.flatMap((c) => c.qa.map((qa) => ({ conv: c, qa })));
    let done = 0;
    for (const { conv, qa } of allQs) {
      done++;
      const evidence = evidenceIds(qa.evidence);
      if (evidence.length === 0) continue;
      const user = `locomo:${conv.sample_id}`;
      const req: RequestScope = { user, project: null, session: `${conv.sample_id}:qa`, thread: `${conv.sample_id}:qa`, ancestors: [] };
      const t = performance.now();
      let hits: Awaited<ReturnType<MemoryService["search"]>> = [];
      try {
        hits = await svc.search({ thread: req }, { query: qa.question, limit: maxK });
      } catch {
        hits = [];
      }
      latencies.push(performance.now() - t);
      if (withPrefix && prefixBuilder) {
        const tp = performance.now();
        const p = await prefixBuilder.build({ scope: req, task: qa.question, budgetTokens: opts.prefixBudget });
        pre.lat.push(performance.now() - tp);
        const inPrefix = new Set<string>();
        for (const item of p.items) for (const s of (await store.get(item.id))?.sources ?? []) for (const mid of s.messageIds) inPrefix.add(mid);
        pre.sum += evidence.filter((e) => inPrefix.has(e)).length / evidence.length;
        pre.items += p.items.length;
        pre.tokens += p.tokensUsed;
        if (p.items.length === 0) pre.empty++;
        pre.n++;
      }
      const ranked: string[] = [];
      for (const h of hits) for (const s of h.record.sources) for (const m of s.messageIds) if (!ranked.includes(m)) ranked.push(m);
      const name = CATEGORY_NAMES[qa.category] ?? `category-${qa.category}`;
      opts.onQuestion?.({ sample: conv.sample_id, question: qa.question, category: name, evidence, ranked });
      const c = (cat[name] ??= { questions: 0, sums: {} });
      c.questions++;
      questions++;
      for (const k of opts.ks) {
        const top = new Set(ranked.slice(0, k));
        const r = evidence.filter((e) => top.has(e)).length / evidence.length;
        sums[k] = (sums[k] ?? 0) + r;
        c.sums[k] = (c.sums[k] ?? 0) + r;
      }
      opts.onProgress?.(done, allQs.length, "questions");
    }
    latencies.sort((a, b) => a - b);
    const recall: Record<string, number> = {};
    for (const k of opts.ks) recall[k] = round1((100 * (sums[k] ?? 0)) / Math.max(1, questions));
    const by_category: LocomoResult["by_category"] = {};
    for (const [name, c] of Object.entries(cat)) {
      const r: Record<string, number> = {};
      for (const k of opts.ks) r[k] = round1((100 * (c.sums[k] ?? 0)) / Math.max(1, c.questions));
      by_category[name] = { questions: c.questions, recall: r };
    }
      return { questions, recall, latencies, by_category };
    };
    const { questions, recall, latencies, by_category } = await evaluate(service, true);
    const ablation: NonNullable<LocomoResult["ablation"]> = [];
    for (const v of opts.ablation ?? []) {
      const svc = new MemoryService(stores.open(v), clock, config);
      const r = await evaluate(svc, false);
      ablation.push({
        channels: channelList(v),
        recall: r.recall,
        latency_ms: { p50: Math.round(percentile(r.latencies, 50) * 1000) / 1000, p95: Math.round(percentile(r.latencies, 95) * 1000) / 1000 },
        by_category: Object.fromEntries(Object.entries(r.by_category).map(([k, c]) => [k, c.recall])),
      });
    }
    return {
      questions,
      recall,
      latency_ms: { p50: Math.round(percentile(latencies, 50) * 1000) / 1000, p95: Math.round(percentile(latencies, 95) * 1000) / 1000 },
      by_category,
      ingest,
      channels: channelList(channels),
      engine: stores.engine,
      split,
      conversations: convs.map((c) => c.sample_id),
      ...(ablation.length > 0 ? { ablation } : {}),
      ...(prefixBuilder
        ? {
            prefix: {
              budget_tokens: opts.prefixBudget!,
              recall_at_budget: round1((100 * pre.sum) / Math.max(1, pre.n)),
              mean_items: round1(pre.items / Math.max(1, pre.n)),
              mean_tokens: Math.round(pre.tokens / Math.max(1, pre.n)),
              empty: pre.empty,
              latency_ms: (() => {
                const l = [...pre.lat].sort((a, b) => a - b);
                return { p50: Math.round(percentile(l, 50) * 1000) / 1000, p95: Math.round(percentile(l, 95) * 1000) / 1000 };
              })(),
            },
          }
        : {}),
    };
  } finally {
    await stores.close();
  }
}

/** The benchmark's database: one store per channel set over it, dropped at the end. */
interface BenchStores {
  engine: "sqlite" | "postgres";
  open(channels: RetrievalChannels): MemoryStore;
  /** for the context prefix (SQLite only) */
  toggles: ToggleStore | null;
  close(): Promise<void>;
}

function sqliteStores(): BenchStores {
  const dir = mkdtempSync(join(tmpdir(), "locomo-"));
  const db = openDatabase(join(dir, "memory.db"));
  return {
    engine: "sqlite",
    open: (channels) => new SqliteMemoryStore(db, channels),
    toggles: new SqliteToggleStore(db),
    close: async () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresStores(url: string): Promise<BenchStores> {
  const name = `locomo_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  const drop = async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end().catch(() => {});
  };
  let db: Awaited<ReturnType<typeof openPg>>;
  try {
    db = await openPg(u.toString(), { profile: "postgres", max: 4, migrations: MEMORY_MIGRATIONS });
  } catch (e) {
    await drop();
    throw e;
  }
  return {
    engine: "postgres",
    open: (channels) => new PgMemoryStore(db, { channels }),
    toggles: null,
    close: async () => {
      await db.close();
      await drop();
    },
  };
}

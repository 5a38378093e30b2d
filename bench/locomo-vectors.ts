// LoCoMo with and without the vector channel (issue 8 §2): ingest once with an embedder filling
// sqlite-vec, then score the same questions with the word channels alone and with the vector
// channel fused at several RRF weights. Prints one JSON object.
//   node dist/bench/locomo-vectors.js --data FILE [--split tune|holdout|all] [--dims 384] [--weights 0.5,1]
//     [--embedder hashing | onnx:DIR]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixedClock } from "../core/clock.js";
import { defaultConfig } from "../core/config.js";
import type { Embedder } from "../core/embedding/embedder.js";
import { HashingEmbedder } from "../core/embedding/hashing.js";
import type { RequestScope } from "../core/memory/scope.js";
import { MemoryService } from "../core/memory/service.js";
import { DEFAULT_CHANNELS } from "../core/retrieval/channels.js";
import { OnnxEmbedder } from "../stores/embedding/onnx-embedder.js";
import { openDatabase } from "../stores/sqlite/database.js";
import { SqliteMemoryStore } from "../stores/sqlite/memory-store.js";
import { VectorChannel } from "../stores/sqlite/vector-channel.js";
import { CATEGORY_NAMES, evidenceIds, LOCOMO_SPLITS, parseLocomoDate, splitConversations, turnText, type LocomoSplit } from "./locomo.js";

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
interface Conversation {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: { question: string; evidence?: string[]; category: number }[];
}

const KS = [5, 10, 25, 50];

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function sessions(conv: Record<string, unknown>): { n: number; date: number | null; turns: Turn[] }[] {
  return Object.keys(conv)
    .map((k) => /^session_(\d+)$/.exec(k))
    .filter((m): m is RegExpExecArray => m !== null && Array.isArray(conv[m[0]]))
    .map((m) => ({ n: Number(m[1]), date: parseLocomoDate(conv[`session_${m[1]}_date_time`]), turns: conv[m[0]] as Turn[] }))
    .sort((a, b) => a.n - b.n);
}

const pct = (xs: number[], p: number) => (xs.length ? xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]! : 0);
const round1 = (x: number) => Math.round(x * 10) / 10;

async function main(): Promise<void> {
  const data = arg("--data");
  if (!data) throw new Error("--data FILE is required");
  const split = (arg("--split") ?? "all") as LocomoSplit;
  if (!(LOCOMO_SPLITS as readonly string[]).includes(split)) throw new Error(`--split takes ${LOCOMO_SPLITS.join("|")}`);
  const dims = Number(arg("--dims") ?? 384);
  const weights = (arg("--weights") ?? "0.5,1").split(",").map(Number);
  const which = arg("--embedder") ?? "hashing";
  const embedder: Embedder = which.startsWith("onnx:")
    ? await OnnxEmbedder.load({ dir: which.slice(5) })
    : new HashingEmbedder({ dimensions: dims });
  const convs = splitConversations(JSON.parse(readFileSync(data, "utf8")) as Conversation[], split);
  const dir = mkdtempSync(join(tmpdir(), "locomo-vec-"));
  const db = openDatabase(join(dir, "memory.db"));
  try {
    const clock = fixedClock(Date.UTC(2023, 0, 1));
    const config = defaultConfig({ localUser: "locomo" });
    const channel = VectorChannel.withEmbedder(db, { embedder });
    const ingestSvc = new MemoryService(new SqliteMemoryStore(db, DEFAULT_CHANNELS, channel), clock, config);
    const t0 = performance.now();
    let turns = 0;
    for (const conv of convs) {
      const user = `locomo:${conv.sample_id}`;
      for (const s of sessions(conv.conversation)) {
        const thread = `${conv.sample_id}:session_${s.n}`;
        const req: RequestScope = { user, project: null, session: thread, thread, ancestors: [] };
        if (s.date !== null) clock.set(s.date);
        for (const turn of s.turns) {
          clock.advance(1000);
          turns++;
          try {
            await ingestSvc.remember(
              req,
              { content: turnText(turn), kind: "note", scope: "user", userStated: true, validFrom: s.date },
              { actor: "user", threadId: thread, toolCallId: null, messageIds: [turn.dia_id] },
            );
          } catch {
            // refused turns are refused for every row alike
          }
        }
      }
    }
    const ingestMs = Math.round(performance.now() - t0);

    const evaluate = async (svc: MemoryService) => {
      const sums: Record<number, number> = {};
      const cats: Record<string, { n: number; sums: Record<number, number> }> = {};
      const lat: number[] = [];
      let questions = 0;
      for (const conv of convs) {
        const req: RequestScope = { user: `locomo:${conv.sample_id}`, project: null, session: `${conv.sample_id}:qa`, thread: `${conv.sample_id}:qa`, ancestors: [] };
        for (const qa of conv.qa) {
          const evidence = evidenceIds(qa.evidence);
          if (evidence.length === 0) continue;
          const t = performance.now();
          const hits = await svc.search({ thread: req }, { query: qa.question, limit: Math.max(...KS) }).catch(() => []);
          lat.push(performance.now() - t);
          const ranked: string[] = [];
          for (const h of hits) for (const src of h.record.sources) for (const m of src.messageIds) if (!ranked.includes(m)) ranked.push(m);
          const c = (cats[CATEGORY_NAMES[qa.category] ?? `category-${qa.category}`] ??= { n: 0, sums: {} });
          c.n++;
          questions++;
          for (const k of KS) {
            const top = new Set(ranked.slice(0, k));
            const r = evidence.filter((e) => top.has(e)).length / evidence.length;
            sums[k] = (sums[k] ?? 0) + r;
            c.sums[k] = (c.sums[k] ?? 0) + r;
          }
        }
      }
      lat.sort((a, b) => a - b);
      const recall = Object.fromEntries(KS.map((k) => [k, round1((100 * (sums[k] ?? 0)) / Math.max(1, questions))]));
      const by_category = Object.fromEntries(
        Object.entries(cats).map(([name, c]) => [name, Object.fromEntries(KS.map((k) => [k, round1((100 * (c.sums[k] ?? 0)) / Math.max(1, c.n))]))]),
      );
      return { questions, recall, latency_ms: { p50: Math.round(pct(lat, 50) * 100) / 100, p95: Math.round(pct(lat, 95) * 100) / 100 }, by_category };
    };

    // Words only: a store with no embedder (its vector channel only maintains existing rows).
    const rows = [{ vector: "off", ...(await evaluate(new MemoryService(new SqliteMemoryStore(db, DEFAULT_CHANNELS), clock, config))) }];
    for (const w of weights) {
      const ch = VectorChannel.withEmbedder(db, { embedder, weight: w, minSimilarity: config.embedder.minSimilarity });
      rows.push({ vector: `weight ${w}`, ...(await evaluate(new MemoryService(new SqliteMemoryStore(db, DEFAULT_CHANNELS, ch), clock, config))) });
    }
    process.stdout.write(
      `${JSON.stringify({ split, conversations: convs.map((c) => c.sample_id), embedder: embedder.id, ingest: { turns, vectors: channel.count(), ms: ingestMs }, rows })}\n`,
    );
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

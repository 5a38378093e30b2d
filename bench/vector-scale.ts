// Cost of the vector channel (issue 8 §2) at scale: the synthetic conversation corpus
// (bench/corpus.ts) written through MemoryService.rememberMany with the hashing embedder filling
// sqlite-vec, then the KNN alone and the full fused search, with and without the vector channel,
// for a thread's view of the main user. Prints one JSON object.
//
//   node dist/bench/vector-scale.js [--sizes 10000,100000] [--dims 384] [--queries 300] [--batch 5000]
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openMemory } from "../cli/context.js";
import { fixedClock } from "../core/clock.js";
import { defaultConfig } from "../core/config.js";
import { HashingEmbedder } from "../core/embedding/hashing.js";
import { visibleKeys, type RequestScope } from "../core/memory/scope.js";
import { MemoryService } from "../core/memory/service.js";
import { SqliteMemoryStore } from "../stores/sqlite/memory-store.js";
import { SqliteVectorIndex } from "../stores/sqlite/vector-index.js";
import { ScaleCorpus, type ScaleMemory } from "./corpus.js";
import { summary } from "./stats.js";

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? def) : def;
}

const SIZES = arg("sizes", "10000,100000").split(",").map(Number);
const DIMS = Number(arg("dims", "384"));
const QUERIES = Number(arg("queries", "300"));
const BATCH = Number(arg("batch", "5000"));

function scopeOf(m: Pick<ScaleMemory, "user" | "project" | "session">): RequestScope {
  const s = `s-${m.session}`;
  return { user: `user-${m.user}`, project: `/work/u${m.user}/p${m.project}`, session: s, thread: s, ancestors: [] };
}

async function runSize(n: number) {
  const dir = mkdtempSync(join(tmpdir(), "vec-scale-"));
  const clock = fixedClock(Date.UTC(2026, 0, 15));
  const ctx = openMemory({
    dbPath: join(dir, "memory.db"),
    config: defaultConfig({ localUser: "bench", embedder: { kind: "hashing", hashing: { dimensions: DIMS } } }),
    clock,
    env: {},
  });
  try {
    const corpus = new ScaleCorpus({ seed: 42 });
    const mainScopes: RequestScope[] = [];
    const queries: string[] = [];
    const t0 = performance.now();
    for (let done = 0; done < n; ) {
      const items = [];
      for (let i = 0; i < Math.min(BATCH, n - done); i++) {
        const m = corpus.next();
        const req = scopeOf(m);
        if (m.user === 0 && mainScopes.length < QUERIES && m.turn === 0) mainScopes.push(req);
        if (queries.length < QUERIES && corpus.random() < 0.05) queries.push(m.words.slice(0, 4).join(" "));
        items.push({ req, input: { content: m.content, kind: "note" as const, scope: m.level }, origin: { actor: "user" as const, threadId: req.thread, toolCallId: null } });
      }
      await ctx.service.rememberMany(items);
      done += items.length;
    }
    const ingestMs = performance.now() - t0;
    const vectors = ctx.store.vectors!.count();
    const index = SqliteVectorIndex.existing(ctx.db)!;
    const embedder = new HashingEmbedder({ dimensions: DIMS });
    const knn: number[] = [];
    const withVec: number[] = [];
    const withoutVec: number[] = [];
    const plain = new MemoryService(new SqliteMemoryStore(ctx.db), clock, ctx.config);
    for (let i = 0; i < queries.length; i++) {
      const req = mainScopes[i % Math.max(1, mainScopes.length)]!;
      const q = queries[i]!;
      let t = performance.now();
      index.knn(embedder.embedOne(q), { keys: visibleKeys(req) }, 20);
      knn.push(performance.now() - t);
      t = performance.now();
      await ctx.service.search({ thread: req }, { query: q, limit: 10 }).catch(() => []);
      withVec.push(performance.now() - t);
      t = performance.now();
      await plain.search({ thread: req }, { query: q, limit: 10 }).catch(() => []);
      withoutVec.push(performance.now() - t);
    }
    ctx.db.pragma("wal_checkpoint(TRUNCATE)");
    const vecBytes = (ctx.db.prepare(`SELECT sum(pgsize) AS b FROM dbstat WHERE name LIKE 'memory_vec%'`).get() as { b: number | null } | undefined)?.b ?? null;
    return {
      memories: n,
      vectors,
      dims: DIMS,
      ingest: { ms: Math.round(ingestMs), per_second: Math.round((n / ingestMs) * 1000) },
      knn_ms: summary(knn),
      search_with_vector_ms: summary(withVec),
      search_without_vector_ms: summary(withoutVec),
      db_bytes: statSync(join(dir, "memory.db")).size,
      vector_bytes: vecBytes,
      rss_mb: Math.round(process.memoryUsage().rss / 2 ** 20),
    };
  } finally {
    ctx.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows = [];
for (const n of SIZES) rows.push(await runSize(n));
process.stdout.write(`${JSON.stringify({ embedder: `hashing ${DIMS}`, queries: QUERIES, rows })}\n`);

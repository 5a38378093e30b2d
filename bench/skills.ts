// `node dist/bench/skills.js [--queries 300]`: skill_search latency over a catalog of 1k and 10k
// published skills (the service path the tool uses: scope switches, FTS over published versions,
// η filter, scoring). Seeds through the same service, so every version is parsed and scanned.
// Prints one JSON line; the target is p95 ≤ 5 ms at 10k.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { openMemory } from "../cli/context.js";
import { openSkills } from "../cli/skills-context.js";
import { defaultConfig } from "../core/config.js";
import type { RequestScope } from "../core/memory/scope.js";
import { parseSkillMd } from "../core/skills/skill-md.js";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i]!;
  if (a.startsWith("--")) args.set(a.slice(2), process.argv[++i] ?? "");
}
const QUERIES = Number(args.get("queries") ?? 300);
const SIZES = (args.get("sizes") ?? "1000,10000").split(",").map(Number);

// A small deterministic generator, so runs are comparable.
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const VERBS = "deploy migrate review triage refactor benchmark rotate export import audit profile bisect release backup restore lint format index summarize translate".split(" ");
const OBJECTS =
  "kubernetes helm terraform postgres sqlite redis kafka nginx docker lambda s3 bigquery spark pandas react vue django rails cargo npm gradle maven pytest vitest jest grafana prometheus sentry github gitlab jenkins ansible".split(" ");
const EXTRA = "staging production cluster schema logs alerts secrets tests coverage changelog tags images charts dashboards queries indexes backups certificates pipelines workflows".split(" ");

function pick<T>(r: () => number, xs: T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

async function measure(size: number): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), "bench-skills-"));
  const ctx = openMemory({ dbPath: join(dir, "m.db"), config: defaultConfig({ localUser: "bench" }), env: {} });
  try {
    const { service } = openSkills(ctx);
    const r = rng(size);
    const t0 = performance.now();
    for (let i = 0; i < size; i++) {
      const verb = pick(r, VERBS);
      const obj = pick(r, OBJECTS);
      const name = `${verb}-${obj}-${i}`;
      const desc = `${verb} ${obj} ${pick(r, EXTRA)} and ${pick(r, EXTRA)} with ${pick(r, OBJECTS)}; use when asked to ${verb} ${pick(r, EXTRA)}.`;
      const doc = parseSkillMd(`---\nname: ${name}\ndescription: ${JSON.stringify(desc)}\n---\n\n1. Check the ${obj} setup.\n2. ${verb} it.\n`);
      await service.propose(doc, { actor: "bench", author: "import", ref: null });
      await service.publish(await service.preparePublish(name), "bench");
    }
    const seedMs = performance.now() - t0;
    const scope: RequestScope = { user: "bench", project: "/bench", session: "s", thread: "t", ancestors: ["s"] };
    const queries = Array.from({ length: QUERIES + 30 }, () => `please ${pick(r, VERBS)} the ${pick(r, OBJECTS)} ${pick(r, EXTRA)} for the team`);
    const times: number[] = [];
    let found = 0;
    for (const [i, q] of queries.entries()) {
      const s = performance.now();
      const hits = await service.search(scope, q, 5);
      const el = performance.now() - s;
      if (i >= 30) {
        times.push(el); // the first 30 warm the statement cache
        found += hits.length;
      }
    }
    times.sort((a, b) => a - b);
    const ms = (x: number) => Math.round(x * 1000) / 1000;
    return { skills: size, queries: times.length, p50_ms: ms(percentile(times, 50)), p95_ms: ms(percentile(times, 95)), max_ms: ms(percentile(times, 100)), mean_hits: ms(found / times.length), seed_s: ms(seedMs / 1000) };
  } finally {
    ctx.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = [];
for (const n of SIZES) results.push(await measure(n));
const at10k = results.find((x) => x.skills === 10_000);
process.stdout.write(
  `${JSON.stringify({ bench: "skill_search", target_p95_ms_at_10k: 5, met: at10k ? at10k.p95_ms! <= 5 : null, node: process.version, results })}\n`,
);

// `infinity-memory bench locomo`: retrieval recall on LoCoMo through the memory_search path.
import { closeSync, openSync, writeSync } from "node:fs";
import type { Command } from "commander";
import cliProgress from "cli-progress";
import { LOCOMO_SPLITS, runLocomo, type LocomoQuestion, type LocomoSplit } from "../../bench/locomo.js";
import { CHANNEL_NAMES, channelList, DEFAULT_CHANNELS, parseChannels } from "../../core/retrieval/channels.js";
import { wholeNumber } from "../options.js";

export function registerBench(program: Command): void {
  const bench = program.command("bench").description("benchmarks");
  bench
    .command("locomo")
    .description("LoCoMo turn-level evidence recall; prints one JSON object as the last stdout line")
    .requiredOption("--data <file>", "locomo JSON file (e.g. ../shared/bench/locomo/locomo-dev.json)")
    .option("--k <list>", "cut-offs", "5,10,25,50")
    .option("--prefix-budget <tokens>", "also measure recall inside a context prefix of this many tokens", wholeNumber(1, 100_000))
    .option("--channels <list>", `retrieval channels on (${CHANNEL_NAMES.join(",")})`, channelList(DEFAULT_CHANNELS).join(","))
    .option("--split <name>", `conversations to score: ${LOCOMO_SPLITS.join("|")} (tune/holdout alternate by sample id)`, "all")
    .option("--conversations <ids>", "only these sample ids, comma-separated (within the split)")
    .option("--pg <url>", "run on PostgreSQL: a server URL (a fresh database is created there and dropped afterwards)")
    .option("--questions-out <file>", "also write one JSON line per scored question: its evidence, each evidence turn's rank and the ranked turn ids (failure analysis)")
    .option("--json", "print only the JSON line")
    .action(async (o: { data: string; k: string; json?: boolean; prefixBudget?: string; channels: string; split: string; conversations?: string; pg?: string; questionsOut?: string }) => {
      if (!(LOCOMO_SPLITS as readonly string[]).includes(o.split)) throw new Error(`--split takes ${LOCOMO_SPLITS.join("|")}, got "${o.split}"`);
      const ks = o.k.split(",").map((s) => Number(s.trim()));
      if (ks.some((k) => !Number.isInteger(k) || k < 1 || k > 50)) throw new Error(`--k takes integers 1..50, got "${o.k}"`);
      // opened first: a path that cannot be written fails before the long run, not after it
      let out: number | null = null;
      if (o.questionsOut !== undefined) {
        try {
          out = openSync(o.questionsOut, "w");
        } catch (e) {
          throw new Error(`--questions-out: cannot write "${o.questionsOut}": ${(e as Error).message}`);
        }
      }
      const bar = process.stderr.isTTY ? new cliProgress.SingleBar({ format: "{phase} [{bar}] {value}/{total}" }, cliProgress.Presets.shades_classic) : null;
      let phase = "";
      let result: Awaited<ReturnType<typeof runLocomo>>;
      try {
        result = await runLocomo({
          data: o.data,
          ks,
          channels: parseChannels(o.channels),
          split: o.split as LocomoSplit,
          conversations: o.conversations?.split(",").map((s) => s.trim()).filter(Boolean),
          prefixBudget: o.prefixBudget !== undefined ? Number(o.prefixBudget) : undefined,
          ...(o.pg ? { pgUrl: o.pg } : {}),
          ...(out !== null ? { onQuestion: (q) => writeSync(out!, `${JSON.stringify(questionLine(q, ks))}\n`) } : {}),
          onProgress: (done, total, p) => {
            if (!bar) return;
            if (p !== phase) {
              if (phase) bar.stop();
              phase = p;
              bar.start(total, 0, { phase: p });
            }
            bar.update(done);
          },
        });
      } finally {
        bar?.stop();
        if (out !== null) closeSync(out);
      }
      if (!o.json) {
        process.stdout.write(
          `questions ${result.questions}: ` + ks.map((k) => `R@${k} ${result.recall[k]}`).join("  ") +
            `  (p50 ${result.latency_ms.p50} ms, p95 ${result.latency_ms.p95} ms)\n`,
        );
      }
      process.stdout.write(`${JSON.stringify(result)}\n`);
    });
}

/** One scored question for --questions-out: where each evidence turn ranked (1-based; null: not in the results) and its recall at each cut-off. */
export function questionLine(q: LocomoQuestion, ks: number[]) {
  const rank = (id: string) => {
    const i = q.ranked.indexOf(id);
    return i < 0 ? null : i + 1;
  };
  const evidence_ranks = Object.fromEntries(q.evidence.map((e) => [e, rank(e)]));
  const recall = Object.fromEntries(ks.map((k) => [k, q.evidence.filter((e) => (evidence_ranks[e] ?? Infinity) <= k).length / q.evidence.length]));
  return { sample: q.sample, category: q.category, question: q.question, evidence: q.evidence, evidence_ranks, recall, ranked: q.ranked };
}

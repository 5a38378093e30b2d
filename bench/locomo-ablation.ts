// LoCoMo channel ablation: ingest once, then score every channel set on the same store and print
// one JSON table (rows: channel sets; R@k overall and per category, latency).
//   node dist/bench/locomo-ablation.js --data FILE [--split tune|holdout|all] [--sets "lexical;lexical,context;..."]
//                                      [--pg postgres://…|auto]   (PostgreSQL; auto: a throwaway cluster)
import { parseChannels, CHANNEL_NAMES, DEFAULT_CHANNELS, type RetrievalChannels } from "../core/retrieval/channels.js";
import { LOCOMO_SPLITS, runLocomo, type LocomoSplit } from "./locomo.js";
import { startPgCluster } from "../test/helpers/pg-cluster.js";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/**
 * Default sets: the default channels, then the defaults with each channel flipped (off if on, on
 * if off), then every channel on, then the plain word channel.
 */
export function defaultSets(): RetrievalChannels[] {
  const flips = CHANNEL_NAMES.filter((n) => n !== "lexical").map((n) => ({ ...DEFAULT_CHANNELS, [n]: !DEFAULT_CHANNELS[n] }));
  return [DEFAULT_CHANNELS, ...flips, parseChannels(CHANNEL_NAMES.join(",")), parseChannels("lexical")];
}

async function main(): Promise<void> {
  const data = arg("--data");
  if (!data) throw new Error("--data FILE is required");
  const sets = arg("--sets")?.split(";").map(parseChannels) ?? defaultSets();
  const [first, ...rest] = sets;
  const split = (arg("--split") ?? "all") as LocomoSplit;
  if (!(LOCOMO_SPLITS as readonly string[]).includes(split)) throw new Error(`--split takes ${LOCOMO_SPLITS.join("|")}`);
  let pgUrl = arg("--pg");
  let stop: (() => void) | undefined;
  if (pgUrl === "auto") {
    const c = await startPgCluster();
    if ("skip" in c) throw new Error(`no PostgreSQL: ${c.skip}`);
    pgUrl = c.url;
    stop = c.stop;
  }
  let r: Awaited<ReturnType<typeof runLocomo>>;
  try {
    r = await runLocomo({ data, ks: [5, 10, 25, 50], channels: first!, ablation: rest, split, ...(pgUrl ? { pgUrl } : {}) });
  } finally {
    stop?.();
  }
  const rows = [
    { channels: r.channels, recall: r.recall, latency_ms: r.latency_ms, by_category: Object.fromEntries(Object.entries(r.by_category).map(([k, c]) => [k, c.recall])) },
    ...(r.ablation ?? []),
  ];
  process.stdout.write(`${JSON.stringify({ engine: r.engine, split: r.split, conversations: r.conversations, questions: r.questions, rows })}\n`);
}

await main();

// LoCoMo channel ablation: ingest once, then score every channel set on the same store and print
// one JSON table (rows: channel sets; R@k overall and per category, latency).
//   node dist/bench/locomo-ablation.js --data FILE [--sets "lexical;lexical,context;..."]
import { parseChannels, CHANNEL_NAMES, type RetrievalChannels } from "../core/retrieval/channels.js";
import { runLocomo } from "./locomo.js";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** Default sets: everything on, then each channel off in turn, then the plain word channel. */
export function defaultSets(): RetrievalChannels[] {
  const all = CHANNEL_NAMES.join(",");
  const sets = [all, ...CHANNEL_NAMES.filter((n) => n !== "lexical").map((n) => CHANNEL_NAMES.filter((m) => m !== n).join(",")), "lexical"];
  return sets.map(parseChannels);
}

async function main(): Promise<void> {
  const data = arg("--data");
  if (!data) throw new Error("--data FILE is required");
  const sets = arg("--sets")?.split(";").map(parseChannels) ?? defaultSets();
  const [first, ...rest] = sets;
  const r = await runLocomo({ data, ks: [5, 10, 25, 50], channels: first!, ablation: rest });
  const rows = [
    { channels: r.channels, recall: r.recall, latency_ms: r.latency_ms, by_category: Object.fromEntries(Object.entries(r.by_category).map(([k, c]) => [k, c.recall])) },
    ...(r.ablation ?? []),
  ];
  process.stdout.write(`${JSON.stringify({ questions: r.questions, rows })}\n`);
}

await main();

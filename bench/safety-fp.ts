// False-positive check for the content-safety scanners: run scanContent over every LoCoMo turn
// (ordinary conversation, so every non-ok verdict is a false positive) and print one JSON line.
// The data set is read at run time and never copied into the repository (CC BY-NC licence).
//
//   node dist/bench/safety-fp.js [--data path/to/locomo-dev.json]
import { readFileSync } from "node:fs";
import { scanContent } from "../core/safety/index.js";

const DEFAULT_DATA = "/work/shared/bench/locomo/locomo-dev.json";

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

interface Sample {
  sample_id: string;
  conversation: Record<string, unknown>;
}

function argValue(name: string): string | undefined {
  const args = process.argv.slice(2);
  const i = args.indexOf(name);
  if (i >= 0) return args[i + 1];
  const inline = args.find((a) => a.startsWith(`${name}=`));
  return inline?.slice(name.length + 1);
}

function isTurn(v: unknown): v is Turn {
  if (typeof v !== "object" || v === null) return false;
  const t = v as Record<string, unknown>;
  return typeof t.speaker === "string" && typeof t.text === "string";
}

/** Turn texts as the memory benchmark stores them: "Speaker: text" plus the image caption. */
function turnTexts(samples: Sample[]): string[] {
  const texts: string[] = [];
  for (const sample of samples) {
    const sessions = Object.keys(sample.conversation)
      .filter((k) => /^session_\d+$/.test(k))
      .sort((a, b) => Number(a.slice(8)) - Number(b.slice(8)));
    for (const key of sessions) {
      const turns = sample.conversation[key];
      if (!Array.isArray(turns)) continue;
      for (const turn of turns) {
        if (!isTurn(turn)) continue;
        const caption = turn.blip_caption ? ` [image: ${turn.blip_caption}]` : "";
        texts.push(`${turn.speaker}: ${turn.text}${caption}`);
      }
    }
  }
  return texts;
}

function main(): void {
  const path = argValue("--data") ?? DEFAULT_DATA;
  const samples = JSON.parse(readFileSync(path, "utf8")) as Sample[];
  const texts = turnTexts(samples);
  let flagged = 0;
  let refusedSecret = 0;
  let refusedInjection = 0;
  const examples: { text: string; verdict: string; reason: string }[] = [];
  for (const text of texts) {
    const scan = scanContent(text);
    if (scan.verdict === "ok") continue;
    if (scan.verdict === "flag") flagged++;
    else if (scan.verdict === "refuse_secret") refusedSecret++;
    else refusedInjection++;
    if (examples.length < 10) examples.push({ text, verdict: scan.verdict, reason: scan.reason });
  }
  const nonOk = flagged + refusedSecret + refusedInjection;
  const fpRate = texts.length === 0 ? 0 : (100 * nonOk) / texts.length;
  console.log(
    JSON.stringify({
      turns: texts.length,
      flagged,
      refused_secret: refusedSecret,
      refused_injection: refusedInjection,
      fp_rate_percent: Math.round(fpRate * 1000) / 1000,
      examples,
    }),
  );
}

main();

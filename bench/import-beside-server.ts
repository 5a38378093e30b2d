// A bulk `memory import` into the database a running command server writes to, while an agent
// remembers one fact at a time over RAP (waiting for each result, then --pace-ms): what a person sees who imports their notes with a
// session open. Both write through SQLite's single writer lock (WAL), so an import's transactions
// (one per --batch lines) make the server's writes wait. Reports, as one JSON line: remember
// latency (POST to tool_result at the listener) with the server alone and during the import, the
// import's lines/s alone and beside the traffic, and whether anything was lost (every acknowledged
// fact and every imported line stored exactly once).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryText, rng } from "./corpus.js";
import { CLI, factOf, invocation, post, startImport, startServe, startSink, type Sink } from "./serve-fleet.js";
import { summary } from "./stats.js";

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const LINES = arg("lines", 50_000);
const PACE_MS = arg("pace-ms", 20);
const BATCH = arg("batch", 1000);
/** remembers with the server alone (the baseline) */
const ALONE = arg("remembers", 200);

function writeImportFile(path: string, from: number, n: number): void {
  const r = rng(from + 1);
  const out: string[] = [];
  for (let i = from; i < from + n; i++) out.push(JSON.stringify({ content: memoryText(i, r), kind: "fact" }));
  writeFileSync(path, `${out.join("\n")}\n`);
}

interface ImportRun {
  exit: number | null;
  seconds: number;
  summary: { imported?: number; failed?: number } | null;
}

async function runImport(file: string, db: string, env: NodeJS.ProcessEnv): Promise<ImportRun> {
  const r = await startImport({ file, db, batch: BATCH, env }).done;
  let summary: ImportRun["summary"] = null;
  try {
    summary = JSON.parse(r.out.trim().split("\n").at(-1) ?? "") as ImportRun["summary"];
  } catch {
    // no summary: the exit code says why
  }
  return { exit: r.code, seconds: r.seconds, summary };
}

/**
 * An agent's rhythm: one remember, wait for its tool_result, PACE_MS of thought, the next; until
 * `until()` says stop (or `count` were sent). Latency is POST to tool_result, in ms.
 */
async function rememberPaced(endpoint: string, sink: Sink, tag: string, stop: { count?: number; until?: () => boolean }) {
  const sent = new Map<string, number>();
  const refused: number[] = [];
  for (let i = 0; stop.count === undefined || i < stop.count; i++) {
    if (stop.until?.()) break;
    const id = `${tag}-${i}`;
    sent.set(id, performance.now());
    const status = await post(endpoint, invocation("memory_remember", { content: factOf(id), kind: "fact" }, id, sink.url, `${tag}-thread`));
    if (status !== 200) refused.push(status);
    else await sink.waitFor([id], 30_000);
    await new Promise((r) => setTimeout(r, PACE_MS));
  }
  const missing = await sink.waitFor(sent.keys(), 5_000);
  const lat = [...sent].flatMap(([id, at]) => {
    const r = sink.results.get(id);
    return r ? [r.at - at] : [];
  });
  const errors = [...sent.keys()].filter((id) => sink.results.get(id)?.text.startsWith("Error")).length;
  return { ids: [...sent.keys()], sent: sent.size, refused: refused.length, refused_statuses: [...new Set(refused)], errors, missing: missing.length - refused.length, latency_ms: summary(lat) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "imem-import-beside-"));
  const db = join(dir, "memory.db");
  const env = { ...process.env, INFINITY_MEMORY_HOME: join(dir, "cli-home"), INFINITY_MEMORY_USER: "alice" };
  const first = join(dir, "first.jsonl");
  const second = join(dir, "second.jsonl");
  writeImportFile(first, 0, LINES);
  writeImportFile(second, LINES, LINES);
  const server = await startServe({ db, dir, name: "session" });
  const sink = await startSink();
  try {
    const alone = await rememberPaced(server.endpoint, sink, "alone", { count: ALONE });
    const importAlone = await runImport(first, db, env);
    let importing = true;
    const importing2 = runImport(second, db, env).then((r) => {
      importing = false;
      return r;
    });
    const during = await rememberPaced(server.endpoint, sink, "during", { until: () => !importing });
    const importBeside = await importing2;

    // Nothing lost: each acknowledged fact once, every imported line once.
    const exp = spawnSync(process.execPath, [CLI, "memory", "export", "--db", db], { env, encoding: "utf8", maxBuffer: 1 << 30 });
    const contents = exp.stdout.trim().split("\n").map((l) => (JSON.parse(l) as { content: string }).content);
    const count = new Map<string, number>();
    for (const c of contents) count.set(c, (count.get(c) ?? 0) + 1);
    const acked = [...alone.ids, ...during.ids].filter((id) => sink.results.get(id) && !sink.results.get(id)!.text.startsWith("Error"));
    const lostFacts = acked.filter((id) => count.get(factOf(id)) !== 1).length;
    const importedStored = contents.filter((c) => /\(note \d+\)$/.test(c)).length;
    const strip = ({ ids: _ids, ...rest }: Awaited<ReturnType<typeof rememberPaced>>) => rest;
    process.stdout.write(
      `${JSON.stringify({
        lines_per_import: LINES,
        batch: BATCH,
        pace_ms: PACE_MS,
        remember_server_alone: strip(alone),
        remember_during_import: strip(during),
        import_alone: { exit: importAlone.exit, seconds: Math.round(importAlone.seconds * 10) / 10, per_second: Math.round(LINES / importAlone.seconds), imported: importAlone.summary?.imported ?? null },
        import_beside_traffic: { exit: importBeside.exit, seconds: Math.round(importBeside.seconds * 10) / 10, per_second: Math.round(LINES / importBeside.seconds), imported: importBeside.summary?.imported ?? null },
        stored: { memories: contents.length, imported_lines: importedStored, expected_imported_lines: 2 * LINES, acknowledged_facts: acked.length, facts_not_stored_once: lostFacts },
      })}\n`,
    );
  } finally {
    await server.stop();
    await sink.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

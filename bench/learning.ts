// `node dist/bench/learning.js`: the learning loop under a 50-session replay. Two figures, one JSON
// line on stdout (also written to bench/results/learning.json):
//   ingest  — a backlog of recorded sessions processed by one worker: steps/s and episodes/s
//   lag     — sessions replayed live (a task per session per round, paced), with the worker
//             running in the background: time from a task's last message to its stored episode
// Options: --sessions 50 --tasks 20 --steps 3 --rounds 10 --round-ms 200 --interval-ms 50
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { systemClock } from "../core/clock.js";
import { defaultConfig } from "../core/config.js";
import { LearningService } from "../core/learning/service.js";
import { LearningWorker } from "../core/learning/worker.js";
import { scopeResolver } from "../core/learning/scope.js";
import { openMemory } from "../cli/context.js";
import { SqliteConversationStore } from "../stores/sqlite/conversation-store.js";
import { SqliteLearningStore } from "../stores/sqlite/learning-store.js";
import type { InfinityMessage } from "../stores/traits.js";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const num = (k: string, d: number) => Number(args.get(k) ?? d);
const SESSIONS = num("sessions", 50);
const TASKS = num("tasks", 20);
const STEPS = num("steps", 3);
const ROUNDS = num("rounds", 10);
const ROUND_MS = num("round-ms", 200);
const INTERVAL_MS = num("interval-ms", 50);

function task(s: number, t: number): [InfinityMessage, string][] {
  const id = (k: string) => `s${s}-t${t}-${k}`;
  const out: [InfinityMessage, string][] = [[{ kind: "user", content: { type: "text", text: t % 7 === 0 ? `I prefer tabs in project ${s}.` : `Run check ${t} in module ${s}` } }, id("u")]];
  for (let k = 0; k < STEPS; k++) {
    const callId = id(`c${k}`);
    out.push([{ kind: "tool_call", call: { id: callId, call_id: null, function: { name: k === STEPS - 1 ? "shell" : "read_file", arguments: { path: `/work/m${s}/src/f${k}.ts`, line: t * 10 + k } }, signature: null, additional_params: null } }, `${callId}-call`]);
    const text = k === STEPS - 1 ? (t % 3 === 0 ? "Tests  1 failed | 9 passed (10)" : "Tests  10 passed (10)") : `export const v${k} = ${t};`;
    out.push([{ kind: "tool_result", result: { id: callId, call_id: null, content: [{ type: "text", text }] } }, `${callId}-result`]);
  }
  out.push([{ kind: "assistant", content: { text: `Check ${t} finished.` } }, id("a")]);
  return out;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return 0;
  return Math.round(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! * 10) / 10;
}

function open(dir: string) {
  const config = defaultConfig({ localUser: "bench", learning: { worker: { intervalMs: INTERVAL_MS, batch: SESSIONS } } });
  const ctx = openMemory({ dbPath: join(dir, "memory.db"), config, clock: systemClock, env: {} });
  const conv = new SqliteConversationStore(ctx.db);
  const service = new LearningService({
    store: new SqliteLearningStore(ctx.db),
    memory: ctx.store,
    config,
    clock: systemClock,
    conversation: conv,
    scopeOf: scopeResolver({ localUser: "bench" }),
  });
  return { ctx, conv, service, config };
}

async function ingest(dir: string) {
  const { ctx, conv, service, config } = open(dir);
  for (let s = 0; s < SESSIONS; s++) {
    await conv.ensureRootThread(`sess-${s}`);
    const msgs = Array.from({ length: TASKS }, (_, t) => task(s, t)).flat();
    await conv.appendMessages(`sess-${s}`, msgs);
  }
  const worker = new LearningWorker(service, config.learning.worker, systemClock);
  const t0 = performance.now();
  const r = await worker.drain();
  const ms = performance.now() - t0;
  const episodes = SESSIONS * TASKS;
  ctx.close();
  return { sessions: SESSIONS, episodes, steps: r.steps, ms: Math.round(ms), steps_per_s: Math.round(r.steps / (ms / 1000)), episodes_per_s: Math.round(episodes / (ms / 1000)) };
}

async function lag(dir: string) {
  const { ctx, conv, service, config } = open(dir);
  const waiting = new Map<string, number[]>();
  const lags: number[] = [];
  const worker = new LearningWorker(service, config.learning.worker, systemClock, null, {
    afterThread: (item) => {
      // processing a thread is synchronous SQL between awaits: every task appended before this
      // call was read by it
      const now = performance.now();
      for (const at of waiting.get(item.threadId) ?? []) lags.push(now - at);
      waiting.set(item.threadId, []);
    },
  });
  for (let s = 0; s < SESSIONS; s++) await conv.ensureRootThread(`live-${s}`);
  worker.start();
  const t0 = performance.now();
  for (let r = 0; r < ROUNDS; r++) {
    for (let s = 0; s < SESSIONS; s++) {
      await conv.appendMessages(`live-${s}`, task(s, r));
      waiting.set(`live-${s}`, [...(waiting.get(`live-${s}`) ?? []), performance.now()]);
    }
    await new Promise((res) => setTimeout(res, ROUND_MS));
  }
  while ([...waiting.values()].some((v) => v.length > 0)) await new Promise((res) => setTimeout(res, 10));
  const wallMs = performance.now() - t0;
  await worker.stop();
  ctx.close();
  return { sessions: SESSIONS, rounds: ROUNDS, round_ms: ROUND_MS, interval_ms: INTERVAL_MS, tasks: lags.length, wall_ms: Math.round(wallMs), lag_ms: { p50: pct(lags, 50), p95: pct(lags, 95), max: pct(lags, 100) } };
}

const dir = mkdtempSync(join(tmpdir(), "imem-bench-learning-"));
try {
  mkdirSync(join(dir, "a"));
  mkdirSync(join(dir, "b"));
  const result = { bench: "learning", node: process.version, ingest: await ingest(join(dir, "a")), worker: await lag(join(dir, "b")) };
  const line = JSON.stringify(result);
  const out = join(dirname(fileURLToPath(import.meta.url)), "../../bench/results");
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "learning.json"), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${line}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

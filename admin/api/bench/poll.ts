// How much the live-update poll and the list calls cost on a populated SQLite database: builds
// a temp database with N memories (default 20000) and N/4 skill trials, then times the
// watermark query the SSE watcher runs every ~500 ms and a few admin calls. Prints JSON.
//   npm run build && node dist/admin/api/bench/poll.js [memories]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { fixedClock } from "../../../core/clock.js";
import { defaultConfig } from "../../../core/config.js";
import { MemoryService } from "../../../core/memory/service.js";
import type { RequestScope } from "../../../core/memory/scope.js";
import { SkillService } from "../../../core/skills/service.js";
import { parseSkillMd } from "../../../core/skills/skill-md.js";
import { openSqliteBackend } from "../../../stores/sqlite/backend.js";
import { SqliteAdminQueries } from "../sqlite-queries.js";
import { startAdmin } from "../start.js";

const N = Number(process.argv[2] ?? 20000);
const dir = mkdtempSync(join(tmpdir(), "imem-admin-bench-"));
const backend = openSqliteBackend(join(dir, "memory.db"));
const config = defaultConfig({ localUser: "alice" });
const clock = fixedClock(Date.UTC(2026, 10, 1));
const memory = new MemoryService(backend.memory, clock, config);
const skills = new SkillService(backend.skills, clock, config);
const req: RequestScope = { user: "alice", project: "/work/app", session: "s1", thread: "s1", ancestors: [] };

function time<T>(runs: number, fn: () => Promise<T>): Promise<{ p50: number; p95: number }> {
  return (async () => {
    const ms: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await fn();
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    const q = (p: number) => Math.round(ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]! * 1000) / 1000;
    return { p50: q(0.5), p95: q(0.95) };
  })();
}

async function main(): Promise<void> {
  const words = ["deploy", "staging", "editor", "tabs", "database", "pipeline", "review", "golang", "python", "cache", "queue", "metrics"];
  for (let start = 0; start < N; start += 1000) {
    await memory.rememberMany(
      Array.from({ length: Math.min(1000, N - start) }, (_, j) => {
        const i = start + j;
        return { req, input: { content: `note ${i}: the ${words[i % words.length]} uses ${words[(i * 7) % words.length]} number ${i}`, kind: "note" as const }, origin: { actor: "user" as const, threadId: null, toolCallId: null } };
      }),
    );
  }
  await skills.propose(parseSkillMd(`---\nname: log-triage\ndescription: "Triage logs"\n---\n\n1. grep\n`), { actor: "bench", author: "human", ref: null });
  await skills.publish(await skills.preparePublish("log-triage"), "bench");
  for (let i = 0; i < N / 4; i++) await skills.feedback("log-triage", undefined, { passed: i % 3 !== 0 }, null, "bench");

  const queries = new SqliteAdminQueries(backend.db);
  const watermark = await time(200, () => queries.watermark());
  const admin = await startAdmin({ backend, config, clock, memory, skills, home: dir, logger: pino({ level: "silent" }), http: { port: 0, uiDir: dir } });
  const call = (path: string, body: unknown) => () =>
    fetch(`${admin.http!.url}api/v1/${path}`, { method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${admin.token}` }, body: JSON.stringify(body) }).then((r) => r.json());
  const out = {
    memories: N,
    trials: N / 4,
    watermarkMs: watermark,
    listMemoriesMs: await time(50, call("MemoryAdmin/ListMemories", { pageSize: 50 })),
    searchMemoriesMs: await time(50, call("MemoryAdmin/SearchMemories", { query: "staging database" })),
    queryAuditMs: await time(50, call("MemoryAdmin/QueryAudit", { pageSize: 100 })),
    getSkillMs: await time(20, call("SkillAdmin/GetSkill", { name: "log-triage" })),
    learningStatsMs: await time(20, call("MemoryAdmin/LearningStats", {})),
  };
  await admin.close();
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

await main();

// A temp database with what the review page shows: active and pending memories (with the
// conversation message a candidate came from), a skill with two published versions and a
// candidate the learning loop filed a request for (with an eval report), a second skill with a
// bare candidate; and the admin servers over it (HTTP + gRPC on free loopback ports).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { startAdmin, type AdminServers } from "../../admin/api/start.js";
import { EvolutionService } from "../../core/learning/evolution.js";
import type { NewMemory } from "../../core/memory/record.js";
import { recordScopeFor } from "../../core/memory/scope.js";
import { contentHash } from "../../core/memory/write-policy.js";
import type { SkillActor } from "../../core/skills/service.js";
import { parseSkillMd } from "../../core/skills/skill-md.js";
import { SkillService } from "../../core/skills/service.js";
import type { MemoryService } from "../../core/memory/service.js";
import type { MemoryConfig } from "../../core/config.js";
import type { Clock } from "../../core/clock.js";
import type { Backend } from "../../stores/backend.js";
import { skillMd } from "../skills/helpers.js";
import { modelOrigin, openTestMemory, req, T0 } from "../helpers/memory.js";

export const person: SkillActor = { actor: "cli:alice", author: "human", ref: "alice" };
export const PENDING_TEXT = "The staging database is called orca-staging";
export const SOURCE_MESSAGE = "btw remember that the staging database is called orca-staging";

const doc = (name: string, body: string) => parseSkillMd(skillMd(name, `Triage production error logs by service (${name}).`, body));

/** What seeding needs: any engine's backend with the memory service over it. */
export interface SeedTarget {
  backend: Backend;
  service: MemoryService;
  config: MemoryConfig;
  clock: Clock;
}

export async function seed(dir: string) {
  const ctx = openTestMemory(dir);
  return { ctx, ...(await seedOver(ctx, dir)) };
}

export async function seedOver(ctx: SeedTarget, dir: string) {
  const skills = new SkillService(ctx.backend.skills, ctx.clock, ctx.config);
  const evolution = new EvolutionService({ store: ctx.backend.evolution, learning: ctx.backend.learning, skills, config: ctx.config, clock: ctx.clock, llm: null });

  const tabs = await ctx.service.remember(req(), { content: "Alice prefers tabs over spaces in Go code", kind: "preference", userStated: true }, modelOrigin());
  const ci = await ctx.service.remember(req(), { content: "The deploy pipeline runs on Buildkite agents", kind: "fact" }, modelOrigin());

  // a pending candidate as the learning loop writes it, and the message it came from in the session index
  const src = await ctx.backend.sessionIndex.sourceId("sqlite", join(dir, "conversations.db"));
  await ctx.backend.sessionIndex.append(src, { threadId: "root-1", rootThreadId: "root-1", user: "alice", cwd: "/work/proj-a" }, [{ ord: 0, messageId: "msg-1", role: "user", text: SOURCE_MESSAGE }], 1, null, T0);
  const pendingId = "mem_pending_1";
  const pending: NewMemory = {
    id: pendingId,
    lineageId: pendingId,
    scope: recordScopeFor(req(), "project"),
    kind: "fact",
    content: PENDING_TEXT,
    tags: ["auto"],
    trust: "model_inferred",
    confidence: 0.6,
    status: "pending",
    flags: [],
    version: 1,
    supersedes: null,
    validFrom: null,
    validTo: null,
    createdAt: T0,
    expiresAt: null,
    contentHash: contentHash(PENDING_TEXT),
    source: { threadId: "root-1", messageIds: ["msg-1"], toolCallId: null, actor: "user", at: T0 },
  };
  await ctx.backend.memory.insert(pending, { at: T0, actor: "learning", action: "create", targetKind: "memory", targetId: pendingId, detail: { auto_extracted: true } });

  // log-triage: v1 published, v2 published (v1 retired), v3 a candidate with a publish request
  await skills.propose(doc("log-triage", "1. grep the logs\n2. group by service"), person);
  await skills.publish(await skills.preparePublish("log-triage"), person.actor);
  await skills.propose(doc("log-triage", "1. grep the logs\n2. group by service\n3. open an issue"), person);
  await skills.publish(await skills.preparePublish("log-triage"), person.actor);
  await skills.feedback("log-triage", undefined, { passed: true }, "root-1", "model:root-1");
  await skills.feedback("log-triage", undefined, { passed: false, note: "missed a service" }, "root-1", "model:root-1");
  const v3 = (await skills.propose(doc("log-triage", "1. grep the logs\n2. group by service\n3. open an issue\n4. link the dashboard"), person)).version;
  const arm = (label: string, rate: number) => ({ label, successRate: rate, meanSteps: 3, meanScore: rate - 0.1, tasks: [{ id: "ep_1", kind: "recorded" as const, completed: rate > 0.5, steps: 3, score: rate - 0.1, why: "followed the steps" }] });
  const report = await ctx.backend.evolution.addReport({
    skillName: "log-triage",
    versionId: v3.id,
    baselineVersionId: null,
    policyId: null,
    passed: true,
    report: { candidate: arm("candidate", 1), baseline: arm("published v2", 0.5), margin: 0.5, requiredMargin: 0.1, regressions: [], passed: true, reasons: ["beats the baseline by 0.5"], model: "replay", verification: [], source: "template" },
    createdAt: T0,
  });
  const request = await ctx.backend.evolution.addRequest({ id: "srq_1", kind: "publish", skillName: "log-triage", versionId: v3.id, otherSkill: null, policyId: null, reportId: report.id, detail: { seq: 3 }, createdAt: T0 });

  // deploy-check: a bare candidate (no request)
  await skills.propose(doc("deploy-check", "1. run the smoke tests\n2. watch the error rate"), person);

  return { skills, evolution, ids: { tabs: tabs.record.id, ci: ci.record.id, pending: pendingId, v3: v3.id, request: request.id, report: report.id } };
}

/** A built page stand-in: index.html and one hashed asset. */
export function fakeUi(dir: string): string {
  const ui = join(dir, "ui");
  mkdirSync(join(ui, "assets"), { recursive: true });
  writeFileSync(join(ui, "index.html"), '<!doctype html><html><head><script type="module" src="/assets/app-1a2b.js"></script></head><body>review</body></html>');
  writeFileSync(join(ui, "assets", "app-1a2b.js"), "console.log('page');\n");
  writeFileSync(join(dir, "secret.txt"), "outside the ui dir");
  return ui;
}

export type Seeded = Awaited<ReturnType<typeof seed>>;

export async function startSeeded(dir: string, opts: { grpc?: boolean } = {}): Promise<Seeded & { admin: AdminServers; base: string; close(): Promise<void> }> {
  const s = await seed(dir);
  const admin = await startAdmin({
    backend: s.ctx.backend,
    config: s.ctx.config,
    home: dir,
    logger: pino({ level: "silent" }),
    clock: s.ctx.clock,
    memory: s.ctx.service,
    skills: s.skills,
    evolution: s.evolution,
    http: { port: 0, uiDir: fakeUi(dir) },
    grpc: opts.grpc ? { port: 0 } : false,
    pollMs: 100,
  });
  return {
    ...s,
    admin,
    base: admin.http!.url.replace(/\/$/, ""),
    close: async () => {
      await admin.close();
      s.ctx.close();
    },
  };
}

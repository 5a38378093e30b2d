// Domain records → the contract's JSON shapes (admin/api/contract.ts): epoch ms become RFC 3339
// strings, nulls become absent fields, so the result is also valid protobuf JSON for admin.proto.
import type { z } from "zod";
import type { MemoryRecord } from "../../core/memory/record.js";
import type { Skill as DomainSkill, SkillVersion as DomainVersion } from "../../core/skills/version.js";
import type { SkillFile } from "../../core/skills/skill-md.js";
import type { SkillRequest as DomainRequest, StoredEvalReport, StoredPolicy } from "../../stores/traits.js";
import type * as C from "./contract.js";
import type { AuditRow } from "./queries.js";

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The value, or undefined for null (an absent optional field). */
export function opt<T>(v: T | null | undefined): T | undefined {
  return v === null ? undefined : v;
}

/** A store page's total as the wire has it: `totalCapped` only when the count stopped at its cap. */
export function totalJson(page: { total: number; totalCapped: boolean }): { total: number; totalCapped?: true } {
  return page.totalCapped ? { total: page.total, totalCapped: true } : { total: page.total };
}

function optIso(ms: number | null | undefined): string | undefined {
  return ms === null || ms === undefined ? undefined : iso(ms);
}

export function memoryJson(r: MemoryRecord): z.infer<typeof C.Memory> {
  return {
    id: r.id,
    lineageId: r.lineageId,
    scope: {
      level: r.scope.level,
      user: r.scope.user,
      project: opt(r.scope.project),
      session: opt(r.scope.session),
      thread: opt(r.scope.thread),
    },
    kind: r.kind,
    content: r.content,
    tags: r.tags,
    trust: r.trust,
    confidence: r.confidence,
    status: r.status,
    flags: r.flags,
    version: r.version,
    supersedes: opt(r.supersedes),
    validFrom: optIso(r.validFrom),
    validTo: optIso(r.validTo),
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
    expiresAt: optIso(r.expiresAt),
    sources: r.sources.map((s) => ({
      threadId: opt(s.threadId),
      messageIds: s.messageIds,
      toolCallId: opt(s.toolCallId),
      actor: s.actor,
      at: iso(s.at),
    })),
  };
}

export function auditJson(a: Pick<AuditRow, "seq" | "at" | "actor" | "action" | "targetKind" | "targetId" | "detail">): z.infer<typeof C.AuditEntry> {
  return { seq: String(a.seq), at: iso(a.at), actor: a.actor, action: a.action, targetKind: a.targetKind, targetId: a.targetId, detail: a.detail };
}

export function skillJson(s: DomainSkill): z.infer<typeof C.Skill> {
  return { id: s.id, name: s.name, pinned: s.pinned, publishedVersionId: opt(s.publishedVersionId), createdAt: iso(s.createdAt), updatedAt: iso(s.updatedAt) };
}

export function versionJson(v: DomainVersion, content?: { files: SkillFile[] }): z.infer<typeof C.SkillVersion> {
  return {
    id: v.id,
    seq: v.seq,
    contentHash: v.contentHash,
    description: v.description,
    status: v.status,
    author: v.author,
    authorRef: opt(v.authorRef),
    trust: v.trust,
    flags: v.flags,
    allowedTools: v.allowedTools,
    eta: v.eta,
    trials: v.trials,
    passes: v.passes,
    views: v.usage.views,
    uses: v.usage.uses,
    successes: v.usage.successes,
    failures: v.usage.failures,
    parentId: opt(v.parentId),
    createdAt: iso(v.createdAt),
    publishedAt: optIso(v.publishedAt),
    liveOrder: opt(v.liveOrder),
    body: content ? v.body : undefined,
    files: content ? content.files.map((f) => ({ path: f.path, content: f.content })) : [],
  };
}

export function requestJson(r: DomainRequest): z.infer<typeof C.SkillRequest> {
  return {
    id: r.id,
    kind: r.kind,
    skillName: r.skillName,
    versionId: opt(r.versionId),
    otherSkill: opt(r.otherSkill),
    policyId: opt(r.policyId),
    reportId: opt(r.reportId),
    status: r.status,
    detail: r.detail,
    createdAt: iso(r.createdAt),
    decidedAt: optIso(r.decidedAt),
    decidedBy: opt(r.decidedBy),
  };
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : [];
}

function armJson(a: unknown): z.infer<typeof C.EvalArm> {
  const x = (a ?? {}) as Record<string, unknown>;
  const tasks = Array.isArray(x.tasks) ? (x.tasks as Record<string, unknown>[]) : [];
  return {
    label: String(x.label ?? ""),
    successRate: num(x.successRate),
    meanSteps: num(x.meanSteps),
    meanScore: num(x.meanScore),
    tasks: tasks.map((t) => ({
      id: String(t.id ?? ""),
      kind: String(t.kind ?? ""),
      completed: t.completed === true,
      steps: Math.round(num(t.steps)),
      score: num(t.score),
      why: String(t.why ?? ""),
    })),
  };
}

/** Reports are stored JSON; read them defensively so an older report shape still renders. */
export function reportJson(r: StoredEvalReport): z.infer<typeof C.EvalReport> {
  const e = r.report as unknown as Record<string, unknown>;
  return {
    id: r.id,
    skillName: r.skillName,
    versionId: opt(r.versionId),
    baselineVersionId: opt(r.baselineVersionId),
    policyId: opt(r.policyId),
    passed: r.passed,
    createdAt: iso(r.createdAt),
    candidate: armJson(e.candidate),
    baseline: armJson(e.baseline),
    margin: num(e.margin),
    requiredMargin: num(e.requiredMargin),
    regressions: strings(e.regressions),
    reasons: strings(e.reasons),
    model: String(e.model ?? ""),
    verification: strings(e.verification),
    source: typeof e.source === "string" ? e.source : undefined,
  };
}

export function policyJson(p: StoredPolicy): z.infer<typeof C.Policy> {
  return {
    id: p.id,
    signature: p.signature,
    tools: p.tools,
    keyTerms: p.keyTerms,
    support: p.support,
    meanValue: p.meanValue,
    gain: p.gain,
    eligible: p.eligible,
    skillName: opt(p.skillName),
    createdAt: iso(p.createdAt),
    updatedAt: iso(p.updatedAt),
  };
}

// The one implementation of the admin API (contract.ts, admin.proto): every MemoryAdmin and
// SkillAdmin call over the core services, engine-neutral (stores through their traits plus the
// read-only AdminQueries). Both transports (http.ts, grpc.ts) validate the request with the
// contract's zod schema and call a handler here.
import { isAbsolute } from "node:path";
import type { z } from "zod";
import type { Clock } from "../../core/clock.js";
import type { MemoryConfig } from "../../core/config.js";
import { isCoreError } from "../../core/errors.js";
import { EvolutionService } from "../../core/learning/evolution.js";
import type { MemoryRecord } from "../../core/memory/record.js";
import { requestScopeOwning, type RequestScope } from "../../core/memory/scope.js";
import { parseExpiry } from "../../core/memory/write-policy.js";
import type { MemoryService, Origin, Viewer } from "../../core/memory/service.js";
import { diffVersions } from "../../core/skills/diff.js";
import { projectOfKey } from "../../core/skills/scope.js";
import type { SkillService } from "../../core/skills/service.js";
import { etaOf, type Skill as DomainSkill, type SkillVersion as DomainVersion } from "../../core/skills/version.js";
import { parseIsoTime } from "../../core/timestamps.js";
import type { Backend } from "../../stores/backend.js";
import { projectDir } from "../../stores/infinity-files/project-dir.js";
import { StoreError, type SkillRequest as DomainRequest } from "../../stores/traits.js";
import type { Routes } from "./contract.js";
import type * as C from "./contract.js";
import { auditJson, iso, memoryJson, opt, policyJson, totalJson, reportJson, requestJson, skillJson, versionJson } from "./convert.js";
import { ApiError } from "./errors.js";
import type { AdminQueries, ToggleRow } from "./queries.js";
import { thisProcess } from "../../cli/process-ids.js";

type In<T extends z.ZodType> = z.output<T>;
type Out<T extends z.ZodType> = z.input<T>;

/** A handler per call, typed from the contract. */
export type AdminHandlers = {
  [S in keyof Routes]: {
    [M in keyof Routes[S]]: Routes[S][M] extends { request: infer Q extends z.ZodType; response: infer R extends z.ZodType }
      ? (req: In<Q>) => Promise<Out<R>>
      : never;
  };
};

export interface AdminDeps {
  backend: Backend;
  memory: MemoryService;
  skills: SkillService;
  evolution: EvolutionService;
  queries: AdminQueries;
  config: MemoryConfig;
  clock: Clock;
  /** whose memories by default, and the actor name in the audit log */
  localUser: string;
  /** bring the session index up to date before source messages are looked up (serve's conversation sources) */
  refreshMessages?: (() => Promise<unknown>) | undefined;
}

const MESSAGE_LIMIT = 20;
const TRIAL_LIMIT = 1000;

function parseTime(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const t = parseIsoTime(value);
  if (Number.isNaN(t)) throw new ApiError("invalid_argument", `"${field}" must be an RFC 3339 time like "2026-11-30T12:00:00Z"; got "${value}"`, field);
  return t;
}

/**
 * A project is keyed by its real absolute directory, as the command servers key its memories:
 * "/work/app/", a symbolic link to it or a relative path matched none of them, so the view held
 * only the person's user-scope memories, without a word.
 */
function projectOf(value: string): string {
  if (!isAbsolute(value)) throw new ApiError("invalid_argument", `"project" must be the project's absolute directory path (got "${value}")`, "project");
  return projectDir(value);
}

/** `expiresAt` read as the update will read it; the core's message names the tool's field ("expires_at"). */
function checkExpiry(value: string | undefined, now: number): void {
  try {
    parseExpiry(value, now);
  } catch (e) {
    if (isCoreError(e)) throw new ApiError(e.code, e.message.replace(`"expires_at"`, `"expiresAt"`), "expiresAt");
    throw e;
  }
}

/**
 * One entry per day of the period, oldest first, a day without episodes at 0: the page draws them
 * as adjacent bars, so days left out put the 1st next to the 7th and a month looked like a week.
 */
function everyDay(since: number, days: number, counted: { day: string; count: number; meanReward: number | null }[]): z.input<typeof C.LearningStatsResponse>["episodes"]["perDay"] {
  const byDay = new Map(counted.map((p) => [p.day, p]));
  const out = Array.from({ length: days }, (_, i) => new Date(since + i * 86_400_000).toISOString().slice(0, 10)).map((day) => {
    const p = byDay.get(day);
    byDay.delete(day);
    return { day, count: p?.count ?? 0, meanReward: opt(p?.meanReward) };
  });
  // a day past the period's end (another process's clock ahead of this one) is kept, not lost
  for (const p of byDay.values()) out.push({ day: p.day, count: p.count, meanReward: opt(p.meanReward) });
  return out.sort((a, b) => a.day.localeCompare(b.day));
}

function parseCursor(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,15}$/.test(value)) throw new ApiError("invalid_argument", `"cursor" must be the nextCursor of a previous page; got "${value}"`, "cursor");
  return Number(value);
}

/** A list call whose cursor the store could not read: the caller's field, not a conflict. */
async function withCursor<T>(cursor: string | undefined, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (cursor !== undefined && e instanceof StoreError && e.code === "constraint") {
      throw new ApiError("invalid_argument", `"cursor" must be the nextCursor of a previous page of this list; got "${cursor}"`, "cursor");
    }
    throw e;
  }
}

export function createAdminService(d: AdminDeps): AdminHandlers {
  const origin: Origin = { actor: "user", threadId: null, toolCallId: null };
  const actor = `admin:${d.localUser}`;
  const viewerOf = (r: { user?: string | undefined; project?: string | undefined }): Viewer => ({
    owner: r.user ?? d.localUser,
    project: r.project === undefined ? null : projectOf(r.project),
  });

  // Changes to memories run one at a time: a reject or forget lets other work in while its
  // cascade purges the copies (session index, learning tables), and a confirm from a second tab
  // slipped in between its check and its purge: both answered 200, the "confirmed" memory gone.
  let memoryChanges: Promise<unknown> = Promise.resolve();
  const oneAtATime = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = memoryChanges.then(fn, fn);
    memoryChanges = run.catch(() => undefined);
    return run;
  };


  async function messagesOf(recs: MemoryRecord[]): Promise<z.input<typeof C.SourceMessage>[]> {
    if (d.refreshMessages && recs.some((r) => r.sources.some((s) => s.messageIds.length > 0))) {
      // a message the index has not read yet is shown without its text rather than failing the call
      await d.refreshMessages().catch(() => undefined);
    }
    const out: z.input<typeof C.SourceMessage>[] = [];
    const seen = new Set<string>();
    for (const rec of recs) {
      for (const s of rec.sources) {
        if (!s.threadId) continue;
        for (const mid of s.messageIds) {
          const key = `${s.threadId}\u0000${mid}`;
          if (seen.has(key) || out.length >= MESSAGE_LIMIT) continue;
          seen.add(key);
          const hit = await d.backend.sessionIndex.find(null, s.threadId, { messageId: mid }, rec.scope.user);
          out.push({ threadId: s.threadId, messageId: mid, role: opt(hit?.role), text: opt(hit?.text), at: hit ? iso(hit.at) : undefined });
        }
      }
    }
    return out;
  }

  async function episodesOf(ids: string[]): Promise<z.input<typeof C.EpisodeRef>[]> {
    const out: z.input<typeof C.EpisodeRef>[] = [];
    for (const id of ids) {
      for (const e of await d.queries.episodesOfMemory(id)) {
        out.push({ id: e.id, threadId: e.threadId, task: e.task, reward: opt(e.reward), disposition: e.disposition });
      }
    }
    return out;
  }

  async function conflictsOf(viewer: Viewer, ids: string[]): Promise<{ edges: Awaited<ReturnType<Backend["memory"]["edgesOf"]>>; conflicts: MemoryRecord[] }> {
    const edges = [];
    const seen = new Set<string>();
    for (const id of ids) {
      for (const e of await d.backend.memory.edgesOf(id)) {
        const k = `${e.src}\u0000${e.dst}\u0000${e.relation}`;
        if (seen.has(k)) continue;
        seen.add(k);
        edges.push(e);
      }
    }
    const conflicts: MemoryRecord[] = [];
    const mine = new Set(ids);
    for (const e of edges) {
      if (e.relation !== "conflicts_with") continue;
      const other = mine.has(e.src) ? e.dst : e.src;
      try {
        const rec = await d.memory.getVisible(viewer, other);
        if ((rec.status === "active" || rec.status === "pending") && !conflicts.some((c) => c.id === rec.id)) conflicts.push(rec);
      } catch {
        // forgotten or outside this view: the edge stays listed, the record is not shown
      }
    }
    return { edges, conflicts };
  }

  const filterTrust = (recs: MemoryRecord[], trusts: string[] | undefined) =>
    trusts && trusts.length > 0 ? recs.filter((r) => trusts.includes(r.trust)) : recs;

  // ---- skills helpers ----

  async function published(skill: DomainSkill): Promise<DomainVersion | undefined> {
    return skill.publishedVersionId ? ((await d.backend.skills.version(skill.publishedVersionId)) ?? undefined) : undefined;
  }

  async function freshVersion(id: string): Promise<DomainVersion> {
    const v = await d.backend.skills.version(id);
    if (!v) throw new ApiError("not_found", `no skill version "${id}"`);
    return v;
  }

  async function newestReportOf(name: string, versionId: string): Promise<z.input<typeof C.EvalReport> | undefined> {
    const r = (await d.evolution.store.reportsOf(name, 50)).find((x) => x.versionId === versionId);
    return r ? reportJson(r) : undefined;
  }

  async function candidateDiff(v: DomainVersion): Promise<string> {
    const skill = await d.skills.skill(v.name);
    const pub = await published(skill);
    const base = pub && pub.id !== v.id ? await d.skills.content(pub) : null;
    return diffVersions(base, await d.skills.content(v));
  }

  const toggleJson = (t: ToggleRow): z.input<typeof C.Toggle> => ({
    level: t.level as z.input<typeof C.Toggle>["level"],
    // project settings are keyed by the (user, project) pair; show the project path
    key: t.level === "project" ? projectOfKey(t.key) : t.key,
    enabled: t.enabled,
    updatedAt: iso(t.updatedAt),
  });

  function oneOf(req: { requestId?: string | undefined; name?: string | undefined }): void {
    if ((req.requestId === undefined) === (req.name === undefined)) {
      throw new ApiError("invalid_argument", `give exactly one of "requestId" (a skill request) or "name" (a skill, with an optional "version")`, "requestId");
    }
  }

  async function audit(f: { targetKinds?: string[] | undefined; targetId?: string | undefined; actions?: string[] | undefined; actor?: string | undefined; since?: string | undefined; until?: string | undefined; pageSize?: number | undefined; cursor?: string | undefined }) {
    const limit = f.pageSize ?? 100;
    const rows = await d.queries.audit({
      targetKinds: f.targetKinds,
      targetId: f.targetId,
      actions: f.actions,
      actor: f.actor,
      since: parseTime(f.since, "since"),
      until: parseTime(f.until, "until"),
      beforeSeq: parseCursor(f.cursor),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return { entries: page.map(auditJson), nextCursor: rows.length > limit ? String(page.at(-1)!.seq) : undefined };
  }

  const handlers: AdminHandlers = {
    MemoryAdmin: {
      async ListMemories(req) {
        const viewer = viewerOf(req);
        const pageSize = req.pageSize ?? 50;
        const base = { kinds: req.kinds, scopes: req.scopes, statuses: req.statuses, order: req.order ?? "newest" } as const;
        if (!req.trusts || req.trusts.length === 0) {
          const page = await withCursor(req.cursor, () => d.memory.list(viewer, { ...base, limit: pageSize, cursor: req.cursor }));
          return { memories: page.items.map(memoryJson), nextCursor: opt(page.nextCursor), ...totalJson(page) };
        }
        // Trust is not a store filter: walk store pages until enough match (bounded, so a rare
        // trust cannot make one call scan everything; the cursor continues where it stopped).
        const found: MemoryRecord[] = [];
        let cursor = req.cursor;
        for (let i = 0; i < 20 && found.length < pageSize; i++) {
          const page = await withCursor(cursor, () => d.memory.list(viewer, { ...base, limit: pageSize, cursor }));
          found.push(...filterTrust(page.items, req.trusts));
          cursor = page.nextCursor ?? undefined;
          if (!cursor) break;
        }
        return { memories: found.map(memoryJson), nextCursor: cursor };
      },

      async SearchMemories(req) {
        const viewer = viewerOf(req);
        const hits = await d.memory.search(viewer, {
          query: req.query,
          kinds: req.kinds,
          scopes: req.scopes,
          includeHistory: req.includeHistory,
          includePending: req.includePending,
          limit: req.trusts?.length ? 100 : (req.limit ?? 20),
        });
        const kept = req.trusts?.length ? hits.filter((h) => req.trusts!.includes(h.record.trust)).slice(0, req.limit ?? 20) : hits;
        return { hits: kept.map((h) => ({ memory: memoryJson(h.record), score: h.score, channel: h.channel })) };
      },

      async GetMemory(req) {
        const viewer = viewerOf(req);
        const rec = await d.memory.getVisible(viewer, req.id);
        const { versions, audit: trail } = await d.memory.history(viewer, req.id);
        const ids = versions.map((v) => v.id);
        const { edges, conflicts } = await conflictsOf(viewer, ids);
        return {
          memory: memoryJson(rec),
          versions: versions.map(memoryJson),
          audit: trail.map((a) => auditJson({ ...a, seq: a.seq })),
          edges: edges.map((e) => ({ src: e.src, dst: e.dst, relation: e.relation, at: iso(e.at) })),
          conflicts: conflicts.map(memoryJson),
          messages: await messagesOf(versions),
          episodes: await episodesOf(ids),
        };
      },

      async UpdateMemory(req) {
        checkExpiry(req.expiresAt, d.clock.now());
        return oneAtATime(async () => {
          const current = await d.memory.getVisible(viewerOf(req), req.id);
          const r = await d.memory.update(
            requestScopeOwning(current.scope),
            { id: req.id, content: req.content, kind: req.kind, tags: req.tags, confidence: req.confidence, expiresAt: req.expiresAt, userStated: true },
            origin,
          );
          return { memory: memoryJson(r.record), previousId: current.id, notes: r.notes };
        });
      },

      async ForgetMemory(req) {
        return oneAtATime(async () => ({ purgedIds: await d.memory.forget(viewerOf(req), req.ids, origin, req.reason ?? "forgotten in the review page") }));
      },

      async ListPending(req) {
        const viewer = viewerOf(req);
        const page = await withCursor(req.cursor, () => d.memory.list(viewer, { statuses: ["pending"], limit: req.pageSize ?? 50, cursor: req.cursor, order: "oldest" }));
        const items = [];
        for (const rec of page.items) {
          const { conflicts } = await conflictsOf(viewer, [rec.id]);
          items.push({ memory: memoryJson(rec), messages: await messagesOf([rec]), episodes: await episodesOf([rec.id]), conflicts: conflicts.map(memoryJson) });
        }
        return { items, nextCursor: opt(page.nextCursor), ...totalJson(page) };
      },

      async ConfirmPending(req) {
        return oneAtATime(async () => ({ memories: (await d.memory.confirm(viewerOf(req), req.ids, origin)).map(memoryJson) }));
      },

      async RejectPending(req) {
        return oneAtATime(async () => ({ purgedIds: await d.memory.reject(viewerOf(req), req.ids, origin) }));
      },

      async QueryAudit(req) {
        return audit(req);
      },

      async LearningStats(req) {
        const now = d.clock.now();
        const days = req.days ?? 30;
        const since = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate()) - (days - 1) * 86_400_000;
        const agg = await d.queries.learning(since, 50);
        const edge = (i: number) => Math.round((-1 + i * 0.2) * 10) / 10;
        const bins = Array.from({ length: 10 }, (_, i) => ({ lo: edge(i), hi: edge(i + 1), count: 0 }));
        // by the edges themselves: floor((r + 1) / 0.2) put −0.8, −0.4, 0.2 and 0.4 one bin low
        for (const r of agg.rewards) bins[Math.max(0, bins.filter((b) => r >= b.lo).length - 1)]!.count++;
        const mean = agg.rewards.length > 0 ? agg.rewards.reduce((a, b) => a + b, 0) / agg.rewards.length : undefined;
        const v = agg.versionsByStatus;
        return {
          episodes: { ...agg.episodes, perDay: everyDay(since, days, agg.perDay) },
          rewards: { count: agg.rewards.length, mean, bins },
          signals: agg.signals,
          policies: (await d.evolution.store.policies()).map(policyJson),
          funnel: {
            proposed: agg.agentVersions,
            evaluated: agg.reports.total,
            passedGate: agg.reports.passed,
            pendingRequests: agg.requestsByStatus.pending ?? 0,
            approved: agg.requestsByStatus.approved ?? 0,
            rejected: v.rejected ?? 0,
            probationary: v.probationary ?? 0,
            active: v.active ?? 0,
            retired: v.retired ?? 0,
          },
          memoryCandidates: agg.memoryCandidates,
          queueDepth: await d.backend.learning.queueDepth(),
          recentEvents: agg.events.map((e) => ({ id: String(e.id), at: iso(e.at), kind: e.kind, threadId: opt(e.threadId), episodeId: opt(e.episodeId), detail: e.detail })),
        };
      },
    },

    SkillAdmin: {
      async ListSkills() {
        const pending = await d.evolution.requests("pending");
        const rows = await d.skills.list();
        return {
          skills: rows.map((r) => ({
            skill: skillJson(r.skill),
            published: r.published ? versionJson(r.published) : undefined,
            candidates: r.candidates,
            pendingRequests: pending.filter((p) => p.skillName === r.skill.name || p.otherSkill === r.skill.name).length,
          })),
        };
      },

      async GetSkill(req) {
        const { skill, versions } = await d.skills.history(req.name);
        const selected =
          req.version !== undefined ? await d.skills.version(skill, req.version) : ((await published(skill)) ?? versions.at(-1));
        if (!selected) throw new ApiError("not_found", `"${req.name}" has no versions`);
        const files = await d.skills.files(selected);
        const trials = await d.queries.trialsOf(skill.id, TRIAL_LIMIT);
        // η after each trial under the Beta prior, plus every explicit η write (drift, thumbs)
        const etaPoints: { at: number; versionId: string; eta: number; cause: string }[] = [];
        const tally = new Map<string, { p: number; t: number }>();
        for (const t of trials) {
          const c = tally.get(t.versionId) ?? { p: 0, t: 0 };
          c.t++;
          if (t.passed) c.p++;
          tally.set(t.versionId, c);
          etaPoints.push({ at: t.at, versionId: t.versionId, eta: etaOf(c.p, c.t, d.config.skills), cause: t.passed ? "trial_pass" : "trial_fail" });
        }
        for (const a of await d.queries.audit({ targetKinds: ["skill"], targetId: skill.name, actions: ["eta"], limit: 1000 })) {
          const to = a.detail.to;
          const version = a.detail.version;
          if (typeof to === "number" && typeof version === "string") etaPoints.push({ at: a.at, versionId: version, eta: to, cause: String(a.detail.cause ?? "eta") });
        }
        etaPoints.sort((a, b) => a.at - b.at);
        const requests = (await d.evolution.store.requests({ limit: 1000 })).filter((r) => r.skillName === skill.name || r.otherSkill === skill.name);
        const trail = await d.skills.auditOf(skill.name, 200);
        return {
          skill: skillJson(skill),
          versions: versions.map((v) => versionJson(v)),
          selected: versionJson(selected, { files }),
          grants: (await d.backend.skills.grantsOf(skill.id)).map((g) => ({ tool: g.tool, grantedBy: g.grantedBy, at: iso(g.at) })),
          toggles: (await d.queries.togglesOf(skill.id)).map(toggleJson),
          trials: trials.map((t) => ({ id: String(t.id), versionId: t.versionId, seq: t.seq, passed: t.passed, note: opt(t.note), threadId: opt(t.threadId), at: iso(t.at) })),
          etaHistory: etaPoints.map((p) => ({ ...p, at: iso(p.at) })),
          reports: (await d.evolution.store.reportsOf(skill.name, 50)).map(reportJson),
          requests: requests.map(requestJson),
          policies: (await d.evolution.store.policiesOfSkill(skill.name)).map(policyJson),
          audit: trail.map((a) => auditJson(a)),
        };
      },

      async DiffVersions(req) {
        const skill = await d.skills.skill(req.name);
        const from = await d.skills.version(skill, req.from);
        const to = await d.skills.version(skill, req.to);
        return { diff: await d.skills.diff(skill.name, from.id, to.id), fromSeq: from.seq, toSeq: to.seq };
      },

      async ListCandidates(req) {
        const status = req.status ?? "pending";
        const limit = req.limit ?? 100;
        const requests = await d.evolution.store.requests({ ...(status === "all" ? {} : { status }), limit });
        const items: z.input<typeof C.CandidateItem>[] = [];
        const covered = new Set<string>();
        for (const r of requests) {
          // a retire request names the version it found stale; only a publish request has a candidate to show
          const version = r.kind === "publish" && r.versionId ? ((await d.backend.skills.version(r.versionId)) ?? undefined) : undefined;
          if (version && r.status === "pending") covered.add(version.id);
          const stored = r.reportId !== null ? await d.evolution.report(r.reportId) : null;
          items.push({
            request: requestJson(r),
            skillName: r.skillName,
            version: version ? versionJson(version) : undefined,
            report: stored ? reportJson(stored) : version ? await newestReportOf(r.skillName, version.id) : undefined,
            diff: version ? await candidateDiff(version) : undefined,
          });
        }
        if (status === "pending" || status === "all") {
          // candidate versions nobody filed a request for (skill_propose, imports)
          for (const row of await d.skills.list()) {
            if (row.candidates === 0 || items.length >= limit) continue;
            for (const v of (await d.skills.history(row.skill.name)).versions) {
              if (v.status !== "candidate" || covered.has(v.id) || items.length >= limit) continue;
              items.push({ skillName: v.name, version: versionJson(v), report: await newestReportOf(v.name, v.id), diff: await candidateDiff(v) });
            }
          }
        }
        return { items };
      },

      async ApproveCandidate(req) {
        oneOf(req);
        let request: DomainRequest | undefined;
        if (req.requestId !== undefined) {
          request = await d.evolution.approve(req.requestId, actor);
        } else {
          // through the request the learning loop filed for it, if any (EvolutionService.approveVersion)
          request = (await d.evolution.approveVersion(req.name!, req.version, actor)).request ?? undefined;
        }
        const name = request?.skillName ?? req.name!;
        const skill = await d.skills.findSkill(name);
        const pub = skill ? await published(skill) : undefined;
        return { request: request ? requestJson(request) : undefined, skillName: name, published: pub ? versionJson(pub) : undefined };
      },

      async RejectCandidate(req) {
        oneOf(req);
        if (req.requestId !== undefined) {
          const before = await d.evolution.store.request(req.requestId);
          const request = await d.evolution.reject(req.requestId, actor, req.reason);
          const rejected = before?.versionId ? await freshVersion(before.versionId) : undefined;
          return { request: requestJson(request), skillName: request.skillName, rejected: rejected ? versionJson(rejected) : undefined };
        }
        const skill = await d.skills.skill(req.name!);
        const target =
          req.version !== undefined
            ? await d.skills.version(skill, req.version)
            : (await d.skills.history(skill.name)).versions.filter((v) => v.status === "candidate").at(-1);
        if (!target) throw new ApiError("not_found", `"${req.name}" has no candidate to reject`);
        const filed = await d.evolution.filedRequestFor(target.id);
        if (filed) {
          const request = await d.evolution.reject(filed.id, actor, req.reason);
          return { request: requestJson(request), skillName: skill.name, rejected: versionJson(await freshVersion(target.id)) };
        }
        const v = await d.skills.reject(skill.name, target.id, actor, req.reason);
        return { skillName: skill.name, rejected: versionJson(await freshVersion(v.id)) };
      },

      async RollbackSkill(req) {
        const move = await d.skills.prepareRollback(req.name, req.to);
        await d.skills.rollback(move, actor);
        return { published: versionJson(await freshVersion(move.to.id)), previous: versionJson(await freshVersion(move.from!.id)) };
      },

      async PinSkill(req) {
        await d.skills.setPinned(req.name, true, actor);
        return { skill: skillJson(await d.skills.skill(req.name)) };
      },

      async UnpinSkill(req) {
        await d.skills.setPinned(req.name, false, actor);
        return { skill: skillJson(await d.skills.skill(req.name)) };
      },

      async EnableSkill(req) {
        return setEnabled(req, true);
      },

      async DisableSkill(req) {
        return setEnabled(req, false);
      },

      async QuerySkillAudit(req) {
        return audit({ ...req, targetKinds: ["skill"], targetId: req.name });
      },
    },
  };

  async function setEnabled(req: In<typeof C.EnableSkillRequest>, value: boolean): Promise<Out<typeof C.EnableSkillResponse>> {
    if (req.level !== "user" && req.key === undefined) {
      const what = req.level === "project" ? "the project directory" : `the ${req.level} id`;
      throw new ApiError("invalid_argument", `"key" is required for level "${req.level}": give ${what}`, "key");
    }
    // a project is keyed by its real absolute directory, as the command servers and the CLI key it:
    // a relative path would make a setting no session ever matches
    if (req.level === "project" && !isAbsolute(req.key!)) {
      throw new ApiError("invalid_argument", `"key" for level "project" must be the project's absolute directory path (got "${req.key}")`, "key");
    }
    const key = req.level === "project" ? projectDir(req.key!) : (req.key ?? d.localUser);
    const scope: RequestScope = {
      user: req.level === "user" ? key : d.localUser,
      project: req.level === "project" ? key : null,
      session: key,
      thread: key,
      ancestors: [],
    };
    await d.skills.setEnabled(req.name, scope, req.level, req.clear ? null : value, actor);
    const skill = await d.skills.skill(req.name);
    return { toggles: (await d.queries.togglesOf(skill.id)).map(toggleJson) };
  }

  return handlers;
}

/** Services from a backend, for callers that have not built them (tests, a bare `serve --ui`). */
export function evolutionOver(backend: Backend, skills: SkillService, config: MemoryConfig, clock: Clock): EvolutionService {
  return new EvolutionService({ store: backend.evolution, learning: backend.learning, skills, config, clock, llm: null, processes: thisProcess });
}


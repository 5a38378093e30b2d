// A forget reaches the skills the learning loop built from the conversation. A candidate's "When
// to use" quotes its episodes' tasks, its steps their argument shapes, its pitfalls their failing
// results; its publish request keeps the diff, its policy the tasks themselves. So after the
// memory, its episodes and its trace events were gone (forget.ts), the skill side still held the
// text. What the agent wrote from it is withdrawn: a candidate is rejected, a published version
// gives way to the live one before it (or the skill is retired when there is none), and the
// version's texts become a marker; requests, reports, golden tasks, trial notes and policies lose
// what quoted it. A version a person wrote or imported is their own text: never changed by a
// memory forget. Runs after forget.ts's step (episodes blanked, so a recompute of the policies no
// longer reads them) and finds the episodes it blanked for a memory's sources again.
import type { Clock } from "../clock.js";
import type { ForgetHook } from "../memory/service.js";
import { copyMatcher, foldForMatch, type CopyMatcher } from "../sessions/forget-needles.js";
import { LIVE_STATUSES, type SkillVersion } from "../skills/version.js";
import {
  StoreError,
  type EvolutionStore,
  type EvolutionWithholding,
  type LearningStore,
  type MessageRef,
  type RootContextStore,
  type SkillAuditEntry,
  type SkillStore,
  type StoredPolicy,
} from "../../stores/traits.js";
import { taskTerms } from "./policy.js";
import { taskQuote } from "./skill-draft.js";

/** What a withdrawn version, a request's diff or a report says instead of the text. */
export const WITHHELD_SKILL_TEXT = "(withheld: built from a forgotten memory)";
/** the actor of a withdrawal's audit rows and the decider of the requests it closes */
export const FORGET_ACTOR = "forget";

/** pointer moves tried when another process moves the same skill's pointer meanwhile */
const MOVE_ATTEMPTS = 3;

/** rows of the evolution tables written per transaction */
const WRITE_BATCH = 100;

/** the longest the exact check of the stores' candidates runs before it lets other work in */
const SLICE_MS = 10;

/**
 * The items, with other work let in every SLICE_MS: a common word as a probe brings back every
 * row of a big catalog (diffs of whole versions among them), and folding each for the exact check
 * held the event loop for seconds.
 */
async function* sliced<T>(items: Iterable<T>): AsyncGenerator<T> {
  let start = performance.now();
  for (const item of items) {
    if (performance.now() - start > SLICE_MS) {
      await new Promise<void>((r) => setImmediate(r));
      start = performance.now();
    }
    yield item;
  }
}

export interface SkillForgetDeps {
  skills: Pick<
    SkillStore,
    "agentVersionsMentioning" | "withdrawVersion" | "version" | "versionsOf" | "skillById" | "movePointer" | "setStatus" | "trialNotesMentioning" | "clearTrialNotes"
  >;
  evolution: Pick<EvolutionStore, "mentioning" | "withhold" | "policy" | "policies" | "requests">;
  learning: Pick<LearningStore, "episode" | "episodesOfMessages" | "event">;
  /** whose session a root thread is; null when no store says */
  userOfRoot(rootThreadId: string): Promise<string | null>;
  now(): number;
}

export interface SkillForgetResult {
  /** versions withdrawn */
  versions: string[];
  /** skills whose publication went back to an earlier version, and skills retired */
  rolledBack: string[];
  retired: string[];
  requests: string[];
  reports: number[];
  goldenTasks: number[];
  policies: string[];
  trials: number[];
}

/** where each WRITE_BATCH of `n` items begins */
function batchStarts(n: number): number[] {
  return Array.from({ length: Math.ceil(n / WRITE_BATCH) }, (_, i) => i * WRITE_BATCH);
}

/** Every string of a JSON value that holds a copy, as the marker. */
function scrub(v: unknown, m: CopyMatcher): unknown {
  if (typeof v === "string") return m.holds(v) ? WITHHELD_SKILL_TEXT : v;
  if (Array.isArray(v)) return v.map((x) => scrub(x, m));
  if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrub(x, m)]));
  return v;
}

function holdsAnywhere(v: unknown, m: CopyMatcher): boolean {
  if (typeof v === "string") return m.holds(v);
  if (Array.isArray(v)) return v.some((x) => holdsAnywhere(x, m));
  if (v !== null && typeof v === "object") return Object.values(v).some((x) => holdsAnywhere(x, m));
  return false;
}

/** A withdrawn version's texts: the marker, and of the frontmatter its name and tools only. */
export function withheldVersion(v: Pick<SkillVersion, "name" | "allowedTools">): { description: string; body: string; frontmatter: Record<string, unknown> } {
  return {
    description: WITHHELD_SKILL_TEXT,
    body: `${WITHHELD_SKILL_TEXT}\n`,
    frontmatter: { name: v.name, description: WITHHELD_SKILL_TEXT, "allowed-tools": v.allowedTools },
  };
}

/**
 * Withdraw what the agent derived from `user`'s forgotten texts (memory contents and ids) and
 * from the episodes built from the messages the memories were made from (`madeFrom`).
 *
 * Whose: these tables name no user. As in forget.ts, an artifact is left alone only when it is
 * known to come from another user's sessions: a policy's task or pitfall by its episode's
 * session, a version by its policy's supporting episodes (all in other users' sessions) or by
 * the thread that proposed it, a request or report by its policy, a trial note by its thread.
 * Whatever nobody claims (golden tasks, key terms) counts as this user's.
 */
export async function forgetInSkills(d: SkillForgetDeps, user: string, texts: string[], madeFrom: MessageRef[] = []): Promise<SkillForgetResult> {
  const out: SkillForgetResult = { versions: [], rolledBack: [], retired: [], requests: [], reports: [], goldenTasks: [], policies: [], trials: [] };
  const owners = new Map<string, string | null>();
  const theirs = async (root: string | null) => {
    if (!root) return true;
    if (!owners.has(root)) owners.set(root, await d.userOfRoot(root));
    const owner = owners.get(root);
    return owner === null || owner === user;
  };
  const roots = new Map<string, string | null>();
  const rootOf = async (episodeId: string) => {
    if (!roots.has(episodeId)) roots.set(episodeId, (await d.learning.episode(episodeId))?.rootThreadId || null);
    return roots.get(episodeId)!;
  };
  const episodeTheirs = async (episodeId: string | null | undefined) => (episodeId ? theirs(await rootOf(episodeId)) : true);

  // The episodes made from the memories' messages (forget.ts blanked them already): the policies
  // still hold their tasks, which are the forgotten text as the person said it.
  const made = new Set<string>();
  for (const e of madeFrom.length > 0 ? await d.learning.episodesOfMessages(madeFrom, { withForgotten: true }) : []) {
    if (await theirs(e.rootThreadId || null)) made.add(e.id);
  }
  const madePolicies = made.size > 0 ? (await d.evolution.policies()).filter((p) => p.episodeIds.some((e) => made.has(e))) : [];
  const madeTasks = madePolicies.flatMap((p) => p.tasks.filter((_, i) => made.has(p.episodeIds[i] ?? "")));
  const needles = [...texts, ...madeTasks.filter((t) => foldForMatch(t).length > 0)];
  let m = copyMatcher(needles);
  if (!m) return out;
  let found = await d.evolution.mentioning(m.probes);
  // A draft quotes a task's first characters: one that cuts a copy short holds part of it, which
  // the needles miss. Such a quote is looked for too.
  const cut = new Set<string>();
  for await (const p of sliced([...found.policies, ...madePolicies])) {
    for (const t of p.tasks) {
      const q = taskQuote(t);
      const at = m.find(t);
      if (at >= 0 && at < foldForMatch(q).length && !m.holds(q)) cut.add(q);
    }
  }
  if (cut.size > 0) {
    m = copyMatcher([...needles, ...cut])!;
    found = await d.evolution.mentioning(m.probes);
  }
  const matcher = m;

  // Policies: the tasks and pitfalls that quoted it go, and the key terms only they gave.
  const changed: EvolutionWithholding["policies"] = [];
  const policies = new Map<string, StoredPolicy>();
  for (const p of [...found.policies, ...madePolicies]) policies.set(p.id, p);
  const forgottenTerms = new Set([...texts, ...madeTasks].flatMap((t) => taskTerms(t)));
  for await (const p of sliced(policies.values())) {
    const kept: { task: string; episodeId: string | undefined }[] = [];
    let removed = false;
    for (const [i, task] of p.tasks.entries()) {
      const e = p.episodeIds[i];
      if ((matcher.holds(task) || (e !== undefined && made.has(e))) && (await episodeTheirs(e))) removed = true;
      else kept.push({ task, episodeId: e });
    }
    const pitfalls: StoredPolicy["pitfalls"] = [];
    for (const f of p.pitfalls) {
      if ((matcher.holds(f.text) || made.has(f.episodeId)) && (await episodeTheirs(f.episodeId))) removed = true;
      else pitfalls.push(f);
    }
    const steps = p.steps.map((s) => (matcher.holds(s.argsShape) ? { ...s, argsShape: "{}" } : s));
    const keptTerms = new Set(kept.flatMap((k) => taskTerms(k.task)));
    const keyTerms = p.keyTerms.filter((k) => !matcher.holds(k) && !(removed && forgottenTerms.has(k) && !keptTerms.has(k)));
    if (!removed && keyTerms.length === p.keyTerms.length && steps.every((s, i) => s === p.steps[i])) continue;
    const removedIds = new Set(p.episodeIds.slice(0, p.tasks.length).filter((e) => !kept.some((k) => k.episodeId === e)));
    changed.push({ id: p.id, keyTerms, tasks: kept.map((k) => k.task), episodeIds: p.episodeIds.filter((e) => !removedIds.has(e)), pitfalls, steps });
  }
  const policyTheirs = async (policyId: string | null): Promise<boolean> => {
    if (!policyId) return true;
    const p = policies.get(policyId) ?? (await d.evolution.policy(policyId));
    if (!p || p.episodeIds.length === 0) return true;
    for (const e of p.episodeIds) if (await episodeTheirs(e)) return true;
    return false;
  };

  // Versions the agent wrote that hold it.
  const withdraw: SkillVersion[] = [];
  for await (const hit of sliced(await d.skills.agentVersionsMentioning(matcher.probes))) {
    if (!hit.texts.some((t) => matcher.holds(t))) continue;
    const ref = hit.version.authorRef ?? "";
    const mine = ref.startsWith("policy:") ? await policyTheirs(ref.slice("policy:".length)) : ref.startsWith("thread ") ? await theirs(ref.slice("thread ".length)) : true;
    if (mine) withdraw.push(hit.version);
  }
  const withdrawn = new Set(withdraw.map((v) => v.id));
  const audit = (action: SkillAuditEntry["action"], name: string, detail: Record<string, unknown>): SkillAuditEntry => ({
    at: d.now(),
    actor: FORGET_ACTOR,
    action,
    targetKind: "skill",
    targetId: name,
    detail: { ...detail, cause: "forget" },
  });
  const bySkillId = new Map<string, SkillVersion[]>();
  for (const v of withdraw) bySkillId.set(v.skillId, bySkillId.get(v.skillId) ?? []).get(v.skillId)!.push(v);
  // (SQLite answers at once: without the slices, thousands of writes would hold the event loop too)
  for await (const [skillId, versions] of sliced(bySkillId)) {
    await takeDown(d, skillId, withdrawn, audit, out);
    for (const v of versions) {
      // read again: the step before may have retired it
      const now = (await d.skills.version(v.id)) ?? v;
      if (await d.skills.withdrawVersion(v.id, withheldVersion(v), audit("withdraw", v.name, { version: v.id, seq: v.seq, from: now.status }))) out.versions.push(v.id);
    }
  }

  // Requests: closed when they ask about a withdrawn version, their detail without the text.
  const requests: EvolutionWithholding["requests"] = [];
  const seen = new Set<string>();
  const pendingOfWithdrawn = withdrawn.size > 0 ? (await d.evolution.requests({ status: "pending", limit: 1000 })).filter((r) => r.versionId !== null && withdrawn.has(r.versionId)) : [];
  for await (const r of sliced([...pendingOfWithdrawn, ...found.requests])) {
    if (seen.has(r.id)) continue;
    seen.add(r.id);
    const ofWithdrawn = r.versionId !== null && withdrawn.has(r.versionId);
    if (!ofWithdrawn && !(holdsAnywhere(r.detail, matcher) && (await policyTheirs(r.policyId)))) continue;
    const detail = scrub(r.detail, matcher) as Record<string, unknown>;
    // the diff shows the rest of a withdrawn version too
    if (ofWithdrawn && typeof detail.diff === "string") detail.diff = WITHHELD_SKILL_TEXT;
    requests.push({ id: r.id, detail, close: ofWithdrawn && r.status === "pending" });
  }
  const reports: EvolutionWithholding["reports"] = [];
  for await (const r of sliced(found.reports)) {
    if (holdsAnywhere(r.report, matcher) && (await policyTheirs(r.policyId))) reports.push({ id: r.id, report: scrub(r.report, matcher) as typeof r.report });
  }
  const golden: typeof found.goldenTasks = [];
  for await (const g of sliced(found.goldenTasks)) if (matcher.holds(g.task)) golden.push(g);

  // Written a few rows at a time, a transaction each with its audit rows (one per skill, naming
  // what changed, nothing of the text), so a big catalog does not hold the write lock for long;
  // what a stop leaves unwritten is found again when the forget runs again. A policy built into no
  // skill is recorded as a learning event.
  type Unit =
    | { kind: "policies"; skill: string | null; item: EvolutionWithholding["policies"][number] }
    | { kind: "requests"; skill: string; item: EvolutionWithholding["requests"][number] }
    | { kind: "reports"; skill: string; item: EvolutionWithholding["reports"][number] }
    | { kind: "goldenTasks"; skill: string; item: number };
  const requestSkill = new Map([...found.requests, ...pendingOfWithdrawn].map((r) => [r.id, r.skillName]));
  const reportSkill = new Map(found.reports.map((r) => [r.id, r.skillName]));
  const units: Unit[] = [
    ...changed.map((item): Unit => ({ kind: "policies", skill: policies.get(item.id)!.skillName, item })),
    ...requests.map((item): Unit => ({ kind: "requests", skill: requestSkill.get(item.id)!, item })),
    ...reports.map((item): Unit => ({ kind: "reports", skill: reportSkill.get(item.id)!, item })),
    ...golden.map((g): Unit => ({ kind: "goldenTasks", skill: g.skillName, item: g.id })),
  ];
  for await (const i of sliced(batchStarts(units.length))) {
    const w: EvolutionWithholding = { policies: [], requests: [], reports: [], goldenTaskIds: [] };
    const bySkill = new Map<string, Record<Unit["kind"], (string | number)[]>>();
    for (const u of units.slice(i, i + WRITE_BATCH)) {
      if (u.kind === "policies") w.policies.push(u.item);
      else if (u.kind === "requests") w.requests.push(u.item);
      else if (u.kind === "reports") w.reports.push(u.item);
      else w.goldenTaskIds.push(u.item);
      if (u.skill === null) continue;
      const ids = bySkill.get(u.skill) ?? bySkill.set(u.skill, { policies: [], requests: [], reports: [], goldenTasks: [] }).get(u.skill)!;
      ids[u.kind].push(u.kind === "goldenTasks" ? u.item : u.item.id);
    }
    await d.evolution.withhold(w, d.now(), [...bySkill].map(([name, ids]) => audit("withdraw", name, ids)));
  }
  const unbuilt = changed.filter((p) => !policies.get(p.id)!.skillName).map((p) => p.id);
  if (unbuilt.length > 0) await d.learning.event("forget", null, null, { policies: unbuilt }, d.now());
  out.requests = requests.map((r) => r.id);
  out.reports = reports.map((r) => r.id);
  out.goldenTasks = golden.map((g) => g.id);
  out.policies = changed.map((p) => p.id);

  // Notes of trials (skill_feedback), by the thread they were reported in.
  const notes: number[] = [];
  for await (const t of sliced(await d.skills.trialNotesMentioning(matcher.probes))) {
    if (matcher.holds(t.note) && (await theirs(t.threadId))) notes.push(t.id);
  }
  for await (const i of sliced(batchStarts(notes.length))) await d.skills.clearTrialNotes(notes.slice(i, i + WRITE_BATCH));
  out.trials = notes;
  return out;
}

/**
 * A skill whose published version is being withdrawn: publication goes back to the live version
 * before it that is not withdrawn (a rollback, as a person's), else the skill is retired. A pin
 * does not hold it: the person asked to forget. Another process moving the pointer meanwhile is
 * looked at again.
 */
async function takeDown(
  d: SkillForgetDeps,
  skillId: string,
  withdrawn: Set<string>,
  audit: (action: SkillAuditEntry["action"], name: string, detail: Record<string, unknown>) => SkillAuditEntry,
  out: SkillForgetResult,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const skill = await d.skills.skillById(skillId);
    if (!skill?.publishedVersionId || !withdrawn.has(skill.publishedVersionId)) return;
    const versions = await d.skills.versionsOf(skillId);
    const current = versions.find((v) => v.id === skill.publishedVersionId);
    if (!current || !LIVE_STATUSES.includes(current.status)) return;
    const below = current.liveOrder ?? Infinity;
    const target = versions
      .filter((v) => v.liveOrder !== null && v.liveOrder < below && v.flags.length === 0 && v.status !== "rejected" && !withdrawn.has(v.id))
      .sort((a, b) => (b.liveOrder ?? 0) - (a.liveOrder ?? 0))[0];
    try {
      if (target) {
        await d.skills.movePointer(
          skillId,
          { expectedFrom: current.id, to: target.id, toStatus: "active", fromStatus: "retired", kind: "rollback" },
          audit("rollback", skill.name, { from: current.id, to: target.id, seq: target.seq }),
        );
        out.rolledBack.push(skill.name);
      } else {
        await d.skills.setStatus(current.id, "retired", audit("retire", skill.name, { version: current.id, seq: current.seq, from: current.status, reason: "built from a forgotten memory" }));
        out.retired.push(skill.name);
      }
      return;
    } catch (e) {
      if (!(attempt < MOVE_ATTEMPTS && e instanceof StoreError && e.code === "constraint")) throw e;
    }
  }
}

/** The forget cascade's step into the skills the learning loop built (MemoryService.onForget; after experienceForgetHook). */
export function skillForgetHook(
  stores: { skills: SkillStore; evolution: EvolutionStore; learning: LearningStore; roots: RootContextStore },
  clock: Clock,
): ForgetHook {
  const d: SkillForgetDeps = {
    skills: stores.skills,
    evolution: stores.evolution,
    learning: stores.learning,
    userOfRoot: async (root) => (await stores.roots.get(root))?.userId ?? null,
    now: () => clock.now(),
  };
  return { beforeForget: async (user, contents, madeFrom) => void (await forgetInSkills(d, user, contents, madeFrom)) };
}

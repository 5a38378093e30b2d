// The evaluation gate's built-in replay model (no LLM needed): it follows a skill's numbered
// steps against recorded tool outcomes and scores task completion, for the candidate and for
// the baseline (the published version, or no skill: the recorded trajectory as it happened).
//   task score = completed ? 1 : 0  −  stepCost · steps
//   pass  ⇔  mean(candidate) − mean(baseline) ≥ margin  and no golden task regresses
// Outcomes of a tool on a recorded task: a successful task's own record when it called the tool, else
// the evidence's (most common outcome across the policy's episodes), else unknown = an error.
import type { MemoryConfig } from "../config.js";
import type { ScoredStep } from "./types.js";

type EvalConfig = MemoryConfig["evolution"]["eval"];

export interface ToolOutcome {
  ok: boolean;
  verdict: "pass" | "fail" | null;
}

export interface ReplayTask {
  id: string;
  kind: "recorded" | "golden";
  task: string;
  /** recorded: what happened, in order (the no-skill baseline replays this as it was) */
  steps: Pick<ScoredStep, "tool" | "outcome" | "verdict">[];
  /** recorded: the episode's reward was positive */
  recordedSuccess: boolean;
  /** golden: tools that must be called in this order for the task to count as done */
  requiredTools: string[];
}

export interface TaskResult {
  id: string;
  kind: ReplayTask["kind"];
  completed: boolean;
  steps: number;
  score: number;
  why: string;
}

export interface ArmResult {
  label: string;
  successRate: number;
  meanSteps: number;
  meanScore: number;
  tasks: TaskResult[];
}

export interface EvalReport {
  candidate: ArmResult;
  baseline: ArmResult;
  margin: number;
  requiredMargin: number;
  regressions: string[];
  passed: boolean;
  reasons: string[];
  model: string;
}

/** Outcome table of the evidence: per tool, the most common (ok, verdict) across recorded steps. */
export function outcomeTable(records: readonly Pick<ScoredStep, "tool" | "outcome" | "verdict">[][]): Map<string, ToolOutcome> {
  const counts = new Map<string, Map<string, number>>();
  for (const steps of records) {
    for (const s of steps) {
      if (s.outcome === "pending") continue;
      const key = `${s.outcome === "ok" ? 1 : 0}:${s.verdict ?? ""}`;
      const m = counts.get(s.tool) ?? new Map<string, number>();
      m.set(key, (m.get(key) ?? 0) + 1);
      counts.set(s.tool, m);
    }
  }
  const out = new Map<string, ToolOutcome>();
  for (const [tool, m] of counts) {
    const best = [...m.entries()].sort((a, b) => b[1] - a[1] || b[0].localeCompare(a[0]))[0]![0];
    const [ok, verdict] = best.split(":");
    out.set(tool, { ok: ok === "1", verdict: verdict === "pass" || verdict === "fail" ? verdict : null });
  }
  return out;
}

function isSubsequence(need: readonly string[], seq: readonly string[]): boolean {
  let i = 0;
  for (const t of seq) if (i < need.length && t === need[i]) i++;
  return i === need.length;
}

/** a task's own outcome for a tool: its last ok call if it had one, else its last call */
function ownOutcome(task: ReplayTask, tool: string): ToolOutcome | null {
  const calls = task.steps.filter((s) => s.tool === tool && s.outcome !== "pending");
  if (calls.length === 0) return null;
  const s = [...calls].reverse().find((c) => c.outcome === "ok") ?? calls.at(-1)!;
  return { ok: s.outcome === "ok", verdict: s.verdict };
}

export interface ReplayContext {
  /** the evidence's outcome table */
  table: Map<string, ToolOutcome>;
  /** tools every successful recorded task of the set called (a step all successes share is needed) */
  required: string[];
}

export function replayContext(tasks: readonly ReplayTask[], table: Map<string, ToolOutcome>): ReplayContext {
  const good = tasks.filter((t) => t.kind === "recorded" && t.recordedSuccess);
  const sets = good.map((t) => new Set(t.steps.filter((s) => s.outcome === "ok").map((s) => s.tool)));
  const first = good[0];
  const order = first ? [...new Set(first.steps.filter((s) => s.outcome === "ok").map((s) => s.tool))] : [];
  return { table, required: order.filter((t) => sets.every((s) => s.has(t))) };
}

/** Follow a procedure on one task. */
export function followProcedure(procedure: readonly string[], task: ReplayTask, ctx: ReplayContext, cfg: EvalConfig): TaskResult {
  let steps = 0;
  let lastVerdict: "pass" | "fail" | null = null;
  for (const tool of procedure) {
    steps++;
    // A failed recorded run's own outcomes follow from its wrong order: use the evidence there.
    const o = (task.kind === "recorded" && task.recordedSuccess ? ownOutcome(task, tool) : null) ?? ctx.table.get(tool) ?? null;
    if (!o) return done(task, false, steps, `no recorded outcome for ${tool}: treated as a failed call`, cfg);
    if (!o.ok && o.verdict === null) return done(task, false, steps, `${tool} failed`, cfg);
    if (o.verdict) lastVerdict = o.verdict;
  }
  if (lastVerdict === "fail") return done(task, false, steps, "the last check failed", cfg);
  const need = task.kind === "golden" ? task.requiredTools : ctx.required;
  if (!isSubsequence(need, procedure)) {
    const missing = need.filter((t) => !procedure.includes(t));
    return done(task, false, steps, missing.length > 0 ? `skips ${missing.join(", ")}` : `calls ${need.join(", ")} out of order`, cfg);
  }
  return done(task, true, steps, "done", cfg);
}

/** The no-skill baseline: the recorded trajectory as it happened (golden tasks: not done). */
export function recordedRun(task: ReplayTask, cfg: EvalConfig): TaskResult {
  if (task.kind === "golden") return done(task, false, 0, "no recorded run", cfg);
  return done(task, task.recordedSuccess, task.steps.length, task.recordedSuccess ? "done (recorded)" : "failed (recorded)", cfg);
}

function done(task: ReplayTask, completed: boolean, steps: number, why: string, cfg: EvalConfig): TaskResult {
  return { id: task.id, kind: task.kind, completed, steps, score: (completed ? 1 : 0) - cfg.stepCost * steps, why };
}

function arm(label: string, tasks: TaskResult[]): ArmResult {
  const n = tasks.length || 1;
  return {
    label,
    successRate: tasks.filter((t) => t.completed).length / n,
    meanSteps: tasks.reduce((a, t) => a + t.steps, 0) / n,
    meanScore: tasks.reduce((a, t) => a + t.score, 0) / n,
    tasks,
  };
}

/**
 * Compare a candidate procedure with the baseline (a published version's procedure, or null for
 * no skill) on the task set.
 */
/** a fixed procedure, or the calls a model made per task (by task id) */
export type Procedure = readonly string[] | ReadonlyMap<string, readonly string[]>;

function procFor(p: Procedure, t: ReplayTask): readonly string[] {
  return Array.isArray(p) ? (p as readonly string[]) : ((p as ReadonlyMap<string, readonly string[]>).get(t.id) ?? []);
}

export function evaluate(
  candidate: Procedure,
  baseline: Procedure | null,
  tasks: readonly ReplayTask[],
  table: Map<string, ToolOutcome>,
  cfg: EvalConfig,
  labels: { candidate: string; baseline: string; model?: string },
): EvalReport {
  const set = tasks.slice(0, cfg.maxTasks);
  const ctx = replayContext(set, table);
  const c = arm(labels.candidate, set.map((t) => followProcedure(procFor(candidate, t), t, ctx, cfg)));
  const b = arm(labels.baseline, set.map((t) => (baseline ? followProcedure(procFor(baseline, t), t, ctx, cfg) : recordedRun(t, cfg))));
  const regressions = set
    .filter((t) => t.kind === "golden")
    .filter((t) => {
      const bc = b.tasks.find((x) => x.id === t.id)?.completed ?? false;
      const cc = c.tasks.find((x) => x.id === t.id)?.completed ?? false;
      return bc && !cc;
    })
    .map((t) => t.id);
  const margin = c.meanScore - b.meanScore;
  const reasons: string[] = [];
  if (set.length === 0) reasons.push("no task to replay");
  if (margin < cfg.margin) reasons.push(`does not beat the baseline by ${cfg.margin} (margin ${margin.toFixed(3)})`);
  if (regressions.length > 0) reasons.push(`regresses golden task(s) ${regressions.join(", ")}`);
  return { candidate: c, baseline: b, margin, requiredMargin: cfg.margin, regressions, passed: reasons.length === 0, reasons, model: labels.model ?? "replay:skill-following" };
}

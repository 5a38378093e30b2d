// Rewards: the signals an episode carries (derived from its own record, or added later by
// people and graders), their weighted combination R, and the value backup along its steps.
//   R   = clamp(Σ wᵢ·vᵢ / Σ wᵢ, −1, 1) over the signals present (no signal: R unset)
//   V_T = R;  V_t = α_t·R + (1 − α_t)·γ·V_{t+1}, α_t from the step's outcome
// Constants: config.learning (core/config.ts).
import type { MemoryConfig } from "../config.js";
import { reactionOf } from "./user-text.js";
import type { EpisodeDraft, RewardSignal, SignalKind, Step } from "./types.js";

type LearningConfig = MemoryConfig["learning"];

/** kinds recomputed from the episode itself on every rebuild */
export const DERIVED_KINDS: SignalKind[] = ["outcome", "tool_error", "user_reaction"];

export function episodeKey(d: Pick<EpisodeDraft, "source" | "threadId" | "startOrd">): string {
  return `${d.source}:${d.threadId}:${d.startOrd}`;
}

const clamp = (x: number) => Math.max(-1, Math.min(1, x));
/** A NUL cannot be stored in PostgreSQL text (the episode failed there): a space, as in excerpts. */
const storable = (s: string) => s.replace(/\u0000/g, " ");

/** Signals read from the episode's own record: verdicts, tool errors, the next user turn, skill feedback. */
export function derivedSignals(d: EpisodeDraft, cfg: LearningConfig, at: number): RewardSignal[] {
  const key = episodeKey(d);
  const out: RewardSignal[] = [];
  const w = cfg.weights;
  // The last verifiable verdict decides: a failing run fixed later in the task is a success.
  const lastVerdict = [...d.steps].reverse().find((s) => s.verdict !== null);
  if (lastVerdict) {
    out.push({
      kind: "outcome",
      source: `tool:${lastVerdict.tool}`,
      value: lastVerdict.verdict === "pass" ? 1 : -1,
      weight: w.outcome,
      note: lastVerdict.excerpt.split("\n")[0]?.slice(0, 200) ?? null,
      dedupKey: `${key}:outcome`,
      at,
    });
  }
  // Errors not already judged by a verdict (a failed test run is counted once, above).
  const finished = d.steps.filter((s) => s.outcome !== "pending");
  const errors = finished.filter((s) => s.outcome === "error" && s.verdict === null);
  if (errors.length > 0) {
    out.push({
      kind: "tool_error",
      source: `tools:${[...new Set(errors.map((s) => s.tool))].join(",").slice(0, 200)}`,
      value: -errors.length / finished.length,
      weight: w.toolError,
      note: `${errors.length} of ${finished.length} steps failed`,
      dedupKey: `${key}:tool_error`,
      at,
    });
  }
  if (d.nextUserText) {
    const r = reactionOf(d.nextUserText.text, d.task);
    if (r) {
      out.push({
        kind: "user_reaction",
        source: `next_user_turn:${d.nextUserText.messageId}`,
        value: r === "approval" ? 1 : -1,
        weight: w.userReaction,
        note: r,
        dedupKey: `${key}:user_reaction`,
        at,
      });
    }
  }
  for (const f of d.feedbackCalls) {
    if (f.tool !== "skill_feedback") continue;
    const a = (f.args ?? {}) as { outcome?: unknown; name?: unknown; note?: unknown };
    if (a.outcome !== "pass" && a.outcome !== "fail") continue;
    out.push({
      kind: "explicit",
      source: `skill_feedback:${typeof a.name === "string" ? storable(a.name) : "?"}`,
      value: a.outcome === "pass" ? 1 : -1,
      weight: w.skillFeedback,
      note: typeof a.note === "string" ? storable(a.note.slice(0, 200)) : null,
      dedupKey: `${key}:skill_feedback:${f.callId ?? JSON.stringify(f.args).slice(0, 100)}`,
      at,
    });
  }
  return out;
}

export interface Combined {
  reward: number | null;
  /** some signal other than the LLM rubric backs R: only grounded episodes may drive promotion */
  grounded: boolean;
}

export function combine(signals: readonly Pick<RewardSignal, "kind" | "value" | "weight">[]): Combined {
  let num = 0;
  let den = 0;
  for (const s of signals) {
    num += s.weight * clamp(s.value);
    den += s.weight;
  }
  if (den <= 0) return { reward: null, grounded: false };
  return { reward: clamp(num / den), grounded: signals.some((s) => s.kind !== "rubric" && s.weight > 0) };
}

export function alphaOf(step: Pick<Step, "outcome">, cfg: LearningConfig): number {
  return cfg.alpha[step.outcome];
}

/** V_T = R; V_t = α_t·R + (1 − α_t)·γ·V_{t+1}. No R: every V is unset. */
export function backup(steps: readonly Pick<Step, "idx" | "outcome">[], reward: number | null, cfg: LearningConfig) {
  const out = steps.map((s) => ({ idx: s.idx, alpha: alphaOf(s, cfg), value: null as number | null }));
  if (reward === null || out.length === 0) return out;
  let next = reward;
  for (let t = out.length - 1; t >= 0; t--) {
    const s = out[t]!;
    const v = t === out.length - 1 ? reward : s.alpha * reward + (1 - s.alpha) * cfg.gamma * next;
    s.value = clamp(v);
    next = s.value;
  }
  return out;
}

// Skill lifecycle rules (pure): η updates and status transitions. Constants: config.evolution.lifecycle
// and config.skills (the Beta prior).
//   trial:   η = (passes + a)/(trials + a + b)      (Beta(a,b) posterior mean; re-anchors η on the counts)
//   drift:   η ← keep·η + (1 − keep)·clamp01(gain)  (the source policy's gain changed)
//   thumbs:  η ← clamp01(η ± thumbDelta)
//   probationary → active  when trials ≥ promoteMinTrials and η ≥ promoteMinEta
//   probationary/active → retired  when η < retireBelowEta
// A pinned skill never changes status automatically.
import type { MemoryConfig } from "../config.js";
import type { SkillStatus } from "../skills/version.js";

type LifecycleConfig = MemoryConfig["evolution"]["lifecycle"];

const clamp01 = (x: number) => Math.max(0, Math.min(1, x));

export function driftEta(eta: number, gain: number, cfg: LifecycleConfig): number {
  return clamp01(cfg.driftKeep * eta + (1 - cfg.driftKeep) * clamp01(gain));
}

export function thumbEta(eta: number, up: boolean, cfg: LifecycleConfig): number {
  return clamp01(eta + (up ? cfg.thumbDelta : -cfg.thumbDelta));
}

/** The status a live version moves to, or null when it stays. */
export function nextStatus(v: { status: SkillStatus; eta: number; trials: number }, pinned: boolean, cfg: LifecycleConfig): SkillStatus | null {
  if (pinned) return null;
  if (v.status !== "probationary" && v.status !== "active") return null;
  if (v.eta < cfg.retireBelowEta) return "retired";
  if (v.status === "probationary" && v.trials >= cfg.promoteMinTrials && v.eta >= cfg.promoteMinEta) return "active";
  return null;
}

/** Whether a published version may reach search and the prefix. */
export function retrievable(v: { status: SkillStatus; eta: number }, skills: MemoryConfig["skills"]): boolean {
  if (v.status === "active") return v.eta > skills.retrievalMinEta;
  if (v.status === "probationary") return v.eta >= skills.probationaryMinEta && v.eta > skills.retrievalMinEta;
  return false;
}

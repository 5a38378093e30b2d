// Policies: recurring successful patterns across episodes (pure, deterministic).
//   signature = normalised tool sequence (ok steps, repeats collapsed) + key terms of the task
//   support   = distinct episodes with the signature
//   value     = mean episode reward R of those episodes (grounded ones only)
//   gain      = value − mean_without, mean_without = (Σ R_without + k·baseline)/(n_without + k),
//               then shrunk: gain_shrunk = n·gain/(n + k) — one lucky episode cannot pass
// A pattern becomes a policy when support, value and shrunk gain pass config.evolution.policy.
import { createHash } from "node:crypto";
import type { MemoryConfig } from "../config.js";
import { contentWords } from "../retrieval/analyze.js";
import { headOf } from "../text.js";
import type { ScoredStep, StoredEpisode } from "./types.js";

export type PolicyConfig = MemoryConfig["evolution"]["policy"];

export interface EpisodeRecord {
  episode: StoredEpisode;
  steps: ScoredStep[];
}

/** one position of a pattern: the tool and its most common abstracted arguments */
export interface PatternStep {
  tool: string;
  argsShape: string;
  /** the tool reported a verifiable verdict here (a test run, an exit code) */
  verdict: "pass" | "fail" | null;
}

export interface Pitfall {
  episodeId: string;
  tool: string;
  text: string;
}

export interface PolicyDraft {
  signature: string;
  tools: string[];
  keyTerms: string[];
  steps: PatternStep[];
  support: number;
  meanValue: number;
  /** shrunk gain (the one compared with the threshold) */
  gain: number;
  rawGain: number;
  eligible: boolean;
  /** the episodes showing the pattern, best first */
  episodeIds: string[];
  /** similar episodes without the pattern (the gain's comparison set) */
  counterIds: string[];
  pitfalls: Pitfall[];
  /** tasks of the supporting episodes, for the description */
  tasks: string[];
  /** hash of what a skill built from this policy depends on (tools, steps, terms): a change is drift */
  contentHash: string;
}

const PATHISH = /[/\\.:]|^\d+$/u;

/** Content words of a task, plural-insensitive, without numbers, paths and versions. */
export function taskTerms(task: string): string[] {
  const out: string[] = [];
  for (const w of contentWords(task.replace(/\S*[/\\]\S*/gu, " "))) {
    if (PATHISH.test(w) || /\d/u.test(w) || w.length < 3) continue;
    const t = w.replace(/(?<=[a-z]{3})s$/u, "");
    if (!out.includes(t)) out.push(t);
  }
  return out;
}

/** The tools of the steps that worked, consecutive repeats collapsed (a retry is one step). */
export function toolSequence(steps: readonly Pick<ScoredStep, "tool" | "outcome">[]): string[] {
  const out: string[] = [];
  for (const s of steps) {
    if (s.outcome !== "ok") continue;
    if (out.at(-1) !== s.tool) out.push(s.tool);
  }
  return out;
}

/** the ok steps that make up the sequence, one per position (the last of a repeated run) */
function sequenceSteps(steps: readonly ScoredStep[]): ScoredStep[] {
  const out: ScoredStep[] = [];
  for (const s of steps) {
    if (s.outcome !== "ok") continue;
    if (out.at(-1)?.tool === s.tool) out[out.length - 1] = s;
    else out.push(s);
  }
  return out;
}

function shared(a: readonly string[], b: readonly string[]): number {
  const set = new Set(b);
  return a.filter((x) => set.has(x)).length;
}

const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

function mostCommon(xs: string[]): string {
  const n = new Map<string, number>();
  for (const x of xs) n.set(x, (n.get(x) ?? 0) + 1);
  return [...n.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? "";
}

export function sha(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** Episodes that may teach: finished, scored, grounded (some signal besides the rubric), not suppressed. */
export function usable(r: EpisodeRecord): boolean {
  return r.episode.state === "done" && r.episode.reward !== null && r.episode.grounded && !r.episode.suppressed;
}

interface Cluster {
  tools: string[];
  terms: Map<string, number>;
  members: EpisodeRecord[];
}

/**
 * Group episodes by signature and score every group. Deterministic: the same episodes in any
 * order give the same policies. Only groups with at least one successful episode are returned.
 */
export function inducePolicies(records: readonly EpisodeRecord[], cfg: PolicyConfig): PolicyDraft[] {
  const rs = [...records].filter(usable).sort((a, b) => a.episode.id.localeCompare(b.episode.id));
  const termsOf = new Map(rs.map((r) => [r.episode.id, taskTerms(r.episode.task).slice(0, cfg.keyTerms * 2)]));
  // 1. by tool sequence, 2. within it by shared key terms (greedy, in id order)
  const clusters: Cluster[] = [];
  for (const r of rs) {
    const tools = toolSequence(r.steps);
    if (tools.length === 0) continue;
    const key = tools.join(">");
    const terms = termsOf.get(r.episode.id) ?? [];
    const c = clusters.find((x) => x.tools.join(">") === key && shared([...x.terms.keys()], terms) >= cfg.minSharedTerms);
    if (c) {
      c.members.push(r);
      for (const t of terms) c.terms.set(t, (c.terms.get(t) ?? 0) + 1);
    } else clusters.push({ tools, terms: new Map(terms.map((t) => [t, 1])), members: [r] });
  }
  const out: PolicyDraft[] = [];
  for (const c of clusters) {
    const good = c.members.filter((m) => (m.episode.reward ?? 0) > 0);
    if (good.length === 0) continue;
    // key terms: in at least half of the members, most frequent first
    const keyTerms = [...c.terms.entries()]
      .filter(([, n]) => n * 2 >= c.members.length)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, cfg.keyTerms)
      .map(([t]) => t)
      .sort();
    const ids = new Set(c.members.map((m) => m.episode.id));
    // similar episodes without the pattern: share key terms, other tool sequence
    const counter = rs.filter((r) => !ids.has(r.episode.id) && shared(termsOf.get(r.episode.id) ?? [], keyTerms) >= Math.min(cfg.minSharedTerms, keyTerms.length) && keyTerms.length > 0);
    const values = c.members.map((m) => m.episode.reward ?? 0);
    const n = c.members.length;
    const meanValue = mean(values);
    const without = counter.map((r) => r.episode.reward ?? 0);
    const meanWithout = (without.reduce((a, b) => a + b, 0) + cfg.shrinkK * cfg.baseline) / (without.length + cfg.shrinkK || 1);
    const rawGain = meanValue - meanWithout;
    const gain = (n * rawGain) / (n + cfg.shrinkK);
    // steps: per position, the most common abstracted arguments among good members
    const seqs = good.map((m) => sequenceSteps(m.steps));
    const steps: PatternStep[] = c.tools.map((tool, i) => {
      const at = seqs.map((s) => s[i]).filter((s): s is ScoredStep => s !== undefined && s.tool === tool);
      const verdicts = at.map((s) => s.verdict).filter((v) => v !== null);
      return { tool, argsShape: mostCommon(at.map((s) => s.argsShape)), verdict: verdicts.length > 0 ? (mostCommon(verdicts) as "pass" | "fail") : null };
    });
    const pitfalls: Pitfall[] = [];
    for (const r of [...counter, ...c.members].filter((x) => (x.episode.reward ?? 0) < 0 || x.steps.some((s) => s.outcome === "error"))) {
      for (const s of r.steps) {
        if (s.outcome !== "error" && s.verdict !== "fail") continue;
        const text = `${s.tool}: ${headOf(s.excerpt.split("\n")[0] ?? "", 160)}`;
        if (!pitfalls.some((p) => p.text === text)) pitfalls.push({ episodeId: r.episode.id, tool: s.tool, text });
      }
    }
    pitfalls.sort((a, b) => a.text.localeCompare(b.text));
    const ranked = [...c.members].sort((a, b) => (b.episode.reward ?? 0) - (a.episode.reward ?? 0) || shared(termsOf.get(b.episode.id) ?? [], keyTerms) - shared(termsOf.get(a.episode.id) ?? [], keyTerms) || a.episode.id.localeCompare(b.episode.id));
    const signature = sha(`${c.tools.join(">")}|${keyTerms.join(",")}`);
    const eligible = n >= cfg.minSupport && meanValue >= cfg.minValue && gain >= cfg.minGain;
    out.push({
      signature,
      tools: c.tools,
      keyTerms,
      steps,
      support: n,
      meanValue,
      gain,
      rawGain,
      eligible,
      episodeIds: ranked.map((m) => m.episode.id),
      counterIds: counter.map((r) => r.episode.id),
      pitfalls,
      tasks: ranked.map((m) => m.episode.task),
      contentHash: sha(JSON.stringify({ t: c.tools, k: keyTerms, s: steps })),
    });
  }
  return out.sort((a, b) => a.signature.localeCompare(b.signature));
}

// The pure core: signatures, policy induction with shrinkage, the replay scorer, lifecycle rules.
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../core/config.js";
import { driftEta, nextStatus, retrievable, thumbEta } from "../../core/learning/lifecycle.js";
import { inducePolicies, taskTerms, toolSequence, type EpisodeRecord } from "../../core/learning/policy.js";
import { evaluate, outcomeTable, type ReplayTask } from "../../core/learning/replay.js";
import { procedureOf, templateDraft, verifyDraft } from "../../core/learning/skill-draft.js";
import type { ScoredStep, StoredEpisode } from "../../core/learning/types.js";

const cfg = defaultConfig().evolution;

function step(idx: number, tool: string, outcome: ScoredStep["outcome"] = "ok", verdict: ScoredStep["verdict"] = null): ScoredStep {
  return { idx, ord: idx, tool, callId: null, argsDigest: tool, argsShape: '{"path":"<path>"}', outcome, verdict, excerpt: outcome === "error" ? "Error: boom" : "ok", latencyMs: null, alpha: 0.6, value: null };
}

function ep(id: string, task: string, reward: number, tools: [string, ScoredStep["outcome"]?, ScoredStep["verdict"]?][]): EpisodeRecord {
  const episode: StoredEpisode = {
    id, source: "conversation", threadId: id, rootThreadId: id, startOrd: 0, endOrd: 10, state: "done", task, finalExcerpt: null, reward,
    grounded: true, suppressed: false, candidatesDone: true, contentHash: id, createdAt: 0, updatedAt: 0,
  };
  return { episode, steps: tools.map(([t, o, v], i) => step(i, t, o, v)) };
}

const OK: [string][] = [["build"], ["test"], ["deploy"]];

describe("policies", () => {
  it("signature: ok steps, repeats collapsed; task terms without numbers and paths", () => {
    expect(toolSequence([step(0, "a"), step(1, "b", "error"), step(2, "b"), step(3, "b"), step(4, "c")])).toEqual(["a", "b", "c"]);
    expect(taskTerms("Deploy the services to /srv/app v1.2 on 3 hosts")).toEqual(["deploy", "service", "host"]);
  });

  it("support, mean value and shrunk gain decide eligibility; one lucky episode does not count", () => {
    const one = inducePolicies([ep("e1", "deploy the web service", 1, OK)], cfg.policy);
    expect(one[0]!.eligible).toBe(false);
    expect(one[0]!.gain).toBeCloseTo((1 * 1) / (1 + cfg.policy.shrinkK), 10);
    const three = inducePolicies(
      [ep("e1", "deploy the web service", 1, OK), ep("e2", "deploy the api service", 0.8, OK), ep("e3", "deploy the worker service", 0.9, OK), ep("f1", "deploy the web service", -1, [["deploy", "error"]])],
      cfg.policy,
    );
    const p = three.find((x) => x.support === 3)!;
    expect(p.eligible).toBe(true);
    expect(p.keyTerms).toEqual(["deploy", "service"]);
    expect(p.counterIds).toEqual(["f1"]);
    // mean_without = (−1 + k·baseline)/(1 + k); gain = n·(mean − mean_without)/(n + k)
    const k = cfg.policy.shrinkK;
    const raw = 0.9 - (-1 + k * cfg.policy.baseline) / (1 + k);
    expect(p.gain).toBeCloseTo((3 * raw) / (3 + k), 10);
    expect(p.pitfalls.map((x) => x.tool)).toEqual(["deploy"]);
    // deterministic whatever the order
    expect(inducePolicies([...[ep("e3", "deploy the worker service", 0.9, OK), ep("e1", "deploy the web service", 1, OK), ep("e2", "deploy the api service", 0.8, OK)]], cfg.policy)[0]!.signature).toBe(p.signature);
  });

  it("low value or ungrounded episodes do not make a policy", () => {
    const low = inducePolicies([1, 2, 3].map((i) => ep(`e${i}`, "deploy the service", 0.2, OK)), cfg.policy);
    expect(low[0]!.eligible).toBe(false);
    const ungrounded = [1, 2, 3].map((i) => ep(`e${i}`, "deploy the service", 1, OK));
    for (const r of ungrounded) r.episode.grounded = false;
    expect(inducePolicies(ungrounded, cfg.policy)).toEqual([]);
  });
});

describe("drafts, verification and replay", () => {
  const recs = [ep("e1", "deploy the web service", 1, [["build"], ["test", "ok", "pass"], ["deploy"]]), ep("e2", "deploy the api service", 1, [["build"], ["test", "ok", "pass"], ["deploy"]]), ep("e3", "deploy the db service", 1, [["build"], ["test", "ok", "pass"], ["deploy"]])];
  const p = inducePolicies(recs, cfg.policy)[0]!;

  it("the template draft has numbered steps naming the tools and passes verification", () => {
    const doc = templateDraft(p, "deploy-service-abc123", cfg);
    expect(procedureOf(doc)).toEqual(["build", "test", "deploy"]);
    expect(doc.allowedTools).toEqual(["build", "test", "deploy"]);
    expect(verifyDraft(doc, ["build", "test", "deploy"], null, cfg)).toEqual({ ok: true, problems: [] });
    expect(verifyDraft(doc, ["build", "test", "deploy"], ["build", "test"], cfg).problems).toEqual(["tools: widens the grant with deploy"]);
    expect(verifyDraft(doc, ["build", "test"], null, cfg).problems[0]).toMatch(/deploy never appear/);
  });

  it("replay: the candidate beats no-skill on failed neighbours; skipping a needed step loses", () => {
    const fail: ReplayTask = { id: "f", kind: "recorded", task: "deploy", steps: [step(0, "build"), step(1, "deploy", "error")], recordedSuccess: false, requiredTools: [] };
    const tasks: ReplayTask[] = [...recs.map((r) => ({ id: r.episode.id, kind: "recorded" as const, task: r.episode.task, steps: r.steps, recordedSuccess: true, requiredTools: [] })), fail];
    const table = outcomeTable(recs.map((r) => r.steps));
    const good = evaluate(["build", "test", "deploy"], null, tasks, table, cfg.eval, { candidate: "c", baseline: "none" });
    expect(good.candidate.successRate).toBe(1);
    expect(good.baseline.successRate).toBe(0.75);
    expect(good.passed).toBe(true);
    const skip = evaluate(["build", "deploy"], null, tasks, table, cfg.eval, { candidate: "c", baseline: "none" });
    expect(skip.passed).toBe(false);
    expect(skip.candidate.tasks[0]!.why).toBe("skips test");
    const same = evaluate(["build", "test", "deploy"], ["build", "test", "deploy"], tasks, table, cfg.eval, { candidate: "c", baseline: "v1" });
    expect(same.passed).toBe(false);
  });
});

describe("lifecycle", () => {
  const lc = cfg.lifecycle;
  it("drift, thumbs, promotion and retirement", () => {
    expect(driftEta(0.5, 0.9, lc)).toBeCloseTo(0.7 * 0.5 + 0.3 * 0.9, 10);
    expect(driftEta(0.5, -2, lc)).toBeCloseTo(0.35, 10);
    expect(thumbEta(0.95, true, lc)).toBe(1);
    expect(thumbEta(0.5, false, lc)).toBeCloseTo(0.4, 10);
    expect(nextStatus({ status: "probationary", eta: 0.8, trials: 3 }, false, lc)).toBe("active");
    expect(nextStatus({ status: "probationary", eta: 0.8, trials: 2 }, false, lc)).toBeNull();
    expect(nextStatus({ status: "active", eta: 0.2, trials: 3 }, false, lc)).toBe("retired");
    expect(nextStatus({ status: "active", eta: 0.2, trials: 3 }, true, lc)).toBeNull();
    const skills = defaultConfig().skills;
    expect(retrievable({ status: "probationary", eta: 0.5 }, skills)).toBe(true);
    expect(retrievable({ status: "probationary", eta: 0.4 }, skills)).toBe(false);
    expect(retrievable({ status: "active", eta: 0.4 }, skills)).toBe(true);
    expect(retrievable({ status: "retired", eta: 0.9 }, skills)).toBe(false);
  });
});

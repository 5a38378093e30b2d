// Behaviour every EvolutionStore must have (stores/sqlite/evolution-store.ts is the reference).
import { describe, expect, it } from "vitest";
import type { PolicyDraft } from "../../core/learning/policy.js";
import { useCatalog, type CatalogFactory } from "./catalog-harness.js";
import { draft } from "./learning-conformance.js";
import { audit, newVersion } from "./skills-conformance.js";

function policy(signature: string, episodeIds: string[], counterIds: string[] = [], hash = "p1"): PolicyDraft {
  return {
    signature,
    tools: ["read", "test"],
    keyTerms: ["build", "fix"],
    steps: [],
    support: episodeIds.length,
    meanValue: 0.6,
    gain: 0.25,
    rawGain: 0.4,
    eligible: true,
    episodeIds,
    counterIds,
    pitfalls: [],
    tasks: ["fix the build"],
    contentHash: hash,
  };
}

const report = { candidate: { passed: 3 }, baseline: { passed: 2 }, margin: 0.1, requiredMargin: 0.05, regressions: [], passed: true, reasons: [], model: "m" } as never;

export function evolutionConformance(name: string, factory: CatalogFactory): void {
  describe(`${name}: evolution store conformance`, () => {
    const c = useCatalog(factory);

    it("saves policies by signature with provenance edges to existing episodes", async () => {
      const s = await c.fresh();
      for (const [id, ord] of [["e1", 0], ["e2", 10], ["e3", 20]] as const) await s.learning.upsertEpisode(draft("t", ord, "h"), [], [], id, 100 + ord);
      const p = await s.evolution.savePolicy(policy("read>test", ["e1", "e2", "ghost"], ["e3"]), "pol-1", 500);
      expect(p).toMatchObject({ id: "pol-1", signature: "read>test", tools: ["read", "test"], keyTerms: ["build", "fix"], episodeIds: ["e1", "e2", "ghost"], eligible: true, skillName: null, builtHash: null, builtGain: null, createdAt: 500, updatedAt: 500, gain: 0.25, rawGain: 0.4 });
      expect(await s.evolution.policyEpisodes("pol-1", "support")).toEqual(["e1", "e2"]);
      expect(await s.evolution.policyEpisodes("pol-1", "counter")).toEqual(["e3"]);
      const again = await s.evolution.savePolicy(policy("read>test", ["e3"], [], "p2"), "pol-other", 600);
      expect(again).toMatchObject({ id: "pol-1", contentHash: "p2", createdAt: 500, updatedAt: 600 });
      expect(await s.evolution.policyEpisodes("pol-1", "support")).toEqual(["e3"]);
      expect(await s.evolution.policyEpisodes("pol-1", "counter")).toEqual([]);
      await s.evolution.savePolicy(policy("edit>test", ["e1"]), "pol-2", 700);
      expect((await s.evolution.policies()).map((x) => x.signature)).toEqual(["edit>test", "read>test"]);
      await s.evolution.markBuilt("pol-2", "fix-build", "p1", 0.3, 800);
      expect(await s.evolution.policy("pol-2")).toMatchObject({ skillName: "fix-build", builtHash: "p1", builtGain: 0.3, updatedAt: 800 });
      expect((await s.evolution.policiesOfSkill("fix-build")).map((x) => x.id)).toEqual(["pol-2"]);
      expect(await s.evolution.policy("nope")).toBeNull();
    });

    it("lists recently finished episodes and the last change time", async () => {
      const s = await c.fresh();
      expect(await s.evolution.episodesChangedAt()).toBe(0);
      await s.learning.upsertEpisode(draft("t", 0, "h"), [], [], "old", 100);
      await s.learning.upsertEpisode(draft("t", 10, "h"), [], [], "new", 300);
      await s.learning.upsertEpisode({ ...draft("t", 20, "h"), state: "open" }, [], [], "open", 400);
      expect(await s.evolution.recentEpisodeIds(10)).toEqual(["new", "old"]);
      expect(await s.evolution.recentEpisodeIds(1)).toEqual(["new"]);
      expect(await s.evolution.episodesChangedAt()).toBe(400);
    });

    it("keeps evaluation reports, requests (a new one supersedes the pending one) and golden tasks", async () => {
      const s = await c.fresh();
      const r1 = await s.evolution.addReport({ skillName: "fix-build", versionId: "v1", baselineVersionId: null, policyId: "p", passed: true, report, createdAt: 10 });
      const r2 = await s.evolution.addReport({ skillName: "fix-build", versionId: "v2", baselineVersionId: "v1", policyId: null, passed: false, report, createdAt: 20 });
      expect(r2.id).toBeGreaterThan(r1.id);
      expect(await s.evolution.report(r1.id)).toEqual(r1);
      expect(r1).toMatchObject({ skillName: "fix-build", versionId: "v1", passed: true, report });
      expect((await s.evolution.reportsOf("fix-build", 10)).map((r) => r.id)).toEqual([r2.id, r1.id]);
      expect(await s.evolution.report(999_999)).toBeNull();

      const base = { kind: "publish" as const, skillName: "fix-build", versionId: "v1", otherSkill: null, policyId: null, reportId: r1.id, detail: { why: "gain" } };
      const q1 = await s.evolution.addRequest({ ...base, id: "q1", createdAt: 100 });
      expect(q1).toEqual({ ...base, id: "q1", status: "pending", createdAt: 100, decidedAt: null, decidedBy: null });
      await s.evolution.addRequest({ ...base, id: "q2", createdAt: 200 });
      await s.evolution.addRequest({ ...base, id: "q3", kind: "retire", createdAt: 300 });
      expect(await s.evolution.request("q1")).toMatchObject({ status: "superseded", decidedAt: 200, decidedBy: "superseded" });
      expect((await s.evolution.requests({ status: "pending" })).map((r) => r.id)).toEqual(["q3", "q2"]);
      expect((await s.evolution.requests({ limit: 2 })).map((r) => r.id)).toEqual(["q3", "q2"]);
      expect(await s.evolution.decide("q2", "approved", "alice", 400)).toBe(true);
      expect(await s.evolution.decide("q2", "rejected", "bob", 500)).toBe(false);
      expect(await s.evolution.request("q2")).toMatchObject({ status: "approved", decidedAt: 400, decidedBy: "alice" });
      expect(await s.evolution.request("nope")).toBeNull();
      // merges of one kept skill with different duplicates are different questions; the same pair again replaces
      const merge = { ...base, kind: "merge" as const, skillName: "deploy-a", versionId: null };
      await s.evolution.addRequest({ ...merge, id: "m1", otherSkill: "deploy-b", createdAt: 600 });
      await s.evolution.addRequest({ ...merge, id: "m2", otherSkill: "deploy-c", createdAt: 610 });
      await s.evolution.addRequest({ ...merge, id: "m3", otherSkill: "deploy-b", createdAt: 620 });
      expect((await s.evolution.requests({ status: "pending" })).map((r) => r.id)).toEqual(["m3", "m2", "q3"]);

      const g = await s.evolution.addGoldenTask("fix-build", "fix the failing test", ["read", "test"], 50);
      await s.evolution.addGoldenTask("other", "x", [], 60);
      expect(await s.evolution.goldenTasks("fix-build")).toEqual([{ id: g.id, skillName: "fix-build", task: "fix the failing test", tools: ["read", "test"], createdAt: 50 }]);
    });

    it("two servers filing a request for one skill at once leave one pending", async () => {
      const [a, b] = await c.freshPair(2);
      const base = { kind: "publish" as const, skillName: "s", versionId: null, otherSkill: null, policyId: null, reportId: null, detail: {} };
      await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b)!.evolution.addRequest({ ...base, id: `r${i}`, createdAt: 100 + i })));
      expect(await a!.evolution.requests({ status: "pending" })).toHaveLength(1);
    });

    it("sets η with an audit row, writes skill audit rows and finds the last trial", async () => {
      const s = await c.fresh();
      await s.skills.insertVersion(newVersion("fix-build", "fix", "h"), { skillId: "s1", versionId: "v1" }, audit("propose", "fix-build"));
      expect(await s.evolution.lastTrialAt("fix-build")).toBeNull();
      await s.evolution.setEta("v1", 0.8, audit("eta", "fix-build", 2000, { eta: 0.8 }));
      expect((await s.skills.version("v1"))!.eta).toBe(0.8);
      await s.evolution.audit(audit("evolve", "fix-build", 3000));
      expect((await s.skills.auditOf("fix-build", 2)).map((x) => [x.action, x.at])).toEqual([["evolve", 3000], ["eta", 2000]]);
      await s.skills.recordTrial("v1", { passed: true, note: null, threadId: null, at: 4242 }, () => 0.9, audit("feedback", "fix-build"));
      expect(await s.evolution.lastTrialAt("fix-build")).toBe(4242);
    });
  });
}

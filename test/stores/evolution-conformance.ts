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

const withReasons = (reasons: string[]) => ({ ...(report as Record<string, unknown>), reasons }) as never;

export function evolutionConformance(name: string, factory: CatalogFactory): void {
  describe(`${name}: evolution store conformance`, () => {
    const c = useCatalog(factory);

    it("saves policies by signature with provenance edges to existing episodes", async () => {
      const s = await c.fresh();
      for (const [id, ord] of [["e1", 0], ["e2", 10], ["e3", 20]] as const) await s.learning.upsertEpisode(draft("t", ord, "h"), [], [], id, 100 + ord);
      const p = await s.evolution.savePolicy(policy("read>test", ["e1", "e2", "ghost"], ["e3"]), "pol-1", 500);
      expect(p).toMatchObject({ id: "pol-1", signature: "read>test", tools: ["read", "test"], keyTerms: ["build", "fix"], episodeIds: ["e1", "e2", "ghost"], eligible: true, skillName: null, builtHash: null, builtGain: null, createdAt: 500, updatedAt: 500, gain: 0.25, rawGain: 0.4, previousGain: null });
      expect(await s.evolution.policyEpisodes("pol-1", "support")).toEqual(["e1", "e2"]);
      expect(await s.evolution.policyEpisodes("pol-1", "counter")).toEqual(["e3"]);
      const again = await s.evolution.savePolicy(policy("read>test", ["e3"], [], "p2"), "pol-other", 600);
      // the gain it replaced, read in the save's own transaction (reward drift moves η on a change)
      expect(again).toMatchObject({ id: "pol-1", contentHash: "p2", createdAt: 500, updatedAt: 600, previousGain: 0.25 });
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
      expect(q1).toEqual({ ...base, id: "q1", status: "pending", createdAt: 100, decidedAt: null, decidedBy: null, approvingProcess: null });
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
      // by kind, with or without a status
      expect((await s.evolution.requests({ status: "pending", kinds: ["retire", "publish"] })).map((r) => r.id)).toEqual(["q3"]);
      expect((await s.evolution.requests({ kinds: ["publish"] })).map((r) => r.id)).toEqual(["q2", "q1"]);
      expect((await s.evolution.requests({ status: "approved", kinds: ["merge"] })).map((r) => r.id)).toEqual([]);

      const g = await s.evolution.addGoldenTask("fix-build", "fix the failing test", ["read", "test"], 50);
      await s.evolution.addGoldenTask("other", "x", [], 60);
      expect(await s.evolution.goldenTasks("fix-build")).toEqual([{ id: g.id, skillName: "fix-build", task: "fix the failing test", tools: ["read", "test"], createdAt: 50 }]);
    });

    it("finds policies, requests, reports and golden tasks holding a forgotten text and writes what a forget leaves of them", async () => {
      const s = await c.fresh();
      for (const [id, ord] of [["e1", 0], ["e2", 10], ["e3", 20]] as const) await s.learning.upsertEpisode(draft("t", ord, "h"), [], [], id, 100 + ord);
      const quoting: PolicyDraft = {
        ...policy("read>test", ["e1", "e2"], ["e3"]),
        keyTerms: ["build", "quokkagate"],
        tasks: ["fix the build behind the QuokkaGate", "fix the build"],
        pitfalls: [{ episodeId: "e3", tool: "test", text: "test: quokkagate refused" }],
      };
      await s.evolution.savePolicy(quoting, "pol-1", 500);
      await s.evolution.markBuilt("pol-1", "fix-build", "p1", 0.25, 510);
      await s.evolution.savePolicy(policy("edit>test", ["e3"]), "pol-2", 500);
      const r1 = await s.evolution.addReport({ skillName: "fix-build", versionId: null, baselineVersionId: null, policyId: "pol-1", passed: true, report: withReasons(["saw quokkagate"]), createdAt: 10 });
      await s.evolution.addReport({ skillName: "fix-build", versionId: null, baselineVersionId: null, policyId: "pol-1", passed: true, report, createdAt: 11 });
      const base = { kind: "publish" as const, skillName: "fix-build", versionId: "v1", otherSkill: null, policyId: "pol-1", reportId: r1.id };
      await s.evolution.addRequest({ ...base, id: "q1", detail: { seq: 1, diff: "+Tasks like: the QuokkaGate" }, createdAt: 100 });
      await s.evolution.addRequest({ ...base, id: "q2", kind: "retire", detail: { reason: "stale" }, createdAt: 110 });
      const g = await s.evolution.addGoldenTask("fix-build", "open the quokkagate", ["read"], 50);
      await s.evolution.addGoldenTask("fix-build", "fix the failing test", ["read", "test"], 60);

      const m = await s.evolution.mentioning(["absent", "quokkagate"]);
      expect(m.policies.map((p) => p.id)).toEqual(["pol-1"]);
      expect(m.policies[0]).toMatchObject({ tasks: quoting.tasks, keyTerms: quoting.keyTerms, pitfalls: quoting.pitfalls, skillName: "fix-build" });
      expect(m.requests.map((r) => r.id)).toEqual(["q1"]);
      expect(m.reports.map((r) => r.id)).toEqual([r1.id]);
      expect(m.goldenTasks).toEqual([{ id: g.id, skillName: "fix-build", task: "open the quokkagate", tools: ["read"], createdAt: 50 }]);
      // an empty probe reads every row
      const all = await s.evolution.mentioning([""]);
      expect([all.policies.length, all.requests.length, all.reports.length, all.goldenTasks.length]).toEqual([2, 2, 2, 2]);

      await s.evolution.withhold(
        {
          policies: [{ id: "pol-1", keyTerms: ["build"], tasks: ["fix the build"], episodeIds: ["e2"], pitfalls: [], steps: [] }],
          requests: [{ id: "q1", detail: { seq: 1, diff: "(withheld)" }, close: true }],
          reports: [{ id: r1.id, report: withReasons(["(withheld)"]) }],
          goldenTaskIds: [g.id],
        },
        900,
        [audit("withdraw", "fix-build", 900, { requests: ["q1"] })],
      );
      expect(await s.evolution.mentioning(["quokkagate"])).toEqual({ policies: [], requests: [], reports: [], goldenTasks: [] });
      expect(await s.evolution.policy("pol-1")).toMatchObject({
        keyTerms: ["build"],
        tasks: ["fix the build"],
        episodeIds: ["e2"],
        counterIds: ["e3"],
        pitfalls: [],
        eligible: false,
        rawGain: 0.4,
        skillName: "fix-build",
        builtHash: "p1",
        updatedAt: 900,
      });
      expect(await s.evolution.policyEpisodes("pol-1", "support")).toEqual(["e2"]);
      expect(await s.evolution.policyEpisodes("pol-1", "counter")).toEqual(["e3"]);
      expect(await s.evolution.request("q1")).toMatchObject({ status: "rejected", decidedAt: 900, decidedBy: "forget", detail: { seq: 1, diff: "(withheld)" } });
      expect(await s.evolution.request("q2")).toMatchObject({ status: "pending", detail: { reason: "stale" } });
      expect((await s.evolution.report(r1.id))!.report.reasons).toEqual(["(withheld)"]);
      expect((await s.evolution.goldenTasks("fix-build")).map((x) => x.task)).toEqual(["fix the failing test"]);
      expect((await s.skills.auditOf("fix-build", 1))[0]).toMatchObject({ action: "withdraw", at: 900, detail: { requests: ["q1"] } });
      // a request decided already keeps its decision; only its detail changes
      await s.evolution.withhold({ policies: [], requests: [{ id: "q1", detail: {}, close: true }], reports: [], goldenTaskIds: [] }, 950, []);
      expect(await s.evolution.request("q1")).toMatchObject({ status: "rejected", decidedAt: 900, detail: {} });
    });

    it("claims a request for approval: a decline, a supersede and a forget's close pass it by; only its own claim finishes or releases it", async () => {
      const s = await c.fresh();
      const base = { kind: "retire" as const, skillName: "deploy", versionId: "v1", otherSkill: null, policyId: null, reportId: null, detail: { reason: "stale" } };
      await s.evolution.addRequest({ ...base, id: "q1", createdAt: 100 });
      const claim = { by: "cli:alice", at: 200, process: "host-a:41:9001" };
      expect(await s.evolution.claimApproval("q1", claim)).toBe(true);
      // claimed once: a second claim from pending finds none
      expect(await s.evolution.claimApproval("q1", { ...claim, by: "cli:bob" })).toBe(false);
      expect(await s.evolution.request("q1")).toMatchObject({ status: "approving", decidedBy: "cli:alice", decidedAt: 200, approvingProcess: "host-a:41:9001" });
      expect((await s.evolution.requests({ status: "approving" })).map((r) => r.id)).toEqual(["q1"]);
      expect((await s.evolution.requests({ status: "approving", kinds: ["merge"] })).map((r) => r.id)).toEqual([]);
      expect(await s.evolution.requests({ status: "pending" })).toEqual([]);
      // a decline loses; a new request of the same kind does not supersede it; a forget does not close it
      expect(await s.evolution.decide("q1", "rejected", "cli:bob", 210)).toBe(false);
      await s.evolution.addRequest({ ...base, id: "q2", createdAt: 220 });
      await s.evolution.withhold({ policies: [], requests: [{ id: "q1", detail: {}, close: true }], reports: [], goldenTaskIds: [] }, 230, []);
      expect(await s.evolution.request("q1")).toMatchObject({ status: "approving", detail: {} });
      expect((await s.evolution.requests({ status: "pending" })).map((r) => r.id)).toEqual(["q2"]);
      // another claim than the one held neither releases nor finishes it
      expect(await s.evolution.releaseApproval("q1", { ...claim, at: 201 })).toBe(false);
      expect(await s.evolution.finishApproval("q1", { ...claim, process: null }, 240)).toBe(false);
      // taken over from exactly the claim held (a stopped approval), then finished by the new claim
      const over = { by: "cli:alice", at: 300, process: null };
      expect(await s.evolution.claimApproval("q1", over, { ...claim, at: 199 })).toBe(false);
      expect(await s.evolution.claimApproval("q1", over, claim)).toBe(true);
      expect(await s.evolution.finishApproval("q1", claim, 310)).toBe(false);
      expect(await s.evolution.finishApproval("q1", over, 320)).toBe(true);
      expect(await s.evolution.request("q1")).toMatchObject({ status: "approved", decidedBy: "cli:alice", decidedAt: 320, approvingProcess: null });
      expect((await s.evolution.requests({ status: "approved" })).map((r) => r.id)).toEqual(["q1"]);
      expect(await s.evolution.requests({ status: "approving" })).toEqual([]);
      // released: pending again, and a decline may land
      expect(await s.evolution.claimApproval("q2", claim)).toBe(true);
      expect(await s.evolution.releaseApproval("q2", claim)).toBe(true);
      expect(await s.evolution.request("q2")).toMatchObject({ status: "pending", decidedBy: null, decidedAt: null, approvingProcess: null });
      expect(await s.evolution.decide("q2", "rejected", "cli:bob", 400)).toBe(true);
      expect(await s.evolution.finishApproval("q2", claim, 410)).toBe(false);
      expect(await s.evolution.request("q2")).toMatchObject({ status: "rejected", decidedBy: "cli:bob" });
    });

    it("two servers claiming one request for approval at once: one claim wins", async () => {
      const [a, b] = await c.freshPair(2);
      const base = { kind: "retire" as const, skillName: "s", versionId: null, otherSkill: null, policyId: null, reportId: null, detail: {} };
      await a!.evolution.addRequest({ ...base, id: "q", createdAt: 100 });
      const won = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b)!.evolution.claimApproval("q", { by: `p${i}`, at: 200 + i, process: null })));
      expect(won.filter(Boolean)).toHaveLength(1);
      const winner = won.indexOf(true);
      expect(await a!.evolution.request("q")).toMatchObject({ status: "approving", decidedBy: `p${winner}` });
    });

    it("proposeRequest files a question only while nothing asked or answered it since the filer's read", async () => {
      const s = await c.fresh();
      const base = { kind: "retire" as const, skillName: "s", versionId: null, otherSkill: null, policyId: null, reportId: null, detail: {} };
      const pending = async () => (await s.evolution.requests({ status: "pending" })).map((r) => r.id).sort();
      // nothing open: filed
      expect(await s.evolution.proposeRequest({ ...base, id: "r1", createdAt: 100 }, { replaces: null, since: 100 })).toMatchObject({ id: "r1", status: "pending" });
      // another filer that read before r1 was filed: r1 is open, nothing filed
      expect(await s.evolution.proposeRequest({ ...base, id: "r2", createdAt: 101 }, { replaces: null, since: 90 })).toBeNull();
      // r1 declined after that read: the "no" stands, nothing filed
      expect(await s.evolution.decide("r1", "rejected", "alice", 110)).toBe(true);
      expect(await s.evolution.proposeRequest({ ...base, id: "r3", createdAt: 111 }, { replaces: null, since: 105 })).toBeNull();
      // a read after that decline (which the filer weighed): filed
      expect(await s.evolution.proposeRequest({ ...base, id: "r4", createdAt: 200 }, { replaces: null, since: 150 })).toMatchObject({ id: "r4" });
      expect(await pending()).toEqual(["r4"]);
      // a merge: the pair either way round is one question; the open one read is replaced
      const merge = { ...base, kind: "merge" as const, skillName: "a", otherSkill: "b" };
      expect(await s.evolution.proposeRequest({ ...merge, id: "m1", createdAt: 300 }, { replaces: null, since: 300 })).toMatchObject({ id: "m1" });
      expect(await s.evolution.proposeRequest({ ...merge, id: "m2", skillName: "b", otherSkill: "a", createdAt: 301 }, { replaces: null, since: 300 })).toBeNull();
      expect(await s.evolution.proposeRequest({ ...merge, id: "m3", createdAt: 302 }, { replaces: "m1", since: 300 })).toMatchObject({ id: "m3" });
      expect(await s.evolution.request("m1")).toMatchObject({ status: "superseded" });
      // the one read is being approved meanwhile: not replaced, nothing filed
      expect(await s.evolution.claimApproval("m3", { by: "alice", at: 310, process: null })).toBe(true);
      expect(await s.evolution.proposeRequest({ ...merge, id: "m4", createdAt: 311 }, { replaces: "m3", since: 305 })).toBeNull();
      expect(await s.evolution.finishApproval("m3", { by: "alice", at: 310, process: null }, 320)).toBe(true);
      // approved after the read: nothing filed
      expect(await s.evolution.proposeRequest({ ...merge, id: "m5", createdAt: 321 }, { replaces: "m3", since: 305 })).toBeNull();
      expect(await pending()).toEqual(["r4"]);
    });

    it("ten curators proposing one question at once file it once (a merge either way round)", async () => {
      const [a, b] = await c.freshPair(2);
      const base = { kind: "merge" as const, skillName: "x", versionId: null, otherSkill: "y", policyId: null, reportId: null, detail: {} };
      const filed = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? a : b)!.evolution.proposeRequest({ ...base, id: `m${i}`, ...(i % 4 < 2 ? {} : { skillName: "y", otherSkill: "x" }), createdAt: 100 + i }, { replaces: null, since: 90 }),
        ),
      );
      expect(filed.filter((r) => r !== null)).toHaveLength(1);
      expect(await a!.evolution.requests({ status: "pending" })).toHaveLength(1);
      expect(await a!.evolution.requests({ status: "superseded" })).toEqual([]);
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

// End to end with no LLM: repeated release chores → episodes → a policy → a candidate with an
// eval report → an approval request → publication (probationary) → later tasks find it through
// the prefix offers and skill_search → failing trials retire it → rollback restores the earlier
// version. Harmful candidates never change the published version.
import { afterEach, describe, expect, it } from "vitest";
import { openChoreWorld, rng, task, type ChoreWorld } from "../../bench/evolution/chore.js";
import { parseSkillMd, renderSkillMd } from "../../core/skills/skill-md.js";
import { tempDir } from "../helpers/tmp.js";

let w: ChoreWorld | null = null;
afterEach(() => {
  w?.close();
  w = null;
});

async function learnFrom(world: ChoreWorld, n: number, seed = 7) {
  const r = rng(seed);
  for (let i = 0; i < n; i++) await world.runTask(task(i), r, { skills: false });
  await world.worker.drain();
}

describe("skills that evolve, end to end (no LLM)", () => {
  it("policy → candidate → report → request → approve → probationary → found → retired → rollback", async () => {
    w = openChoreWorld(tempDir("evo-"));
    await learnFrom(w, 12);
    const out = await w.evolution.run(true);
    const policies = await w.evolutionStore.policies();
    const policy = policies.find((p) => p.eligible);
    expect(policy, JSON.stringify(policies.map((p) => [p.tools, p.support, p.meanValue, p.gain]))).toBeTruthy();
    expect(policy!.tools).toEqual(["bump_version", "update_changelog", "run_tests", "git_commit", "git_tag"]);
    expect(policy!.support).toBeGreaterThanOrEqual(3);
    expect(await w.evolutionStore.policyEpisodes(policy!.id, "support")).toHaveLength(policy!.support);

    const made = out.find((o) => o.passed && o.requestId);
    expect(made, JSON.stringify(out)).toBeTruthy();
    const report = await w.evolution.report(made!.reportId!);
    expect(report!.passed).toBe(true);
    expect(report!.report.candidate.successRate).toBe(1);
    expect(report!.report.baseline.label).toBe("no skill");
    expect(report!.report.baseline.successRate).toBeLessThan(1);
    const [req] = await w.evolution.requests();
    expect(req!.kind).toBe("publish");
    expect(req!.reportId).toBe(made!.reportId);

    // nothing is live before approval
    expect(await w.skills.search(w.scope, task(0).text)).toEqual([]);
    await w.evolution.approve(req!.id, "cli:alice");
    const skill = await w.skills.skill(made!.skillName);
    const v1 = await w.skills.version(skill);
    expect(v1.status).toBe("probationary");
    expect(await w.skills.grants(skill.name)).toEqual([...v1.allowedTools].sort());

    // reward drift: new episodes move the policy's gain; η ← 0.7·η + 0.3·clamp01(gain), audited
    const rd = rng(5);
    for (let i = 12; i < 16; i++) await w.runTask(task(i), rd, { skills: false });
    await w.worker.drain();
    await w.evolution.recomputePolicies(true);
    const drifted = (await w.skills.auditOf(skill.name, 50)).find((a) => a.action === "eta")!;
    expect(drifted.detail).toMatchObject({ cause: "drift", from: 0.5 });
    expect((await w.skills.version(await w.skills.skill(skill.name))).eta).toBeCloseTo(drifted.detail.to as number, 10);

    // later tasks find it through skill_search and the prefix offers, and succeed by following it
    expect((await w.skills.search(w.scope, task(3).text)).map((h) => h.skill.name)).toEqual([skill.name]);
    const r = rng(99);
    const runs = [];
    for (let i = 20; i < 23; i++) runs.push(await w.runTask(task(i), r));
    expect(runs.every((x) => x.success && x.usedSkill === skill.name)).toBe(true);
    const promoted = await w.skills.version(await w.skills.skill(skill.name));
    expect(promoted.status).toBe("active");

    // a person publishes a worse v2; failing trials retire it; rollback restores v1
    const bad = parseSkillMd(renderSkillMd({ frontmatter: { ...v1.frontmatter }, body: v1.body.replace(/\n\d+\. Call `update_changelog`[^\n]*/, "") }));
    const p2 = await w.skills.propose(bad, { actor: "cli:alice", author: "human", ref: null });
    await w.skills.publish(await w.skills.preparePublish(skill.name, p2.version.id), "cli:alice");
    const failed = await w.runTask(task(30), r);
    expect(failed).toMatchObject({ success: false, usedSkill: skill.name });
    // η 1/3 < probationaryMinEta: no longer offered; the trials reported later still count
    expect(await w.skills.search(w.scope, task(3).text)).toEqual([]);
    await w.skills.feedback(skill.name, undefined, { passed: false }, "chore-x", "model:chore-x");
    await w.skills.feedback(skill.name, undefined, { passed: false }, "chore-y", "model:chore-y");
    const v2 = (await w.skills.history(skill.name)).versions.find((x) => x.id === p2.version.id)!;
    expect(v2.status).toBe("retired");
    expect(await w.skills.search(w.scope, task(3).text)).toEqual([]);
    await w.skills.rollback(await w.skills.prepareRollback(skill.name), "cli:alice");
    const back = await w.skills.version(await w.skills.skill(skill.name));
    expect(back.id).toBe(v1.id);
    expect(back.status).toBe("active");
    const actions = (await w.skills.auditOf(skill.name, 100)).map((a) => a.action);
    for (const a of ["propose", "evolve", "grant", "publish", "promote", "retire", "rollback"]) expect(actions).toContain(a);
  });
});

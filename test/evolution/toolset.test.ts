// Approval through the skills toolset: skill_search mentions waiting requests; skill_review asks
// the person with RAP user_choice (the prompt carries the eval report; Show diff the diff), and
// Approve publishes as probationary.
import { describe, expect, it } from "vitest";
import { openChoreWorld, rng, task } from "../../bench/evolution/chore.js";
import { tempDir } from "../helpers/tmp.js";
import { call, callAnswering } from "../skills/helpers.js";
import { DEPLOY_STEPS as body, publishDeployTwins, publisher, serveSkills } from "./helpers.js";

describe("skill_review", () => {
  it("asks with the eval report and the diff, and publishes on Approve", async () => {
    const w = openChoreWorld(tempDir("evo-rap-"));
    const r = rng(7);
    for (let i = 0; i < 12; i++) await w.runTask(task(i), r, { skills: false });
    await w.worker.drain();
    const made = (await w.evolution.run(true)).find((o) => o.requestId)!;
    const rs = await serveSkills(w);
    try {
      expect(await call(rs, "skill_search", { query: task(2).text })).toMatch(/1 learned skill change await the person's approval: skill_review/);
      const res = await callAnswering(rs, "skill_review", {}, [2, 0]);
      expect(res.prompts[0]).toMatch(new RegExp(`Publish the learned skill ${made.skillName} v1 \\(new\\)\\? It would be granted: bump_version`));
      expect(res.prompts[0]).toMatch(/Evaluation \(replay:skill-following\): 100% of \d+ replayed tasks done/);
      expect(res.prompts[1]).toMatch(/\+1\. Call `bump_version`/);
      expect(res.text).toBe(`publish ${made.skillName}: approved`);
      expect((await w.skills.version(await w.skills.skill(made.skillName))).status).toBe("probationary");
      expect(await call(rs, "skill_search", { query: task(2).text })).toMatch(new RegExp(made.skillName));
    } finally {
      await rs.close();
      w.close();
    }
  });

  it("a merge names the versions the curator measured; one replaced before the Approve is refused with an Error naming the new version", async () => {
    const w = openChoreWorld(tempDir("evo-rap-merge-"));
    const publish = await publishDeployTwins(w);
    expect((await w.evolution.curate()).map((r) => r.kind)).toEqual(["merge"]);
    await publish("deploy-b", `${body}4. Check the health endpoint.\n`);
    const rs = await serveSkills(w);
    try {
      const res = await callAnswering(rs, "skill_review", {}, [0]);
      expect(res.prompts[0]).toMatch(/^Merge deploy-b v1 into deploy-a v1 \(near-duplicates/);
      expect(res.text).toMatch(/^Error: .*deploy-b is now v2 \(the request measured v1\).*nothing was retired/);
      expect((await w.skills.version(await w.skills.skill("deploy-b"))).status).toBe("probationary");
    } finally {
      await rs.close();
      w.close();
    }
  });

  it("asks about five requests a call (newest first) and says how many more wait; the next call asks about those", async () => {
    const w = openChoreWorld(tempDir("evo-rap-more-"));
    const publish = publisher(w);
    const names = ["lint-a", "lint-b", "lint-c", "lint-d", "lint-e", "lint-f"];
    for (const [i, name] of names.entries()) {
      const v = await publish(name, `1. Run linter ${i}.\n2. Fix what it reports.\n`, `Lint part ${i} of the code base`);
      await w.evolutionStore.addRequest({ id: `srq_${name}`, kind: "retire", skillName: name, versionId: v.id, otherSkill: null, policyId: null, reportId: null, detail: { reason: "unused" }, createdAt: w.clock.now() - i });
    }
    const rs = await serveSkills(w);
    try {
      const first = await callAnswering(rs, "skill_review", {}, [1, 1, 1, 1, 1]);
      expect(first.text.split("\n")).toEqual([...names.slice(0, 5).map((n) => `retire ${n}: rejected`), "1 more learned skill change awaits the person's answer: call skill_review again."]);
      const second = await callAnswering(rs, "skill_review", {}, [1]);
      expect(second.prompts[0]).toMatch(/^Retire the skill lint-f/);
      expect(second.text).toBe("retire lint-f: rejected");
    } finally {
      await rs.close();
      w.close();
    }
  });

  it("a question whose change is refused does not stop the review: the others are asked and decided, and the result names both", async () => {
    const w = openChoreWorld(tempDir("evo-rap-refused-"));
    const publish = await publishDeployTwins(w);
    const lint = await publish("lint-code", "1. Run the linter.\n2. Fix what it reports.\n", "Lint the code base");
    // asked second (older): retiring lint-code, which nothing stands in the way of
    await w.evolutionStore.addRequest({ id: "srq_lint", kind: "retire", skillName: "lint-code", versionId: lint.id, otherSkill: null, policyId: null, reportId: null, detail: { reason: "unused" }, createdAt: w.clock.now() - 1 });
    // asked first: a merge measured on deploy-b v1, replaced since (its approval is refused)
    expect((await w.evolution.curate()).map((r) => r.kind)).toEqual(["merge"]);
    await publish("deploy-b", `${body}4. Check the health endpoint.\n`);
    const rs = await serveSkills(w);
    try {
      const res = await callAnswering(rs, "skill_review", {}, [0, 0]);
      expect(res.prompts[0]).toMatch(/^Merge deploy-b v1 into deploy-a v1/);
      expect(res.prompts[1]).toMatch(/^Retire the skill lint-code/);
      const lines = res.text.split("\n");
      expect(lines[0]).toMatch(/^Error: merge deploy-a \(with deploy-b\) was not changed: .*deploy-b is now v2 \(the request measured v1\).*nothing was retired/);
      expect(lines.slice(1)).toEqual(["retire lint-code: approved"]);
      expect((await w.skills.version(await w.skills.skill("lint-code"))).status).toBe("retired");
      expect((await w.skills.version(await w.skills.skill("deploy-b"))).status).toBe("probationary");
    } finally {
      await rs.close();
      w.close();
    }
  });
});


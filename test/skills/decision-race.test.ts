// Two deciders on one skill version at once: a decision read in this process while the CLI,
// another process on the same database file, decides the other way. The second one is refused
// naming the version and what it is now (before, both "succeeded": a rejected version was
// published, a published one marked rejected, a rollback returned to a version rejected
// meanwhile, and a retire request approved after a newer publish retired the new version).
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../core/config.js";
import { EvolutionService } from "../../core/learning/evolution.js";
import { T0 } from "../helpers/memory.js";
import { pauseAtCall } from "../helpers/paused-call.js";
import { k8sRolloutWorld as world } from "./helpers.js";

describe("skill decisions racing across processes (SQLite)", () => {
  it("a publish of a version another process rejected meanwhile is refused naming it; it stays rejected and unpublished", async () => {
    const w = world();
    try {
      const paused = pauseAtCall(w.ctx.backend.skills, "movePointer", { before: true });
      const svc = w.serviceOver(paused.target);
      const publishing = svc.preparePublish("k8s-rollout", "v2").then((move) => svc.publish(move, "alice"));
      await paused.reached;
      expect(w.skills("reject", "k8s-rollout", "v2").status).toBe(0);
      paused.release();
      await expect(publishing).rejects.toMatchObject({
        code: "conflict",
        message: 'v2 of "k8s-rollout" is rejected now, no longer candidate: another decision on it came first; nothing was changed. Look again (skill history) before deciding.',
      });
      const v = await w.versions();
      expect([v.v1!.status, v.v2!.status]).toEqual(["probationary", "rejected"]);
      expect((await w.ctx.backend.skills.skillByName("k8s-rollout"))?.publishedVersionId).toBe(v.v1!.id);
    } finally {
      w.close();
    }
  });

  it("a reject of a version another process published meanwhile is refused naming it; it stays published", async () => {
    const w = world();
    try {
      const paused = pauseAtCall(w.ctx.backend.skills, "setStatus", { before: true });
      const rejecting = w.serviceOver(paused.target).reject("k8s-rollout", "v2", "alice", "not needed");
      await paused.reached;
      expect(w.skills("approve", "k8s-rollout", "v2").stdout).toBe("Published k8s-rollout v2 (v1 retired).\n");
      paused.release();
      await expect(rejecting).rejects.toMatchObject({ code: "conflict", message: expect.stringMatching(/^v2 of "k8s-rollout" is probationary now, no longer candidate: /) });
      const v = await w.versions();
      expect([v.v1!.status, v.v2!.status]).toEqual(["retired", "probationary"]);
    } finally {
      w.close();
    }
  });

  it("a rollback to a version another process rejected meanwhile is refused; the published version stays", async () => {
    const w = world();
    try {
      expect(w.skills("approve", "k8s-rollout", "v2").status).toBe(0);
      const paused = pauseAtCall(w.ctx.backend.skills, "movePointer", { before: true });
      const svc = w.serviceOver(paused.target);
      const rolling = svc.prepareRollback("k8s-rollout").then((move) => svc.rollback(move, "alice"));
      await paused.reached;
      expect(w.skills("reject", "k8s-rollout", "v1").status).toBe(0);
      paused.release();
      await expect(rolling).rejects.toMatchObject({ code: "conflict", message: expect.stringMatching(/^v1 of "k8s-rollout" is rejected now, no longer retired: /) });
      const v = await w.versions();
      expect([v.v1!.status, v.v2!.status]).toEqual(["rejected", "probationary"]);
    } finally {
      w.close();
    }
  });

  it("a trial that would promote a version another process rolled away from meanwhile leaves it retired (one live version)", async () => {
    const w = world();
    try {
      expect(w.skills("approve", "k8s-rollout", "v2").status).toBe(0);
      // one passing trial promotes
      const config = defaultConfig({ localUser: "alice" });
      config.evolution.lifecycle.promoteMinTrials = 1;
      config.evolution.lifecycle.promoteMinEta = 0;
      const paused = pauseAtCall(w.ctx.backend.skills, "setStatus", { before: true });
      const trial = w.serviceOver(paused.target, config).feedback("k8s-rollout", undefined, { passed: true }, null, "alice");
      await paused.reached;
      expect(w.skills("rollback", "k8s-rollout").stdout).toBe("Rolled k8s-rollout back to v1 (v2 retired).\n");
      paused.release();
      expect(await trial).toMatchObject({ seq: 2, status: "retired", trials: 1 });
      const v = await w.versions();
      expect([v.v1!.status, v.v2!.status]).toEqual(["active", "retired"]);
    } finally {
      w.close();
    }
  });

  it("a retire request approved while another process publishes a newer version does not retire the new one", async () => {
    const w = world();
    try {
      const v1 = (await w.versions()).v1!;
      await w.ctx.backend.evolution.addRequest({
        id: "srq_stale",
        kind: "retire",
        skillName: "k8s-rollout",
        versionId: v1.id,
        otherSkill: null,
        policyId: null,
        reportId: null,
        detail: { reason: "unused for 90 days" },
        createdAt: T0,
      });
      // paused after the approval's check that v1 is still the published version
      const paused = pauseAtCall(w.ctx.backend.skills, "skillByName");
      const evo = new EvolutionService({ store: w.ctx.backend.evolution, learning: w.ctx.backend.learning, skills: w.serviceOver(paused.target), config: w.ctx.config, clock: w.ctx.clock, llm: null });
      const approving = evo.approve("srq_stale", "alice");
      await paused.reached;
      expect(w.skills("approve", "k8s-rollout", "v2").stdout).toBe("Published k8s-rollout v2 (v1 retired).\n");
      paused.release();
      await expect(approving).rejects.toMatchObject({ code: "conflict", message: expect.stringContaining('the published version of "k8s-rollout" is now v2') });
      const v = await w.versions();
      expect([v.v1!.status, v.v2!.status]).toEqual(["retired", "probationary"]);
      expect((await w.ctx.backend.evolution.request("srq_stale"))?.status).toBe("pending");
    } finally {
      w.close();
    }
  });
});

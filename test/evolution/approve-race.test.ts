// Approve and decline of one skill request from two processes on one SQLite file. Approving ran
// the request's action and then recorded the decision, so a decline landing in between left the
// request "rejected" with its skill already retired. An approval now claims the request first
// (status "approving"), acts, then records "approved" from its claim: a decline meanwhile is
// refused, and an approval whose process died after its claim is finished by approving again or
// by a server's sweep (at its start and each minute).
import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { openChoreWorld, rng, task } from "../../bench/evolution/chore.js";
import { thisProcess } from "../../cli/process-ids.js";
import { EvolutionService } from "../../core/learning/evolution.js";
import type { EvolutionStore, SkillStore } from "../../stores/traits.js";
import { CLI, runCli, spawnCommandServer } from "../helpers/cli.js";
import { T0 } from "../helpers/memory.js";
import { pauseAtCall } from "../helpers/paused-call.js";
import { tempDir } from "../helpers/tmp.js";
import { k8sRolloutWorld } from "../skills/helpers.js";

const CRASH_CHILD = resolve(fileURLToPath(import.meta.url), "../../../dist/test/evolution/approve-crash-child.js");

/** k8s-rollout v1 published (and v2 a candidate) through the CLI, and a request to retire v1. */
async function world() {
  const base = k8sRolloutWorld();
  const { db, env, ctx } = base;
  const v1 = (await base.versions()).v1!;
  await ctx.backend.evolution.addRequest({ id: "srq_stale", kind: "retire", skillName: "k8s-rollout", versionId: v1.id, otherSkill: null, policyId: null, reportId: null, detail: { reason: "unused for 90 days" }, createdAt: T0 });
  /** this process's evolution service over these stores (paused where the test says) */
  const evolutionOver = (o: { skills?: SkillStore; evolution?: EvolutionStore } = {}) =>
    new EvolutionService({
      store: o.evolution ?? ctx.backend.evolution,
      learning: ctx.backend.learning,
      skills: base.serviceOver(o.skills ?? ctx.backend.skills),
      config: ctx.config,
      clock: ctx.clock,
      llm: null,
      processes: thisProcess,
    });
  const request = async () => (await ctx.backend.evolution.request("srq_stale"))!;
  /** approve `id` in a child process that is killed right after its claim (or its action, "before-finish") */
  const approveAndDie = (id: string, when?: "before-finish") =>
    spawnSync(process.execPath, [CRASH_CHILD, db, id, ...(when ? [when] : [])], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 30_000 });
  /** approve srq_stale in a child process that is killed right after its claim */
  const crashAfterClaim = () => {
    const r = approveAndDie("srq_stale");
    expect(r.stdout, r.stderr).toBe('{"claimed":true}\n');
    expect(r.signal).toBe("SIGKILL");
  };
  return { ...base, evolutionOver, request, approveAndDie, crashAfterClaim };
}

/**
 * Runs `serve --toolset skills` on the world's database (after `meanwhile`, when given) until
 * srq_stale is approved or `waitMs` passes; then the approval stands and v1 is retired.
 */
async function serveUntilApproved(w: Awaited<ReturnType<typeof world>>, waitMs: number, meanwhile?: () => Promise<void>) {
  const s = await spawnCommandServer(`exec "${process.execPath}" "${CLI}" serve --toolset skills --db "${w.db}"`, w.dir, w.env);
  try {
    await meanwhile?.();
    const deadline = Date.now() + waitMs;
    while ((await w.request()).status !== "approved" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  } finally {
    process.kill(-s.child.pid!, "SIGINT");
    await s.exited;
  }
  expect(await w.request()).toMatchObject({ status: "approved", decidedBy: "cli:alice" });
  expect((await w.versions()).v1!.status).toBe("retired");
}

describe("approve and decline of one skill request across processes (SQLite)", () => {
  it("a decline from another process while an approval is acting is refused naming the state; the approval finishes", async () => {
    const w = await world();
    try {
      // paused after its claim, just before it retires v1
      const paused = pauseAtCall(w.ctx.backend.skills, "setStatus", { before: true });
      const approving = w.evolutionOver({ skills: paused.target }).approve("srq_stale", "alice");
      await paused.reached;
      const declined = w.skills("decline", "srq_stale", "--reason", "keep it");
      expect(declined.status).toBe(1);
      expect(declined.stderr).toContain("request srq_stale is approving (approved by alice at ");
      expect(declined.stderr).toContain("so it can no longer be declined; nothing was changed");
      paused.release();
      expect(await approving).toMatchObject({ status: "approved", decidedBy: "alice" });
      expect((await w.versions()).v1!.status).toBe("retired");
    } finally {
      w.close();
    }
  });

  it("a decline whose request another process approved meanwhile fails; the request stays approved, not rejected", async () => {
    const w = await world();
    try {
      // paused after its read (pending), just before it records the decline
      const paused = pauseAtCall(w.ctx.backend.evolution, "decide", { before: true });
      const declining = w.evolutionOver({ evolution: paused.target }).reject("srq_stale", "alice", "keep it");
      await paused.reached;
      expect(w.skills("accept", "srq_stale").stdout).toBe("retire k8s-rollout: approved.\n");
      paused.release();
      await expect(declining).rejects.toMatchObject({ code: "conflict", message: "request srq_stale is already approved" });
      expect(await w.request()).toMatchObject({ status: "approved", decidedBy: "cli:alice" });
      expect((await w.versions()).v1!.status).toBe("retired");
    } finally {
      w.close();
    }
  });

  it("an approval another live process is carrying out is not taken over", async () => {
    const w = await world();
    try {
      // claimed by this (live) process, as an approval under way
      expect(await w.ctx.backend.evolution.claimApproval("srq_stale", { by: "alice", at: Date.now(), process: thisProcess.id })).toBe(true);
      const again = w.skills("accept", "srq_stale");
      expect(again.status).toBe(1);
      expect(again.stderr).toContain("request srq_stale is being approved already (by alice since ");
      expect((await w.versions()).v1!.status).toBe("probationary");
    } finally {
      w.close();
    }
  });

  it("an approval whose process died after its claim is listed as approving, cannot be declined, and approving it again finishes it", async () => {
    const w = await world();
    try {
      w.crashAfterClaim();
      expect((await w.versions()).v1!.status).toBe("probationary");
      expect(await w.request()).toMatchObject({ status: "approving", decidedBy: "cli:alice" });
      expect(w.skills("requests").stdout).toMatch(/^srq_stale · retire k8s-rollout · approving \(approved by cli:alice at \d{4}-\d\d-\d\dT[^)]+\)\n/);
      const declined = w.skills("decline", "srq_stale");
      expect(declined.status).toBe(1);
      expect(declined.stderr).toContain("request srq_stale is approving");
      expect(w.skills("accept", "srq_stale").stdout).toBe("retire k8s-rollout: approved.\n");
      expect((await w.versions()).v1!.status).toBe("retired");
      expect(await w.request()).toMatchObject({ status: "approved", decidedBy: "cli:alice", approvingProcess: null });
    } finally {
      w.close();
    }
  });

  it("a server starting finishes an approval whose process died after its claim", async () => {
    const w = await world();
    try {
      w.crashAfterClaim();
      await serveUntilApproved(w, 15_000);
    } finally {
      w.close();
    }
  });

  it("a running server finishes, within its minute sweep, an approval whose process died after the server started", async () => {
    const w = await world();
    try {
      await serveUntilApproved(w, 90_000, async () => {
        // (before: only a server's start and approving again finished it; this one has started already)
        await new Promise((r) => setTimeout(r, 1000));
        w.crashAfterClaim();
        expect(await w.request()).toMatchObject({ status: "approving" });
      });
    } finally {
      w.close();
    }
  }, 150_000);

  it("the sweep re-opens an approval whose process died when its action no longer applies; a decline may land then", async () => {
    const w = await world();
    try {
      w.crashAfterClaim();
      // a newer version published since: v1 is no longer the one to retire
      expect(w.skills("approve", "k8s-rollout", "v2").stdout).toBe("Published k8s-rollout v2 (v1 retired).\n");
      expect(await w.evolutionOver().finishApprovals()).toEqual({ finished: [], reopened: ["srq_stale"] });
      expect(await w.request()).toMatchObject({ status: "pending", decidedBy: null });
      expect((await w.versions()).v2!.status).toBe("probationary");
      expect(w.skills("decline", "srq_stale").stdout).toBe("retire k8s-rollout: rejected.\n");
    } finally {
      w.close();
    }
  });

  it("publishing by name a learned candidate whose approval died part way finishes that approval (its new tools granted)", async () => {
    const dir = tempDir("evo-approve-by-name-");
    const w = openChoreWorld(dir);
    try {
      const r = rng(7);
      for (let i = 0; i < 12; i++) await w.runTask(task(i), r, { skills: false });
      await w.worker.drain();
      const made = (await w.evolution.run(true)).find((o) => o.requestId)!;
      const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
      const child = spawnSync(process.execPath, [CRASH_CHILD, join(dir, "memory.db"), made.requestId!], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 30_000 });
      expect(child.stdout, child.stderr).toBe('{"claimed":true}\n');
      // (before: published around the stuck request, and refused, its tools never granted)
      const approved = runCli(["skills", "approve", made.skillName, "--db", join(dir, "memory.db")], env);
      expect(approved.stdout, approved.stderr).toBe(`Published ${made.skillName} v1 (request ${made.requestId} approved).\n`);
      expect(await w.evolution.store.request(made.requestId!)).toMatchObject({ status: "approved" });
      expect(await w.skills.grants(made.skillName)).toContain("bump_version");
    } finally {
      w.close();
    }
  });

  it("an approval that died after publishing, rolled back by a person since, is finished without publishing that version again", async () => {
    const w = await world();
    try {
      const v2 = (await w.versions()).v2!;
      await w.ctx.backend.evolution.addRequest({ id: "srq_pub", kind: "publish", skillName: "k8s-rollout", versionId: v2.id, otherSkill: null, policyId: null, reportId: null, detail: { seq: 2, newSkill: false, newTools: [] }, createdAt: T0 });
      const child = w.approveAndDie("srq_pub", "before-finish");
      expect(child.stdout, child.stderr).toBe('{"claimed":true}\ndying before finishing\n');
      expect(w.skills("rollback", "k8s-rollout").stdout).toBe("Rolled k8s-rollout back to v1 (v2 retired).\n");
      expect(w.skills("accept", "srq_pub").stdout).toBe("publish k8s-rollout: approved.\n");
      const v = await w.versions();
      expect([v.v1!.status, v.v2!.status]).toEqual(["active", "retired"]);
      expect((await w.ctx.backend.skills.skillByName("k8s-rollout"))?.publishedVersionId).toBe(v.v1!.id);
    } finally {
      w.close();
    }
  });

  it("a publish whose version a person rejected while its approval was stuck is closed as rejected, not re-opened", async () => {
    const w = await world();
    try {
      const v2 = (await w.versions()).v2!;
      await w.ctx.backend.evolution.addRequest({ id: "srq_pub", kind: "publish", skillName: "k8s-rollout", versionId: v2.id, otherSkill: null, policyId: null, reportId: null, detail: { seq: 2, newSkill: false, newTools: [] }, createdAt: T0 });
      const child = w.approveAndDie("srq_pub");
      expect(child.stdout, child.stderr).toBe('{"claimed":true}\n');
      expect(w.skills("reject", "k8s-rollout", "v2").stdout).toBe("Rejected k8s-rollout v2.\n");
      const again = w.skills("accept", "srq_pub");
      expect(again.status).toBe(1);
      expect(again.stderr).toContain('v2 of "k8s-rollout" was rejected');
      expect(await w.ctx.backend.evolution.request("srq_pub")).toMatchObject({ status: "rejected", decidedBy: "version-rejected" });
      expect(w.skills("requests").stdout).not.toContain("srq_pub");
    } finally {
      w.close();
    }
  });
});


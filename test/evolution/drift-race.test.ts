// Two servers sharing one database (two connections to one SQLite file, as two `serve` processes
// have) recompute policies at the same moment after new episodes moved a policy's gain. The move
// drifts the published skill's η once: one "eta" audit row, η = driftEta(η, gain) — not twice.
import { afterEach, describe, expect, it } from "vitest";
import { openChoreWorld, rng, task, type ChoreWorld } from "../../bench/evolution/chore.js";
import { defaultConfig } from "../../core/config.js";
import { driftEta } from "../../core/learning/lifecycle.js";
import { tempDir } from "../helpers/tmp.js";

const open: ChoreWorld[] = [];
afterEach(() => {
  for (const w of open.splice(0)) w.close();
});

describe("reward drift with two servers", () => {
  it("one move of a policy's gain drifts η once", async () => {
    const dir = tempDir("evo-race-");
    const a = openChoreWorld(dir);
    open.push(a);
    const r = rng(7);
    for (let i = 0; i < 12; i++) await a.runTask(task(i), r, { skills: false });
    await a.worker.drain();
    const made = (await a.evolution.run(true)).find((o) => o.requestId)!;
    await a.evolution.approve(made.requestId!, "cli:alice");
    const before = await a.skills.version(await a.skills.skill(made.skillName));
    const rd = rng(5);
    for (let i = 12; i < 16; i++) await a.runTask(task(i), rd, { skills: false });
    await a.worker.drain();

    const b = openChoreWorld(dir);
    open.push(b);
    await Promise.all([a.evolution.recomputePolicies(true), b.evolution.recomputePolicies(true)]);

    const drifts = (await a.skills.auditOf(made.skillName, 50)).filter((x) => x.action === "eta" && x.detail.cause === "drift");
    expect(drifts).toHaveLength(1);
    const gain = (await a.evolutionStore.policy(made.policyId))!.gain;
    const after = await a.skills.version(await a.skills.skill(made.skillName));
    expect(after.eta).toBeCloseTo(driftEta(before.eta, gain, defaultConfig().evolution.lifecycle), 12);
  });
});

// The curator asks; a person's "no" is an answer. A declined retirement or merge is not proposed
// again on the next pass (serve runs the curator every evolution.curator.intervalMs): a retirement
// only after the skill has gone unused for staleDays again since the decline, a merge only after
// one of the two published something new.
import { afterEach, describe, expect, it } from "vitest";
import { openChoreWorld, type ChoreWorld } from "../../bench/evolution/chore.js";
import { defaultConfig } from "../../core/config.js";
import { tempDir } from "../helpers/tmp.js";
import { DEPLOY_STEPS as body, publishDeployTwins } from "./helpers.js";

const DAY = 86_400_000;
const staleDays = defaultConfig().evolution.curator.staleDays;
let w: ChoreWorld | null = null;
afterEach(() => {
  w?.close();
  w = null;
});

const kinds = (rs: { kind: string; skillName: string; otherSkill: string | null }[]) => rs.map((r) => `${r.kind}:${r.skillName}${r.otherSkill ? `<-${r.otherSkill}` : ""}`).sort();

describe("the curator after a person declined", () => {
  it("does not ask the same question again until something changed", async () => {
    w = openChoreWorld(tempDir("evo-declined-"));
    const publish = await publishDeployTwins(w);
    w.clock.advance((staleDays + 5) * DAY);
    const first = await w.evolution.curate();
    expect(kinds(first)).toEqual(["merge:deploy-a<-deploy-b", "retire:deploy-a", "retire:deploy-b"]);
    for (const r of first) await w.evolution.reject(r.id, "cli:alice", "keep them as they are");

    // the next pass, and one a day later: nothing to ask
    expect(await w.evolution.curate()).toEqual([]);
    w.clock.advance(DAY);
    expect(await w.evolution.curate()).toEqual([]);
    expect(await w.evolution.requests()).toEqual([]);

    // unused for staleDays since the decline: the retirements are asked about again;
    // a new version of deploy-b: the pair is asked about again
    await publish("deploy-b", `${body}4. Check the health endpoint.\n`);
    w.clock.advance(staleDays * DAY);
    expect(kinds(await w.evolution.curate())).toEqual(["merge:deploy-a<-deploy-b", "retire:deploy-a", "retire:deploy-b"]);
  });

  it("remembers a declined merge however many other requests were declined since", async () => {
    w = openChoreWorld(tempDir("evo-declined-many-"));
    await publishDeployTwins(w);
    const first = await w.evolution.curate();
    expect(kinds(first)).toEqual(["merge:deploy-a<-deploy-b"]);
    await w.evolution.reject(first[0]!.id, "cli:alice", "keep both");
    // a busy learning loop: a thousand learned candidates declined since
    for (let i = 0; i < 1000; i++) {
      w.clock.advance(1000);
      await w.evolutionStore.addRequest({ id: `srq_pub${i}`, kind: "publish", skillName: `learned-${i}`, versionId: null, otherSkill: null, policyId: null, reportId: null, detail: {}, createdAt: w.clock.now() });
      expect(await w.evolutionStore.decide(`srq_pub${i}`, "rejected", "cli:alice", w.clock.now())).toBe(true);
    }
    expect(await w.evolution.curate()).toEqual([]);
  });
});


// The curator reads what is open and what a person declined, then files its questions. Another
// curator (a second server, or `skills curate`) filing the same question meanwhile, and a person
// declining it, both landed between that read and the filing: the question was filed again at
// once, the "no" ignored. Filing is now a compare-and-set on the read (EvolutionStore.proposeRequest):
// asked or answered since, nothing is filed. Two connections to one SQLite file.
import { afterEach, describe, expect, it } from "vitest";
import { openChoreWorld, type ChoreWorld } from "../../bench/evolution/chore.js";
import { defaultConfig } from "../../core/config.js";
import { EvolutionService } from "../../core/learning/evolution.js";
import { parseSkillMd, renderSkillMd } from "../../core/skills/skill-md.js";
import { pauseAtCall } from "../helpers/paused-call.js";
import { tempDir } from "../helpers/tmp.js";

const DAY = 86_400_000;
const staleDays = defaultConfig().evolution.curator.staleDays;
const worlds: ChoreWorld[] = [];
afterEach(() => {
  for (const w of worlds.splice(0)) w.close();
});

describe("a curator whose question another curator filed and a person declined meanwhile", () => {
  it("files nothing: the question was asked once and the no stands", async () => {
    const dir = tempDir("evo-curate-race-");
    const a = openChoreWorld(dir);
    worlds.push(a);
    const p = await a.skills.propose(parseSkillMd(renderSkillMd({ frontmatter: { name: "deploy-a", description: "Deploy the web service to staging" }, body: "1. Build.\n2. Roll out.\n" })), { actor: "cli:alice", author: "human", ref: null });
    await a.skills.publish(await a.skills.preparePublish("deploy-a", p.version.id), "cli:alice");
    const b = openChoreWorld(dir);
    worlds.push(b);
    for (const w of [a, b]) w.clock.advance((staleDays + 5) * DAY);
    // curator A has read what is open and declined (nothing), and is about to file
    const paused = pauseAtCall(a.evolutionStore, "lastTrialAt");
    const curatorA = new EvolutionService({ store: paused.target, learning: a.learningStore, skills: a.skills, config: a.config, clock: a.clock, llm: null });
    const filingA = curatorA.curate();
    await paused.reached;
    // meanwhile curator B files the retirement and the person declines it
    const [asked] = await b.evolution.curate();
    expect(asked).toMatchObject({ kind: "retire", skillName: "deploy-a", status: "pending" });
    await b.evolution.reject(asked!.id, "cli:alice", "keep it");
    paused.release();
    expect(await filingA).toEqual([]);
    expect(await a.evolutionStore.requests({ kinds: ["retire"] })).toMatchObject([{ id: asked!.id, status: "rejected", decidedBy: "cli:alice" }]);
  });
});

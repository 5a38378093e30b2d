// The context prefix offers relevant skills (name, description, version, how to load) within the
// same token budget as the memories; a pinned or strongly matching skill is inlined when it fits.
import { beforeAll, describe, expect, it } from "vitest";
import { MemoryPrefixBuilder, SKILLS_TITLE } from "../../core/retrieval/prefix.js";
import { loadTokenCounter, type TokenCounter } from "../../core/retrieval/tokens.js";
import { CatalogOffers } from "../../core/skills/offers.js";
import type { SkillActor } from "../../core/skills/service.js";
import { parseSkillMd } from "../../core/skills/skill-md.js";
import { openSkills } from "../../cli/skills-context.js";
import { modelOrigin, openTestMemory, req } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";
import { skillMd } from "./helpers.js";

let tokens: TokenCounter;
beforeAll(async () => {
  tokens = await loadTokenCounter("o200k_base");
});

const person: SkillActor = { actor: "cli:alice", author: "human", ref: "alice" };

async function world() {
  const m = openTestMemory(tempDir());
  const { service } = openSkills(m);
  const add = async (name: string, description: string, body: string) => {
    await service.propose(parseSkillMd(skillMd(name, description, body)), person);
    await service.publish(await service.preparePublish(name), "cli:alice");
  };
  await add("helm-rollout", "Roll out a helm chart to the staging cluster and watch the pods.", "1. helm upgrade --install\n2. kubectl rollout status");
  await add("csv-cleanup", "Clean a CSV export: trim whitespace, fix encodings, drop duplicate rows.", "Use the csv module.");
  await service.propose(parseSkillMd(skillMd("helm-secrets", "Rotate helm chart secrets on the staging cluster.", "Candidate only.")), person);
  const builder = new MemoryPrefixBuilder({
    service: m.service,
    toggles: m.toggles,
    edgesOf: (id) => m.store.edgesOf(id),
    tokens,
    config: m.config,
    skills: new CatalogOffers(service),
  });
  return { m, service, builder };
}

describe("skills in the context prefix", () => {
  it("offers matching published skills with version and how to load them, never candidates", async () => {
    const { m, builder } = await world();
    await m.service.remember(req(), { content: "The staging cluster runs in the eu-west region", kind: "project" }, modelOrigin());
    const r = await builder.build({ scope: req(), task: "roll out the new helm chart to staging" });
    expect(r.text).toContain(`${SKILLS_TITLE}\n- helm-rollout (v1): Roll out a helm chart to the staging cluster and watch the pods.`);
    expect(r.text).not.toContain("csv-cleanup");
    expect(r.text).not.toContain("helm-secrets");
    expect(r.text).toContain("Project context:");
    expect(r.items.map((i) => i.type)).toEqual(["memory", "skill"]);
    expect(r.tokensUsed).toBe(tokens.count(r.text));
    m.close();
  });

  it("inlines a strongly matching or pinned skill's body when it fits, otherwise says how to load it", async () => {
    const { m, service, builder } = await world();
    const strong = await builder.build({ scope: req(), task: "helm rollout staging cluster pods" });
    expect(strong.text).toContain("Body: 1. helm upgrade --install ⏎ 2. kubectl rollout status");
    expect(strong.items[0]).toMatchObject({ type: "skill", kind: "skill_inlined" });
    const weak = await builder.build({ scope: req(), task: "what should I check about the pods of the payments service today" });
    expect(weak.text).toContain('— skill_view {"name":"helm-rollout"}');
    expect(weak.text).not.toContain("Body:");
    await service.setPinned("helm-rollout", true, "cli:alice");
    const pinned = await builder.build({ scope: req(), task: "what should I check about the pods of the payments service today" });
    expect(pinned.text).toContain("Body: 1. helm upgrade");
    m.close();
  });

  it("stays within the budget, hides skills disabled here, and offers nothing when the skills toolset is off", async () => {
    const { m, service, builder } = await world();
    for (const budget of [40, 80, 150, 400]) {
      const r = await builder.build({ scope: req(), task: "roll out the new helm chart to staging", budgetTokens: budget });
      expect(tokens.count(r.text)).toBeLessThanOrEqual(budget);
    }
    const tight = await builder.build({ scope: req(), task: "roll out the new helm chart to staging", budgetTokens: 40 });
    expect(tight.items).toEqual([]);
    expect(tight.omitted.some((o) => o.reason === "budget")).toBe(true);
    await service.setEnabled("helm-rollout", req(), "thread", false, "u");
    expect((await builder.build({ scope: req(), task: "roll out the new helm chart to staging" })).text).toBe("");
    expect((await builder.build({ scope: req({ thread: "other", session: "s9" }), task: "roll out the new helm chart to staging" })).text).toContain("helm-rollout");
    await m.toggles.set("skills", "s9", false, { at: 0, actor: "user", action: "toggle", targetKind: "toolset", targetId: "skills@s9", detail: {} });
    expect((await builder.build({ scope: req({ thread: "s9", session: "s9" }), task: "roll out the new helm chart to staging" })).text).toBe("");
    m.close();
  });
});

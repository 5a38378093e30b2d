// The person's path (skills evolve / requests / accept / decline / curate / thumb) and the curator:
// proposals only, never deletes, pinned skills untouched, every transition audited. A policy
// whose content drifts after its skill was built yields a new version of the same skill.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openChoreWorld, rng, task } from "../../bench/evolution/chore.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";
import { DEPLOY_STEPS, publishDeployTwins, publisher } from "./helpers.js";

const cli = (dir: string, ...args: string[]) => runCli(["skills", ...args, "--db", join(dir, "memory.db")], { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" });

describe("evolution from the command line", () => {
  it("evolve → requests (with the eval report) → accept publishes; thumb moves η; curate proposes", async () => {
    const dir = tempDir("evo-cli-");
    const w = openChoreWorld(dir);
    const r = rng(7);
    for (let i = 0; i < 12; i++) await w.runTask(task(i), r, { skills: false });
    await w.worker.drain();
    w.close();

    const evolve = cli(dir, "evolve");
    expect(evolve.status, evolve.stderr).toBe(0);
    expect(evolve.stdout).toMatch(/passed the gate, request srq/);
    const list = cli(dir, "requests");
    expect(list.stdout).toMatch(/publish .* v1 · pending/);
    expect(list.stdout).toMatch(/new tools \(granted on approval\): bump_version, update_changelog, run_tests, git_commit, git_tag/);
    expect(list.stdout).toMatch(/eval: passed · candidate 100% done, 5\.0 steps · baseline \(no skill\)/);
    const id = /^(srq\S+)/m.exec(list.stdout)![1]!;
    const acc = cli(dir, "accept", id);
    expect(acc.stdout).toMatch(/publish .*: approved\./);
    expect(cli(dir, "requests").stdout).toMatch(/No pending requests/);
    const name = /publish (\S+?):/.exec(acc.stdout)![1]!;
    expect(cli(dir, "list").stdout).toMatch(new RegExp(`${name} · v1 probationary η 0\\.50`));
    expect(cli(dir, "thumb", name, "up").stdout).toMatch(/η 0\.60/);
    expect(cli(dir, "evolve").stdout).toMatch(/No eligible policy needs a new candidate/);
  });
});

describe("deciding a filed candidate another way", () => {
  async function filed(dir: string): Promise<{ id: string; name: string }> {
    const w = openChoreWorld(dir);
    const r = rng(7);
    for (let i = 0; i < 12; i++) await w.runTask(task(i), r, { skills: false });
    await w.worker.drain();
    w.close();
    expect(cli(dir, "evolve").status).toBe(0);
    const list = cli(dir, "requests").stdout;
    return { id: /^(srq\S+)/m.exec(list)![1]!, name: /publish (\S+?) v1 · pending/.exec(list)![1]! };
  }

  it("skills reject NAME closes the learning loop's request for that version; --all lists it decided", async () => {
    const dir = tempDir("evo-cli-");
    const { id, name } = await filed(dir);
    expect(cli(dir, "reject", name).stdout).toBe(`Rejected ${name} v1.\n`);
    expect(cli(dir, "requests").stdout).toBe("No pending requests.\n");
    const all = JSON.parse(cli(dir, "requests", "--all", "--json").stdout) as { request: { id: string; status: string; decidedBy: string } }[];
    expect(all.map((x) => [x.request.id, x.request.status, x.request.decidedBy])).toEqual([[id, "rejected", "cli:alice"]]);
    // deciding it again is refused, through either door
    expect(cli(dir, "accept", id).stderr).toMatch(/already rejected/);
    expect(cli(dir, "reject", name, "v1").stderr).toMatch(/v1 of ".*" is already rejected/);
  });

  it("skills approve NAME approves through the request: the new skill gets its verified tools, the request is closed", async () => {
    const dir = tempDir("evo-cli-");
    const { id, name } = await filed(dir);
    expect(cli(dir, "approve", name).stdout).toBe(`Published ${name} v1 (request ${id} approved).\n`);
    const granted = /^Granted tools: (.*)$/m.exec(cli(dir, "show", name).stdout)![1]!.split(", ").sort();
    expect(granted).toEqual(["bump_version", "git_commit", "git_tag", "run_tests", "update_changelog"]);
    expect(cli(dir, "requests").stdout).toBe("No pending requests.\n");
    expect(cli(dir, "requests", "--all").stdout).toMatch(new RegExp(`^${id} · publish ${name} v1 · approved`));
  });
});

describe("the curator", () => {
  it("proposes retiring stale skills and merging duplicates; pinned skills untouched; approval retires, never deletes", async () => {
    const w = openChoreWorld(tempDir("evo-cur-"));
    const publish = publisher(w);
    await publish("deploy-web", DEPLOY_STEPS);
    await publish("deploy-web-copy", DEPLOY_STEPS);
    await publish("write-notes", "1. List merged pull requests.\n2. Summarise them.\n", "Write release notes from merged pull requests");
    await publish("pinned-old", "1. Copy the database file.\n", "An old pinned procedure for backups");
    await w.skills.setPinned("pinned-old", true, "cli:alice");
    w.clock.advance(10 * 86_400_000);
    await w.skills.feedback("write-notes", undefined, { passed: true }, "t", "model:t");
    w.clock.advance(25 * 86_400_000);
    const made = await w.evolution.curate();
    const kinds = made.map((r) => `${r.kind}:${r.skillName}${r.otherSkill ? `<-${r.otherSkill}` : ""}`).sort();
    expect(kinds).toEqual(["merge:deploy-web<-deploy-web-copy", "retire:deploy-web", "retire:deploy-web-copy"]);
    // nothing changed yet; asking twice does not duplicate
    expect((await w.skills.version(await w.skills.skill("deploy-web-copy"))).status).toBe("probationary");
    expect(await w.evolution.curate()).toEqual([]);
    const merge = made.find((r) => r.kind === "merge")!;
    await w.evolution.approve(merge.id, "cli:alice");
    const copy = await w.skills.history("deploy-web-copy");
    expect(copy.versions[0]!.status).toBe("retired");
    expect(copy.skill.publishedVersionId).toBe(copy.versions[0]!.id);
    expect((await w.skills.version(await w.skills.skill("pinned-old"))).status).toBe("probationary");
    const declined = made.find((r) => r.kind === "retire" && r.skillName === "deploy-web")!;
    await w.evolution.reject(declined.id, "cli:alice", "still used");
    expect((await w.skills.version(await w.skills.skill("deploy-web"))).status).toBe("probationary");
    expect((await w.skills.auditOf("deploy-web-copy", 20)).map((a) => a.action)).toContain("retire");
    w.close();
  });
});

describe("the curator's merges", () => {
  it("one request per pair whichever way η points, several pairs side by side, and never a merge into a skill no longer live", async () => {
    const w = openChoreWorld(tempDir("evo-merge-"));
    const publish = await publishDeployTwins(w);
    await publish("deploy-c", DEPLOY_STEPS);
    const pairs = async () => (await w.evolution.requests()).filter((r) => r.kind === "merge").map((r) => `${r.skillName}<-${r.otherSkill}`).sort();
    await w.evolution.curate();
    // three pairs, all pending (a newer request about a→b used to supersede the one about a→c)
    expect(await pairs()).toEqual(["deploy-a<-deploy-b", "deploy-a<-deploy-c", "deploy-b<-deploy-c"]);
    expect(await w.evolution.curate()).toEqual([]);
    // b becomes the more reliable one: the same pair is not asked about the other way round
    await w.skills.feedback("deploy-b", undefined, { passed: true }, "t", "model:t");
    expect(await w.evolution.curate()).toEqual([]);
    expect(await pairs()).toHaveLength(3);
    // approving a←b retires b; then b←c would merge c into a retired skill: refused, c stays live
    const byPair = async (pair: string) => (await w.evolution.requests()).find((r) => `${r.skillName}<-${r.otherSkill}` === pair)!;
    await w.evolution.approve((await byPair("deploy-a<-deploy-b")).id, "cli:alice");
    await expect(w.evolution.approve((await byPair("deploy-b<-deploy-c")).id, "cli:alice")).rejects.toThrow(/merges deploy-c into deploy-b, which is no longer live \(retired\); decline it/);
    expect((await w.skills.version(await w.skills.skill("deploy-c"))).status).toBe("probationary");
    await w.evolution.approve((await byPair("deploy-a<-deploy-c")).id, "cli:alice");
    expect((await w.skills.version(await w.skills.skill("deploy-a"))).status).toBe("probationary");
    w.close();
  });
});

describe("a merge is about the versions the curator measured", () => {
  it("a duplicate updated before the approval is not merged (conflict, exit 1); the next pass asks about the new version, and that is merged", async () => {
    const dir = tempDir("evo-merge-moved-");
    const w = openChoreWorld(dir);
    const publish = await publishDeployTwins(w);
    const [first] = await w.evolution.curate();
    expect(first).toMatchObject({ kind: "merge", skillName: "deploy-a", otherSkill: "deploy-b", detail: { keepSeq: 1, dropSeq: 1 } });
    // deploy-b changes while the request waits for a person
    await publish("deploy-b", `${DEPLOY_STEPS}4. Check the health endpoint.\n`);
    w.close();

    const refused = cli(dir, "accept", first!.id);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/merges deploy-b into deploy-a, but deploy-b is now v2 \(the request measured v1\); nobody reviewed that version for this merge, so nothing was retired/);
    const show = () => cli(dir, "show", "deploy-b").stdout;
    expect(show()).toMatch(/v2 probationary ← published/);

    // the curator measures the pair again: one request, about v2, in place of the first
    expect(cli(dir, "curate").status).toBe(0);
    const all = JSON.parse(cli(dir, "requests", "--all", "--json").stdout) as { request: { id: string; kind: string; status: string; detail: Record<string, unknown> } }[];
    const merges = all.map((x) => x.request).filter((r) => r.kind === "merge");
    expect(merges.map((r) => [r.id === first!.id ? "first" : "new", r.status, r.detail.dropSeq])).toEqual(expect.arrayContaining([["first", "superseded", 1], ["new", "pending", 2]]));
    expect(merges).toHaveLength(2);
    const again = merges.find((r) => r.status === "pending")!;
    const ok = cli(dir, "accept", again.id);
    expect(ok.status, ok.stderr).toBe(0);
    expect(show()).toMatch(/v2 retired ← published/);
  });
});

describe("the curator's retirements", () => {
  it("a retire request is about the version found stale: a newer one published since is not retired by it", async () => {
    const w = openChoreWorld(tempDir("evo-retire-"));
    const publishAs = publisher(w);
    const publish = (body: string) => publishAs("tidy", body, "Tidy the repository");
    await publish("1. Remove build outputs.\n");
    w.clock.advance(40 * 86_400_000);
    const [retire] = await w.evolution.curate();
    expect(retire).toMatchObject({ kind: "retire", skillName: "tidy" });
    await publish("1. Remove build outputs.\n2. Prune merged branches.\n");
    await expect(w.evolution.approve(retire!.id, "cli:alice")).rejects.toThrow(/no longer the published one .* decline it/);
    expect((await w.skills.version(await w.skills.skill("tidy"))).seq).toBe(2);
    expect((await w.skills.version(await w.skills.skill("tidy"))).status).toBe("probationary");
    w.close();
  });
});

describe("policy drift", () => {
  it("a drifted policy yields a new candidate version of the same skill, gated against the published one", async () => {
    const w = openChoreWorld(tempDir("evo-drift-"));
    const r = rng(7);
    for (let i = 0; i < 12; i++) await w.runTask(task(i), r, { skills: false });
    await w.worker.drain();
    const made = (await w.evolution.run(true)).find((o) => o.requestId)!;
    await w.evolution.approve(made.requestId!, "cli:alice");
    const policy = (await w.evolutionStore.policy(made.policyId))!;
    // the same pattern, but its recorded arguments changed: a new content hash for the same signature
    await w.evolutionStore.savePolicy({ ...policy, steps: policy.steps.map((s, i) => (i === 0 ? { ...s, argsShape: '{"package":"<name>","level":"<level>","preid":"<tag>"}' } : s)), contentHash: "drifted" }, "unused", w.clock.now());
    const again = await w.evolution.run(false);
    expect(again.map((o) => o.skillName)).toEqual([made.skillName]);
    const rep = await w.evolution.report(again[0]!.reportId!);
    expect(rep!.report.baseline.label).toBe(`${made.skillName} v1`);
    // same procedure as v1: it does not beat the published version, so nothing changes
    expect(again[0]!.passed).toBe(false);
    expect((await w.skills.history(made.skillName)).versions).toHaveLength(1);
    w.close();
  });
});

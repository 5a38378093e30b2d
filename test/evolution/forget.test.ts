// Forgetting a memory reaches the skills the learning loop built from conversations that held it:
// the candidate or published version the agent wrote, its publish request and diff, the policy's
// tasks, golden tasks, trial notes and the skill search index. A version a person wrote is theirs
// and stays; so does what another user's sessions taught.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openChoreWorld, rng, task, type ChoreWorld } from "../../bench/evolution/chore.js";
import { WITHHELD_SKILL_TEXT } from "../../core/learning/skill-forget.js";
import type { RequestScope } from "../../core/memory/scope.js";
import { parseSkillMd, renderSkillMd } from "../../core/skills/skill-md.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { runCli } from "../helpers/cli.js";
import { holding } from "../helpers/holding.js";
import { tempDir } from "../helpers/tmp.js";

let w: ChoreWorld | null = null;
afterEach(() => {
  w?.close();
  w = null;
});

const ALICE: RequestScope = { user: "alice", project: "/work/app", session: "root", thread: "root", ancestors: [] };
const BY_USER = { actor: "user" as const, threadId: null, toolCallId: null };

function holdingIn(dir: string, needle: string): string[] {
  const db = openDatabase(join(dir, "memory.db"), { readonly: true });
  try {
    return holding(db, needle);
  } finally {
    db.close();
  }
}

/** Twelve release chores whose request says `extra` too; the worker learns from them and the loop files a candidate. */
async function learnChores(world: ChoreWorld, extra: (i: number) => string) {
  const r = rng(7);
  for (let i = 0; i < 12; i++) {
    const t = task(i);
    await world.runTask({ ...t, text: `${t.text}. ${extra(i)}` }, r, { skills: false });
  }
  await world.worker.drain();
  const made = (await world.evolution.run(true)).find((o) => o.passed && o.requestId);
  expect(made, "the loop filed no candidate").toBeTruthy();
  return made!;
}

describe("forget and the skills the learning loop built", () => {
  it("memory forget from the command line withdraws the candidate built from conversations quoting the memory; evolving again brings nothing back", { timeout: 60_000 }, async () => {
    const dir = tempDir("evo-forget-");
    w = openChoreWorld(dir);
    const content = "My garage door code is zorblax-7781";
    const id = (await w.ctx.service.remember(ALICE, { content }, BY_USER)).record.id;
    const made = await learnChores(w, () => content);
    const v = (await w.skills.history(made.skillName)).versions.find((x) => x.id === made.versionId)!;
    expect(v).toMatchObject({ author: "agent", status: "candidate" });
    expect(v.body).toContain(content);
    await w.evolutionStore.addGoldenTask(made.skillName, `Release gamma. ${content}`, ["bump_version"], w.clock.now());
    await w.evolutionStore.addGoldenTask(made.skillName, "Release gamma with a patch bump", ["bump_version"], w.clock.now());
    w.close();
    w = null;
    expect(holdingIn(dir, "zorblax")).toEqual(
      expect.arrayContaining(["learning_policies.pattern", "skill_golden_tasks.task", "skill_requests.detail", "skill_versions.body"]),
    );

    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice", INFINITY_HOME: join(dir, "no-infinity") };
    const r = runCli(["memory", "forget", id, "--db", join(dir, "memory.db")], env);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/forgot 1 memory/);
    expect(holdingIn(dir, "zorblax")).toEqual([]);
    expect(holdingIn(dir, "garage door")).toEqual([]);
    // the id stays only where a forget keeps it: the tombstone and the audit trail of the memory
    expect(holdingIn(dir, id)).toEqual(["audit_log.detail", "audit_log.target_id", "memories.id", "memories.lineage_id"]);

    w = openChoreWorld(dir);
    const after = (await w.skills.history(made.skillName)).versions.find((x) => x.id === made.versionId)!;
    expect(after).toMatchObject({ status: "rejected", description: WITHHELD_SKILL_TEXT, body: `${WITHHELD_SKILL_TEXT}\n`, liveOrder: null, author: "agent" });
    expect(await w.skills.files(after)).toEqual([]);
    expect(await w.evolutionStore.request(made.requestId!)).toMatchObject({ status: "rejected", decidedBy: "forget" });
    expect((await w.evolutionStore.request(made.requestId!))!.detail.diff).toBe(WITHHELD_SKILL_TEXT);
    expect((await w.evolutionStore.goldenTasks(made.skillName)).map((g) => g.task)).toEqual(["Release gamma with a patch bump"]);
    const policy = (await w.evolutionStore.policy(made.policyId))!;
    expect(policy).toMatchObject({ eligible: false, tasks: [] });
    // the words only the forgotten sentence gave are no key terms any more
    expect(policy.keyTerms).not.toContain("garage");
    const audit = await w.skills.auditOf(made.skillName, 10);
    expect(audit.filter((a) => a.action === "withdraw").map((a) => a.actor)).toEqual(["forget", "forget"]);
    expect(audit.find((a) => a.action === "withdraw" && a.detail.version === made.versionId)?.detail).toMatchObject({ seq: 1, from: "candidate", cause: "forget" });

    // the loop runs again: its episodes are blank, nothing is built from them
    await w.worker.drain();
    expect((await w.evolution.run(true)).filter((o) => o.versionId)).toEqual([]);
    expect(holdingIn(dir, "zorblax")).toEqual([]);
  });

  it("a published version gives way to the live one before it, which search finds again; the person's own version keeps the text", { timeout: 60_000 }, async () => {
    const dir = tempDir("evo-forget-");
    w = openChoreWorld(dir);
    const content = "My garage door code is zorblax-7781";
    const id = (await w.ctx.service.remember(ALICE, { content }, BY_USER)).record.id;
    const made = await learnChores(w, () => content);
    const name = made.skillName;
    const agentVersion = (await w.skills.history(name)).versions.find((x) => x.id === made.versionId)!;
    // a person's version of that skill went live first, quoting the code in its own words
    const own = parseSkillMd(
      renderSkillMd({
        frontmatter: { name, description: "Release a package: bump, changelog, tests, commit, tag", "allowed-tools": agentVersion.allowedTools },
        body: `1. Call \`bump_version\`.\n2. Call \`update_changelog\`.\n3. Call \`run_tests\`.\n4. Call \`git_commit\`.\n5. Call \`git_tag\`.\n\n(${content})\n`,
      }),
    );
    const mine = (await w.skills.propose(own, { actor: "cli:alice", author: "human", ref: "alice" })).version;
    await w.skills.grant(name, agentVersion.allowedTools, "cli:alice");
    await w.skills.publish(await w.skills.preparePublish(name, mine.id), "cli:alice");
    // then the learned one was approved over it, and reported on with a note quoting the code
    await w.evolution.approve(made.requestId!, "cli:alice");
    expect((await w.skills.skill(name)).publishedVersionId).toBe(agentVersion.id);
    await w.skills.feedback(name, undefined, { passed: true, note: `opened it with ${content}` }, "chore-x", "model:chore-x");

    await w.ctx.service.forget({ owner: "alice" }, [id], BY_USER);
    const skill = await w.skills.skill(name);
    expect(skill.publishedVersionId).toBe(mine.id);
    const versions = (await w.skills.history(name)).versions;
    expect(versions.find((x) => x.id === mine.id)).toMatchObject({ status: "active", body: own.body, author: "human" });
    expect(versions.find((x) => x.id === agentVersion.id)).toMatchObject({ status: "rejected", body: `${WITHHELD_SKILL_TEXT}\n`, liveOrder: null });
    expect((await w.skills.search(w.scope, task(3).text)).map((h) => h.version.id)).toEqual([mine.id]);
    const actions = (await w.skills.auditOf(name, 5)).map((a) => [a.action, a.actor]);
    expect(actions).toEqual(expect.arrayContaining([["rollback", "forget"], ["withdraw", "forget"]]));
    await w.ctx.store.purged();
    // only the person's own text holds it
    expect(holding(w.ctx.db, "zorblax")).toEqual(["skill_versions.body"]);
    expect(w.ctx.db.prepare(`SELECT id FROM skill_versions WHERE body LIKE '%zorblax%'`).pluck().all()).toEqual([mine.id]);
  });

  it("a skill the model proposed quoting the memory, published and pinned, is retired and leaves the search index", { timeout: 60_000 }, async () => {
    const dir = tempDir("evo-forget-");
    w = openChoreWorld(dir);
    const content = "The staging vault opens with quokkavault-5521";
    const id = (await w.ctx.service.remember(ALICE, { content }, BY_USER)).record.id;
    const doc = parseSkillMd(
      renderSkillMd({
        frontmatter: { name: "staging-vault", description: `Open the staging vault (${content})`, "allowed-tools": ["shell"] },
        body: "1. Call `shell` to open it.\n",
      }),
    );
    const v = (await w.skills.propose(doc, { actor: "model:t-1", author: "agent", ref: "thread t-1" })).version;
    await w.skills.grant("staging-vault", ["shell"], "cli:alice");
    await w.skills.publish(await w.skills.preparePublish("staging-vault", v.id), "cli:alice");
    await w.skills.setPinned("staging-vault", true, "cli:alice");
    expect((await w.skills.search(w.scope, "quokkavault")).map((h) => h.skill.name)).toEqual(["staging-vault"]);
    expect(holding(w.ctx.db, "quokkavault")).toEqual(expect.arrayContaining(["skill_fts_content.c1", "skill_fts_data.block", "skill_versions.description"]));

    await w.ctx.service.forget({ owner: "alice" }, [id], BY_USER);
    await w.ctx.store.purged();
    expect(holding(w.ctx.db, "quokkavault")).toEqual([]);
    expect(holding(w.ctx.db, "staging vault opens")).toEqual([]);
    expect(await w.skills.search(w.scope, "quokkavault")).toEqual([]);
    const skill = await w.skills.skill("staging-vault");
    expect(skill).toMatchObject({ publishedVersionId: v.id, pinned: true });
    expect(await w.skills.version(skill)).toMatchObject({ status: "rejected", description: WITHHELD_SKILL_TEXT });
    expect((await w.skills.auditOf("staging-vault", 2)).map((a) => a.action)).toEqual(["withdraw", "retire"]);
    // nothing to roll back to, and it cannot be published again
    await expect(w.skills.prepareRollback("staging-vault")).rejects.toThrow(/no earlier published version/);
    await expect(w.skills.preparePublish("staging-vault", v.id)).rejects.toThrow(/already published|rejected/);
  });

  it("rejecting a candidate extracted from the chores' user turns withdraws the skill quoting those turns", { timeout: 60_000 }, async () => {
    const dir = tempDir("evo-forget-");
    w = openChoreWorld(dir);
    const made = await learnChores(w, () => "I prefer the Quokkatheme colour scheme.");
    const pending = (await w.ctx.service.pending({ owner: "alice" }, 10)).items;
    expect(pending.map((p) => p.content)).toEqual(["User prefers the Quokkatheme colour scheme."]);
    expect((await w.skills.history(made.skillName)).versions[0]!.body).toContain("I prefer the Quokkatheme colour scheme.");

    await w.ctx.service.reject({ owner: "alice" }, [pending[0]!.id], BY_USER);
    await w.ctx.store.purged();
    expect(holding(w.ctx.db, "Quokkatheme")).toEqual([]);
    expect((await w.skills.history(made.skillName)).versions[0]).toMatchObject({ status: "rejected", body: `${WITHHELD_SKILL_TEXT}\n` });
  });

  it("a long memory said in full in each chore: the draft quoted only its first characters, and that quote goes too", { timeout: 60_000 }, async () => {
    const dir = tempDir("evo-forget-");
    w = openChoreWorld(dir);
    const content =
      "Remember for later: the quarterly release checklist lives in the zorblax binder on the second shelf of the east office, behind the printer";
    const id = (await w.ctx.service.remember(ALICE, { content }, BY_USER)).record.id;
    const r = rng(7);
    for (let i = 0; i < 12; i++) await w.runTask({ ...task(i), text: `${content}. ${task(i).text}` }, r, { skills: false });
    await w.worker.drain();
    const made = (await w.evolution.run(true)).find((o) => o.passed && o.requestId)!;
    const body = (await w.skills.history(made.skillName)).versions[0]!.body;
    expect(body).toContain(content.slice(0, 100));
    expect(body).not.toContain(content);

    await w.ctx.service.forget({ owner: "alice" }, [id], BY_USER);
    await w.ctx.store.purged();
    expect(holding(w.ctx.db, "zorblax binder")).toEqual([]);
    expect(holding(w.ctx.db, "quarterly release checklist")).toEqual([]);
  });

  it("finds copies past the first page of a long scan, in every table it reads", { timeout: 60_000 }, async () => {
    const dir = tempDir("evo-forget-");
    w = openChoreWorld(dir);
    const db = w.ctx.db;
    const n = 4500;
    const at = (i: number) => i === n - 2;
    db.transaction(() => {
      db.prepare(`INSERT INTO skills (id, name, created_at, updated_at) VALUES ('sk', 'big-skill', 1, 1)`).run();
      const v = db.prepare(
        `INSERT INTO skill_versions (id, skill_id, seq, content_hash, description, frontmatter, body, allowed_tools, author, trust, status, eta, created_at)
         VALUES (?, 'sk', ?, ?, 'a skill', '{}', ?, '[]', 'agent', 'agent_proposed', 'rejected', 0.5, 1)`,
      );
      const rq = db.prepare(`INSERT INTO skill_requests (id, kind, skill_name, status, detail, created_at) VALUES (?, 'retire', 'big-skill', 'approved', ?, 1)`);
      const tr = db.prepare(`INSERT INTO skill_trials (version_id, passed, note, at) VALUES ('v-0', 1, ?, 1)`);
      const rp = db.prepare(`INSERT INTO skill_eval_reports (skill_name, passed, report, created_at) VALUES ('big-skill', 1, ?, 1)`);
      const gt = db.prepare(`INSERT INTO skill_golden_tasks (skill_name, task, tools, created_at) VALUES ('big-skill', ?, '[]', 1)`);
      for (let i = 0; i < n; i++) {
        v.run(`v-${i}`, i + 1, `h${i}`, at(i) ? "quoted: the vault opens with tern-zephyr-88" : "1. Call `x`.");
        rq.run(`rq-${i}`, JSON.stringify({ reason: i === n - 3 ? "saw TERN-ZEPHYR-88" : "stale" }));
        tr.run(i === n - 4 ? "tern-zephyr-88 worked" : "ok");
        rp.run(JSON.stringify({ reasons: [i === n - 5 ? "tern-zephyr-88" : "fine"] }));
        gt.run(i === n - 6 ? "open with tern-zephyr-88" : "a task");
      }
    })();
    const saved = await w.ctx.service.remember(ALICE, { content: "tern-zephyr-88" }, BY_USER);
    await w.ctx.service.forget({ owner: "alice" }, [saved.record.id], BY_USER);
    await w.ctx.store.purged();
    expect(holding(db, "tern-zephyr")).toEqual([]);
    expect(db.prepare(`SELECT id FROM skill_versions WHERE content_hash LIKE 'withheld:%'`).pluck().all()).toEqual([`v-${n - 2}`]);
    expect(db.prepare(`SELECT count(*) FROM skill_golden_tasks`).pluck().get()).toBe(n - 1);
  });

  it("what another user's sessions taught keeps its own copy", { timeout: 60_000 }, async () => {
    const dir = tempDir("evo-forget-");
    w = openChoreWorld(dir);
    const content = "The shared garage door code is zorblax-7781";
    const id = (await w.ctx.service.remember(ALICE, { content }, BY_USER)).record.id;
    // the chores ran in bob's sessions
    for (let i = 1; i <= 12; i++) await w.ctx.backend.roots.upsert(`chore-${i}`, "bob", null, 1);
    const made = await learnChores(w, () => content);
    const before = holding(w.ctx.db, "zorblax");
    expect(before).toEqual(expect.arrayContaining(["learning_episodes.task", "learning_policies.pattern", "skill_requests.detail", "skill_versions.body"]));

    await w.ctx.service.forget({ owner: "alice" }, [id], BY_USER);
    await w.ctx.store.purged();
    expect(holding(w.ctx.db, "zorblax")).toEqual(before.filter((c) => !c.startsWith("memor")));
    expect((await w.skills.history(made.skillName)).versions[0]).toMatchObject({ status: "candidate" });
    expect(await w.evolutionStore.request(made.requestId!)).toMatchObject({ status: "pending" });
  });
});

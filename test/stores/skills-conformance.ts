// Behaviour every SkillStore must have (stores/sqlite/skill-store.ts is the reference): immutable
// versions, the publication stack, pointer moves that fail when someone else moved the pointer
// (also when two servers race), grants, toggles, trials, search of published versions only.
import { describe, expect, it } from "vitest";
import { disabledSkills, keyAt, toggleScopes } from "../../core/skills/scope.js";
import type { NewSkillVersion } from "../../core/skills/version.js";
import { StoreError, type SkillAuditEntry } from "../../stores/traits.js";
import { useCatalog, type CatalogFactory, type CatalogHandle } from "./catalog-harness.js";

export function newVersion(name: string, description: string, hash: string, extra: Partial<NewSkillVersion> = {}): NewSkillVersion {
  return {
    name,
    contentHash: hash,
    description,
    frontmatter: { name, description, "allowed-tools": ["Read"] },
    body: `# ${name}\n\nSteps for ${description}.\n`,
    allowedTools: ["Read"],
    author: "human",
    authorRef: "alice",
    parentId: null,
    trust: "user_written",
    status: "candidate",
    flags: [],
    eta: 0.5,
    createdAt: 1000,
    files: [
      { path: "SKILL.md", content: `---\nname: ${name}\n---\nbody ${hash}` },
      { path: "scripts/run.sh", content: "echo hi" },
    ],
    ...extra,
  };
}

export const audit = (action: SkillAuditEntry["action"], name: string, at = 1000, detail: Record<string, unknown> = {}): SkillAuditEntry => ({
  at,
  actor: "alice",
  action,
  targetKind: "skill",
  targetId: name,
  detail,
});

async function publish(s: CatalogHandle, skillId: string, from: string | null, to: string, at = 2000) {
  await s.skills.movePointer(skillId, { expectedFrom: from, to, toStatus: "active", fromStatus: "retired", kind: "publish" }, audit("publish", "deploy-check", at));
}

export function skillsConformance(name: string, factory: CatalogFactory): void {
  describe(`${name}: skill store conformance`, () => {
    const c = useCatalog(factory);

    it("inserts a skill with numbered immutable versions and their files", async () => {
      const s = await c.fresh();
      const v1 = await s.skills.insertVersion(newVersion("deploy-check", "check a deployment", "h1"), { skillId: "s1", versionId: "v1" }, audit("propose", "deploy-check"));
      expect(v1).toMatchObject({ id: "v1", skillId: "s1", name: "deploy-check", seq: 1, contentHash: "h1", status: "candidate", trials: 0, passes: 0, usage: { views: 0, uses: 0, successes: 0, failures: 0 }, publishedAt: null, liveOrder: null, parentId: null, flags: [], eta: 0.5 });
      expect(v1.frontmatter).toEqual({ name: "deploy-check", description: "check a deployment", "allowed-tools": ["Read"] });
      const v2 = await s.skills.insertVersion(newVersion("deploy-check", "check a deployment twice", "h2", { parentId: "v1", author: "agent", trust: "agent_proposed" }), { skillId: "s1", versionId: "v2" }, audit("propose", "deploy-check"));
      expect(v2).toMatchObject({ seq: 2, parentId: "v1", author: "agent", trust: "agent_proposed" });
      expect((await s.skills.versionsOf("s1")).map((v) => v.id)).toEqual(["v1", "v2"]);
      expect((await s.skills.versionByHash("s1", "h2"))?.id).toBe("v2");
      expect(await s.skills.versionByHash("s1", "zz")).toBeNull();
      expect(await s.skills.filesOf("v1")).toEqual([
        { path: "SKILL.md", content: "---\nname: deploy-check\n---\nbody h1" },
        { path: "scripts/run.sh", content: "echo hi" },
      ]);
      expect(await s.skills.skillByName("deploy-check")).toMatchObject({ id: "s1", publishedVersionId: null, pinned: false, createdAt: 1000 });
      expect(await s.skills.skillById("nope")).toBeNull();
      await expect(s.skills.insertVersion(newVersion("deploy-check", "dup", "h1"), { skillId: "s1", versionId: "v3" }, audit("propose", "deploy-check"))).rejects.toThrow();
      await expect(s.skills.insertVersion(newVersion("deploy-check", "x", "h9"), { skillId: "other", versionId: "v4" }, audit("propose", "deploy-check"))).rejects.toThrow(StoreError);
      expect(await s.skills.version("v3")).toBeNull();
      expect(await s.skills.version("v4")).toBeNull();
      expect((await s.skills.listSkills()).map((k) => k.name)).toEqual(["deploy-check"]);
    });

    it("publishes onto the stack, rolls back off it, and refuses a stale expected pointer", async () => {
      const s = await c.fresh();
      for (const [v, h] of [["v1", "h1"], ["v2", "h2"]]) await s.skills.insertVersion(newVersion("deploy-check", `check ${h}`, h!), { skillId: "s1", versionId: v! }, audit("propose", "deploy-check"));
      await publish(s, "s1", null, "v1", 2000);
      expect(await s.skills.skillById("s1")).toMatchObject({ publishedVersionId: "v1", updatedAt: 2000 });
      expect(await s.skills.version("v1")).toMatchObject({ status: "active", publishedAt: 2000, liveOrder: 1 });
      await publish(s, "s1", "v1", "v2", 3000);
      expect(await s.skills.version("v1")).toMatchObject({ status: "retired", liveOrder: 1 });
      expect(await s.skills.version("v2")).toMatchObject({ status: "active", publishedAt: 3000, liveOrder: 2 });
      const stale = publish(s, "s1", "v1", "v1", 4000);
      await expect(stale).rejects.toThrow(StoreError);
      await expect(publish(s, "s1", "v1", "v1", 4000)).rejects.toMatchObject({ code: "constraint" });
      await s.skills.movePointer("s1", { expectedFrom: "v2", to: "v1", toStatus: "active", fromStatus: "rejected", kind: "rollback" }, audit("rollback", "deploy-check", 5000));
      expect(await s.skills.skillById("s1")).toMatchObject({ publishedVersionId: "v1" });
      expect(await s.skills.version("v2")).toMatchObject({ status: "rejected", liveOrder: null });
      expect(await s.skills.version("v1")).toMatchObject({ status: "active", liveOrder: 1, publishedAt: 2000 });
      await expect(publish(s, "s1", "v1", "nope")).rejects.toMatchObject({ code: "not_found" });
      await expect(publish(s, "missing", null, "v1")).rejects.toMatchObject({ code: "not_found" });
      expect((await s.skills.auditOf("deploy-check", 2)).map((a) => a.action)).toEqual(["rollback", "publish"]);
    });

    it("a rollback to an earlier version takes the versions published after it off the stack", async () => {
      const s = await c.fresh();
      for (const v of ["v1", "v2", "v3", "v4"]) await s.skills.insertVersion(newVersion("deploy-check", `check ${v}`, `h${v}`), { skillId: "s1", versionId: v }, audit("propose", "deploy-check"));
      await publish(s, "s1", null, "v1", 2000);
      await publish(s, "s1", "v1", "v2", 3000);
      await publish(s, "s1", "v2", "v3", 4000);
      await s.skills.movePointer("s1", { expectedFrom: "v3", to: "v1", toStatus: "active", fromStatus: "retired", kind: "rollback" }, audit("rollback", "deploy-check", 5000));
      expect((await s.skills.versionsOf("s1")).map((v) => [v.id, v.liveOrder])).toEqual([["v1", 1], ["v2", null], ["v3", null], ["v4", null]]);
      await publish(s, "s1", "v1", "v4", 6000);
      expect(await s.skills.version("v4")).toMatchObject({ liveOrder: 2 });
    });

    it("two servers publishing from the same pointer at once: exactly one wins", async () => {
      const [a, b] = await c.freshPair(2);
      for (const [v, h] of [["v1", "h1"], ["v2", "h2"], ["v3", "h3"]]) await a!.skills.insertVersion(newVersion("deploy-check", `check ${h}`, h!), { skillId: "s1", versionId: v! }, audit("propose", "deploy-check"));
      await publish(a!, "s1", null, "v1");
      for (let round = 0; round < 5; round++) {
        const from = (await a!.skills.skillById("s1"))!.publishedVersionId!;
        const [to1, to2] = from === "v2" ? ["v3", "v1"] : from === "v3" ? ["v1", "v2"] : ["v2", "v3"];
        const results = await Promise.allSettled([publish(a!, "s1", from, to1!), publish(b!, "s1", from, to2!)]);
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
        const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
        expect(lost.reason).toMatchObject({ code: "constraint" });
        const now = (await b!.skills.skillById("s1"))!.publishedVersionId;
        expect([to1, to2]).toContain(now);
        const live = (await a!.skills.versionsOf("s1")).filter((v) => v.status === "active");
        expect(live.map((v) => v.id)).toEqual([now]);
      }
    });

    it("a publish that grants tools writes grant and pointer together: a refused move grants nothing", async () => {
      const s = await c.fresh();
      await s.skills.insertVersion(newVersion("deploy-check", "check a deployment", "h1"), { skillId: "s1", versionId: "v1" }, audit("propose", "deploy-check"));
      await s.skills.insertVersion(newVersion("deploy-check", "check twice", "h2"), { skillId: "s1", versionId: "v2" }, audit("propose", "deploy-check"));
      const grant = { tools: ["Read", "Bash(kubectl get:*)"], grantedBy: "alice", audit: audit("grant", "deploy-check", 1500, { tools: ["Read", "Bash(kubectl get:*)"] }) };
      // someone else moved the pointer meanwhile (expectedFrom is stale): neither happens
      await expect(s.skills.movePointer("s1", { expectedFrom: "v2", to: "v1", toStatus: "probationary", fromStatus: "retired", kind: "publish", grant }, audit("publish", "deploy-check"))).rejects.toMatchObject({ code: "constraint" });
      expect(await s.skills.grantsOf("s1")).toEqual([]);
      expect((await s.skills.skillByName("deploy-check"))!.publishedVersionId).toBeNull();
      await s.skills.movePointer("s1", { expectedFrom: null, to: "v1", toStatus: "probationary", fromStatus: "retired", kind: "publish", grant }, audit("publish", "deploy-check"));
      expect((await s.skills.grantsOf("s1")).map((g) => [g.tool, g.grantedBy, g.at])).toEqual([["Bash(kubectl get:*)", "alice", 1500], ["Read", "alice", 1500]]);
      expect((await s.skills.skillByName("deploy-check"))!.publishedVersionId).toBe("v1");
    });

    it("searches only published, unflagged versions above η, minus excluded skills", async () => {
      const s = await c.fresh();
      await s.skills.insertVersion(newVersion("deploy-check", "verify a kubernetes deployment rollout", "d1"), { skillId: "s1", versionId: "d1" }, audit("propose", "deploy-check"));
      await s.skills.insertVersion(newVersion("release-notes", "write release notes from commits", "r1"), { skillId: "s2", versionId: "r1" }, audit("propose", "release-notes"));
      await s.skills.insertVersion(newVersion("hidden", "deployment secrets", "x1"), { skillId: "s3", versionId: "x1" }, audit("propose", "hidden"));
      expect(await s.skills.search({ match: `"deployment"`, minEta: 0.1, excludeSkillIds: [], limit: 5 })).toEqual([]);
      await s.skills.movePointer("s1", { expectedFrom: null, to: "d1", toStatus: "active", fromStatus: "retired", kind: "publish" }, audit("publish", "deploy-check"));
      await s.skills.movePointer("s2", { expectedFrom: null, to: "r1", toStatus: "active", fromStatus: "retired", kind: "publish" }, audit("publish", "release-notes"));
      const hits = await s.skills.search({ match: `"deployment" OR "rollout"`, minEta: 0.1, excludeSkillIds: [], limit: 5 });
      expect(hits.map((h) => h.skill.name)).toEqual(["deploy-check"]);
      expect(hits[0]!.version.id).toBe("d1");
      expect(hits[0]!.score).toBeGreaterThan(0);
      expect((await s.skills.search({ match: `"deploy"`, minEta: 0.1, excludeSkillIds: [], limit: 5 })).map((h) => h.skill.name)).toEqual(["deploy-check"]);
      expect((await s.skills.search({ match: `"notes" OR "deployment"`, minEta: 0.1, excludeSkillIds: [], limit: 5 })).map((h) => h.skill.name).sort()).toEqual(["deploy-check", "release-notes"]);
      expect(await s.skills.search({ match: `"deployment"`, minEta: 0.1, excludeSkillIds: ["s1"], limit: 5 })).toEqual([]);
      expect(await s.skills.search({ match: `"deployment"`, minEta: 0.5, excludeSkillIds: [], limit: 5 })).toEqual([]);
      expect(await s.skills.search({ match: `"nothing"`, minEta: 0, excludeSkillIds: [], limit: 5 })).toEqual([]);
    });

    it("search finds the words inside a file name, path or host name of a description", async () => {
      const s = await c.fresh();
      const skills = [
        ["sync-scripts", "keep package.json and tsconfig.json scripts in step"],
        ["vpn-certs", "renew the certificates of vpn.acme-corp.io before they lapse"],
        ["ssh-keys", "rotate the keys listed in ~/.ssh/authorized_keys"],
      ] as const;
      for (const [i, [name, description]] of skills.entries()) {
        await s.skills.insertVersion(newVersion(name, description, `h${i}`), { skillId: `s${i}`, versionId: `v${i}` }, audit("propose", name));
        await s.skills.movePointer(`s${i}`, { expectedFrom: null, to: `v${i}`, toStatus: "active", fromStatus: "retired", kind: "publish" }, audit("publish", name));
      }
      for (const [word, name] of [["package", "sync-scripts"], ["tsconfig", "sync-scripts"], ["acme", "vpn-certs"], ["authorized", "ssh-keys"]]) {
        expect((await s.skills.search({ match: `"${word}"`, minEta: 0.1, excludeSkillIds: [], limit: 5 })).map((h) => h.skill.name), word).toEqual([name]);
      }
    });

    it("search finds a description word beside typographic punctuation, a symbol or an emoji, whatever the database's locale reads as a letter", async () => {
      const s = await c.fresh();
      const skills = [
        ["room-booking", "Book the “Atlas” room—weekly"],
        ["launch-notes", "Write the launch notes 🚀tonight, Friday…"],
      ] as const;
      for (const [i, [name, description]] of skills.entries()) {
        await s.skills.insertVersion(newVersion(name, description, `h${i}`), { skillId: `s${i}`, versionId: `v${i}` }, audit("propose", name));
        await s.skills.movePointer(`s${i}`, { expectedFrom: null, to: `v${i}`, toStatus: "active", fromStatus: "retired", kind: "publish" }, audit("publish", name));
      }
      for (const [word, name] of [["atlas", "room-booking"], ["weekly", "room-booking"], ["tonight", "launch-notes"], ["friday", "launch-notes"]]) {
        expect((await s.skills.search({ match: `"${word}"`, minEta: 0.1, excludeSkillIds: [], limit: 5 })).map((h) => h.skill.name), word).toEqual([name]);
      }
    });

    it("search folds a Latin letter's diacritics: 'zurich' finds 'Zürich', 'café' finds 'cafe'", async () => {
      const s = await c.fresh();
      const skills = [
        ["office-visit", "Plan a visit to the Zürich office"],
        ["coffee-order", "Order cafe supplies for the kitchen"],
      ] as const;
      for (const [i, [name, description]] of skills.entries()) {
        await s.skills.insertVersion(newVersion(name, description, `h${i}`), { skillId: `s${i}`, versionId: `v${i}` }, audit("propose", name));
        await s.skills.movePointer(`s${i}`, { expectedFrom: null, to: `v${i}`, toStatus: "active", fromStatus: "retired", kind: "publish" }, audit("publish", name));
      }
      for (const [word, name] of [["zurich", "office-visit"], ["zürich", "office-visit"], ["café", "coffee-order"]]) {
        expect((await s.skills.search({ match: `"${word}"`, minEta: 0.1, excludeSkillIds: [], limit: 5 })).map((h) => h.skill.name), word).toEqual([name]);
      }
    });

    it("search finds a description word written with capitals outside ASCII by its lower-case form, whatever the database's locale folds", async () => {
      const s = await c.fresh();
      await s.skills.insertVersion(newVersion("oil-change", "Ölwechsel am Dienstwagen planen", "h1"), { skillId: "s1", versionId: "v1" }, audit("propose", "oil-change"));
      await s.skills.movePointer("s1", { expectedFrom: null, to: "v1", toStatus: "active", fromStatus: "retired", kind: "publish" }, audit("publish", "oil-change"));
      expect((await s.skills.search({ match: `"ölwechsel"`, minEta: 0.1, excludeSkillIds: [], limit: 5 })).map((h) => h.skill.name)).toEqual(["oil-change"]);
    });

    it("search filters by status and the probationary η floor before its limit", async () => {
      const s = await c.fresh();
      for (let i = 1; i <= 4; i++) {
        const weak = i < 4;
        await s.skills.insertVersion(newVersion(`deploy-${i}`, `deploy service ${i}`, `h${i}`, { eta: weak ? 0.4 : 0.6 }), { skillId: `s${i}`, versionId: `v${i}` }, audit("propose", `deploy-${i}`));
        await s.skills.movePointer(`s${i}`, { expectedFrom: null, to: `v${i}`, toStatus: "probationary", fromStatus: "retired", kind: "publish" }, audit("publish", `deploy-${i}`));
      }
      const q = { match: `"deploy"`, minEta: 0.25, excludeSkillIds: [], limit: 2 };
      expect((await s.skills.search({ ...q, probationaryMinEta: 0.5 })).map((h) => h.skill.name)).toEqual(["deploy-4"]);
      expect(await s.skills.search({ ...q, limit: 4 })).toHaveLength(4);
    });

    it("a project setting keyed as the service keys it (a user's view of a path) round-trips, with its audit row", async () => {
      const s = await c.fresh();
      await s.skills.insertVersion(newVersion("deploy-check", "check", "h1"), { skillId: "s1", versionId: "v1" }, audit("propose", "deploy-check"));
      // a path with the characters a key format could trip on
      const req = { user: "alice", project: '/work/o\'neil "apps"\\été', session: "s", thread: "t", ancestors: [] };
      const key = keyAt(req, "project");
      await s.skills.setToggle({ skillId: "s1", level: "project", key, enabled: false }, false, audit("disable", "deploy-check", 1100, { level: "project", key }));
      const found = await s.skills.togglesFor(toggleScopes(req));
      expect(found).toEqual([{ skillId: "s1", level: "project", key, enabled: false }]);
      expect(disabledSkills(req, found)).toEqual(new Set(["s1"]));
      // another person's view of the same path is another setting
      expect(await s.skills.togglesFor(toggleScopes({ ...req, user: "bob" }))).toEqual([]);
      expect((await s.skills.auditOf("deploy-check", 10)).find((a) => a.action === "disable")?.detail).toEqual({ level: "project", key });
    });

    it("finds the agent's versions holding a forgotten text and withdraws them; a person's version is never changed", async () => {
      const s = await c.fresh();
      const agent = { author: "agent" as const, trust: "agent_proposed" as const, authorRef: "policy:p1" };
      await s.skills.insertVersion(newVersion("deploy-check", "check a deployment", "h1"), { skillId: "s1", versionId: "v1" }, audit("propose", "deploy-check"));
      await s.skills.insertVersion(newVersion("deploy-check", "check the Quokkagate rollout", "h2", agent), { skillId: "s1", versionId: "v2" }, audit("propose", "deploy-check"));
      await s.skills.insertVersion(newVersion("deploy-check", "check", "h3", { ...agent, body: "Tasks like: the QUOKKAGATE door\n", files: [] }), { skillId: "s1", versionId: "v3" }, audit("propose", "deploy-check"));
      await s.skills.insertVersion(newVersion("deploy-check", "check", "h4", { ...agent, files: [{ path: "notes/quokkagate.md", content: "x" }] }), { skillId: "s1", versionId: "v4" }, audit("propose", "deploy-check"));
      await s.skills.insertVersion(newVersion("deploy-check", "check", "h5", { ...agent, files: [{ path: "a.md", content: "the quokkagate code" }] }), { skillId: "s1", versionId: "v5" }, audit("propose", "deploy-check"));
      await s.skills.insertVersion(newVersion("notes", "the quokkagate notes a person wrote", "n1"), { skillId: "s2", versionId: "n1" }, audit("propose", "notes"));
      const found = await s.skills.agentVersionsMentioning(["absent", "quokkagate"]);
      expect(found.map((f) => f.version.id).sort()).toEqual(["v2", "v3", "v4", "v5"]);
      const v5 = found.find((f) => f.version.id === "v5")!;
      expect(v5.version).toMatchObject({ author: "agent", authorRef: "policy:p1", status: "candidate", name: "deploy-check" });
      expect(v5.texts).toEqual(expect.arrayContaining(["check", "a.md", "the quokkagate code"]));
      expect(v5.texts.some((t) => t.includes("allowed-tools"))).toBe(true);
      // an empty probe reads every version the agent wrote
      expect((await s.skills.agentVersionsMentioning([""])).map((f) => f.version.id).sort()).toEqual(["v2", "v3", "v4", "v5"]);

      // v2 was published, then a person's v1 replaced it; v3 is published
      await publish(s, "s1", null, "v2", 2000);
      await publish(s, "s1", "v2", "v1", 2100);
      await publish(s, "s1", "v1", "v3", 2200);
      const blank = { description: "(withheld)", body: "(withheld)\n", frontmatter: { name: "deploy-check", description: "(withheld)" } };
      expect(await s.skills.withdrawVersion("v2", blank, audit("withdraw", "deploy-check", 3000, { version: "v2" }))).toBe(true);
      expect(await s.skills.version("v2")).toMatchObject({ ...blank, status: "rejected", liveOrder: null, contentHash: "withheld:v2", author: "agent", seq: 2, allowedTools: ["Read"] });
      expect(await s.skills.filesOf("v2")).toEqual([]);
      // the published one: withdrawn in place (its caller rolled back or retired it first), the search row follows
      expect(await s.skills.withdrawVersion("v3", blank, audit("withdraw", "deploy-check", 3100))).toBe(true);
      expect(await s.skills.search({ match: `"quokkagate" OR "check"`, minEta: 0, excludeSkillIds: [], limit: 5 })).toEqual([]);
      // a person's version, or one that does not exist: nothing is written
      expect(await s.skills.withdrawVersion("n1", blank, audit("withdraw", "notes", 3200))).toBe(false);
      expect(await s.skills.withdrawVersion("nope", blank, audit("withdraw", "notes", 3200))).toBe(false);
      expect(await s.skills.version("n1")).toMatchObject({ description: "the quokkagate notes a person wrote", status: "candidate" });
      expect(await s.skills.auditOf("notes", 5)).toHaveLength(1);
      expect((await s.skills.auditOf("deploy-check", 2)).map((a) => [a.action, a.at, a.detail])).toEqual([["withdraw", 3100, {}], ["withdraw", 3000, { version: "v2" }]]);
      expect((await s.skills.agentVersionsMentioning(["quokkagate"])).map((f) => f.version.id).sort()).toEqual(["v4", "v5"]);

      // the pointer leaving a withdrawn version does not bring it back as retired
      await s.skills.movePointer("s1", { expectedFrom: "v3", to: "v1", toStatus: "active", fromStatus: "retired", kind: "rollback" }, audit("rollback", "deploy-check", 4000));
      expect(await s.skills.version("v3")).toMatchObject({ status: "rejected", liveOrder: null });
      expect((await s.skills.search({ match: `"check"`, minEta: 0, excludeSkillIds: [], limit: 5 })).map((h) => h.version.id)).toEqual(["v1"]);
    });

    it("finds trial notes holding a forgotten text and clears them", async () => {
      const s = await c.fresh();
      await s.skills.insertVersion(newVersion("deploy-check", "check", "h1"), { skillId: "s1", versionId: "v1" }, audit("propose", "deploy-check"));
      for (const [i, note] of [null, "it used the QuokkaGate code", "fine"].entries()) {
        await s.skills.recordTrial("v1", { passed: true, note, threadId: `t${i}`, at: 100 + i }, () => 0.6, audit("feedback", "deploy-check"));
      }
      const found = await s.skills.trialNotesMentioning(["quokkagate"]);
      expect(found).toEqual([{ id: expect.any(Number), versionId: "v1", threadId: "t1", note: "it used the QuokkaGate code" }]);
      expect((await s.skills.trialNotesMentioning([""])).map((t) => t.note)).toEqual(["it used the QuokkaGate code", "fine"]);
      await s.skills.clearTrialNotes(found.map((t) => t.id));
      await s.skills.clearTrialNotes([]);
      expect((await s.skills.trialNotesMentioning([""])).map((t) => t.note)).toEqual(["fine"]);
      expect((await s.skills.version("v1"))!.trials).toBe(3);
    });

    it("grants, toggles, pins, views and trials with η, each with an audit row", async () => {
      const s = await c.fresh();
      await s.skills.insertVersion(newVersion("deploy-check", "check", "h1"), { skillId: "s1", versionId: "v1" }, audit("propose", "deploy-check"));
      await s.skills.grant("s1", ["Read", "Bash"], "alice", audit("grant", "deploy-check", 1100));
      await s.skills.grant("s1", ["Read"], "bob", audit("grant", "deploy-check", 1200));
      expect(await s.skills.grantsOf("s1")).toEqual([
        { tool: "Bash", grantedBy: "alice", at: 1100 },
        { tool: "Read", grantedBy: "alice", at: 1100 },
      ]);
      await s.skills.setToggle({ skillId: "s1", level: "project", key: "/repo", enabled: false }, false, audit("disable", "deploy-check"));
      await s.skills.setToggle({ skillId: "s1", level: "user", key: "alice", enabled: true }, true, audit("enable", "deploy-check"));
      const scopes = [{ level: "user" as const, key: "alice" }, { level: "project" as const, key: "/repo" }, { level: "thread" as const, key: "t" }];
      expect((await s.skills.togglesFor(scopes)).sort((x, y) => x.level.localeCompare(y.level))).toEqual([
        { skillId: "s1", level: "project", key: "/repo", enabled: false },
        { skillId: "s1", level: "user", key: "alice", enabled: true },
      ]);
      await s.skills.setToggle({ skillId: "s1", level: "project", key: "/repo", enabled: true }, null, audit("enable", "deploy-check"));
      expect(await s.skills.togglesFor(scopes)).toEqual([{ skillId: "s1", level: "user", key: "alice", enabled: true }]);
      expect(await s.skills.togglesFor([])).toEqual([]);
      await s.skills.setPinned("s1", true, audit("pin", "deploy-check", 1300));
      expect(await s.skills.skillById("s1")).toMatchObject({ pinned: true, updatedAt: 1300 });
      await s.skills.recordView("v1");
      await s.skills.recordView("v1");
      const eta = (p: number, t: number) => (p + 1) / (t + 2);
      await s.skills.recordTrial("v1", { passed: true, note: null, threadId: "t", at: 1 }, eta, audit("feedback", "deploy-check"));
      const v = await s.skills.recordTrial("v1", { passed: false, note: "broke", threadId: null, at: 2 }, eta, audit("feedback", "deploy-check"));
      expect(v).toMatchObject({ trials: 2, passes: 1, eta: 0.5, usage: { views: 2, uses: 2, successes: 1, failures: 1 } });
      await expect(s.skills.recordTrial("nope", { passed: true, note: null, threadId: null, at: 3 }, eta, audit("feedback", "deploy-check"))).rejects.toThrow();
      await s.skills.setStatus("v1", "rejected", audit("reject", "deploy-check", 1400, { why: "test" }));
      expect((await s.skills.version("v1"))!.status).toBe("rejected");
      const log = await s.skills.auditOf("deploy-check", 100);
      expect(log.map((a) => a.action)).toEqual(["reject", "feedback", "feedback", "pin", "enable", "enable", "disable", "grant", "grant", "propose"]);
      expect(log[0]).toMatchObject({ actor: "alice", targetKind: "skill", targetId: "deploy-check", detail: { why: "test" }, at: 1400 });
      expect(log[0]!.seq).toBeGreaterThan(log[1]!.seq);
    });

    it("a publish and a reject of one candidate from two servers at once: exactly one decides, the other changes nothing", async () => {
      const [a, b] = await c.freshPair(2);
      await a!.skills.insertVersion(newVersion("deploy-check", "check", "h1"), { skillId: "s1", versionId: "v1" }, audit("propose", "deploy-check"));
      await publish(a!, "s1", null, "v1");
      for (let round = 2; round < 6; round++) {
        const from = (await a!.skills.skillById("s1"))!.publishedVersionId;
        const id = `v${round}`;
        await a!.skills.insertVersion(newVersion("deploy-check", "check", `h${round}`), { skillId: "s1", versionId: id }, audit("propose", "deploy-check"));
        const [published, rejected] = await Promise.allSettled([
          a!.skills.movePointer(
            "s1",
            { expectedFrom: from, to: id, toStatus: "probationary", fromStatus: "retired", kind: "publish", expectTo: "candidate" },
            audit("publish", "deploy-check", 2000 + round),
          ),
          b!.skills.setStatus(id, "rejected", audit("reject", "deploy-check", 2000 + round), { expect: "candidate" }),
        ]);
        expect([published.status, rejected.status].sort(), `round ${round}`).toEqual(["fulfilled", "rejected"]);
        const lost = (published.status === "rejected" ? published : rejected) as PromiseRejectedResult;
        expect(lost.reason).toMatchObject({ code: "constraint", id, expected: "candidate" });
        const pointer = (await b!.skills.skillById("s1"))!.publishedVersionId;
        expect([pointer, (await b!.skills.version(id))!.status]).toEqual(published.status === "fulfilled" ? [id, "probationary"] : [from, "rejected"]);
      }
    });

    it("concurrent trials on one version from two servers are all counted", async () => {
      const [a, b] = await c.freshPair(2);
      await a!.skills.insertVersion(newVersion("deploy-check", "check", "h1"), { skillId: "s1", versionId: "v1" }, audit("propose", "deploy-check"));
      const eta = (p: number, t: number) => p / t;
      const trial = (h: typeof a, i: number) => h!.skills.recordTrial("v1", { passed: i % 2 === 0, note: null, threadId: null, at: i }, eta, audit("feedback", "deploy-check"));
      await Promise.all(Array.from({ length: 20 }, (_, i) => trial(i % 2 ? a : b, i)));
      expect(await a!.skills.version("v1")).toMatchObject({ trials: 20, passes: 10, eta: 0.5 });
    });
  });
}

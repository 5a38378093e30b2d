// The skill catalog: proposing immutable versions, publishing and rolling back by moving one
// pointer, the permission ceiling, pins, per-scope switches, search, views and trials (η).
// Asking the person is the caller's job (RAP user_choice or the CLI); this service enforces
// what may happen once they said yes.
import type { Clock } from "../clock.js";
import type { MemoryConfig } from "../config.js";
import { CoreError } from "../errors.js";
import { newId } from "../ids.js";
import type { RequestScope } from "../memory/scope.js";
import { analyzeQuery, cjkBigrams, contentWords, isEmptyQuery } from "../retrieval/analyze.js";
import { nextStatus, retrievable } from "../learning/lifecycle.js";
import { scanContent } from "../safety/index.js";
import { shellQuote } from "../shell.js";
import { StatusChangedError, StoreError, type SkillAuditEntry, type SkillAuditAction, type SkillStore } from "../../stores/traits.js";
import { diffVersions, type VersionContent } from "./diff.js";
import { disabledSkills, keyAt, toggleScopes } from "./scope.js";
import { contentHash, nameProblem, type SkillDocument, type SkillFile } from "./skill-md.js";
import { etaOf, LIVE_STATUSES, type Skill, type SkillAuthor, type SkillStatus, type SkillSearchHit, type SkillTrust, type SkillVersion, type ToggleLevel } from "./version.js";

export interface SkillActor {
  /** audit actor: "user:<id>", "model:<thread>", "cli:<os user>" … */
  actor: string;
  author: SkillAuthor;
  /** the thread or person behind it, kept on the version */
  ref: string | null;
}

export interface ProposeResult {
  version: SkillVersion;
  /** false when identical content already existed as a version (nothing new stored) */
  created: boolean;
  notes: string[];
}

export interface PendingMove {
  skill: Skill;
  from: SkillVersion | null;
  to: SkillVersion;
  diff: string;
}

const TRUST_OF: Record<SkillAuthor, SkillTrust> = { human: "user_written", agent: "agent_proposed", import: "imported" };
/** a proposal looked at again after another process wrote the same skill in between, at most this often */
const PROPOSE_ATTEMPTS = 3;

function quoteFts(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}

/** A person's decision on one version: published ("approved") or rejected. */
export interface SkillDecision {
  skillName: string;
  versionId: string;
  decision: "approved" | "rejected";
  actor: string;
  reason?: string;
}
export type SkillDecisionHook = (d: SkillDecision) => Promise<void>;

export class SkillService {
  private readonly decisionHooks = new Set<SkillDecisionHook>();

  constructor(
    private readonly store: SkillStore,
    private readonly clock: Clock,
    private readonly config: MemoryConfig,
  ) {}

  /** Told of every publish and reject a person decides (the learning loop closes what it filed for that version). */
  onDecided(hook: SkillDecisionHook): void {
    this.decisionHooks.add(hook);
  }

  private async decided(d: SkillDecision): Promise<void> {
    for (const hook of this.decisionHooks) await hook(d);
  }

  private audit(action: SkillAuditAction, name: string, actor: string, detail: Record<string, unknown>): SkillAuditEntry {
    return { at: this.clock.now(), actor, action, targetKind: "skill", targetId: name, detail };
  }

  private eta(passes: number, trials: number): number {
    return etaOf(passes, trials, this.config.skills);
  }

  async skill(name: string): Promise<Skill> {
    const np = nameProblem(name);
    if (np) throw new CoreError("invalid_argument", np);
    const s = await this.store.skillByName(name);
    if (!s) throw new CoreError("not_found", `no skill named "${name}"; skill_search lists what exists`);
    return s;
  }

  async findSkill(name: string): Promise<Skill | null> {
    return nameProblem(name) ? null : this.store.skillByName(name);
  }

  /** "v3", "3", a version id, or a content-hash prefix of 8+ characters; default the published version. */
  async version(skill: Skill, ref?: string): Promise<SkillVersion> {
    const all = ref === undefined && skill.publishedVersionId ? [] : await this.store.versionsOf(skill.id);
    if (ref === undefined) {
      if (!skill.publishedVersionId) {
        throw new CoreError("not_found", `"${skill.name}" has no published version yet; name a version to read one (it has v1..v${all.length})`);
      }
      return (await this.store.version(skill.publishedVersionId))!;
    }
    const seq = /^v?(\d+)$/i.exec(ref.trim());
    const bySeq = () => (seq ? all.find((v) => v.seq === Number(seq[1])) : undefined);
    const byHash = () => (ref.length >= 8 ? all.find((v) => v.contentHash.startsWith(ref.toLowerCase())) : undefined);
    // a hash prefix may be all digits ("12345678…"): at 8 digits or more it is a hash before it is a number
    const found = all.find((v) => v.id === ref) ?? (seq && (ref.length < 8 || ref.startsWith("v") || ref.startsWith("V")) ? bySeq() : (byHash() ?? bySeq()));
    if (!found) throw new CoreError("not_found", `"${skill.name}" has no version "${ref}"; it has v1..v${all.length}`);
    return found;
  }

  async content(v: SkillVersion): Promise<VersionContent> {
    return { version: v, files: await this.store.filesOf(v.id) };
  }

  async files(v: SkillVersion): Promise<SkillFile[]> {
    return this.store.filesOf(v.id);
  }

  private checkSize(doc: SkillDocument): void {
    const c = this.config.skills;
    // each limit names its config setting: a person importing a large skill can raise it
    if (doc.body.length > c.maxBodyChars) {
      throw new CoreError("invalid_argument", `the body is ${doc.body.length} characters; at most ${c.maxBodyChars}: move detail into references/ files, or raise "skills.maxBodyChars" in config.json`);
    }
    if (doc.files.length > c.maxFiles) {
      throw new CoreError("invalid_argument", `${doc.files.length} support files; at most ${c.maxFiles}: leave out the files the skill does not need, or raise "skills.maxFiles" in config.json`);
    }
    const big = doc.files.find((f) => f.content.length > c.maxFileChars);
    if (big) {
      throw new CoreError("invalid_argument", `${big.path} is ${big.content.length} characters; at most ${c.maxFileChars}: split or shorten it, or raise "skills.maxFileChars" in config.json`);
    }
  }

  /** Scan every text of a version; credentials and injections are refused, lesser findings flag it. */
  private scan(doc: SkillDocument): string[] {
    const texts: [string, string][] = [
      ["frontmatter", JSON.stringify(doc.frontmatter)],
      ["description", doc.description],
      ["body", doc.body],
      ...doc.files.map((f): [string, string] => [f.path, f.content]),
    ];
    const flags: string[] = [];
    for (const [where, text] of texts) {
      const s = scanContent(text);
      if (s.verdict === "refuse_secret") throw new CoreError("refused_credential", `the skill's ${where} ${s.reason}; remove it and propose again`);
      if (s.verdict === "refuse_injection") throw new CoreError("refused_injection", `the skill's ${where} ${s.reason}; it was not stored`);
      if (s.verdict === "flag") flags.push(`${where}: ${s.reason}`);
    }
    return flags;
  }

  private async widening(skill: Skill | null, tools: string[]): Promise<string[]> {
    if (tools.length === 0) return [];
    const granted = new Set(skill ? (await this.store.grantsOf(skill.id)).map((g) => g.tool) : []);
    return tools.filter((t) => !granted.has(t));
  }

  /** Store a new candidate version (never live). `base` names the parent; default the published version. */
  async propose(doc: SkillDocument, by: SkillActor, base?: string): Promise<ProposeResult> {
    // The store checks again inside its write: a constraint there means another process created
    // this skill or stored this very content since we looked (two sessions proposing at once).
    // Looked at again, this proposal is a version of that skill, or nothing new.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.proposeOnce(doc, by, base);
      } catch (e) {
        if (attempt < PROPOSE_ATTEMPTS && e instanceof StoreError && e.code === "constraint") continue;
        throw e;
      }
    }
  }

  private async proposeOnce(doc: SkillDocument, by: SkillActor, base?: string): Promise<ProposeResult> {
    this.checkSize(doc);
    const existing = await this.store.skillByName(doc.name);
    // a revision of a skill that does not exist is a misnamed skill, not a new one
    if (!existing && base !== undefined) {
      throw new CoreError(
        "not_found",
        `"base_version" is ${base}, but there is no skill named "${doc.name}" to revise; check the name in the frontmatter (skill_search lists what exists), or leave base_version out to create a new skill`,
      );
    }
    if (existing?.pinned && by.author === "agent") {
      throw new CoreError("forbidden", `"${doc.name}" is pinned: a person must unpin it before new versions can be proposed`);
    }
    const parent = existing ? (base !== undefined ? await this.version(existing, base) : existing.publishedVersionId ? await this.version(existing) : null) : null;
    const hash = contentHash(doc);
    if (existing) {
      const same = await this.store.versionByHash(existing.id, hash);
      if (same) return { version: same, created: false, notes: [`identical to v${same.seq} (${same.status}); nothing new was stored`] };
    }
    const flags = this.scan(doc);
    const now = this.clock.now();
    const version = await this.store.insertVersion(
      {
        name: doc.name,
        contentHash: hash,
        description: doc.description,
        frontmatter: doc.frontmatter,
        body: doc.body,
        allowedTools: doc.allowedTools,
        author: by.author,
        authorRef: by.ref,
        parentId: parent?.id ?? null,
        trust: TRUST_OF[by.author],
        status: "candidate",
        flags,
        eta: this.eta(0, 0),
        createdAt: now,
        files: doc.files,
      },
      { skillId: existing?.id ?? newId("skl", now), versionId: newId("skv", now) },
      this.audit("propose", doc.name, by.actor, { hash, author: by.author, parent: parent?.id ?? null, flags }),
    );
    const notes: string[] = [];
    if (flags.length > 0) notes.push(`flagged by the safety scan (${flags.join("; ")}); a flagged version cannot be published`);
    const wider = await this.widening(existing, doc.allowedTools);
    if (wider.length > 0) notes.push(`allowed-tools asks for ${wider.join(", ")}, which no person granted this skill; it cannot be published until they do`);
    return { version, created: true, notes };
  }

  /** The version a publish of `name` means: `ref`, else the newest candidate. */
  async publishTarget(name: string, ref?: string): Promise<{ skill: Skill; to: SkillVersion }> {
    const skill = await this.skill(name);
    if (ref !== undefined) return { skill, to: await this.version(skill, ref) };
    const last = (await this.store.versionsOf(skill.id)).filter((v) => v.status === "candidate").at(-1);
    if (!last) throw new CoreError("not_found", `"${name}" has no candidate version to publish; skill_propose one first`);
    return { skill, to: last };
  }

  /**
   * Everything a person needs to decide on publishing `ref` (default: the newest candidate).
   * `granting`: tools the same decision grants (a new learned skill's verified tools), which
   * therefore do not count as widening.
   */
  async preparePublish(name: string, ref?: string, granting: string[] = []): Promise<PendingMove> {
    const { skill, to } = await this.publishTarget(name, ref);
    if (to.id === skill.publishedVersionId) throw new CoreError("conflict", `v${to.seq} of "${name}" is already published`);
    if (to.status === "rejected") throw new CoreError("conflict", `v${to.seq} of "${name}" was rejected; propose a new version instead`);
    if (to.flags.length > 0) {
      throw new CoreError("forbidden", `v${to.seq} of "${name}" is flagged by the safety scan (${to.flags.join("; ")}) and cannot be published`);
    }
    const wider = (await this.widening(skill, to.allowedTools)).filter((t) => !granting.includes(t));
    if (wider.length > 0) {
      throw new CoreError(
        "forbidden",
        `v${to.seq} of "${name}" widens allowed-tools beyond what a person granted (${wider.join(", ")}); ` +
          `it cannot be published. A person may grant them (infinity-memory skills grant ${name} ${wider.map(shellQuote).join(" ")}), or propose a version without them`,
      );
    }
    const from = skill.publishedVersionId ? await this.version(skill) : null;
    return { skill, from, to, diff: diffVersions(from ? await this.content(from) : null, await this.content(to)) };
  }

  /**
   * Publish after the person approved `move` (from preparePublish). Atomic; the old version
   * retires. `grant`: tools granted in the same write (a crash leaves neither grant nor publish).
   */
  async publish(move: PendingMove, actor: string, grant: string[] = []): Promise<void> {
    // Re-check the ceiling inside the decision: grants or content may have changed while asking.
    const fresh = await this.preparePublish(move.skill.name, move.to.id, grant);
    const clean = [...new Set(grant.map((t) => t.trim()).filter((t) => t.length > 0))];
    await this.moveOrConflict(fresh.skill.id, {
      expectedFrom: move.from?.id ?? null,
      to: move.to.id,
      toStatus: "probationary",
      fromStatus: "retired",
      kind: "publish",
      // a reject by another process since the check above wins: a rejected version is never published
      expectTo: fresh.to.status,
      ...(clean.length > 0 ? { grant: { tools: clean, grantedBy: actor, audit: this.audit("grant", move.skill.name, actor, { tools: clean }) } } : {}),
    }, this.audit("publish", move.skill.name, actor, { from: move.from?.id ?? null, to: move.to.id, seq: move.to.seq }));
    await this.decided({ skillName: move.skill.name, versionId: move.to.id, decision: "approved", actor });
  }

  private async moveOrConflict(skillId: string, m: Parameters<SkillStore["movePointer"]>[1], audit: SkillAuditEntry): Promise<void> {
    try {
      await this.store.movePointer(skillId, m, audit);
    } catch (e) {
      if (e instanceof StatusChangedError) throw await this.changedMeanwhile(e);
      if (e instanceof StoreError && e.code === "constraint") throw new CoreError("conflict", e.message);
      throw e;
    }
  }

  /** A decision that lost to another decider (another process, server or the CLI) between its read and its write. */
  private async changedMeanwhile(e: StatusChangedError): Promise<CoreError> {
    const v = await this.store.version(e.id);
    const which = v ? `v${v.seq} of "${v.name}"` : `version ${e.id}`;
    return new CoreError("conflict", `${which} is ${e.actual ?? "gone"} now, no longer ${e.expected}: another decision on it came first; nothing was changed. Look again (skill history) before deciding.`);
  }

  private async setStatusOrConflict(v: SkillVersion, status: SkillStatus, audit: SkillAuditEntry): Promise<void> {
    try {
      await this.store.setStatus(v.id, status, audit, { expect: v.status });
    } catch (e) {
      if (e instanceof StatusChangedError) throw await this.changedMeanwhile(e);
      throw e;
    }
  }

  async reject(name: string, ref: string | undefined, actor: string, reason?: string): Promise<SkillVersion> {
    const skill = await this.skill(name);
    const v = ref === undefined ? (await this.store.versionsOf(skill.id)).filter((x) => x.status === "candidate").at(-1) : await this.version(skill, ref);
    if (!v) throw new CoreError("not_found", `"${name}" has no candidate to reject`);
    if (v.id === skill.publishedVersionId) throw new CoreError("conflict", `v${v.seq} is published; roll back first`);
    // A candidate or a retired version (which rollback then never returns to); deciding twice is refused.
    if (v.status === "rejected") throw new CoreError("conflict", `v${v.seq} of "${name}" is already rejected`);
    // only while it is as read: a publish by another process meanwhile is not undone into "rejected"
    await this.setStatusOrConflict(v, "rejected", this.audit("reject", name, actor, { version: v.id, seq: v.seq, reason: reason ?? null }));
    await this.decided({ skillName: skill.name, versionId: v.id, decision: "rejected", actor, ...(reason !== undefined ? { reason } : {}) });
    return { ...v, status: "rejected" };
  }

  /**
   * The version a rollback returns to: `to` when given, else the one that was live before the
   * current one was published (a stack: publish pushes, rollback pops), so repeated rollbacks walk
   * back through history and never bounce to the version just rolled away from.
   */
  async prepareRollback(name: string, to?: string): Promise<PendingMove> {
    const skill = await this.skill(name);
    if (!skill.publishedVersionId) throw new CoreError("conflict", `"${name}" has nothing published to roll back`);
    const current = await this.version(skill);
    let target: SkillVersion | undefined;
    if (to !== undefined) {
      target = await this.version(skill, to);
      if (target.publishedAt === null) throw new CoreError("conflict", `v${target.seq} was never published; use skill_publish for a candidate`);
      if (target.status === "rejected") throw new CoreError("conflict", `v${target.seq} was rejected; roll back to another version`);
      if (target.id === current.id) throw new CoreError("conflict", `v${target.seq} is already the published version`);
    } else {
      const below = current.liveOrder ?? Infinity;
      const earlier = (await this.store.versionsOf(skill.id)).filter((v) => v.liveOrder !== null && v.liveOrder < below && v.flags.length === 0 && v.status !== "rejected");
      target = earlier.sort((a, b) => (b.liveOrder ?? 0) - (a.liveOrder ?? 0))[0];
      if (!target) throw new CoreError("conflict", `"${name}" has no earlier published version to roll back to`);
    }
    return { skill, from: current, to: target, diff: diffVersions(await this.content(current), await this.content(target)) };
  }

  async rollback(move: PendingMove, actor: string): Promise<void> {
    await this.moveOrConflict(move.skill.id, {
      expectedFrom: move.from?.id ?? null,
      to: move.to.id,
      toStatus: "active",
      fromStatus: "retired",
      kind: "rollback",
      // a version rejected while the person was asked is not brought back
      expectTo: move.to.status,
    }, this.audit("rollback", move.skill.name, actor, { from: move.from?.id ?? null, to: move.to.id, seq: move.to.seq }));
  }

  /**
   * Retire the published version (it leaves search and the prefix; a rollback may restore an
   * earlier one). Never deletes. `published`: only when that version is still the published one.
   */
  async retire(name: string, actor: string, reason: string, published?: string): Promise<SkillVersion> {
    const skill = await this.skill(name);
    if (skill.pinned) throw new CoreError("forbidden", `"${name}" is pinned: a person must unpin it first`);
    const v = await this.version(skill);
    if (published !== undefined && v.id !== published) {
      throw new CoreError("conflict", `the published version of "${name}" is now v${v.seq}, not the one asked to retire (a newer one was published meanwhile); nothing was retired`);
    }
    if (v.status === "retired") return v;
    // only while it is as read: a publish or rollback meanwhile is looked at again, not retired blind
    await this.setStatusOrConflict(v, "retired", this.audit("retire", name, actor, { version: v.id, seq: v.seq, from: v.status, reason }));
    return { ...v, status: "retired" };
  }

  async setPinned(name: string, pinned: boolean, actor: string): Promise<void> {
    const s = await this.skill(name);
    await this.store.setPinned(s.id, pinned, this.audit(pinned ? "pin" : "unpin", name, actor, {}));
  }

  /** A person widens the permission ceiling. */
  async grant(name: string, tools: string[], grantedBy: string): Promise<void> {
    const s = await this.skill(name);
    const clean = [...new Set(tools.map((t) => t.trim()).filter((t) => t.length > 0))];
    if (clean.length === 0) throw new CoreError("invalid_argument", "name at least one tool to grant");
    await this.store.grant(s.id, clean, grantedBy, this.audit("grant", name, grantedBy, { tools: clean }));
  }

  async grants(name: string): Promise<string[]> {
    const s = await this.skill(name);
    return (await this.store.grantsOf(s.id)).map((g) => g.tool);
  }

  /** Enable (true), disable (false) or clear (null) at one level of this request's scope. */
  async setEnabled(name: string, req: RequestScope, level: ToggleLevel, value: boolean | null, actor: string): Promise<void> {
    const s = await this.skill(name);
    if (level === "project" && !req.project) throw new CoreError("invalid_argument", "this session has no project; choose another scope");
    await this.store.setToggle(
      { skillId: s.id, level, key: keyAt(req, level), enabled: value ?? true },
      value,
      this.audit(value === false ? "disable" : "enable", name, actor, { level, key: keyAt(req, level), cleared: value === null }),
    );
  }

  async disabledFor(req: RequestScope): Promise<Set<string>> {
    return disabledSkills(req, await this.store.togglesFor(toggleScopes(req)));
  }

  async isEnabled(skill: Skill, req: RequestScope): Promise<boolean> {
    return !(await this.disabledFor(req)).has(skill.id);
  }

  /**
   * Enabled, published, unflagged skills with η above the retrieval threshold whose name or
   * description matches. `score` is the share of query words the skill matches (0..1).
   */
  async search(req: RequestScope, query: string, limit?: number): Promise<SkillSearchHit[]> {
    const c = this.config.skills;
    const q = analyzeQuery(query);
    if (isEmptyQuery(q) || (q.terms.length === 0 && q.cjk.length === 0)) return [];
    const n = Math.min(limit ?? c.searchDefaultLimit, c.searchMaxLimit);
    const disabled = await this.disabledFor(req);
    const hits =
      q.terms.length === 0
        ? []
        : await this.store.search({
            match: q.terms.map(quoteFts).join(" OR "),
            minEta: c.retrievalMinEta,
            // Only active versions, and probationary ones at probationaryMinEta or above, are
            // retrievable: filtered by the store, before its limit (a few weaker ones ranking first
            // must not leave the rest unseen); the check here keeps a store's mistake from showing.
            probationaryMinEta: c.probationaryMinEta,
            excludeSkillIds: [...disabled],
            limit: n,
          });
    const scored = hits
      .filter((h) => retrievable(h.version, c))
      .map((h) => ({ ...h, score: matchShare(q, `${h.skill.name.replace(/-/g, " ")} ${h.version.description}`) }));
    if (q.cjk.length === 0 || scored.length >= n) return scored;
    // The word index keeps a CJK run as one token, so a CJK word cannot match there: its
    // bigrams are looked for in the published names and descriptions instead (a catalog is small).
    const seen = new Set(scored.map((h) => h.skill.id));
    const more: SkillSearchHit[] = [];
    for (const row of await this.list()) {
      const v = row.published;
      if (!v || seen.has(row.skill.id) || disabled.has(row.skill.id) || v.flags.length > 0 || !retrievable(v, c)) continue;
      const text = `${row.skill.name.replace(/-/g, " ")} ${v.description}`;
      if (cjkShare(q.cjk, text) < CJK_MIN_SHARE) continue;
      more.push({ skill: row.skill, version: v, score: matchShare(q, text) });
    }
    more.sort((a, b) => b.score - a.score || b.version.eta - a.version.eta || (a.skill.name < b.skill.name ? -1 : 1));
    return [...scored, ...more].slice(0, n);
  }

  /**
   * One version (default published) and its files for reading, after the scope check; counts a
   * view unless `file` names a file the version does not have.
   */
  async view(req: RequestScope, name: string, ref?: string, file?: string): Promise<{ skill: Skill; version: SkillVersion; files: SkillFile[]; file: SkillFile | null }> {
    const skill = await this.skill(name);
    if (!(await this.isEnabled(skill, req))) throw new CoreError("disabled", `the skill "${name}" is disabled here`);
    const version = await this.version(skill, ref);
    const files = await this.store.filesOf(version.id);
    const f = file === undefined ? null : files.find((x) => x.path === file);
    if (f === undefined) {
      const have = files.map((x) => x.path).join(", ") || "none";
      throw new CoreError("not_found", `v${version.seq} of "${name}" has no file "${file}"; files: ${have}`);
    }
    await this.store.recordView(version.id);
    return { skill, version, files, file: f };
  }

  /** One trial outcome for the version that was used (default: the published one). */
  async feedback(name: string, ref: string | undefined, outcome: { passed: boolean; note?: string | undefined }, thread: string | null, actor: string): Promise<SkillVersion> {
    const skill = await this.skill(name);
    const v = await this.version(skill, ref);
    if (!(LIVE_STATUSES as string[]).includes(v.status) && v.status !== "retired") {
      throw new CoreError("conflict", `v${v.seq} of "${name}" is ${v.status}; only versions that were in use take feedback`);
    }
    const after = await this.store.recordTrial(
      v.id,
      { passed: outcome.passed, note: outcome.note ?? null, threadId: thread, at: this.clock.now() },
      (p, t) => this.eta(p, t),
      this.audit("feedback", name, actor, { version: v.id, seq: v.seq, passed: outcome.passed }),
    );
    return this.applyLifecycle(skill, after, actor);
  }

  /** Promote or retire a live version by its η and trials (core/learning/lifecycle.ts); audited. */
  async applyLifecycle(skill: Skill, v: SkillVersion, actor: string): Promise<SkillVersion> {
    const next = nextStatus(v, skill.pinned, this.config.evolution.lifecycle);
    if (!next || next === v.status) return v;
    try {
      // not over a person's decision made since the trial was counted (a rollback retired it, a reject)
      await this.store.setStatus(
        v.id,
        next,
        this.audit(next === "retired" ? "retire" : "promote", skill.name, actor, { version: v.id, seq: v.seq, from: v.status, to: next, eta: v.eta, trials: v.trials }),
        { expect: v.status },
      );
    } catch (e) {
      if (!(e instanceof StatusChangedError)) throw e;
      return (await this.store.version(v.id)) ?? v;
    }
    return { ...v, status: next };
  }

  async history(name: string): Promise<{ skill: Skill; versions: SkillVersion[] }> {
    const skill = await this.skill(name);
    return { skill, versions: await this.store.versionsOf(skill.id) };
  }

  async diff(name: string, a: string, b: string): Promise<string> {
    const skill = await this.skill(name);
    const [va, vb] = [await this.version(skill, a), await this.version(skill, b)];
    return diffVersions(await this.content(va), await this.content(vb));
  }

  async list(): Promise<{ skill: Skill; published: SkillVersion | null; candidates: number }[]> {
    const out = [];
    for (const skill of await this.store.listSkills()) {
      const versions = await this.store.versionsOf(skill.id);
      out.push({
        skill,
        published: versions.find((v) => v.id === skill.publishedVersionId) ?? null,
        candidates: versions.filter((v) => v.status === "candidate").length,
      });
    }
    return out;
  }

  async auditOf(name: string, limit = 50) {
    return this.store.auditOf(name, limit);
  }
}

/** Share of the query's words that appear in the text (plural-insensitive, 4-letter prefixes count). */
/** A CJK query matches a skill holding at least this share of its bigrams. */
const CJK_MIN_SHARE = 0.5;

function cjkShare(bigrams: string[], text: string): number {
  if (bigrams.length === 0) return 0;
  const have = new Set(cjkBigrams(text));
  return bigrams.filter((b) => have.has(b)).length / bigrams.length;
}

/** The share of the query a skill's name and description match: its words and its CJK bigrams. */
function matchShare(q: { terms: string[]; cjk: string[] }, text: string): number {
  const total = q.terms.length + q.cjk.length;
  return total === 0 ? 0 : (coverage(q.terms, text) * q.terms.length + cjkShare(q.cjk, text) * q.cjk.length) / total;
}

export function coverage(terms: string[], text: string): number {
  if (terms.length === 0) return 0;
  const words = contentWords(text).map((w) => w.replace(/s$/u, ""));
  let hit = 0;
  for (const t of terms) {
    const q = t.replace(/s$/u, "");
    if (words.some((w) => w === q || (Math.min(w.length, q.length) >= 4 && (w.startsWith(q) || q.startsWith(w))))) hit++;
  }
  return hit / terms.length;
}

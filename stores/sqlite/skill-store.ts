// SQLite implementation of SkillStore: skills, immutable versions and files, grants, per-scope
// toggles, trials and the search index of published versions. Every multi-row change runs in
// one IMMEDIATE transaction, so a killed process leaves the pointer at the old or the new version.
import type { SkillFile } from "../../core/skills/skill-md.js";
import {
  WITHHELD_HASH_PREFIX,
  type NewSkillVersion,
  type Skill,
  type SkillGrant,
  type SkillSearchHit,
  type SkillStatus,
  type SkillToggle,
  type SkillVersion,
} from "../../core/skills/version.js";
import { StatusChangedError, StoreError, type PointerGrant, type SkillAuditEntry, type SkillSearchQuery, type SkillStore } from "../traits.js";
import type { Db } from "./database.js";

interface SkillRow {
  rowid: number;
  id: string;
  name: string;
  published_version_id: string | null;
  pinned: number;
  created_at: number;
  updated_at: number;
}

interface VersionRow {
  id: string;
  skill_id: string;
  name: string;
  seq: number;
  content_hash: string;
  description: string;
  frontmatter: string;
  body: string;
  allowed_tools: string;
  author: SkillVersion["author"];
  author_ref: string | null;
  parent_id: string | null;
  trust: SkillVersion["trust"];
  status: SkillStatus;
  flags: string;
  eta: number;
  trials: number;
  passes: number;
  views: number;
  uses: number;
  successes: number;
  failures: number;
  created_at: number;
  published_at: number | null;
  live_order: number | null;
}

const VERSION_COLS = `v.*, s.name AS name`;

/** rows per page of a forget's scan (versions carry whole bodies: a few milliseconds of reading) */
const SCAN_PAGE = 500;

const giveWay = () => new Promise<void>((r) => setImmediate(r));

function toSkill(r: SkillRow): Skill {
  return {
    id: r.id,
    name: r.name,
    publishedVersionId: r.published_version_id,
    pinned: r.pinned === 1,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toVersion(r: VersionRow): SkillVersion {
  return {
    id: r.id,
    skillId: r.skill_id,
    name: r.name,
    seq: r.seq,
    contentHash: r.content_hash,
    description: r.description,
    frontmatter: JSON.parse(r.frontmatter) as Record<string, unknown>,
    body: r.body,
    allowedTools: JSON.parse(r.allowed_tools) as string[],
    author: r.author,
    authorRef: r.author_ref,
    parentId: r.parent_id,
    trust: r.trust,
    status: r.status,
    flags: JSON.parse(r.flags) as string[],
    eta: r.eta,
    trials: r.trials,
    passes: r.passes,
    usage: { views: r.views, uses: r.uses, successes: r.successes, failures: r.failures },
    createdAt: r.created_at,
    publishedAt: r.published_at,
    liveOrder: r.live_order,
  };
}

export class SqliteSkillStore implements SkillStore {
  private readonly st;

  constructor(private readonly db: Db) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      byName: p(`SELECT * FROM skills WHERE name = ?`),
      byId: p(`SELECT * FROM skills WHERE id = ?`),
      all: p(`SELECT * FROM skills ORDER BY name`),
      version: p(`SELECT ${VERSION_COLS} FROM skill_versions v JOIN skills s ON s.id = v.skill_id WHERE v.id = ?`),
      versionsOf: p(`SELECT ${VERSION_COLS} FROM skill_versions v JOIN skills s ON s.id = v.skill_id WHERE v.skill_id = ? ORDER BY v.seq`),
      byHash: p(`SELECT ${VERSION_COLS} FROM skill_versions v JOIN skills s ON s.id = v.skill_id WHERE v.skill_id = ? AND v.content_hash = ?`),
      files: p(`SELECT path, content FROM skill_files WHERE version_id = ? ORDER BY path`),
      insertSkill: p(`INSERT INTO skills (id, name, published_version_id, pinned, created_at, updated_at) VALUES (?, ?, NULL, 0, ?, ?)`),
      nextSeq: p(`SELECT COALESCE(MAX(seq), 0) + 1 AS n FROM skill_versions WHERE skill_id = ?`),
      insertVersion: p(
        `INSERT INTO skill_versions (id, skill_id, seq, content_hash, description, frontmatter, body, allowed_tools, author,
           author_ref, parent_id, trust, status, flags, eta, created_at)
         VALUES (@id, @skill_id, @seq, @content_hash, @description, @frontmatter, @body, @allowed_tools, @author,
           @author_ref, @parent_id, @trust, @status, @flags, @eta, @created_at)`,
      ),
      insertFile: p(`INSERT INTO skill_files (version_id, path, content) VALUES (?, ?, ?)`),
      setStatus: p(`UPDATE skill_versions SET status = ? WHERE id = ?`),
      // the version the pointer leaves: a version a forget withdrew (rejected) stays rejected
      leave: p(`UPDATE skill_versions SET status = ? WHERE id = ? AND status <> 'rejected'`),
      markPublished: p(`UPDATE skill_versions SET status = ?, published_at = COALESCE(published_at, ?) WHERE id = ? AND skill_id = ?`),
      push: p(`UPDATE skill_versions SET live_order = (SELECT COALESCE(MAX(live_order), 0) + 1 FROM skill_versions WHERE skill_id = ?) WHERE id = ?`),
      pushIfOff: p(
        `UPDATE skill_versions SET live_order = (SELECT COALESCE(MAX(live_order), 0) + 1 FROM skill_versions WHERE skill_id = ?) WHERE id = ? AND live_order IS NULL`,
      ),
      pop: p(`UPDATE skill_versions SET live_order = NULL WHERE id = ?`),
      popAbove: p(`UPDATE skill_versions SET live_order = NULL WHERE skill_id = ? AND live_order > (SELECT live_order FROM skill_versions WHERE id = ?)`),
      setPointer: p(`UPDATE skills SET published_version_id = ?, updated_at = ? WHERE id = ?`),
      setPinned: p(`UPDATE skills SET pinned = ?, updated_at = ? WHERE id = ?`),
      ftsDelete: p(`DELETE FROM skill_fts WHERE rowid = ?`),
      ftsInsert: p(`INSERT INTO skill_fts (rowid, name, description) VALUES (?, ?, ?)`),
      grants: p(`SELECT tool, granted_by, at FROM skill_grants WHERE skill_id = ? ORDER BY tool`),
      grant: p(
        `INSERT INTO skill_grants (skill_id, tool, granted_by, at) VALUES (?, ?, ?, ?) ON CONFLICT (skill_id, tool) DO NOTHING`,
      ),
      toggleSet: p(
        `INSERT INTO skill_toggles (skill_id, scope_key, level, enabled, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (scope_key, skill_id) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`,
      ),
      toggleDel: p(`DELETE FROM skill_toggles WHERE scope_key = ? AND skill_id = ?`),
      togglesFor: p(`SELECT skill_id, scope_key, level, enabled FROM skill_toggles WHERE scope_key IN (SELECT value FROM json_each(?))`),
      view: p(`UPDATE skill_versions SET views = views + 1 WHERE id = ?`),
      trial: p(`INSERT INTO skill_trials (version_id, passed, note, thread_id, at) VALUES (?, ?, ?, ?, ?)`),
      counts: p(
        `UPDATE skill_versions SET trials = trials + 1, passes = passes + @pass, uses = uses + 1,
           successes = successes + @pass, failures = failures + (1 - @pass) WHERE id = @id RETURNING trials, passes`,
      ),
      setEta: p(`UPDATE skill_versions SET eta = ? WHERE id = ?`),
      // The FTS ranking runs alone first (cheap: no joins per matching row), then the few best
      // rows are joined and filtered; searchAll is the fallback when filters ate the candidates.
      search: p(
        `WITH top AS (SELECT rowid, bm25(skill_fts, 3.0, 1.0) AS rank FROM skill_fts WHERE skill_fts MATCH @match ORDER BY rank LIMIT @candidates)
         SELECT s.rowid AS s_rowid, s.id AS s_id, s.name AS s_name, s.published_version_id AS s_pub, s.pinned AS s_pinned,
                s.created_at AS s_created, s.updated_at AS s_updated, ${VERSION_COLS}, top.rank AS rank
           FROM top
           JOIN skills s ON s.rowid = top.rowid
           JOIN skill_versions v ON v.id = s.published_version_id
          WHERE v.eta > @min_eta AND v.flags = '[]' AND s.id NOT IN (SELECT value FROM json_each(@exclude))
            AND (v.status = 'active' OR (v.status = 'probationary' AND v.eta >= @prob_min_eta))
          ORDER BY rank LIMIT @limit`,
      ),
      countMatches: p(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM skill_fts WHERE skill_fts MATCH ? LIMIT ?)`),
      searchAll: p(
        `SELECT s.rowid AS s_rowid, s.id AS s_id, s.name AS s_name, s.published_version_id AS s_pub, s.pinned AS s_pinned,
                s.created_at AS s_created, s.updated_at AS s_updated, ${VERSION_COLS}, bm25(skill_fts, 3.0, 1.0) AS rank
           FROM skill_fts
           JOIN skills s ON s.rowid = skill_fts.rowid
           JOIN skill_versions v ON v.id = s.published_version_id
          WHERE skill_fts MATCH @match AND v.eta > @min_eta AND v.flags = '[]'
            AND s.id NOT IN (SELECT value FROM json_each(@exclude))
            AND (v.status = 'active' OR (v.status = 'probationary' AND v.eta >= @prob_min_eta))
          ORDER BY rank LIMIT @limit`,
      ),
      audit: p(`INSERT INTO audit_log (at, actor, action, target_kind, target_id, detail) VALUES (?, ?, ?, ?, ?, ?)`),
      auditOf: p(`SELECT * FROM audit_log WHERE target_kind = 'skill' AND target_id = ? ORDER BY seq DESC LIMIT ?`),
      // A forget's scan, a page of versions (rowid order) at a time. LIKE ignores ASCII case, and a
      // probe is ASCII letters and digits: nothing to escape.
      versionPageEnd: p(`SELECT max(rowid) FROM (SELECT rowid FROM skill_versions WHERE rowid > ? ORDER BY rowid LIMIT ?)`).pluck(),
      agentLike: p(
        `SELECT ${VERSION_COLS} FROM skill_versions v JOIN skills s ON s.id = v.skill_id
          WHERE v.rowid > @after AND v.rowid <= @upto AND v.author = 'agent'
            AND EXISTS (SELECT 1 FROM json_each(@likes) WHERE v.description LIKE value OR v.body LIKE value OR v.frontmatter LIKE value
              OR EXISTS (SELECT 1 FROM skill_files f WHERE f.version_id = v.id AND (f.path LIKE value OR f.content LIKE value)))`,
      ),
      withdraw: p(
        `UPDATE skill_versions SET description = @description, body = @body, frontmatter = @frontmatter, content_hash = @hash,
           status = 'rejected', live_order = NULL WHERE id = @id AND author = 'agent'`,
      ),
      deleteFiles: p(`DELETE FROM skill_files WHERE version_id = ?`),
      pointingAt: p(`SELECT * FROM skills WHERE published_version_id = ?`),
      trialPageEnd: p(`SELECT max(id) FROM (SELECT id FROM skill_trials WHERE id > ? ORDER BY id LIMIT ?)`).pluck(),
      trialsLike: p(
        `SELECT id, version_id, thread_id, note FROM skill_trials WHERE id > @after AND id <= @upto AND note IS NOT NULL
           AND EXISTS (SELECT 1 FROM json_each(@likes) WHERE note LIKE value)`,
      ),
      clearNote: p(`UPDATE skill_trials SET note = NULL WHERE id = ?`),
    };
  }

  private writeAudit(a: SkillAuditEntry): void {
    this.st.audit.run(a.at, a.actor, a.action, a.targetKind, a.targetId, JSON.stringify(a.detail));
  }

  private skillRow(id: string): SkillRow {
    const r = this.st.byId.get(id) as SkillRow | undefined;
    if (!r) throw new StoreError("not_found", `no skill ${id}`);
    return r;
  }

  async skillByName(name: string): Promise<Skill | null> {
    const r = this.st.byName.get(name) as SkillRow | undefined;
    return r ? toSkill(r) : null;
  }

  async skillById(id: string): Promise<Skill | null> {
    const r = this.st.byId.get(id) as SkillRow | undefined;
    return r ? toSkill(r) : null;
  }

  async listSkills(): Promise<Skill[]> {
    return (this.st.all.all() as SkillRow[]).map(toSkill);
  }

  async version(id: string): Promise<SkillVersion | null> {
    const r = this.st.version.get(id) as VersionRow | undefined;
    return r ? toVersion(r) : null;
  }

  async versionsOf(skillId: string): Promise<SkillVersion[]> {
    return (this.st.versionsOf.all(skillId) as VersionRow[]).map(toVersion);
  }

  async versionByHash(skillId: string, contentHash: string): Promise<SkillVersion | null> {
    const r = this.st.byHash.get(skillId, contentHash) as VersionRow | undefined;
    return r ? toVersion(r) : null;
  }

  async filesOf(versionId: string): Promise<SkillFile[]> {
    return this.st.files.all(versionId) as SkillFile[];
  }

  async insertVersion(v: NewSkillVersion, ids: { skillId: string; versionId: string }, audit: SkillAuditEntry): Promise<SkillVersion> {
    this.db
      .transaction(() => {
        const existing = this.st.byName.get(v.name) as SkillRow | undefined;
        if (existing && existing.id !== ids.skillId) throw new StoreError("constraint", `skill "${v.name}" has another id`);
        // checked again under the write lock: another process may have stored this content since the caller looked
        if (existing && this.st.byHash.get(ids.skillId, v.contentHash)) throw new StoreError("constraint", `skill "${v.name}" already has a version with this content`);
        if (!existing) this.st.insertSkill.run(ids.skillId, v.name, v.createdAt, v.createdAt);
        const seq = (this.st.nextSeq.get(ids.skillId) as { n: number }).n;
        this.st.insertVersion.run({
          id: ids.versionId,
          skill_id: ids.skillId,
          seq,
          content_hash: v.contentHash,
          description: v.description,
          frontmatter: JSON.stringify(v.frontmatter),
          body: v.body,
          allowed_tools: JSON.stringify(v.allowedTools),
          author: v.author,
          author_ref: v.authorRef,
          parent_id: v.parentId,
          trust: v.trust,
          status: v.status,
          flags: JSON.stringify(v.flags),
          eta: v.eta,
          created_at: v.createdAt,
        });
        for (const f of v.files) this.st.insertFile.run(ids.versionId, f.path, f.content);
        this.writeAudit(audit);
      })
      .immediate();
    return (await this.version(ids.versionId))!;
  }

  async movePointer(
    skillId: string,
    m: { expectedFrom: string | null; to: string; toStatus: SkillStatus; fromStatus: SkillStatus; kind: "publish" | "rollback"; grant?: PointerGrant; expectTo?: SkillStatus },
    audit: SkillAuditEntry,
  ): Promise<void> {
    this.db
      .transaction(() => {
        const s = this.skillRow(skillId);
        if (s.published_version_id !== m.expectedFrom) {
          throw new StoreError("constraint", `skill "${s.name}" was changed meanwhile; look again and retry`);
        }
        const target = this.st.version.get(m.to) as VersionRow | undefined;
        if (!target || target.skill_id !== skillId) throw new StoreError("not_found", `version ${m.to} is not a version of "${s.name}"`);
        if (m.expectTo !== undefined && target.status !== m.expectTo) throw new StatusChangedError(m.to, m.expectTo, target.status);
        if (m.grant && m.grant.tools.length > 0) {
          for (const t of m.grant.tools) this.st.grant.run(skillId, t, m.grant.grantedBy, m.grant.audit.at);
          this.writeAudit(m.grant.audit);
        }
        if (m.expectedFrom !== null && m.expectedFrom !== m.to) this.st.leave.run(m.fromStatus, m.expectedFrom);
        this.st.markPublished.run(m.toStatus, audit.at, m.to, skillId);
        if (m.kind === "publish") this.st.push.run(skillId, m.to);
        else {
          if (m.expectedFrom !== null) this.st.pop.run(m.expectedFrom);
          // back to an earlier version: what was published after it leaves the stack too, so the
          // next rollback goes below it, never to a version the person skipped
          this.st.popAbove.run(skillId, m.to);
          this.st.pushIfOff.run(skillId, m.to);
        }
        this.st.setPointer.run(m.to, audit.at, skillId);
        this.st.ftsDelete.run(s.rowid);
        this.st.ftsInsert.run(s.rowid, s.name.replace(/-/g, " "), target.description);
        this.writeAudit(audit);
      })
      .immediate();
  }

  async setStatus(versionId: string, status: SkillStatus, audit: SkillAuditEntry, opts: { expect?: SkillStatus } = {}): Promise<void> {
    this.db
      .transaction(() => {
        if (opts.expect !== undefined) {
          const now = (this.st.version.get(versionId) as VersionRow | undefined)?.status ?? null;
          if (now !== opts.expect) throw new StatusChangedError(versionId, opts.expect, now);
        }
        this.st.setStatus.run(status, versionId);
        this.writeAudit(audit);
      })
      .immediate();
  }

  async setPinned(skillId: string, pinned: boolean, audit: SkillAuditEntry): Promise<void> {
    this.db
      .transaction(() => {
        this.st.setPinned.run(pinned ? 1 : 0, audit.at, skillId);
        this.writeAudit(audit);
      })
      .immediate();
  }

  async grantsOf(skillId: string): Promise<SkillGrant[]> {
    return (this.st.grants.all(skillId) as { tool: string; granted_by: string; at: number }[]).map((g) => ({
      tool: g.tool,
      grantedBy: g.granted_by,
      at: g.at,
    }));
  }

  async grant(skillId: string, tools: string[], grantedBy: string, audit: SkillAuditEntry): Promise<void> {
    this.db
      .transaction(() => {
        for (const t of tools) this.st.grant.run(skillId, t, grantedBy, audit.at);
        this.writeAudit(audit);
      })
      .immediate();
  }

  async setToggle(t: SkillToggle, value: boolean | null, audit: SkillAuditEntry): Promise<void> {
    const key = `${t.level}:${t.key}`;
    this.db
      .transaction(() => {
        if (value === null) this.st.toggleDel.run(key, t.skillId);
        else this.st.toggleSet.run(t.skillId, key, t.level, value ? 1 : 0, audit.at);
        this.writeAudit(audit);
      })
      .immediate();
  }

  async togglesFor(scopes: { level: SkillToggle["level"]; key: string }[]): Promise<SkillToggle[]> {
    if (scopes.length === 0) return [];
    const keys = JSON.stringify(scopes.map((s) => `${s.level}:${s.key}`));
    const rows = this.st.togglesFor.all(keys) as { skill_id: string; scope_key: string; level: SkillToggle["level"]; enabled: number }[];
    return rows.map((r) => ({ skillId: r.skill_id, level: r.level, key: r.scope_key.slice(r.level.length + 1), enabled: r.enabled === 1 }));
  }

  async recordView(versionId: string): Promise<void> {
    this.st.view.run(versionId);
  }

  async recordTrial(
    versionId: string,
    trial: { passed: boolean; note: string | null; threadId: string | null; at: number },
    eta: (passes: number, trials: number) => number,
    audit: SkillAuditEntry,
  ): Promise<SkillVersion> {
    this.db
      .transaction(() => {
        this.st.trial.run(versionId, trial.passed ? 1 : 0, trial.note, trial.threadId, trial.at);
        const c = this.st.counts.get({ id: versionId, pass: trial.passed ? 1 : 0 }) as { trials: number; passes: number } | undefined;
        if (!c) throw new StoreError("not_found", `no skill version ${versionId}`);
        this.st.setEta.run(eta(c.passes, c.trials), versionId);
        this.writeAudit(audit);
      })
      .immediate();
    return (await this.version(versionId))!;
  }

  async search(q: SkillSearchQuery): Promise<SkillSearchHit[]> {
    const candidates = q.limit * 8;
    const params = { match: q.match, min_eta: q.minEta, prob_min_eta: q.probationaryMinEta ?? 0, exclude: JSON.stringify(q.excludeSkillIds), limit: q.limit };
    type Row = VersionRow & { s_rowid: number; s_id: string; s_name: string; s_pub: string; s_pinned: number; s_created: number; s_updated: number; rank: number };
    let rows = this.st.search.all({ ...params, candidates }) as Row[];
    if (rows.length < q.limit) {
      // Fewer than asked: either there are no more matches, or filters removed candidates.
      const matches = (this.st.countMatches.get(q.match, candidates + 1) as { n: number }).n;
      if (matches > candidates) rows = this.st.searchAll.all(params) as Row[];
    }
    return rows.map((r) => ({
      skill: { id: r.s_id, name: r.s_name, publishedVersionId: r.s_pub, pinned: r.s_pinned === 1, createdAt: r.s_created, updatedAt: r.s_updated },
      version: toVersion(r),
      // bm25 is negative, lower is better; the service normalises.
      score: -r.rank,
    }));
  }

  async auditOf(name: string, limit: number): Promise<(SkillAuditEntry & { seq: number })[]> {
    const rows = this.st.auditOf.all(name, limit) as { seq: number; at: number; actor: string; action: string; target_id: string; detail: string }[];
    return rows.map((r) => ({
      seq: r.seq,
      at: r.at,
      actor: r.actor,
      action: r.action as SkillAuditEntry["action"],
      targetKind: "skill",
      targetId: r.target_id,
      detail: JSON.parse(r.detail) as Record<string, unknown>,
    }));
  }

  async agentVersionsMentioning(probes: string[]): Promise<{ version: SkillVersion; texts: string[] }[]> {
    const likes = JSON.stringify(probes.map((p) => `%${p}%`));
    const out: { version: SkillVersion; texts: string[] }[] = [];
    // a page at a time, giving way in between: the scan reads every body the catalog holds
    for (let after = 0; ; ) {
      const upto = this.st.versionPageEnd.get(after, SCAN_PAGE) as number | null;
      if (upto === null) break;
      for (const r of this.st.agentLike.all({ after, upto, likes }) as VersionRow[]) {
        const files = this.st.files.all(r.id) as SkillFile[];
        out.push({ version: toVersion(r), texts: [r.description, r.body, r.frontmatter, ...files.flatMap((f) => [f.path, f.content])] });
      }
      after = upto;
      await giveWay();
    }
    return out;
  }

  async withdrawVersion(
    versionId: string,
    blank: { description: string; body: string; frontmatter: Record<string, unknown> },
    audit: SkillAuditEntry,
  ): Promise<boolean> {
    return this.db
      .transaction(() => {
        const changed = this.st.withdraw.run({
          id: versionId,
          description: blank.description,
          body: blank.body,
          frontmatter: JSON.stringify(blank.frontmatter),
          hash: `${WITHHELD_HASH_PREFIX}${versionId}`,
        }).changes;
        if (changed === 0) return false;
        this.st.deleteFiles.run(versionId);
        // a retired skill's pointer stays at its last version: its search row says no more than the blank
        // (skill_fts deletes in place, migration 21: the old postings do not stay in its segments)
        const s = this.st.pointingAt.get(versionId) as SkillRow | undefined;
        if (s) {
          this.st.ftsDelete.run(s.rowid);
          this.st.ftsInsert.run(s.rowid, s.name.replace(/-/g, " "), blank.description);
        }
        this.writeAudit(audit);
        return true;
      })
      .immediate();
  }

  async trialNotesMentioning(probes: string[]): Promise<{ id: number; versionId: string; threadId: string | null; note: string }[]> {
    const likes = JSON.stringify(probes.map((p) => `%${p}%`));
    const out: { id: number; versionId: string; threadId: string | null; note: string }[] = [];
    for (let after = 0; ; ) {
      const upto = this.st.trialPageEnd.get(after, SCAN_PAGE * 8) as number | null;
      if (upto === null) break;
      for (const r of this.st.trialsLike.all({ after, upto, likes }) as { id: number; version_id: string; thread_id: string | null; note: string }[]) {
        out.push({ id: r.id, versionId: r.version_id, threadId: r.thread_id, note: r.note });
      }
      after = upto;
      await giveWay();
    }
    return out;
  }

  async clearTrialNotes(ids: number[]): Promise<void> {
    this.db
      .transaction(() => {
        for (const id of ids) this.st.clearNote.run(id);
      })
      .immediate();
  }
}

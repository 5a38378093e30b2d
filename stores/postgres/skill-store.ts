// PostgreSQL SkillStore: skills, immutable versions and files (a trigger refuses content
// updates), grants, per-scope toggles, trials and a tsvector search index of published versions.
// Publication and rollback move the pointer in a SERIALIZABLE transaction, so two servers racing
// on the same skill cannot both succeed; the loser re-reads and fails with "changed meanwhile".
import type { Pool } from "pg";
import type { SkillFile } from "../../core/skills/skill-md.js";
import { WITHHELD_HASH_PREFIX, type NewSkillVersion, type Skill, type SkillGrant, type SkillSearchHit, type SkillStatus, type SkillToggle, type SkillVersion } from "../../core/skills/version.js";
import { StatusChangedError, StoreError, type PointerGrant, type SkillAuditEntry, type SkillSearchQuery, type SkillStore } from "../traits.js";
import { inTx, num, numOrNull, parseJson, POSTGRES_FLAVOR, type PgFlavor, type Queryable } from "./rows.js";
import { foldLatin, holdsWord, sqliteWords, splitPunct } from "./words.js";

interface SkillRow {
  rowid: string | number;
  id: string;
  name: string;
  published_version_id: string | null;
  pinned: number;
  created_at: string | number;
  updated_at: string | number;
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
  created_at: string | number;
  published_at: string | number | null;
  live_order: number | null;
}

const VERSION_SELECT = `SELECT v.*, s.name AS name FROM skill_versions v JOIN skills s ON s.id = v.skill_id`;

/** the text search configuration; English stemming like SQLite's porter tokenizer */
const TS_CONFIG = "english";
/**
 * A published version's search document. Name and description reach the parser split as SQLite's
 * tokenizer splits them (words.ts): "package.json" or "vpn.acme-corp.io" in a description was one
 * token, so "package" or "acme" found nothing (migration 104 rebuilt the older documents). The
 * texts are lower-cased before they come here: the parser folds letters outside ASCII only under
 * a locale that knows them (migration 105 folded older documents where it could).
 */
const SKILL_DOC = (name: string, description: string) =>
  `setweight(to_tsvector('${TS_CONFIG}', ${splitPunct(name)}), 'A') || setweight(to_tsvector('${TS_CONFIG}', ${splitPunct(description)}), 'B')`;
/**
 * A name or description as SKILL_DOC reads it: lower-cased, and every character that separates
 * words on SQLite a space (words.ts; a C-locale parser read '—', '“' or an emoji as a letter).
 */
const docText = (s: string) => sqliteWords(s.toLowerCase());

function toSkill(r: SkillRow): Skill {
  return {
    id: r.id,
    name: r.name,
    publishedVersionId: r.published_version_id,
    pinned: r.pinned === 1,
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
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
    frontmatter: parseJson<Record<string, unknown>>(r.frontmatter),
    body: r.body,
    allowedTools: parseJson<string[]>(r.allowed_tools),
    author: r.author,
    authorRef: r.author_ref,
    parentId: r.parent_id,
    trust: r.trust,
    status: r.status,
    flags: parseJson<string[]>(r.flags),
    eta: r.eta,
    trials: r.trials,
    passes: r.passes,
    usage: { views: r.views, uses: r.uses, successes: r.successes, failures: r.failures },
    createdAt: num(r.created_at),
    publishedAt: numOrNull(r.published_at),
    liveOrder: r.live_order,
  };
}

/** The quoted terms of the service's FTS5 expression (`"a" OR "b"`), unescaped. */
export function matchTerms(match: string): string[] {
  const out: string[] = [];
  for (const m of match.matchAll(/"((?:[^"]|"")*)"/g)) out.push(m[1]!.replace(/""/g, '"'));
  if (out.length === 0) out.push(...match.split(/\s+OR\s+|\s+/).filter((t) => t && t !== "OR"));
  return out;
}

export async function writeSkillAudit(q: Queryable, a: SkillAuditEntry, f: PgFlavor = POSTGRES_FLAVOR): Promise<void> {
  const args = [a.at, a.actor, a.action, a.targetKind, a.targetId, JSON.stringify(a.detail)];
  if (f.dsql) {
    await q.query(`INSERT INTO audit_log (at, actor, action, target_kind, target_id, detail, seq) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [...args, f.ids.next()]);
  } else {
    await q.query(`INSERT INTO audit_log (at, actor, action, target_kind, target_id, detail) VALUES ($1, $2, $3, $4, $5, $6)`, args);
  }
}

/** Rebuild skill_search from the published pointers (after `infinity-memory migrate`; no-op on DSQL). */
export async function rebuildSkillSearch(q: Queryable): Promise<void> {
  const have = await q.query<{ t: string | null }>(`SELECT to_regclass('skill_search')::text AS t`);
  if (!have.rows[0]?.t) return;
  const published = await q.query<{ id: string; name: string; description: string }>(
    `SELECT s.id, s.name, v.description FROM skills s JOIN skill_versions v ON v.id = s.published_version_id`,
  );
  await q.query(`DELETE FROM skill_search`);
  // lower-cased here, not by lower(), which folds what the database's locale knows (a catalog is small)
  for (const r of published.rows) {
    await q.query(`INSERT INTO skill_search (skill_id, doc) VALUES ($1, ${SKILL_DOC("$2::text", "$3::text")})`, [r.id, docText(r.name), docText(r.description)]);
  }
}

export class PgSkillStore implements SkillStore {
  constructor(
    private readonly pool: Pool,
    private readonly f: PgFlavor = POSTGRES_FLAVOR,
  ) {}

  /** DSQL runs every transaction optimistically: retry on conflict */
  private get txOpts() {
    return { serializable: this.f.dsql };
  }

  async skillByName(name: string): Promise<Skill | null> {
    const r = (await this.pool.query<SkillRow>(`SELECT * FROM skills WHERE name = $1`, [name])).rows[0];
    return r ? toSkill(r) : null;
  }

  async skillById(id: string): Promise<Skill | null> {
    const r = (await this.pool.query<SkillRow>(`SELECT * FROM skills WHERE id = $1`, [id])).rows[0];
    return r ? toSkill(r) : null;
  }

  async listSkills(): Promise<Skill[]> {
    // COLLATE "C": byte order, as SQLite's default BINARY collation sorts
    return (await this.pool.query<SkillRow>(`SELECT * FROM skills ORDER BY name COLLATE "C"`)).rows.map(toSkill);
  }

  async version(id: string): Promise<SkillVersion | null> {
    return versionOn(this.pool, id);
  }

  async versionsOf(skillId: string): Promise<SkillVersion[]> {
    return (await this.pool.query<VersionRow>(`${VERSION_SELECT} WHERE v.skill_id = $1 ORDER BY v.seq`, [skillId])).rows.map(toVersion);
  }

  async versionByHash(skillId: string, contentHash: string): Promise<SkillVersion | null> {
    const r = (await this.pool.query<VersionRow>(`${VERSION_SELECT} WHERE v.skill_id = $1 AND v.content_hash = $2`, [skillId, contentHash])).rows[0];
    return r ? toVersion(r) : null;
  }

  async filesOf(versionId: string): Promise<SkillFile[]> {
    return (await this.pool.query<SkillFile>(`SELECT path, content FROM skill_files WHERE version_id = $1 ORDER BY path COLLATE "C"`, [versionId])).rows;
  }

  async insertVersion(v: NewSkillVersion, ids: { skillId: string; versionId: string }, audit: SkillAuditEntry): Promise<SkillVersion> {
    await inTx(this.pool, async (c) => {
      // Create-or-lock the skill row: concurrent inserts of one skill then number versions in turn.
      if (this.f.dsql) {
        await c.query(`INSERT INTO skills (id, name, published_version_id, pinned, created_at, updated_at, rowid) VALUES ($1, $2, NULL, 0, $3, $3, $4) ON CONFLICT DO NOTHING`, [
          ids.skillId,
          v.name,
          v.createdAt,
          this.f.ids.next(),
        ]);
      } else {
        await c.query(`INSERT INTO skills (id, name, published_version_id, pinned, created_at, updated_at) VALUES ($1, $2, NULL, 0, $3, $3) ON CONFLICT DO NOTHING`, [
          ids.skillId,
          v.name,
          v.createdAt,
        ]);
      }
      const existing = (await c.query<SkillRow>(`SELECT * FROM skills WHERE name = $1 FOR UPDATE`, [v.name])).rows[0];
      if (!existing) throw new StoreError("constraint", `skill id ${ids.skillId} belongs to another skill`);
      if (existing.id !== ids.skillId) throw new StoreError("constraint", `skill "${v.name}" has another id`);
      // checked again under the row lock: another server may have stored this content since the caller looked
      if ((await c.query(`SELECT 1 FROM skill_versions WHERE skill_id = $1 AND content_hash = $2`, [ids.skillId, v.contentHash])).rows.length > 0) {
        throw new StoreError("constraint", `skill "${v.name}" already has a version with this content`);
      }
      const seq = num((await c.query<{ n: number }>(`SELECT COALESCE(MAX(seq), 0) + 1 AS n FROM skill_versions WHERE skill_id = $1`, [ids.skillId])).rows[0]!.n);
      await c.query(
        `INSERT INTO skill_versions (id, skill_id, seq, content_hash, description, frontmatter, body, allowed_tools, author,
           author_ref, parent_id, trust, status, flags, eta, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
        [
          ids.versionId,
          ids.skillId,
          seq,
          v.contentHash,
          v.description,
          JSON.stringify(v.frontmatter),
          v.body,
          JSON.stringify(v.allowedTools),
          v.author,
          v.authorRef,
          v.parentId,
          v.trust,
          v.status,
          JSON.stringify(v.flags),
          v.eta,
          v.createdAt,
        ],
      ).catch((e: { code?: string; message?: string }) => {
        if (e.code === "23505") throw new StoreError("constraint", `skill "${v.name}" already has this version (${e.message ?? "duplicate"})`);
        throw e;
      });
      for (const f of v.files) await c.query(`INSERT INTO skill_files (version_id, path, content) VALUES ($1, $2, $3)`, [ids.versionId, f.path, f.content]);
      await writeSkillAudit(c, audit, this.f);
    }, this.txOpts);
    return (await this.version(ids.versionId))!;
  }

  async movePointer(
    skillId: string,
    m: { expectedFrom: string | null; to: string; toStatus: SkillStatus; fromStatus: SkillStatus; kind: "publish" | "rollback"; grant?: PointerGrant; expectTo?: SkillStatus },
    audit: SkillAuditEntry,
  ): Promise<void> {
    await inTx(
      this.pool,
      async (c) => {
        const s = (await c.query<SkillRow>(`SELECT * FROM skills WHERE id = $1`, [skillId])).rows[0];
        if (!s) throw new StoreError("not_found", `no skill ${skillId}`);
        if (s.published_version_id !== m.expectedFrom) {
          throw new StoreError("constraint", `skill "${s.name}" was changed meanwhile; look again and retry`);
        }
        const target = await versionOn(c, m.to);
        if (!target || target.skillId !== skillId) throw new StoreError("not_found", `version ${m.to} is not a version of "${s.name}"`);
        if (m.expectTo !== undefined && target.status !== m.expectTo) throw new StatusChangedError(m.to, m.expectTo, target.status);
        if (m.grant && m.grant.tools.length > 0) {
          for (const t of m.grant.tools) {
            await c.query(`INSERT INTO skill_grants (skill_id, tool, granted_by, at) VALUES ($1, $2, $3, $4) ON CONFLICT (skill_id, tool) DO NOTHING`, [
              skillId,
              t,
              m.grant.grantedBy,
              m.grant.audit.at,
            ]);
          }
          await writeSkillAudit(c, m.grant.audit, this.f);
        }
        if (m.expectedFrom !== null && m.expectedFrom !== m.to) {
          // (a version a forget withdrew, rejected, stays rejected)
          await c.query(`UPDATE skill_versions SET status = $1 WHERE id = $2 AND status <> 'rejected'`, [m.fromStatus, m.expectedFrom]);
        }
        await c.query(`UPDATE skill_versions SET status = $1, published_at = COALESCE(published_at, $2) WHERE id = $3 AND skill_id = $4`, [
          m.toStatus,
          audit.at,
          m.to,
          skillId,
        ]);
        const push = `UPDATE skill_versions SET live_order = (SELECT COALESCE(MAX(live_order), 0) + 1 FROM skill_versions WHERE skill_id = $1) WHERE id = $2`;
        if (m.kind === "publish") await c.query(push, [skillId, m.to]);
        else {
          if (m.expectedFrom !== null) await c.query(`UPDATE skill_versions SET live_order = NULL WHERE id = $1`, [m.expectedFrom]);
          // back to an earlier version: what was published after it leaves the stack too (as in SQLite)
          await c.query(`UPDATE skill_versions SET live_order = NULL WHERE skill_id = $1 AND live_order > (SELECT live_order FROM skill_versions WHERE id = $2)`, [skillId, m.to]);
          await c.query(`${push} AND live_order IS NULL`, [skillId, m.to]);
        }
        await c.query(`UPDATE skills SET published_version_id = $1, updated_at = $2 WHERE id = $3`, [m.to, audit.at, skillId]);
        if (!this.f.dsql) await c.query(
          `INSERT INTO skill_search (skill_id, doc)
           VALUES ($1, ${SKILL_DOC("$2::text", "$3::text")})
           ON CONFLICT (skill_id) DO UPDATE SET doc = excluded.doc`,
          [skillId, docText(s.name), docText(target.description)],
        );
        await writeSkillAudit(c, audit, this.f);
      },
      { serializable: true },
    );
  }

  async setStatus(versionId: string, status: SkillStatus, audit: SkillAuditEntry, opts: { expect?: SkillStatus } = {}): Promise<void> {
    await inTx(this.pool, async (c) => {
      if (opts.expect !== undefined) {
        // locked to the commit: a pointer move waits for it, then sees the new status
        const now = (await c.query<{ status: SkillStatus }>(`SELECT status FROM skill_versions WHERE id = $1 FOR UPDATE`, [versionId])).rows[0]?.status ?? null;
        if (now !== opts.expect) throw new StatusChangedError(versionId, opts.expect, now);
      }
      await c.query(`UPDATE skill_versions SET status = $1 WHERE id = $2`, [status, versionId]);
      await writeSkillAudit(c, audit, this.f);
    }, this.txOpts);
  }

  async setPinned(skillId: string, pinned: boolean, audit: SkillAuditEntry): Promise<void> {
    await inTx(this.pool, async (c) => {
      await c.query(`UPDATE skills SET pinned = $1, updated_at = $2 WHERE id = $3`, [pinned ? 1 : 0, audit.at, skillId]);
      await writeSkillAudit(c, audit, this.f);
    }, this.txOpts);
  }

  async grantsOf(skillId: string): Promise<SkillGrant[]> {
    const r = await this.pool.query<{ tool: string; granted_by: string; at: string }>(
      `SELECT tool, granted_by, at FROM skill_grants WHERE skill_id = $1 ORDER BY tool COLLATE "C"`,
      [skillId],
    );
    return r.rows.map((g) => ({ tool: g.tool, grantedBy: g.granted_by, at: num(g.at) }));
  }

  async grant(skillId: string, tools: string[], grantedBy: string, audit: SkillAuditEntry): Promise<void> {
    await inTx(this.pool, async (c) => {
      for (const t of tools) {
        await c.query(`INSERT INTO skill_grants (skill_id, tool, granted_by, at) VALUES ($1, $2, $3, $4) ON CONFLICT (skill_id, tool) DO NOTHING`, [
          skillId,
          t,
          grantedBy,
          audit.at,
        ]);
      }
      await writeSkillAudit(c, audit, this.f);
    }, this.txOpts);
  }

  async setToggle(t: SkillToggle, value: boolean | null, audit: SkillAuditEntry): Promise<void> {
    const key = `${t.level}:${t.key}`;
    await inTx(this.pool, async (c) => {
      if (value === null) await c.query(`DELETE FROM skill_toggles WHERE scope_key = $1 AND skill_id = $2`, [key, t.skillId]);
      else {
        await c.query(
          `INSERT INTO skill_toggles (skill_id, scope_key, level, enabled, updated_at) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (scope_key, skill_id) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`,
          [t.skillId, key, t.level, value ? 1 : 0, audit.at],
        );
      }
      await writeSkillAudit(c, audit, this.f);
    }, this.txOpts);
  }

  async togglesFor(scopes: { level: SkillToggle["level"]; key: string }[]): Promise<SkillToggle[]> {
    if (scopes.length === 0) return [];
    const r = await this.pool.query<{ skill_id: string; scope_key: string; level: SkillToggle["level"]; enabled: number }>(
      `SELECT skill_id, scope_key, level, enabled FROM skill_toggles WHERE scope_key = ANY($1::text[])`,
      [scopes.map((s) => `${s.level}:${s.key}`)],
    );
    return r.rows.map((x) => ({ skillId: x.skill_id, level: x.level, key: x.scope_key.slice(x.level.length + 1), enabled: x.enabled === 1 }));
  }

  async recordView(versionId: string): Promise<void> {
    await this.pool.query(`UPDATE skill_versions SET views = views + 1 WHERE id = $1`, [versionId]);
  }

  async recordTrial(
    versionId: string,
    trial: { passed: boolean; note: string | null; threadId: string | null; at: number },
    eta: (passes: number, trials: number) => number,
    audit: SkillAuditEntry,
  ): Promise<SkillVersion> {
    const pass = trial.passed ? 1 : 0;
    await inTx(this.pool, async (c) => {
      // The counter update locks the version row, so concurrent trials compute η in turn.
      const counts = (
        await c.query<{ trials: number; passes: number }>(
          `UPDATE skill_versions SET trials = trials + 1, passes = passes + $2, uses = uses + 1,
             successes = successes + $2, failures = failures + (1 - $2) WHERE id = $1 RETURNING trials, passes`,
          [versionId, pass],
        )
      ).rows[0];
      if (!counts) throw new StoreError("not_found", `no skill version ${versionId}`);
      const trialArgs = [versionId, pass, trial.note, trial.threadId, trial.at];
      if (this.f.dsql) await c.query(`INSERT INTO skill_trials (version_id, passed, note, thread_id, at, id) VALUES ($1, $2, $3, $4, $5, $6)`, [...trialArgs, this.f.ids.next()]);
      else await c.query(`INSERT INTO skill_trials (version_id, passed, note, thread_id, at) VALUES ($1, $2, $3, $4, $5)`, trialArgs);
      await c.query(`UPDATE skill_versions SET eta = $1 WHERE id = $2`, [eta(counts.passes, counts.trials), versionId]);
      await writeSkillAudit(c, audit, this.f);
    }, this.txOpts);
    return (await this.version(versionId))!;
  }

  async search(q: SkillSearchQuery): Promise<SkillSearchHit[]> {
    const terms = matchTerms(q.match);
    if (terms.length === 0) return [];
    if (this.f.dsql) return this.searchByScan(terms, q);
    // Any term matches (the service's OR expression); each term goes through the parser alone.
    const tsq = terms.map((_, i) => `plainto_tsquery('${TS_CONFIG}', ${splitPunct(`$${i + 5}::text`)})`).join(" || ");
    const r = await this.pool.query<VersionRow & { s_rowid: string; s_id: string; s_name: string; s_pub: string; s_pinned: number; s_created: string; s_updated: string; rank: number }>(
      `WITH q AS (SELECT ${tsq} AS query)
       SELECT s.rowid AS s_rowid, s.id AS s_id, s.name AS s_name, s.published_version_id AS s_pub, s.pinned AS s_pinned,
              s.created_at AS s_created, s.updated_at AS s_updated, v.*, s.name AS name,
              ts_rank('{0.1, 0.2, 0.333, 1.0}', ss.doc, q.query) AS rank
         FROM q, skill_search ss
         JOIN skills s ON s.id = ss.skill_id
         JOIN skill_versions v ON v.id = s.published_version_id
        WHERE ss.doc @@ q.query AND v.eta > $1 AND v.flags = '[]' AND NOT (s.id = ANY($2::text[]))
          AND (v.status = 'active' OR (v.status = 'probationary' AND v.eta >= $4))
        ORDER BY rank DESC, s.name COLLATE "C" LIMIT $3`,
      [q.minEta, q.excludeSkillIds, q.limit, q.probationaryMinEta ?? 0, ...terms.map(sqliteWords)],
    );
    return r.rows.map((x) => ({
      skill: { id: x.s_id, name: x.s_name, publishedVersionId: x.s_pub, pinned: x.s_pinned === 1, createdAt: num(x.s_created), updatedAt: num(x.s_updated) },
      version: toVersion(x),
      score: x.rank,
    }));
  }

  /**
   * DSQL has no text search: published rows whose name or description contains a term (no
   * stemming), ranked by terms matched, name matches weighing 3 as in the word index.
   */
  private async searchByScan(terms: string[], q: SkillSearchQuery): Promise<SkillSearchHit[]> {
    const params: unknown[] = [q.minEta, q.excludeSkillIds, q.probationaryMinEta ?? 0];
    const add = (v: unknown) => `$${params.push(v)}`;
    // a description's letters outside ASCII in either case (holdsWord); scored below as found here
    const found = terms.map((t) => t.toLowerCase()).flatMap((t) => [holdsWord("replace(s.name, '-', ' ')", t, add), holdsWord("v.description", t, add)]);
    const r = await this.pool.query<VersionRow & { s_id: string; s_name: string; s_pub: string; s_pinned: number; s_created: string; s_updated: string }>(
      `SELECT s.id AS s_id, s.name AS s_name, s.published_version_id AS s_pub, s.pinned AS s_pinned,
              s.created_at AS s_created, s.updated_at AS s_updated, v.*, s.name AS name
         FROM skills s JOIN skill_versions v ON v.id = s.published_version_id
        WHERE (${found.join(" OR ")})
          AND v.eta > $1 AND v.flags = '[]' AND NOT (s.id = ANY($2::text[]))
          AND (v.status = 'active' OR (v.status = 'probationary' AND v.eta >= $3))`,
      params,
    );
    const scored = r.rows.map((x) => {
      // folded as holdsWord folds, so a row found by "cafe" in "Café" scores for it
      const name = foldLatin(x.s_name.replace(/-/g, " ").toLowerCase());
      const desc = foldLatin(x.description.toLowerCase());
      const score = terms.map((t) => foldLatin(t.toLowerCase())).reduce((n, t) => n + (name.includes(t) ? 3 : 0) + (desc.includes(t) ? 1 : 0), 0);
      return { x, score };
    });
    scored.sort((a, b) => b.score - a.score || (a.x.s_name < b.x.s_name ? -1 : 1));
    return scored.slice(0, q.limit).map(({ x, score }) => ({
      skill: { id: x.s_id, name: x.s_name, publishedVersionId: x.s_pub, pinned: x.s_pinned === 1, createdAt: num(x.s_created), updatedAt: num(x.s_updated) },
      version: toVersion(x),
      score,
    }));
  }

  async auditOf(name: string, limit: number): Promise<(SkillAuditEntry & { seq: number })[]> {
    const r = await this.pool.query<{ seq: string; at: string; actor: string; action: string; target_id: string; detail: unknown }>(
      `SELECT * FROM audit_log WHERE target_kind = 'skill' AND target_id = $1 ORDER BY seq DESC LIMIT $2`,
      [name, limit],
    );
    return r.rows.map((x) => ({
      seq: num(x.seq),
      at: num(x.at),
      actor: x.actor,
      action: x.action as SkillAuditEntry["action"],
      targetKind: "skill",
      targetId: x.target_id,
      detail: parseJson<Record<string, unknown>>(x.detail),
    }));
  }

  async agentVersionsMentioning(probes: string[]): Promise<{ version: SkillVersion; texts: string[] }[]> {
    // probes are ASCII letters and digits: lower() folds them under any locale
    const hit = (col: string) => `strpos(lower(${col}), p) > 0`;
    const r = await this.pool.query<VersionRow>(
      `${VERSION_SELECT}
        WHERE v.author = 'agent' AND EXISTS (SELECT 1 FROM unnest($1::text[]) AS p
          WHERE ${hit("v.description")} OR ${hit("v.body")} OR ${hit("v.frontmatter")}
             OR EXISTS (SELECT 1 FROM skill_files f WHERE f.version_id = v.id AND (${hit("f.path")} OR ${hit("f.content")})))
        ORDER BY v.id`,
      [probes],
    );
    const out: { version: SkillVersion; texts: string[] }[] = [];
    for (const row of r.rows) {
      const files = await this.filesOf(row.id);
      out.push({ version: toVersion(row), texts: [row.description, row.body, row.frontmatter, ...files.flatMap((f) => [f.path, f.content])] });
    }
    return out;
  }

  async withdrawVersion(
    versionId: string,
    blank: { description: string; body: string; frontmatter: Record<string, unknown> },
    audit: SkillAuditEntry,
  ): Promise<boolean> {
    return inTx(this.pool, async (c) => {
      // the immutability trigger lets exactly this through (migration 106)
      const changed = await c.query(
        `UPDATE skill_versions SET description = $2, body = $3, frontmatter = $4, content_hash = $5, status = 'rejected', live_order = NULL
          WHERE id = $1 AND author = 'agent'`,
        [versionId, blank.description, blank.body, JSON.stringify(blank.frontmatter), `${WITHHELD_HASH_PREFIX}${versionId}`],
      );
      if ((changed.rowCount ?? 0) === 0) return false;
      await c.query(`DELETE FROM skill_files WHERE version_id = $1`, [versionId]);
      // a retired skill's pointer stays at its last version: its search document says no more than the blank
      const s = (await c.query<SkillRow>(`SELECT * FROM skills WHERE published_version_id = $1`, [versionId])).rows[0];
      if (s && !this.f.dsql) {
        await c.query(`UPDATE skill_search SET doc = ${SKILL_DOC("$2::text", "$3::text")} WHERE skill_id = $1`, [s.id, docText(s.name), docText(blank.description)]);
      }
      await writeSkillAudit(c, audit, this.f);
      return true;
    }, this.txOpts);
  }

  async trialNotesMentioning(probes: string[]): Promise<{ id: number; versionId: string; threadId: string | null; note: string }[]> {
    const r = await this.pool.query<{ id: string; version_id: string; thread_id: string | null; note: string }>(
      `SELECT id, version_id, thread_id, note FROM skill_trials
        WHERE note IS NOT NULL AND EXISTS (SELECT 1 FROM unnest($1::text[]) AS p WHERE strpos(lower(note), p) > 0) ORDER BY id`,
      [probes],
    );
    return r.rows.map((x) => ({ id: num(x.id), versionId: x.version_id, threadId: x.thread_id, note: x.note }));
  }

  async clearTrialNotes(ids: number[]): Promise<void> {
    if (ids.length > 0) await this.pool.query(`UPDATE skill_trials SET note = NULL WHERE id = ANY($1::bigint[])`, [ids]);
  }
}

async function versionOn(q: Queryable, id: string): Promise<SkillVersion | null> {
  const r = (await q.query<VersionRow>(`${VERSION_SELECT} WHERE v.id = $1`, [id])).rows[0];
  return r ? toVersion(r) : null;
}


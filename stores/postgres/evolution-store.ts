// PostgreSQL EvolutionStore: policies and their provenance edges, evaluation reports, approval
// requests, golden tasks, and the η writes of the lifecycle.
import type { Pool, PoolClient, QueryResultRow } from "pg";
import type { PolicyDraft } from "../../core/learning/policy.js";
import type {
  ApprovalClaim,
  EvolutionMentions,
  EvolutionStore,
  EvolutionWithholding,
  GoldenTask,
  SkillAuditEntry,
  SkillRequest,
  SkillRequestKind,
  SkillRequestStatus,
  StoredEvalReport,
  StoredPolicy,
} from "../traits.js";
import { inTx, num, numOrNull, parseJson, POSTGRES_FLAVOR, retryIdClash, type PgFlavor } from "./rows.js";
import { writeSkillAudit } from "./skill-store.js";

interface PolicyRow {
  id: string;
  signature: string;
  tools: string;
  key_terms: string;
  pattern: string;
  support: number;
  mean_value: number;
  gain: number;
  eligible: number;
  content_hash: string;
  skill_name: string | null;
  built_hash: string | null;
  built_gain: number | null;
  created_at: string | number;
  updated_at: string | number;
}

interface RequestRow {
  id: string;
  kind: SkillRequest["kind"];
  skill_name: string;
  version_id: string | null;
  other_skill: string | null;
  policy_id: string | null;
  report_id: string | number | null;
  status: Exclude<SkillRequestStatus, "approving">;
  detail: string;
  created_at: string | number;
  decided_at: string | number | null;
  decided_by: string | null;
  approving_by: string | null;
  approving_at: string | number | null;
  approving_process: string | null;
}

interface ReportRow {
  id: string | number;
  skill_name: string;
  version_id: string | null;
  baseline_version_id: string | null;
  policy_id: string | null;
  passed: number;
  report: string;
  created_at: string | number;
}

type Pattern = Pick<PolicyDraft, "steps" | "rawGain" | "episodeIds" | "counterIds" | "pitfalls" | "tasks">;

function toPolicy(r: PolicyRow): StoredPolicy {
  const pattern = parseJson<Pattern>(r.pattern);
  return {
    id: r.id,
    signature: r.signature,
    tools: parseJson<string[]>(r.tools),
    keyTerms: parseJson<string[]>(r.key_terms),
    ...pattern,
    support: r.support,
    meanValue: r.mean_value,
    gain: r.gain,
    eligible: r.eligible === 1,
    contentHash: r.content_hash,
    skillName: r.skill_name,
    builtHash: r.built_hash,
    builtGain: r.built_gain,
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

function toRequest(r: RequestRow): SkillRequest {
  // a pending row with a claim is being approved: who and since when stand as its decider
  const approving = r.status === "pending" && r.approving_at !== null;
  return {
    id: r.id,
    kind: r.kind,
    skillName: r.skill_name,
    versionId: r.version_id,
    otherSkill: r.other_skill,
    policyId: r.policy_id,
    reportId: numOrNull(r.report_id),
    status: approving ? "approving" : r.status,
    detail: parseJson<Record<string, unknown>>(r.detail),
    createdAt: num(r.created_at),
    decidedAt: numOrNull(approving ? r.approving_at : r.decided_at),
    decidedBy: approving ? r.approving_by : r.decided_by,
    approvingProcess: approving ? r.approving_process : null,
  };
}

function toReport(r: ReportRow): StoredEvalReport {
  return {
    id: num(r.id),
    skillName: r.skill_name,
    versionId: r.version_id,
    baselineVersionId: r.baseline_version_id,
    policyId: r.policy_id,
    passed: r.passed === 1,
    report: parseJson<StoredEvalReport["report"]>(r.report),
    createdAt: num(r.created_at),
  };
}

interface GoldenRow {
  id: string | number;
  skill_name: string;
  task: string;
  tools: string;
  created_at: string | number;
}

function toGolden(r: GoldenRow): GoldenTask {
  return { id: num(r.id), skillName: r.skill_name, task: r.task, tools: parseJson<string[]>(r.tools), createdAt: num(r.created_at) };
}

export class PgEvolutionStore implements EvolutionStore {
  constructor(
    private readonly pool: Pool,
    private readonly f: PgFlavor = POSTGRES_FLAVOR,
  ) {}

  /** DSQL runs every transaction optimistically: retry on conflict */
  private get txOpts() {
    return { serializable: this.f.dsql };
  }

  async recentEpisodeIds(limit: number): Promise<string[]> {
    const r = await this.pool.query<{ id: string }>(
      `SELECT id FROM learning_episodes WHERE state = 'done' ORDER BY updated_at DESC, id COLLATE "C" LIMIT $1`,
      [limit],
    );
    return r.rows.map((x) => x.id);
  }

  async episodesChangedAt(): Promise<number> {
    return num((await this.pool.query<{ t: string }>(`SELECT COALESCE(MAX(updated_at), 0) AS t FROM learning_episodes`)).rows[0]!.t);
  }

  async savePolicy(p: PolicyDraft, id: string, at: number): Promise<StoredPolicy & { previousGain: number | null }> {
    const pattern: Pattern = { steps: p.steps, rawGain: p.rawGain, episodeIds: p.episodeIds, counterIds: p.counterIds, pitfalls: p.pitfalls, tasks: p.tasks };
    return inTx(this.pool, async (c) => {
      // the gain this save replaces, with the row locked until the transaction ends
      const before = (await c.query<{ gain: number }>(`SELECT gain FROM learning_policies WHERE signature = $1 FOR UPDATE`, [p.signature])).rows[0];
      // Insert-or-update by signature in one statement, so two servers saving one policy agree on its id.
      const row = (
        await c.query<PolicyRow>(
          `INSERT INTO learning_policies (id, signature, tools, key_terms, pattern, support, mean_value, gain, eligible, content_hash, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
           ON CONFLICT (signature) DO UPDATE SET tools = excluded.tools, key_terms = excluded.key_terms, pattern = excluded.pattern,
             support = excluded.support, mean_value = excluded.mean_value, gain = excluded.gain, eligible = excluded.eligible,
             content_hash = excluded.content_hash, updated_at = excluded.updated_at
           RETURNING id`,
          [id, p.signature, JSON.stringify(p.tools), JSON.stringify(p.keyTerms), JSON.stringify(pattern), p.support, p.meanValue, p.gain, p.eligible ? 1 : 0, p.contentHash, at],
        )
      ).rows[0]!;
      await c.query(`DELETE FROM learning_policy_episodes WHERE policy_id = $1`, [row.id]);
      const edge = `INSERT INTO learning_policy_episodes (policy_id, episode_id, role)
        SELECT $1, id, $2 FROM learning_episodes WHERE id = $3 ON CONFLICT DO NOTHING`;
      for (const e of p.episodeIds) await c.query(edge, [row.id, "support", e]);
      for (const e of p.counterIds) await c.query(edge, [row.id, "counter", e]);
      const saved = toPolicy((await c.query<PolicyRow>(`SELECT * FROM learning_policies WHERE id = $1`, [row.id])).rows[0]!);
      return { ...saved, previousGain: before ? Number(before.gain) : null };
    }, this.txOpts);
  }

  async policies(): Promise<StoredPolicy[]> {
    return (await this.pool.query<PolicyRow>(`SELECT * FROM learning_policies ORDER BY signature COLLATE "C"`)).rows.map(toPolicy);
  }

  async policy(id: string): Promise<StoredPolicy | null> {
    const r = (await this.pool.query<PolicyRow>(`SELECT * FROM learning_policies WHERE id = $1`, [id])).rows[0];
    return r ? toPolicy(r) : null;
  }

  async policiesOfSkill(skillName: string): Promise<StoredPolicy[]> {
    const r = await this.pool.query<PolicyRow>(`SELECT * FROM learning_policies WHERE skill_name = $1 ORDER BY signature COLLATE "C"`, [skillName]);
    return r.rows.map(toPolicy);
  }

  async markBuilt(policyId: string, skillName: string, builtHash: string, builtGain: number, at: number): Promise<void> {
    await this.pool.query(`UPDATE learning_policies SET skill_name = $1, built_hash = $2, built_gain = $3, updated_at = $4 WHERE id = $5`, [
      skillName,
      builtHash,
      builtGain,
      at,
      policyId,
    ]);
  }

  async policyEpisodes(policyId: string, role: "support" | "counter"): Promise<string[]> {
    const r = await this.pool.query<{ episode_id: string }>(
      `SELECT episode_id FROM learning_policy_episodes WHERE policy_id = $1 AND role = $2 ORDER BY episode_id COLLATE "C"`,
      [policyId, role],
    );
    return r.rows.map((x) => x.episode_id);
  }

  async addReport(r: Omit<StoredEvalReport, "id">): Promise<StoredEvalReport> {
    const row = (
      await retryIdClash(() => this.pool.query<ReportRow>(
        `INSERT INTO skill_eval_reports (skill_name, version_id, baseline_version_id, policy_id, passed, report, created_at, id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, ${this.f.dsql ? "$8" : "DEFAULT"}) RETURNING *`,
        [r.skillName, r.versionId, r.baselineVersionId, r.policyId, r.passed ? 1 : 0, JSON.stringify(r.report), r.createdAt, ...(this.f.dsql ? [this.f.ids.next()] : [])],
      ))
    ).rows[0]!;
    return toReport(row);
  }

  async report(id: number): Promise<StoredEvalReport | null> {
    const r = (await this.pool.query<ReportRow>(`SELECT * FROM skill_eval_reports WHERE id = $1`, [id])).rows[0];
    return r ? toReport(r) : null;
  }

  async reportsOf(skillName: string, limit: number): Promise<StoredEvalReport[]> {
    const r = await this.pool.query<ReportRow>(`SELECT * FROM skill_eval_reports WHERE skill_name = $1 ORDER BY id DESC LIMIT $2`, [skillName, limit]);
    return r.rows.map(toReport);
  }

  async addRequest(r: Omit<SkillRequest, "status" | "decidedAt" | "decidedBy" | "approvingProcess">): Promise<SkillRequest> {
    return inTx(this.pool, async (c) => {
      // Serialise requests of one (kind, skill): a transaction-scoped lock on their key, so two
      // servers never leave two pending requests side by side.
      // (DSQL has no advisory locks: two servers filing at the same instant may both stay pending)
      if (!this.f.dsql) await c.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`skill_request:${r.kind}:${r.skillName}`]);
      return fileRequest(c, r);
    }, this.txOpts);
  }

  async proposeRequest(r: Omit<SkillRequest, "status" | "decidedAt" | "decidedBy" | "approvingProcess">, read: { replaces: string | null; since: number }): Promise<SkillRequest | null> {
    return inTx(this.pool, async (c) => {
      // one lock per question (a merge's pair either way round): two curators file it once
      const key = r.kind === "merge" ? JSON.stringify([r.skillName, r.otherSkill].sort()) : r.skillName;
      if (!this.f.dsql) await c.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`skill_request:${r.kind}:${key}`]);
      // FOR UPDATE: a decline of one of them waits for this filing, or this reads it once committed
      // (DSQL: the two conflict at commit and one is retried)
      const seen = (
        await c.query<{ id: string; status: string; approving_at: string | null }>(
          `SELECT id, status, approving_at FROM skill_requests
            WHERE kind = $1 AND ((skill_name = $2 AND other_skill IS NOT DISTINCT FROM $3) OR ($1 = 'merge' AND skill_name = $3 AND other_skill = $2))
              AND (status = 'pending' OR (status IN ('approved', 'rejected') AND decided_at >= $4))
            FOR UPDATE`,
          [r.kind, r.skillName, r.otherSkill, read.since],
        )
      ).rows;
      if (!seen.every((q) => q.id === read.replaces && q.status === "pending" && q.approving_at === null)) return null;
      return fileRequest(c, r);
    }, this.txOpts);
  }

  async request(id: string): Promise<SkillRequest | null> {
    const r = (await this.pool.query<RequestRow>(`SELECT * FROM skill_requests WHERE id = $1`, [id])).rows[0];
    return r ? toRequest(r) : null;
  }

  async requests(opts: { status?: SkillRequestStatus; kinds?: SkillRequestKind[]; limit?: number } = {}): Promise<SkillRequest[]> {
    const limit = opts.limit ?? 100;
    const kinds = opts.kinds ?? null;
    const ofKinds = `($2::text[] IS NULL OR kind = ANY($2::text[]))`;
    // only a pending row carries a claim: by status, the claimed ones are "approving"
    const r =
      opts.status === "approving"
        ? await this.pool.query<RequestRow>(
            `SELECT * FROM skill_requests WHERE status = 'pending' AND approving_at IS NOT NULL AND ${ofKinds} ORDER BY created_at DESC, id COLLATE "C" LIMIT $1`,
            [limit, kinds],
          )
        : opts.status
          ? await this.pool.query<RequestRow>(
              `SELECT * FROM skill_requests WHERE status = $3 AND approving_at IS NULL AND ${ofKinds} ORDER BY created_at DESC, id COLLATE "C" LIMIT $1`,
              [limit, kinds, opts.status],
            )
          : await this.pool.query<RequestRow>(`SELECT * FROM skill_requests WHERE ${ofKinds} ORDER BY created_at DESC, id COLLATE "C" LIMIT $1`, [limit, kinds]);
    return r.rows.map(toRequest);
  }

  /** One compare-and-set UPDATE; under DSQL in a transaction retried on conflict (it is optimistic). */
  private async changed(sql: string, params: unknown[]): Promise<boolean> {
    const r = this.f.dsql ? await inTx(this.pool, (c) => c.query(sql, params), this.txOpts) : await this.pool.query(sql, params);
    return (r.rowCount ?? 0) > 0;
  }

  async decide(id: string, status: "approved" | "rejected", by: string, at: number): Promise<boolean> {
    return this.changed(`UPDATE skill_requests SET status = $1, decided_at = $2, decided_by = $3 WHERE id = $4 AND status = 'pending' AND approving_at IS NULL`, [
      status,
      at,
      by,
      id,
    ]);
  }

  async claimApproval(id: string, claim: ApprovalClaim, over?: ApprovalClaim): Promise<boolean> {
    const set = [id, claim.by, claim.at, claim.process];
    if (!over) {
      return this.changed(
        `UPDATE skill_requests SET approving_by = $2, approving_at = $3, approving_process = $4 WHERE id = $1 AND status = 'pending' AND approving_at IS NULL`,
        set,
      );
    }
    return this.changed(
      `UPDATE skill_requests SET approving_by = $2, approving_at = $3, approving_process = $4
        WHERE id = $1 AND status = 'pending' AND approving_by = $5 AND approving_at = $6 AND approving_process IS NOT DISTINCT FROM $7`,
      [...set, over.by, over.at, over.process],
    );
  }

  async releaseApproval(id: string, claim: ApprovalClaim): Promise<boolean> {
    return this.changed(
      `UPDATE skill_requests SET approving_by = NULL, approving_at = NULL, approving_process = NULL
        WHERE id = $1 AND status = 'pending' AND approving_by = $2 AND approving_at = $3 AND approving_process IS NOT DISTINCT FROM $4`,
      [id, claim.by, claim.at, claim.process],
    );
  }

  async finishApproval(id: string, claim: ApprovalClaim, at: number): Promise<boolean> {
    return this.changed(
      `UPDATE skill_requests SET status = 'approved', decided_at = $5, decided_by = approving_by, approving_by = NULL, approving_at = NULL, approving_process = NULL
        WHERE id = $1 AND status = 'pending' AND approving_by = $2 AND approving_at = $3 AND approving_process IS NOT DISTINCT FROM $4`,
      [id, claim.by, claim.at, claim.process, at],
    );
  }

  async addGoldenTask(skillName: string, task: string, tools: string[], at: number): Promise<GoldenTask> {
    const r = await retryIdClash(() =>
      this.pool.query(
        `INSERT INTO skill_golden_tasks (skill_name, task, tools, created_at, id) VALUES ($1, $2, $3, $4, ${this.f.dsql ? "$5" : "DEFAULT"}) RETURNING *`,
        [skillName, task, JSON.stringify(tools), at, ...(this.f.dsql ? [this.f.ids.next()] : [])],
      ),
    );
    return toGolden(r.rows[0]);
  }

  async goldenTasks(skillName: string): Promise<GoldenTask[]> {
    return (await this.pool.query(`SELECT * FROM skill_golden_tasks WHERE skill_name = $1 ORDER BY id`, [skillName])).rows.map(toGolden);
  }

  async setEta(versionId: string, eta: number, audit: SkillAuditEntry): Promise<void> {
    await inTx(this.pool, async (c) => {
      await c.query(`UPDATE skill_versions SET eta = $1 WHERE id = $2`, [eta, versionId]);
      await writeSkillAudit(c, audit, this.f);
    }, this.txOpts);
  }

  async audit(entry: SkillAuditEntry): Promise<void> {
    await retryIdClash(() => writeSkillAudit(this.pool, entry, this.f));
  }

  async lastTrialAt(skillName: string): Promise<number | null> {
    const r = await this.pool.query<{ at: string | null }>(
      `SELECT MAX(t.at) AS at FROM skill_trials t JOIN skill_versions v ON v.id = t.version_id JOIN skills s ON s.id = v.skill_id WHERE s.name = $1`,
      [skillName],
    );
    return numOrNull(r.rows[0]!.at);
  }

  async mentioning(probes: string[]): Promise<EvolutionMentions> {
    // probes are ASCII letters and digits: lower() folds them under any locale
    const any = (col: string) => `EXISTS (SELECT 1 FROM unnest($1::text[]) AS p WHERE strpos(lower(${col}), p) > 0)`;
    const q = async <R extends QueryResultRow>(sql: string) => (await this.pool.query<R>(sql, [probes])).rows;
    return {
      policies: (await q<PolicyRow>(`SELECT * FROM learning_policies WHERE ${any("pattern")} OR ${any("key_terms")} ORDER BY signature COLLATE "C"`)).map(toPolicy),
      requests: (await q<RequestRow>(`SELECT * FROM skill_requests WHERE ${any("detail")} ORDER BY created_at, id COLLATE "C"`)).map(toRequest),
      reports: (await q<ReportRow>(`SELECT * FROM skill_eval_reports WHERE ${any("report")} ORDER BY id`)).map(toReport),
      goldenTasks: (await q<GoldenRow>(`SELECT * FROM skill_golden_tasks WHERE ${any("task")} ORDER BY id`)).map(toGolden),
    };
  }

  async withhold(w: EvolutionWithholding, at: number, audits: SkillAuditEntry[]): Promise<void> {
    await inTx(this.pool, async (c) => {
      for (const p of w.policies) {
        const row = (await c.query<PolicyRow>(`SELECT * FROM learning_policies WHERE id = $1`, [p.id])).rows[0];
        if (!row) continue;
        const pattern: Pattern = { ...parseJson<Pattern>(row.pattern), steps: p.steps, episodeIds: p.episodeIds, pitfalls: p.pitfalls, tasks: p.tasks };
        await c.query(`UPDATE learning_policies SET key_terms = $1, pattern = $2, eligible = 0, updated_at = $3 WHERE id = $4`, [
          JSON.stringify(p.keyTerms),
          JSON.stringify(pattern),
          at,
          p.id,
        ]);
        await c.query(`DELETE FROM learning_policy_episodes WHERE policy_id = $1 AND role = 'support' AND NOT (episode_id = ANY($2::text[]))`, [p.id, p.episodeIds]);
      }
      for (const r of w.requests) {
        await c.query(`UPDATE skill_requests SET detail = $1 WHERE id = $2`, [JSON.stringify(r.detail), r.id]);
        // (one being approved is left to its approval, which has acted or is acting)
        if (r.close) {
          await c.query(`UPDATE skill_requests SET status = 'rejected', decided_at = $1, decided_by = 'forget' WHERE id = $2 AND status = 'pending' AND approving_at IS NULL`, [at, r.id]);
        }
      }
      for (const r of w.reports) await c.query(`UPDATE skill_eval_reports SET report = $1 WHERE id = $2`, [JSON.stringify(r.report), r.id]);
      if (w.goldenTaskIds.length > 0) await c.query(`DELETE FROM skill_golden_tasks WHERE id = ANY($1::bigint[])`, [w.goldenTaskIds]);
      for (const a of audits) await writeSkillAudit(c, a, this.f);
    }, this.txOpts);
  }
}

/** Files a request inside the caller's transaction: the pending one of the same question is
 *  superseded (one being approved is not: its action may be under way). */
async function fileRequest(c: PoolClient, r: Omit<SkillRequest, "status" | "decidedAt" | "decidedBy" | "approvingProcess">): Promise<SkillRequest> {
  await c.query(
    `UPDATE skill_requests SET status = 'superseded', decided_at = $1, decided_by = 'superseded'
      WHERE kind = $2 AND skill_name = $3 AND other_skill IS NOT DISTINCT FROM $4 AND status = 'pending' AND approving_at IS NULL`,
    [r.createdAt, r.kind, r.skillName, r.otherSkill],
  );
  const row = (
    await c.query<RequestRow>(
      `INSERT INTO skill_requests (id, kind, skill_name, version_id, other_skill, policy_id, report_id, status, detail, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9) RETURNING *`,
      [r.id, r.kind, r.skillName, r.versionId, r.otherSkill, r.policyId, r.reportId, JSON.stringify(r.detail), r.createdAt],
    )
  ).rows[0]!;
  return toRequest(row);
}

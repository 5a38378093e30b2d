// SQLite implementation of EvolutionStore (migration 10): policies and their provenance edges,
// evaluation reports, approval requests, golden tasks, and the η writes of the lifecycle.
import type { PolicyDraft } from "../../core/learning/policy.js";
import type {
  EvolutionStore,
  GoldenTask,
  SkillAuditEntry,
  SkillRequest,
  SkillRequestStatus,
  StoredEvalReport,
  StoredPolicy,
} from "../traits.js";
import type { Db } from "./database.js";

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
  created_at: number;
  updated_at: number;
}

interface RequestRow {
  id: string;
  kind: SkillRequest["kind"];
  skill_name: string;
  version_id: string | null;
  other_skill: string | null;
  policy_id: string | null;
  report_id: number | null;
  status: SkillRequestStatus;
  detail: string;
  created_at: number;
  decided_at: number | null;
  decided_by: string | null;
}

interface ReportRow {
  id: number;
  skill_name: string;
  version_id: string | null;
  baseline_version_id: string | null;
  policy_id: string | null;
  passed: number;
  report: string;
  created_at: number;
}

type Pattern = Pick<PolicyDraft, "steps" | "rawGain" | "episodeIds" | "counterIds" | "pitfalls" | "tasks">;

function toPolicy(r: PolicyRow): StoredPolicy {
  const pattern = JSON.parse(r.pattern) as Pattern;
  return {
    id: r.id,
    signature: r.signature,
    tools: JSON.parse(r.tools) as string[],
    keyTerms: JSON.parse(r.key_terms) as string[],
    ...pattern,
    support: r.support,
    meanValue: r.mean_value,
    gain: r.gain,
    eligible: r.eligible === 1,
    contentHash: r.content_hash,
    skillName: r.skill_name,
    builtHash: r.built_hash,
    builtGain: r.built_gain,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toRequest(r: RequestRow): SkillRequest {
  return {
    id: r.id,
    kind: r.kind,
    skillName: r.skill_name,
    versionId: r.version_id,
    otherSkill: r.other_skill,
    policyId: r.policy_id,
    reportId: r.report_id,
    status: r.status,
    detail: JSON.parse(r.detail) as Record<string, unknown>,
    createdAt: r.created_at,
    decidedAt: r.decided_at,
    decidedBy: r.decided_by,
  };
}

function toReport(r: ReportRow): StoredEvalReport {
  return {
    id: r.id,
    skillName: r.skill_name,
    versionId: r.version_id,
    baselineVersionId: r.baseline_version_id,
    policyId: r.policy_id,
    passed: r.passed === 1,
    report: JSON.parse(r.report) as StoredEvalReport["report"],
    createdAt: r.created_at,
  };
}

export class SqliteEvolutionStore implements EvolutionStore {
  private readonly st;

  constructor(private readonly db: Db) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      recent: p(`SELECT id FROM learning_episodes WHERE state = 'done' ORDER BY updated_at DESC, id LIMIT ?`),
      changedAt: p(`SELECT COALESCE(MAX(updated_at), 0) AS t FROM learning_episodes`),
      bySig: p(`SELECT * FROM learning_policies WHERE signature = ?`),
      byId: p(`SELECT * FROM learning_policies WHERE id = ?`),
      all: p(`SELECT * FROM learning_policies ORDER BY signature`),
      ofSkill: p(`SELECT * FROM learning_policies WHERE skill_name = ? ORDER BY signature`),
      insertPolicy: p(
        `INSERT INTO learning_policies (id, signature, tools, key_terms, pattern, support, mean_value, gain, eligible, content_hash, created_at, updated_at)
         VALUES (@id, @signature, @tools, @key_terms, @pattern, @support, @mean_value, @gain, @eligible, @content_hash, @at, @at)`,
      ),
      updatePolicy: p(
        `UPDATE learning_policies SET tools = @tools, key_terms = @key_terms, pattern = @pattern, support = @support, mean_value = @mean_value,
           gain = @gain, eligible = @eligible, content_hash = @content_hash, updated_at = @at WHERE id = @id`,
      ),
      clearEdges: p(`DELETE FROM learning_policy_episodes WHERE policy_id = ?`),
      edge: p(`INSERT OR IGNORE INTO learning_policy_episodes (policy_id, episode_id, role) SELECT ?, id, ? FROM learning_episodes WHERE id = ?`),
      edges: p(`SELECT episode_id FROM learning_policy_episodes WHERE policy_id = ? AND role = ? ORDER BY episode_id`),
      built: p(`UPDATE learning_policies SET skill_name = ?, built_hash = ?, built_gain = ?, updated_at = ? WHERE id = ?`),
      addReport: p(
        `INSERT INTO skill_eval_reports (skill_name, version_id, baseline_version_id, policy_id, passed, report, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      ),
      report: p(`SELECT * FROM skill_eval_reports WHERE id = ?`),
      reportsOf: p(`SELECT * FROM skill_eval_reports WHERE skill_name = ? ORDER BY id DESC LIMIT ?`),
      // a newer request replaces the pending one about the same thing (a merge: the same pair)
      supersede: p(`UPDATE skill_requests SET status = 'superseded', decided_at = ?, decided_by = 'superseded' WHERE kind = ? AND skill_name = ? AND other_skill IS ? AND status = 'pending'`),
      addRequest: p(
        `INSERT INTO skill_requests (id, kind, skill_name, version_id, other_skill, policy_id, report_id, status, detail, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?) RETURNING *`,
      ),
      request: p(`SELECT * FROM skill_requests WHERE id = ?`),
      requests: p(`SELECT * FROM skill_requests ORDER BY created_at DESC, id LIMIT ?`),
      requestsBy: p(`SELECT * FROM skill_requests WHERE status = ? ORDER BY created_at DESC, id LIMIT ?`),
      decide: p(`UPDATE skill_requests SET status = ?, decided_at = ?, decided_by = ? WHERE id = ? AND status = 'pending'`),
      addGolden: p(`INSERT INTO skill_golden_tasks (skill_name, task, tools, created_at) VALUES (?, ?, ?, ?) RETURNING *`),
      golden: p(`SELECT * FROM skill_golden_tasks WHERE skill_name = ? ORDER BY id`),
      setEta: p(`UPDATE skill_versions SET eta = ? WHERE id = ?`),
      lastTrial: p(
        `SELECT MAX(t.at) AS at FROM skill_trials t JOIN skill_versions v ON v.id = t.version_id JOIN skills s ON s.id = v.skill_id WHERE s.name = ?`,
      ),
      audit: p(`INSERT INTO audit_log (at, actor, action, target_kind, target_id, detail) VALUES (?, ?, ?, ?, ?, ?)`),
    };
  }

  async recentEpisodeIds(limit: number): Promise<string[]> {
    return (this.st.recent.all(limit) as { id: string }[]).map((r) => r.id);
  }

  async episodesChangedAt(): Promise<number> {
    return (this.st.changedAt.get() as { t: number }).t;
  }

  async savePolicy(p: PolicyDraft, id: string, at: number): Promise<StoredPolicy> {
    return this.db
      .transaction(() => {
        const existing = this.st.bySig.get(p.signature) as PolicyRow | undefined;
        const pattern: Pattern = { steps: p.steps, rawGain: p.rawGain, episodeIds: p.episodeIds, counterIds: p.counterIds, pitfalls: p.pitfalls, tasks: p.tasks };
        const row = {
          id: existing?.id ?? id,
          signature: p.signature,
          tools: JSON.stringify(p.tools),
          key_terms: JSON.stringify(p.keyTerms),
          pattern: JSON.stringify(pattern),
          support: p.support,
          mean_value: p.meanValue,
          gain: p.gain,
          eligible: p.eligible ? 1 : 0,
          content_hash: p.contentHash,
          at,
        };
        if (existing) this.st.updatePolicy.run(row);
        else this.st.insertPolicy.run(row);
        this.st.clearEdges.run(row.id);
        for (const e of p.episodeIds) this.st.edge.run(row.id, "support", e);
        for (const e of p.counterIds) this.st.edge.run(row.id, "counter", e);
        return toPolicy(this.st.byId.get(row.id) as PolicyRow);
      })
      .immediate();
  }

  async policies(): Promise<StoredPolicy[]> {
    return (this.st.all.all() as PolicyRow[]).map(toPolicy);
  }

  async policy(id: string): Promise<StoredPolicy | null> {
    const r = this.st.byId.get(id) as PolicyRow | undefined;
    return r ? toPolicy(r) : null;
  }

  async policiesOfSkill(skillName: string): Promise<StoredPolicy[]> {
    return (this.st.ofSkill.all(skillName) as PolicyRow[]).map(toPolicy);
  }

  async markBuilt(policyId: string, skillName: string, builtHash: string, builtGain: number, at: number): Promise<void> {
    this.st.built.run(skillName, builtHash, builtGain, at, policyId);
  }

  async policyEpisodes(policyId: string, role: "support" | "counter"): Promise<string[]> {
    return (this.st.edges.all(policyId, role) as { episode_id: string }[]).map((r) => r.episode_id);
  }

  async addReport(r: Omit<StoredEvalReport, "id">): Promise<StoredEvalReport> {
    const row = this.st.addReport.get(r.skillName, r.versionId, r.baselineVersionId, r.policyId, r.passed ? 1 : 0, JSON.stringify(r.report), r.createdAt) as ReportRow;
    return toReport(row);
  }

  async report(id: number): Promise<StoredEvalReport | null> {
    const r = this.st.report.get(id) as ReportRow | undefined;
    return r ? toReport(r) : null;
  }

  async reportsOf(skillName: string, limit: number): Promise<StoredEvalReport[]> {
    return (this.st.reportsOf.all(skillName, limit) as ReportRow[]).map(toReport);
  }

  async addRequest(r: Omit<SkillRequest, "status" | "decidedAt" | "decidedBy">): Promise<SkillRequest> {
    return this.db
      .transaction(() => {
        this.st.supersede.run(r.createdAt, r.kind, r.skillName, r.otherSkill);
        return toRequest(
          this.st.addRequest.get(r.id, r.kind, r.skillName, r.versionId, r.otherSkill, r.policyId, r.reportId, JSON.stringify(r.detail), r.createdAt) as RequestRow,
        );
      })
      .immediate();
  }

  async request(id: string): Promise<SkillRequest | null> {
    const r = this.st.request.get(id) as RequestRow | undefined;
    return r ? toRequest(r) : null;
  }

  async requests(opts: { status?: SkillRequestStatus; limit?: number } = {}): Promise<SkillRequest[]> {
    const limit = opts.limit ?? 100;
    const rows = (opts.status ? this.st.requestsBy.all(opts.status, limit) : this.st.requests.all(limit)) as RequestRow[];
    return rows.map(toRequest);
  }

  async decide(id: string, status: "approved" | "rejected", by: string, at: number): Promise<boolean> {
    return this.st.decide.run(status, at, by, id).changes > 0;
  }

  async addGoldenTask(skillName: string, task: string, tools: string[], at: number): Promise<GoldenTask> {
    const r = this.st.addGolden.get(skillName, task, JSON.stringify(tools), at) as { id: number; skill_name: string; task: string; tools: string; created_at: number };
    return { id: r.id, skillName: r.skill_name, task: r.task, tools: JSON.parse(r.tools) as string[], createdAt: r.created_at };
  }

  async goldenTasks(skillName: string): Promise<GoldenTask[]> {
    const rows = this.st.golden.all(skillName) as { id: number; skill_name: string; task: string; tools: string; created_at: number }[];
    return rows.map((r) => ({ id: r.id, skillName: r.skill_name, task: r.task, tools: JSON.parse(r.tools) as string[], createdAt: r.created_at }));
  }

  async setEta(versionId: string, eta: number, audit: SkillAuditEntry): Promise<void> {
    this.db
      .transaction(() => {
        this.st.setEta.run(eta, versionId);
        this.writeAudit(audit);
      })
      .immediate();
  }

  async audit(entry: SkillAuditEntry): Promise<void> {
    this.writeAudit(entry);
  }

  async lastTrialAt(skillName: string): Promise<number | null> {
    return (this.st.lastTrial.get(skillName) as { at: number | null }).at;
  }

  private writeAudit(a: SkillAuditEntry): void {
    this.st.audit.run(a.at, a.actor, a.action, a.targetKind, a.targetId, JSON.stringify(a.detail));
  }
}

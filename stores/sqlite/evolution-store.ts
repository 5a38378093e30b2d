// SQLite implementation of EvolutionStore (migration 10): policies and their provenance edges,
// evaluation reports, approval requests, golden tasks, and the η writes of the lifecycle.
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
import type Database from "better-sqlite3";
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
  status: Exclude<SkillRequestStatus, "approving">;
  detail: string;
  created_at: number;
  decided_at: number | null;
  decided_by: string | null;
  approving_by: string | null;
  approving_at: number | null;
  approving_process: string | null;
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

/** a request listing's kind filter (@kinds: a JSON array, or null for every kind) */
const OF_KINDS = `(@kinds IS NULL OR kind IN (SELECT value FROM json_each(@kinds)))`;

/** rows per page of a forget's scan (requests keep diffs of whole versions: a few milliseconds of reading) */
const SCAN_PAGE = 500;

const giveWay = () => new Promise<void>((r) => setImmediate(r));

interface GoldenRow {
  id: number;
  skill_name: string;
  task: string;
  tools: string;
  created_at: number;
}

function toGolden(r: GoldenRow): GoldenTask {
  return { id: r.id, skillName: r.skill_name, task: r.task, tools: JSON.parse(r.tools) as string[], createdAt: r.created_at };
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
  // a pending row with a claim is being approved: who and since when stand as its decider
  const approving = r.status === "pending" && r.approving_at !== null;
  return {
    id: r.id,
    kind: r.kind,
    skillName: r.skill_name,
    versionId: r.version_id,
    otherSkill: r.other_skill,
    policyId: r.policy_id,
    reportId: r.report_id,
    status: approving ? "approving" : r.status,
    detail: JSON.parse(r.detail) as Record<string, unknown>,
    createdAt: r.created_at,
    decidedAt: approving ? r.approving_at : r.decided_at,
    decidedBy: approving ? r.approving_by : r.decided_by,
    approvingProcess: approving ? r.approving_process : null,
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
      // (one being approved is not: its action may be under way)
      supersede: p(
        `UPDATE skill_requests SET status = 'superseded', decided_at = ?, decided_by = 'superseded'
          WHERE kind = ? AND skill_name = ? AND other_skill IS ? AND status = 'pending' AND approving_at IS NULL`,
      ),
      addRequest: p(
        `INSERT INTO skill_requests (id, kind, skill_name, version_id, other_skill, policy_id, report_id, status, detail, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?) RETURNING *`,
      ),
      // the requests of one question a proposal must know of: open ones, and ones decided since its read
      question: p(
        `SELECT id, status, approving_at FROM skill_requests
          WHERE kind = @kind AND ((skill_name = @a AND other_skill IS @b) OR (@kind = 'merge' AND skill_name = @b AND other_skill = @a))
            AND (status = 'pending' OR (status IN ('approved', 'rejected') AND decided_at >= @since))`,
      ),
      request: p(`SELECT * FROM skill_requests WHERE id = ?`),
      requests: p(`SELECT * FROM skill_requests WHERE ${OF_KINDS} ORDER BY created_at DESC, id LIMIT @limit`),
      // only a pending row carries a claim: by status, the claimed ones are "approving"
      requestsBy: p(`SELECT * FROM skill_requests WHERE status = @status AND approving_at IS NULL AND ${OF_KINDS} ORDER BY created_at DESC, id LIMIT @limit`),
      requestsApproving: p(
        `SELECT * FROM skill_requests WHERE status = 'pending' AND approving_at IS NOT NULL AND ${OF_KINDS} ORDER BY created_at DESC, id LIMIT @limit`,
      ),
      decide: p(`UPDATE skill_requests SET status = ?, decided_at = ?, decided_by = ? WHERE id = ? AND status = 'pending' AND approving_at IS NULL`),
      claim: p(
        `UPDATE skill_requests SET approving_by = @by, approving_at = @at, approving_process = @process
          WHERE id = @id AND status = 'pending' AND approving_at IS NULL`,
      ),
      claimOver: p(
        `UPDATE skill_requests SET approving_by = @by, approving_at = @at, approving_process = @process
          WHERE id = @id AND status = 'pending' AND approving_by = @overBy AND approving_at = @overAt AND approving_process IS @overProcess`,
      ),
      release: p(
        `UPDATE skill_requests SET approving_by = NULL, approving_at = NULL, approving_process = NULL
          WHERE id = @id AND status = 'pending' AND approving_by = @by AND approving_at = @at AND approving_process IS @process`,
      ),
      finish: p(
        `UPDATE skill_requests SET status = 'approved', decided_at = @decidedAt, decided_by = approving_by, approving_by = NULL, approving_at = NULL, approving_process = NULL
          WHERE id = @id AND status = 'pending' AND approving_by = @by AND approving_at = @at AND approving_process IS @process`,
      ),
      addGolden: p(`INSERT INTO skill_golden_tasks (skill_name, task, tools, created_at) VALUES (?, ?, ?, ?) RETURNING *`),
      golden: p(`SELECT * FROM skill_golden_tasks WHERE skill_name = ? ORDER BY id`),
      setEta: p(`UPDATE skill_versions SET eta = ? WHERE id = ?`),
      lastTrial: p(
        `SELECT MAX(t.at) AS at FROM skill_trials t JOIN skill_versions v ON v.id = t.version_id JOIN skills s ON s.id = v.skill_id WHERE s.name = ?`,
      ),
      audit: p(`INSERT INTO audit_log (at, actor, action, target_kind, target_id, detail) VALUES (?, ?, ?, ?, ?, ?)`),
      // A forget's scan: each table a page at a time in its key order, every probe in one pass.
      // LIKE ignores ASCII case, and a probe is ASCII letters and digits: nothing to escape.
      policyPageEnd: p(`SELECT max(rowid) FROM (SELECT rowid FROM learning_policies WHERE rowid > ? ORDER BY rowid LIMIT ?)`).pluck(),
      policiesLike: p(
        `SELECT * FROM learning_policies WHERE rowid > @after AND rowid <= @upto
           AND EXISTS (SELECT 1 FROM json_each(@likes) WHERE pattern LIKE value OR key_terms LIKE value)`,
      ),
      requestPageEnd: p(`SELECT max(rowid) FROM (SELECT rowid FROM skill_requests WHERE rowid > ? ORDER BY rowid LIMIT ?)`).pluck(),
      requestsLike: p(
        `SELECT * FROM skill_requests WHERE rowid > @after AND rowid <= @upto AND EXISTS (SELECT 1 FROM json_each(@likes) WHERE detail LIKE value)`,
      ),
      reportPageEnd: p(`SELECT max(id) FROM (SELECT id FROM skill_eval_reports WHERE id > ? ORDER BY id LIMIT ?)`).pluck(),
      reportsLike: p(
        `SELECT * FROM skill_eval_reports WHERE id > @after AND id <= @upto AND EXISTS (SELECT 1 FROM json_each(@likes) WHERE report LIKE value)`,
      ),
      goldenPageEnd: p(`SELECT max(id) FROM (SELECT id FROM skill_golden_tasks WHERE id > ? ORDER BY id LIMIT ?)`).pluck(),
      goldenLike: p(
        `SELECT * FROM skill_golden_tasks WHERE id > @after AND id <= @upto AND EXISTS (SELECT 1 FROM json_each(@likes) WHERE task LIKE value)`,
      ),
      withholdPolicy: p(`UPDATE learning_policies SET key_terms = ?, pattern = ?, eligible = 0, updated_at = ? WHERE id = ?`),
      keepSupport: p(
        `DELETE FROM learning_policy_episodes WHERE policy_id = ? AND role = 'support' AND episode_id NOT IN (SELECT value FROM json_each(?))`,
      ),
      withholdRequest: p(`UPDATE skill_requests SET detail = ? WHERE id = ?`),
      // (one being approved is left to its approval, which has acted or is acting)
      closeRequest: p(`UPDATE skill_requests SET status = 'rejected', decided_at = ?, decided_by = 'forget' WHERE id = ? AND status = 'pending' AND approving_at IS NULL`),
      withholdReport: p(`UPDATE skill_eval_reports SET report = ? WHERE id = ?`),
      deleteGolden: p(`DELETE FROM skill_golden_tasks WHERE id = ?`),
    };
  }

  async recentEpisodeIds(limit: number): Promise<string[]> {
    return (this.st.recent.all(limit) as { id: string }[]).map((r) => r.id);
  }

  async episodesChangedAt(): Promise<number> {
    return (this.st.changedAt.get() as { t: number }).t;
  }

  async savePolicy(p: PolicyDraft, id: string, at: number): Promise<StoredPolicy & { previousGain: number | null }> {
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
        return { ...toPolicy(this.st.byId.get(row.id) as PolicyRow), previousGain: existing ? existing.gain : null };
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

  async addRequest(r: Omit<SkillRequest, "status" | "decidedAt" | "decidedBy" | "approvingProcess">): Promise<SkillRequest> {
    return this.db
      .transaction(() => {
        this.st.supersede.run(r.createdAt, r.kind, r.skillName, r.otherSkill);
        return toRequest(
          this.st.addRequest.get(r.id, r.kind, r.skillName, r.versionId, r.otherSkill, r.policyId, r.reportId, JSON.stringify(r.detail), r.createdAt) as RequestRow,
        );
      })
      .immediate();
  }

  async proposeRequest(r: Omit<SkillRequest, "status" | "decidedAt" | "decidedBy" | "approvingProcess">, read: { replaces: string | null; since: number }): Promise<SkillRequest | null> {
    return this.db
      .transaction(() => {
        const seen = this.st.question.all({ kind: r.kind, a: r.skillName, b: r.otherSkill, since: read.since }) as { id: string; status: string; approving_at: number | null }[];
        if (!seen.every((q) => q.id === read.replaces && q.status === "pending" && q.approving_at === null)) return null;
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

  async requests(opts: { status?: SkillRequestStatus; kinds?: SkillRequestKind[]; limit?: number } = {}): Promise<SkillRequest[]> {
    const q = { limit: opts.limit ?? 100, kinds: opts.kinds ? JSON.stringify(opts.kinds) : null };
    const rows = (
      opts.status === "approving" ? this.st.requestsApproving.all(q) : opts.status ? this.st.requestsBy.all({ ...q, status: opts.status }) : this.st.requests.all(q)
    ) as RequestRow[];
    return rows.map(toRequest);
  }

  async decide(id: string, status: "approved" | "rejected", by: string, at: number): Promise<boolean> {
    return this.st.decide.run(status, at, by, id).changes > 0;
  }

  async claimApproval(id: string, claim: ApprovalClaim, over?: ApprovalClaim): Promise<boolean> {
    const set = { id, by: claim.by, at: claim.at, process: claim.process };
    if (!over) return this.st.claim.run(set).changes > 0;
    return this.st.claimOver.run({ ...set, overBy: over.by, overAt: over.at, overProcess: over.process }).changes > 0;
  }

  async releaseApproval(id: string, claim: ApprovalClaim): Promise<boolean> {
    return this.st.release.run({ id, by: claim.by, at: claim.at, process: claim.process }).changes > 0;
  }

  async finishApproval(id: string, claim: ApprovalClaim, at: number): Promise<boolean> {
    return this.st.finish.run({ id, by: claim.by, at: claim.at, process: claim.process, decidedAt: at }).changes > 0;
  }

  async addGoldenTask(skillName: string, task: string, tools: string[], at: number): Promise<GoldenTask> {
    return toGolden(this.st.addGolden.get(skillName, task, JSON.stringify(tools), at) as GoldenRow);
  }

  async goldenTasks(skillName: string): Promise<GoldenTask[]> {
    return (this.st.golden.all(skillName) as GoldenRow[]).map(toGolden);
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

  async mentioning(probes: string[]): Promise<EvolutionMentions> {
    const likes = JSON.stringify(probes.map((p) => `%${p}%`));
    // a page at a time, giving way in between (the requests keep diffs of whole versions)
    const scan = async <R, T>(end: Database.Statement, rows: Database.Statement, to: (r: R) => T): Promise<T[]> => {
      const out: T[] = [];
      for (let after = 0; ; ) {
        const upto = end.get(after, SCAN_PAGE) as number | null;
        if (upto === null) break;
        for (const r of rows.all({ after, upto, likes }) as R[]) out.push(to(r));
        after = upto;
        await giveWay();
      }
      return out;
    };
    return {
      policies: await scan(this.st.policyPageEnd, this.st.policiesLike, toPolicy),
      requests: await scan(this.st.requestPageEnd, this.st.requestsLike, toRequest),
      reports: await scan(this.st.reportPageEnd, this.st.reportsLike, toReport),
      goldenTasks: await scan(this.st.goldenPageEnd, this.st.goldenLike, toGolden),
    };
  }

  async withhold(w: EvolutionWithholding, at: number, audits: SkillAuditEntry[]): Promise<void> {
    this.db
      .transaction(() => {
        for (const p of w.policies) {
          const row = this.st.byId.get(p.id) as PolicyRow | undefined;
          if (!row) continue;
          const pattern: Pattern = { ...(JSON.parse(row.pattern) as Pattern), steps: p.steps, episodeIds: p.episodeIds, pitfalls: p.pitfalls, tasks: p.tasks };
          this.st.withholdPolicy.run(JSON.stringify(p.keyTerms), JSON.stringify(pattern), at, p.id);
          this.st.keepSupport.run(p.id, JSON.stringify(p.episodeIds));
        }
        for (const r of w.requests) {
          this.st.withholdRequest.run(JSON.stringify(r.detail), r.id);
          if (r.close) this.st.closeRequest.run(at, r.id);
        }
        for (const r of w.reports) this.st.withholdReport.run(JSON.stringify(r.report), r.id);
        for (const id of w.goldenTaskIds) this.st.deleteGolden.run(id);
        for (const a of audits) this.writeAudit(a);
      })
      .immediate();
  }

  private writeAudit(a: SkillAuditEntry): void {
    this.st.audit.run(a.at, a.actor, a.action, a.targetKind, a.targetId, JSON.stringify(a.detail));
  }
}

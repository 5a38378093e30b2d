// AdminQueries over the SQLite database (stores/sqlite/migrations.ts). Statements are prepared
// once; every query is a read that uses an index or scans a small table.
import type { Db } from "../../stores/sqlite/database.js";
import type { AdminQueries, AuditFilter, AuditRow, EpisodeLink, LearningAggregates, ToggleRow, TrialRow, Watermark } from "./queries.js";

interface AuditDbRow {
  seq: number;
  at: number;
  actor: string;
  action: string;
  target_kind: string;
  target_id: string;
  detail: string;
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return {};
  }
}

export class SqliteAdminQueries implements AdminQueries {
  private readonly st;

  constructor(private readonly db: Db) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      // json_each lists keep one statement for any filter combination; NULL means "no filter".
      audit: p(`
        SELECT seq, at, actor, action, target_kind, target_id, detail FROM audit_log
        WHERE (@before IS NULL OR seq < @before)
          AND (@kinds IS NULL OR target_kind IN (SELECT value FROM json_each(@kinds)))
          AND (@target IS NULL OR target_id = @target)
          AND (@actions IS NULL OR action IN (SELECT value FROM json_each(@actions)))
          AND (@actor IS NULL OR actor = @actor)
          AND (@since IS NULL OR at >= @since)
          AND (@until IS NULL OR at < @until)
        ORDER BY seq DESC LIMIT @limit`),
      // target_id has its own index (audit_target), the common case of one skill or memory
      auditByTarget: p(`
        SELECT seq, at, actor, action, target_kind, target_id, detail FROM audit_log INDEXED BY audit_target
        WHERE target_id = @target AND (@before IS NULL OR seq < @before)
          AND (@kinds IS NULL OR target_kind IN (SELECT value FROM json_each(@kinds)))
          AND (@actions IS NULL OR action IN (SELECT value FROM json_each(@actions)))
          AND (@actor IS NULL OR actor = @actor)
          AND (@since IS NULL OR at >= @since)
          AND (@until IS NULL OR at < @until)
        ORDER BY seq DESC LIMIT @limit`),
      kindsAfter: p(`SELECT DISTINCT target_kind, action FROM (SELECT target_kind, action FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?)`),
      watermark: p(`
        SELECT
          (SELECT coalesce(max(seq), 0) FROM audit_log) AS audit_seq,
          (SELECT count(*) || ':' || coalesce(max(created_at), 0) || ':' || coalesce(max(decided_at), 0) FROM skill_requests)
            || '/' || (SELECT coalesce(max(id), 0) FROM skill_eval_reports) AS requests,
          (SELECT coalesce(max(updated_at), 0) || ':' || count(*) FROM learning_episodes)
            || '/' || (SELECT coalesce(max(id), 0) FROM learning_events)
            || '/' || (SELECT coalesce(max(updated_at), 0) FROM learning_policies) AS learning,
          (SELECT count(*) FROM skill_versions) || '/' || (SELECT coalesce(max(id), 0) FROM skill_trials)
            || '/' || (SELECT coalesce(max(updated_at), 0) FROM skills) AS skills`),
      episodesOfMemory: p(`
        SELECT e.id, e.thread_id, e.task, e.reward, c.disposition FROM learning_candidates c
        JOIN learning_episodes e ON e.id = c.episode_id WHERE c.memory_id = ? ORDER BY c.at`),
      trialsOf: p(`
        SELECT * FROM (
          SELECT t.id, t.version_id, v.seq, t.passed, t.note, t.thread_id, t.at FROM skill_trials t
          JOIN skill_versions v ON v.id = t.version_id WHERE v.skill_id = ? ORDER BY t.id DESC LIMIT ?
        ) ORDER BY id`),
      togglesOf: p(`SELECT level, scope_key, enabled, updated_at FROM skill_toggles WHERE skill_id = ? ORDER BY level, scope_key`),
      episodeCounts: p(`
        SELECT count(*) AS total,
          coalesce(sum(state = 'open'), 0) AS open, coalesce(sum(state = 'done'), 0) AS done,
          coalesce(sum(state = 'interrupted'), 0) AS interrupted, coalesce(sum(grounded), 0) AS grounded,
          coalesce(sum(suppressed), 0) AS suppressed, coalesce(sum(reward IS NOT NULL), 0) AS with_reward
        FROM learning_episodes`),
      perDay: p(`
        SELECT strftime('%Y-%m-%d', created_at / 1000, 'unixepoch') AS day, count(*) AS n, avg(reward) AS mean
        FROM learning_episodes WHERE created_at >= ? GROUP BY day ORDER BY day`),
      rewards: p(`SELECT reward FROM learning_episodes WHERE reward IS NOT NULL AND suppressed = 0 ORDER BY updated_at DESC LIMIT 100000`),
      signals: p(`SELECT kind, count(*) AS n FROM learning_signals GROUP BY kind ORDER BY kind`),
      candidates: p(`SELECT disposition, count(*) AS n FROM learning_candidates GROUP BY disposition`),
      versions: p(`SELECT status, count(*) AS n FROM skill_versions GROUP BY status`),
      agentVersions: p(`SELECT count(*) AS n FROM skill_versions WHERE author = 'agent'`),
      reports: p(`SELECT count(*) AS total, coalesce(sum(passed), 0) AS passed FROM skill_eval_reports`),
      requests: p(`SELECT status, count(*) AS n FROM skill_requests GROUP BY status`),
      events: p(`SELECT id, at, kind, thread_id, episode_id, detail FROM learning_events ORDER BY id DESC LIMIT ?`),
    };
  }

  async audit(f: AuditFilter): Promise<AuditRow[]> {
    const list = (xs: string[] | undefined) => (xs && xs.length > 0 ? JSON.stringify(xs) : null);
    const params = {
      before: f.beforeSeq ?? null,
      kinds: list(f.targetKinds),
      target: f.targetId ?? null,
      actions: list(f.actions),
      actor: f.actor ?? null,
      since: f.since ?? null,
      until: f.until ?? null,
      limit: f.limit,
    };
    const rows = (f.targetId !== undefined ? this.st.auditByTarget : this.st.audit).all(params) as AuditDbRow[];
    return rows.map((r) => ({
      seq: r.seq,
      at: r.at,
      actor: r.actor,
      action: r.action,
      targetKind: r.target_kind,
      targetId: r.target_id,
      detail: parseObject(r.detail),
    }));
  }

  async auditKindsAfter(afterSeq: number, limit: number): Promise<{ targetKind: string; action: string }[]> {
    return (this.st.kindsAfter.all(afterSeq, limit) as { target_kind: string; action: string }[]).map((r) => ({ targetKind: r.target_kind, action: r.action }));
  }

  async watermark(): Promise<Watermark> {
    const r = this.st.watermark.get() as { audit_seq: number; requests: string; learning: string; skills: string };
    return { auditSeq: r.audit_seq, requests: r.requests, learning: r.learning, skills: r.skills };
  }

  async episodesOfMemory(memoryId: string): Promise<EpisodeLink[]> {
    const rows = this.st.episodesOfMemory.all(memoryId) as { id: string; thread_id: string; task: string; reward: number | null; disposition: string }[];
    return rows.map((r) => ({ id: r.id, threadId: r.thread_id, task: r.task, reward: r.reward, disposition: r.disposition }));
  }

  async trialsOf(skillId: string, limit: number): Promise<TrialRow[]> {
    const rows = this.st.trialsOf.all(skillId, limit) as { id: number; version_id: string; seq: number; passed: number; note: string | null; thread_id: string | null; at: number }[];
    return rows.map((r) => ({ id: r.id, versionId: r.version_id, seq: r.seq, passed: r.passed === 1, note: r.note, threadId: r.thread_id, at: r.at }));
  }

  async togglesOf(skillId: string): Promise<ToggleRow[]> {
    const rows = this.st.togglesOf.all(skillId) as { level: string; scope_key: string; enabled: number; updated_at: number }[];
    return rows.map((r) => ({ level: r.level, key: r.scope_key.slice(r.level.length + 1), enabled: r.enabled === 1, updatedAt: r.updated_at }));
  }

  async learning(since: number, eventsLimit: number): Promise<LearningAggregates> {
    const counts = (stmt: { all: () => unknown[] }, key: string) =>
      Object.fromEntries((stmt.all() as Record<string, unknown>[]).map((r) => [String(r[key]), Number(r.n)]));
    const e = this.st.episodeCounts.get() as Record<string, number>;
    const cand = counts(this.st.candidates, "disposition");
    const reports = this.st.reports.get() as { total: number; passed: number };
    return {
      episodes: {
        total: e.total ?? 0,
        open: e.open ?? 0,
        done: e.done ?? 0,
        interrupted: e.interrupted ?? 0,
        grounded: e.grounded ?? 0,
        suppressed: e.suppressed ?? 0,
        withReward: e.with_reward ?? 0,
      },
      perDay: (this.st.perDay.all(since) as { day: string; n: number; mean: number | null }[]).map((r) => ({ day: r.day, count: r.n, meanReward: r.mean })),
      rewards: (this.st.rewards.all() as { reward: number }[]).map((r) => r.reward),
      signals: (this.st.signals.all() as { kind: string; n: number }[]).map((r) => ({ kind: r.kind, count: r.n })),
      memoryCandidates: { created: cand.created ?? 0, merged: cand.merged ?? 0, withdrawn: cand.withdrawn ?? 0 },
      versionsByStatus: counts(this.st.versions, "status"),
      agentVersions: (this.st.agentVersions.get() as { n: number }).n,
      reports: { total: reports.total, passed: reports.passed },
      requestsByStatus: counts(this.st.requests, "status"),
      events: (this.st.events.all(eventsLimit) as { id: number; at: number; kind: string; thread_id: string | null; episode_id: string | null; detail: string }[]).map((r) => ({
        id: r.id,
        at: r.at,
        kind: r.kind,
        threadId: r.thread_id,
        episodeId: r.episode_id,
        detail: parseObject(r.detail),
      })),
    };
  }
}

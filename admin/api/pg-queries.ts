// AdminQueries over PostgreSQL (stores/postgres: the same tables and columns as SQLite). Reads
// only; bigint columns arrive as JS numbers (PgDb's type parsers).
import type { PgDb } from "../../stores/postgres/pool.js";
import type { AdminQueries, AuditFilter, AuditRow, EpisodeLink, LearningAggregates, ToggleRow, TrialRow, Watermark } from "./queries.js";

function parseObject(v: unknown): Record<string, unknown> {
  if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  if (typeof v !== "string") return {};
  try {
    const o = JSON.parse(v) as unknown;
    return o && typeof o === "object" && !Array.isArray(o) ? (o as Record<string, unknown>) : { value: o };
  } catch {
    return {};
  }
}

const n = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

export class PgAdminQueries implements AdminQueries {
  constructor(private readonly db: Pick<PgDb, "query">) {}

  async audit(f: AuditFilter): Promise<AuditRow[]> {
    const list = (xs: string[] | undefined) => (xs && xs.length > 0 ? xs : null);
    const rows = await this.db.query<{ seq: number; at: number; actor: string; action: string; target_kind: string; target_id: string; detail: unknown }>(
      `SELECT seq, at, actor, action, target_kind, target_id, detail FROM audit_log
       WHERE ($1::bigint IS NULL OR seq < $1) AND ($2::text[] IS NULL OR target_kind = ANY($2)) AND ($3::text IS NULL OR target_id = $3)
         AND ($4::text[] IS NULL OR action = ANY($4)) AND ($5::text IS NULL OR actor = $5)
         AND ($6::bigint IS NULL OR at >= $6) AND ($7::bigint IS NULL OR at < $7)
       ORDER BY seq DESC LIMIT $8`,
      [f.beforeSeq ?? null, list(f.targetKinds), f.targetId ?? null, list(f.actions), f.actor ?? null, f.since ?? null, f.until ?? null, f.limit],
    );
    return rows.map((r) => ({ seq: n(r.seq), at: n(r.at), actor: r.actor, action: r.action, targetKind: r.target_kind, targetId: r.target_id, detail: parseObject(r.detail) }));
  }

  async auditKindsAfter(afterSeq: number, limit: number): Promise<{ targetKind: string; action: string }[]> {
    const rows = await this.db.query<{ target_kind: string; action: string }>(
      `SELECT DISTINCT target_kind, action FROM (SELECT target_kind, action FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2) t`,
      [afterSeq, limit],
    );
    return rows.map((r) => ({ targetKind: r.target_kind, action: r.action }));
  }

  async watermark(): Promise<Watermark> {
    const [r] = await this.db.query<{ audit_seq: number; requests: string; learning: string; skills: string }>(
      `SELECT
         (SELECT coalesce(max(seq), 0) FROM audit_log) AS audit_seq,
         (SELECT count(*) || ':' || coalesce(max(created_at), 0) || ':' || coalesce(max(decided_at), 0) FROM skill_requests)
           || '/' || (SELECT coalesce(max(id), 0) FROM skill_eval_reports) AS requests,
         (SELECT coalesce(max(updated_at), 0) || ':' || count(*) FROM learning_episodes)
           || '/' || (SELECT coalesce(max(id), 0) FROM learning_events)
           || '/' || (SELECT coalesce(max(updated_at), 0) FROM learning_policies) AS learning,
         (SELECT count(*) FROM skill_versions) || '/' || (SELECT coalesce(max(id), 0) FROM skill_trials)
           || '/' || (SELECT coalesce(max(updated_at), 0) FROM skills) AS skills`,
    );
    return { auditSeq: n(r?.audit_seq), requests: String(r?.requests ?? ""), learning: String(r?.learning ?? ""), skills: String(r?.skills ?? "") };
  }

  async episodesOfMemory(memoryId: string): Promise<EpisodeLink[]> {
    const rows = await this.db.query<{ id: string; thread_id: string; task: string; reward: number | null; disposition: string }>(
      `SELECT e.id, e.thread_id, e.task, e.reward, c.disposition FROM learning_candidates c
       JOIN learning_episodes e ON e.id = c.episode_id WHERE c.memory_id = $1 ORDER BY c.at`,
      [memoryId],
    );
    return rows.map((r) => ({ id: r.id, threadId: r.thread_id, task: r.task, reward: r.reward === null ? null : Number(r.reward), disposition: r.disposition }));
  }

  async trialsOf(skillId: string, limit: number): Promise<TrialRow[]> {
    const rows = await this.db.query<{ id: number; version_id: string; seq: number; passed: number; note: string | null; thread_id: string | null; at: number }>(
      `SELECT * FROM (
         SELECT t.id, t.version_id, v.seq, t.passed, t.note, t.thread_id, t.at FROM skill_trials t
         JOIN skill_versions v ON v.id = t.version_id WHERE v.skill_id = $1 ORDER BY t.id DESC LIMIT $2
       ) x ORDER BY id`,
      [skillId, limit],
    );
    return rows.map((r) => ({ id: n(r.id), versionId: r.version_id, seq: n(r.seq), passed: n(r.passed) === 1, note: r.note, threadId: r.thread_id, at: n(r.at) }));
  }

  async togglesOf(skillId: string): Promise<ToggleRow[]> {
    const rows = await this.db.query<{ level: string; scope_key: string; enabled: number; updated_at: number }>(
      `SELECT level, scope_key, enabled, updated_at FROM skill_toggles WHERE skill_id = $1 ORDER BY level, scope_key`,
      [skillId],
    );
    return rows.map((r) => ({ level: r.level, key: r.scope_key.slice(r.level.length + 1), enabled: n(r.enabled) === 1, updatedAt: n(r.updated_at) }));
  }

  async learning(since: number, eventsLimit: number): Promise<LearningAggregates> {
    const [e] = await this.db.query<Record<string, number>>(
      `SELECT count(*) AS total, count(*) FILTER (WHERE state = 'open') AS open, count(*) FILTER (WHERE state = 'done') AS done,
         count(*) FILTER (WHERE state = 'interrupted') AS interrupted, count(*) FILTER (WHERE grounded = 1) AS grounded,
         count(*) FILTER (WHERE suppressed = 1) AS suppressed, count(reward) AS with_reward
       FROM learning_episodes`,
    );
    const perDay = await this.db.query<{ day: string; n: number; mean: number | null }>(
      `SELECT to_char(to_timestamp(created_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*) AS n, avg(reward) AS mean
       FROM learning_episodes WHERE created_at >= $1 GROUP BY 1 ORDER BY 1`,
      [since],
    );
    const rewards = await this.db.query<{ reward: number }>(
      `SELECT reward FROM learning_episodes WHERE reward IS NOT NULL AND suppressed = 0 ORDER BY updated_at DESC LIMIT 100000`,
    );
    const counted = async (sql: string) => Object.fromEntries((await this.db.query<{ k: string; n: number }>(sql)).map((r) => [r.k, n(r.n)]));
    const signals = await this.db.query<{ kind: string; n: number }>(`SELECT kind, count(*) AS n FROM learning_signals GROUP BY kind ORDER BY kind`);
    const cand = await counted(`SELECT disposition AS k, count(*) AS n FROM learning_candidates GROUP BY disposition`);
    const versions = await counted(`SELECT status AS k, count(*) AS n FROM skill_versions GROUP BY status`);
    const requests = await counted(`SELECT status AS k, count(*) AS n FROM skill_requests GROUP BY status`);
    const [agent] = await this.db.query<{ n: number }>(`SELECT count(*) AS n FROM skill_versions WHERE author = 'agent'`);
    const [reports] = await this.db.query<{ total: number; passed: number }>(`SELECT count(*) AS total, coalesce(sum(passed), 0) AS passed FROM skill_eval_reports`);
    const events = await this.db.query<{ id: number; at: number; kind: string; thread_id: string | null; episode_id: string | null; detail: unknown }>(
      `SELECT id, at, kind, thread_id, episode_id, detail FROM learning_events ORDER BY id DESC LIMIT $1`,
      [eventsLimit],
    );
    return {
      episodes: {
        total: n(e?.total),
        open: n(e?.open),
        done: n(e?.done),
        interrupted: n(e?.interrupted),
        grounded: n(e?.grounded),
        suppressed: n(e?.suppressed),
        withReward: n(e?.with_reward),
      },
      perDay: perDay.map((r) => ({ day: r.day, count: n(r.n), meanReward: r.mean === null ? null : Number(r.mean) })),
      rewards: rewards.map((r) => Number(r.reward)),
      signals: signals.map((r) => ({ kind: r.kind, count: n(r.n) })),
      memoryCandidates: { created: cand.created ?? 0, merged: cand.merged ?? 0, withdrawn: cand.withdrawn ?? 0 },
      versionsByStatus: versions,
      agentVersions: n(agent?.n),
      reports: { total: n(reports?.total), passed: n(reports?.passed) },
      requestsByStatus: requests,
      events: events.map((r) => ({ id: n(r.id), at: n(r.at), kind: r.kind, threadId: r.thread_id, episodeId: r.episode_id, detail: parseObject(r.detail) })),
    };
  }
}

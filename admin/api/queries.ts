// Read-only queries the admin API needs beyond the store traits: the audit log across targets,
// per-table change watermarks for live updates, and aggregates for the learning overview. An
// interface so the service stays engine-neutral; sqlite-queries.ts implements it for SQLite.
import type { AuditEntry } from "../../stores/traits.js";

export interface AuditRow extends Omit<AuditEntry, "targetKind" | "action"> {
  seq: number;
  targetKind: string;
  action: string;
}

export interface AuditFilter {
  targetKinds?: string[] | undefined;
  targetId?: string | undefined;
  actions?: string[] | undefined;
  actor?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
  /** entries with seq < beforeSeq (paging, newest first) */
  beforeSeq?: number | undefined;
  limit: number;
}

/** Cheap maxima/counts; a change in any of them means something changed in that area. */
export interface Watermark {
  auditSeq: number;
  /** skill requests and eval reports (created or decided) */
  requests: string;
  /** learning episodes, events and policies */
  learning: string;
  /** skill versions and trials (views are not tracked) */
  skills: string;
}

export interface EpisodeLink {
  id: string;
  threadId: string;
  task: string;
  reward: number | null;
  disposition: string;
}

export interface TrialRow {
  id: number;
  versionId: string;
  seq: number;
  passed: boolean;
  note: string | null;
  threadId: string | null;
  at: number;
}

export interface ToggleRow {
  level: string;
  key: string;
  enabled: boolean;
  updatedAt: number;
}

export interface LearningAggregates {
  episodes: { total: number; open: number; done: number; interrupted: number; grounded: number; suppressed: number; withReward: number };
  perDay: { day: string; count: number; meanReward: number | null }[];
  /** every non-null episode reward (for the histogram), capped at the newest 100000 */
  rewards: number[];
  signals: { kind: string; count: number }[];
  memoryCandidates: { created: number; merged: number; withdrawn: number };
  versionsByStatus: Record<string, number>;
  /** versions written by the learning loop or a model (author agent) */
  agentVersions: number;
  reports: { total: number; passed: number };
  requestsByStatus: Record<string, number>;
  events: { id: number; at: number; kind: string; threadId: string | null; episodeId: string | null; detail: Record<string, unknown> }[];
}

export interface AdminQueries {
  audit(f: AuditFilter): Promise<AuditRow[]>;
  /** target kinds and actions of audit rows with seq > afterSeq (at most `limit` rows read) */
  auditKindsAfter(afterSeq: number, limit: number): Promise<{ targetKind: string; action: string }[]>;
  watermark(): Promise<Watermark>;
  /** episodes that proposed or merged this memory (learning_candidates) */
  episodesOfMemory(memoryId: string): Promise<EpisodeLink[]>;
  /** trials of every version of a skill, oldest first, the newest `limit` */
  trialsOf(skillId: string, limit: number): Promise<TrialRow[]>;
  togglesOf(skillId: string): Promise<ToggleRow[]>;
  learning(since: number, eventsLimit: number): Promise<LearningAggregates>;
}

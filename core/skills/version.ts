// The skill catalog's records: a skill (name + published-version pointer + pin) and its
// immutable versions. Only counters (views, uses, trials) and status ever change on a version.
import type { SkillFile } from "./skill-md.js";

export const SKILL_STATUSES = ["candidate", "probationary", "active", "retired", "rejected"] as const;
export type SkillStatus = (typeof SKILL_STATUSES)[number];
/** statuses a published pointer may reference */
export const LIVE_STATUSES: readonly SkillStatus[] = ["probationary", "active"];

export const SKILL_AUTHORS = ["human", "agent", "import"] as const;
export type SkillAuthor = (typeof SKILL_AUTHORS)[number];

/** who stands behind the text: a person wrote or approved it, the model proposed it, it came from elsewhere */
export const SKILL_TRUST = ["user_written", "agent_proposed", "imported"] as const;
export type SkillTrust = (typeof SKILL_TRUST)[number];

export const TOGGLE_LEVELS = ["user", "project", "session", "thread"] as const;
export type ToggleLevel = (typeof TOGGLE_LEVELS)[number];

export interface Skill {
  id: string;
  name: string;
  publishedVersionId: string | null;
  pinned: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface SkillUsage {
  views: number;
  uses: number;
  successes: number;
  failures: number;
}

export interface SkillVersion {
  id: string;
  skillId: string;
  name: string;
  /** 1, 2, 3 … per skill, in creation order */
  seq: number;
  contentHash: string;
  description: string;
  frontmatter: Record<string, unknown>;
  body: string;
  allowedTools: string[];
  author: SkillAuthor;
  /** thread or person that wrote it */
  authorRef: string | null;
  parentId: string | null;
  trust: SkillTrust;
  status: SkillStatus;
  /** safety-scan reasons; a flagged version is never published */
  flags: string[];
  eta: number;
  trials: number;
  passes: number;
  usage: SkillUsage;
  createdAt: number;
  /** first time it was published, or null */
  publishedAt: number | null;
  /** place on the publication stack (publish pushes, rollback pops); null when not on it */
  liveOrder: number | null;
}

export type NewSkillVersion = Omit<SkillVersion, "id" | "skillId" | "seq" | "usage" | "trials" | "passes" | "publishedAt" | "liveOrder"> & {
  files: SkillFile[];
};

export interface SkillGrant {
  tool: string;
  grantedBy: string;
  at: number;
}

export interface SkillToggle {
  skillId: string;
  level: ToggleLevel;
  /** the user id, project path, session id or thread id the setting applies to */
  key: string;
  enabled: boolean;
}

export interface SkillSearchHit {
  skill: Skill;
  version: SkillVersion;
  /** higher is better; 0..1, relative to this query's best possible match */
  score: number;
}

/** η under a Beta(priorPasses, priorFails) prior: (passes + a) / (trials + a + b). */
export function etaOf(passes: number, trials: number, prior: { priorPasses: number; priorFails: number }): number {
  return (passes + prior.priorPasses) / (trials + prior.priorPasses + prior.priorFails);
}

/**
 * The content hash of a version a forget withdrew, followed by its id (unique per skill, as a
 * hash must be): no draft has it, and the PostgreSQL trigger that keeps versions immutable lets
 * exactly this change through, once (a version the agent wrote becoming rejected with this hash).
 */
export const WITHHELD_HASH_PREFIX = "withheld:";

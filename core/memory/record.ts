// The memory record model (ARCHITECTURE.md "Data model"): one schema, one source of truth.
import { z } from "zod";

export const MEMORY_KINDS = ["fact", "preference", "project", "lesson", "procedure", "note"] as const;
export const MemoryKind = z.enum(MEMORY_KINDS);
export type MemoryKind = z.infer<typeof MemoryKind>;

export const SCOPE_LEVELS = ["user", "project", "session", "thread"] as const;
export const ScopeLevel = z.enum(SCOPE_LEVELS);
export type ScopeLevel = z.infer<typeof ScopeLevel>;

export const TRUST_LEVELS = ["user_confirmed", "user_stated", "model_inferred", "tool_output", "imported"] as const;
export const Trust = z.enum(TRUST_LEVELS);
export type Trust = z.infer<typeof Trust>;

export const MEMORY_STATUSES = ["pending", "active", "superseded", "expired", "deleted"] as const;
export const MemoryStatus = z.enum(MEMORY_STATUSES);
export type MemoryStatus = z.infer<typeof MemoryStatus>;

export const ACTORS = ["user", "model", "tool", "import"] as const;
export const Actor = z.enum(ACTORS);
export type Actor = z.infer<typeof Actor>;

/** Safety flags set by the write-time scan; a flagged record stays pending until a person confirms it. */
export const SafetyFlag = z.enum(["possible_injection"]);
export type SafetyFlag = z.infer<typeof SafetyFlag>;

/** Where a record is visible: its level plus the owning user and the keys of that level. */
export interface RecordScope {
  level: ScopeLevel;
  user: string;
  project: string | null;
  session: string | null;
  thread: string | null;
}

/** One provenance row: a record can have several (duplicates merge as supporting evidence). */
export interface MemorySource {
  threadId: string | null;
  messageIds: string[];
  toolCallId: string | null;
  actor: Actor;
  at: number;
}

export interface MemoryRecord {
  id: string;
  /** id of the first version; every version of one memory shares it */
  lineageId: string;
  scope: RecordScope;
  kind: MemoryKind;
  content: string;
  tags: string[];
  trust: Trust;
  confidence: number;
  status: MemoryStatus;
  flags: SafetyFlag[];
  version: number;
  supersedes: string | null;
  /** world time: when the fact became / stops being true (epoch ms) */
  validFrom: number | null;
  validTo: number | null;
  /** system time (epoch ms) */
  createdAt: number;
  updatedAt: number;
  expiresAt: number | null;
  contentHash: string;
  sources: MemorySource[];
}

/** A record to insert; ids, version and timestamps are assigned by the store. */
export interface NewMemory {
  id: string;
  lineageId: string;
  scope: RecordScope;
  kind: MemoryKind;
  content: string;
  tags: string[];
  trust: Trust;
  confidence: number;
  status: "pending" | "active";
  flags: SafetyFlag[];
  version: number;
  supersedes: string | null;
  validFrom: number | null;
  validTo: number | null;
  createdAt: number;
  expiresAt: number | null;
  contentHash: string;
  source: MemorySource;
}

export const MAX_CONTENT_CHARS = 4000;
export const MAX_TAGS = 20;
export const MAX_TAG_CHARS = 64;

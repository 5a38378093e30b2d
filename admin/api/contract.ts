// The admin API contract: every request and response of the MemoryAdmin and SkillAdmin services
// (proto/infinity/memory/v1/admin.proto) as zod schemas over the protobuf JSON mapping
// (lowerCamelCase names, google.protobuf.Timestamp as RFC 3339 strings, Struct as a JSON
// object, unset `optional` fields absent). One source of truth for both transports: the HTTP
// mapping validates bodies with these schemas, the gRPC server converts each proto message to
// this JSON and validates it the same way. No runtime dependencies beyond zod, so the page (admin/ui)
// may import it.
import { z } from "zod";

// ---- enumerations (strings on the wire; the proto fields are strings with these values) ----

export const MemoryKind = z.enum(["fact", "preference", "project", "lesson", "procedure", "note"]);
export const ScopeLevel = z.enum(["user", "project", "session", "thread"]);
export const Trust = z.enum(["user_confirmed", "user_stated", "model_inferred", "tool_output", "imported"]);
export const MemoryStatus = z.enum(["pending", "active", "superseded", "expired", "deleted"]);
export const SkillStatus = z.enum(["candidate", "probationary", "active", "retired", "rejected"]);
/** "approving": approved and its action under way (decidedBy/decidedAt: who, since when); a decline is refused meanwhile */
export const RequestStatus = z.enum(["pending", "approving", "approved", "rejected", "superseded"]);
export const ToggleLevel = ScopeLevel;

/** RFC 3339 time as protobuf JSON writes a Timestamp, e.g. "2026-11-30T12:00:00.123Z" */
const Time = z.string();
const Id = z.string().min(1).max(200);
const Cursor = z.string().min(1).max(200);
const PageSize = z.number().int().min(1).max(200);
const JsonObject = z.record(z.string(), z.unknown());

// ---- shared records ----

export const RecordScope = z.object({
  level: ScopeLevel,
  user: z.string(),
  project: z.string().optional(),
  session: z.string().optional(),
  thread: z.string().optional(),
});

export const MemorySource = z.object({
  threadId: z.string().optional(),
  messageIds: z.array(z.string()),
  toolCallId: z.string().optional(),
  actor: z.string(),
  at: Time,
});

export const Memory = z.object({
  id: z.string(),
  lineageId: z.string(),
  scope: RecordScope,
  kind: MemoryKind,
  content: z.string(),
  tags: z.array(z.string()),
  trust: Trust,
  confidence: z.number(),
  status: MemoryStatus,
  flags: z.array(z.string()),
  version: z.number().int(),
  supersedes: z.string().optional(),
  validFrom: Time.optional(),
  validTo: Time.optional(),
  createdAt: Time,
  updatedAt: Time,
  expiresAt: Time.optional(),
  sources: z.array(MemorySource),
});

export const AuditEntry = z.object({
  /** audit_log sequence number, as a decimal string (int64 in proto) */
  seq: z.string(),
  at: Time,
  actor: z.string(),
  action: z.string(),
  /** "memory" | "toolset" | "skill" */
  targetKind: z.string(),
  targetId: z.string(),
  detail: JsonObject,
});

export const Edge = z.object({
  src: z.string(),
  dst: z.string(),
  /** "supersedes" | "conflicts_with" | "derived_from" */
  relation: z.string(),
  at: Time,
});

/** One conversation message a memory came from; `text` absent when the session index does not hold it. */
export const SourceMessage = z.object({
  threadId: z.string(),
  messageId: z.string(),
  role: z.string().optional(),
  text: z.string().optional(),
  at: Time.optional(),
});

export const EpisodeRef = z.object({
  id: z.string(),
  threadId: z.string(),
  task: z.string(),
  reward: z.number().optional(),
  /** "created" | "merged" | "withdrawn" */
  disposition: z.string(),
});

// ---- MemoryAdmin ----

/** Whose memories: default the server's local user; `project` (an absolute directory) narrows to one project plus user-scope ones. */
const Owner = {
  user: z.string().min(1).max(200).optional(),
  project: z.string().min(1).max(4000).optional(),
};

export const ListMemoriesRequest = z.strictObject({
  ...Owner,
  scopes: z.array(ScopeLevel).max(4).optional(),
  kinds: z.array(MemoryKind).max(6).optional(),
  trusts: z.array(Trust).max(5).optional(),
  /** default ["active", "pending"] */
  statuses: z.array(MemoryStatus).max(5).optional(),
  /** default 50 */
  pageSize: PageSize.optional(),
  cursor: Cursor.optional(),
  /** "newest" (default) or "oldest", by last update */
  order: z.enum(["newest", "oldest"]).optional(),
});
export const ListMemoriesResponse = z.object({
  memories: z.array(Memory),
  nextCursor: z.string().optional(),
  /** matching records before the trust filter, counted up to 10,000 (absent when `trusts` is given) */
  total: z.number().int().optional(),
  /** more records than `total` match: the count stopped at its cap */
  totalCapped: z.boolean().optional(),
});

export const SearchMemoriesRequest = z.strictObject({
  ...Owner,
  query: z.string().min(1).max(1000),
  scopes: z.array(ScopeLevel).max(4).optional(),
  kinds: z.array(MemoryKind).max(6).optional(),
  trusts: z.array(Trust).max(5).optional(),
  /** include superseded and expired versions */
  includeHistory: z.boolean().optional(),
  /** include pending records (candidates waiting for a person's decision, flagged writes) */
  includePending: z.boolean().optional(),
  /** default 20 */
  limit: z.number().int().min(1).max(100).optional(),
});
export const SearchHit = z.object({ memory: Memory, score: z.number(), channel: z.string() });
export const SearchMemoriesResponse = z.object({ hits: z.array(SearchHit) });

export const GetMemoryRequest = z.strictObject({ ...Owner, id: Id });
export const GetMemoryResponse = z.object({
  memory: Memory,
  /** every version of its lineage, oldest first (forgotten ones have empty content) */
  versions: z.array(Memory),
  audit: z.array(AuditEntry),
  edges: z.array(Edge),
  /** current records this one has a conflicts_with edge to or from */
  conflicts: z.array(Memory),
  messages: z.array(SourceMessage),
  episodes: z.array(EpisodeRef),
});

export const UpdateMemoryRequest = z.strictObject({
  ...Owner,
  id: Id,
  content: z.string().min(1).max(4000),
  kind: MemoryKind.optional(),
  tags: z.array(z.string().min(1).max(64)).max(20).optional(),
  confidence: z.number().min(0).max(1).optional(),
  /** ISO date/time, a duration like "30d", or "never" to clear it; without it the current expiry is kept */
  expiresAt: z.string().min(1).max(100).optional(),
});
export const UpdateMemoryResponse = z.object({
  /** the new version (the old one becomes superseded) */
  memory: Memory,
  previousId: z.string(),
  notes: z.array(z.string()),
});

export const ForgetMemoryRequest = z.strictObject({
  ...Owner,
  ids: z.array(Id).min(1).max(100),
  reason: z.string().max(500).optional(),
});
export const ForgetMemoryResponse = z.object({ purgedIds: z.array(z.string()) });

export const ListPendingRequest = z.strictObject({ ...Owner, pageSize: PageSize.optional(), cursor: Cursor.optional() });
export const PendingItem = z.object({
  memory: Memory,
  messages: z.array(SourceMessage),
  episodes: z.array(EpisodeRef),
  conflicts: z.array(Memory),
});
export const ListPendingResponse = z.object({
  items: z.array(PendingItem),
  nextCursor: z.string().optional(),
  /** pending records, counted up to 10,000 */
  total: z.number().int(),
  /** more than `total` are pending: the count stopped at its cap */
  totalCapped: z.boolean().optional(),
});

export const ConfirmPendingRequest = z.strictObject({ ...Owner, ids: z.array(Id).min(1).max(100) });
export const ConfirmPendingResponse = z.object({ memories: z.array(Memory) });

export const RejectPendingRequest = z.strictObject({ ...Owner, ids: z.array(Id).min(1).max(100) });
export const RejectPendingResponse = z.object({ purgedIds: z.array(z.string()) });

const AuditFilter = {
  actions: z.array(z.string().min(1).max(40)).max(20).optional(),
  actor: z.string().min(1).max(200).optional(),
  since: Time.optional(),
  until: Time.optional(),
  /** default 100 */
  pageSize: PageSize.optional(),
  /** nextCursor of the previous page: older entries follow */
  cursor: Cursor.optional(),
};
export const QueryAuditRequest = z.strictObject({
  /** default every kind ("memory", "toolset", "skill") */
  targetKinds: z.array(z.enum(["memory", "toolset", "skill"])).max(3).optional(),
  targetId: Id.optional(),
  ...AuditFilter,
});
/** newest first */
export const QueryAuditResponse = z.object({ entries: z.array(AuditEntry), nextCursor: z.string().optional() });

export const LearningStatsRequest = z.strictObject({
  /** days of per-day episode counts, default 30 */
  days: z.number().int().min(1).max(365).optional(),
});
export const Policy = z.object({
  id: z.string(),
  signature: z.string(),
  tools: z.array(z.string()),
  keyTerms: z.array(z.string()),
  support: z.number().int(),
  meanValue: z.number(),
  gain: z.number(),
  eligible: z.boolean(),
  skillName: z.string().optional(),
  createdAt: Time,
  updatedAt: Time,
});
export const LearningStatsResponse = z.object({
  episodes: z.object({
    total: z.number().int(),
    open: z.number().int(),
    done: z.number().int(),
    interrupted: z.number().int(),
    grounded: z.number().int(),
    suppressed: z.number().int(),
    withReward: z.number().int(),
    /** every day of the period, oldest first, a day without episodes at 0; day is "YYYY-MM-DD" (UTC) */
    perDay: z.array(z.object({ day: z.string(), count: z.number().int(), meanReward: z.number().optional() })),
  }),
  rewards: z.object({
    count: z.number().int(),
    mean: z.number().optional(),
    /** 10 equal bins over [-1, 1]; the last one includes 1 */
    bins: z.array(z.object({ lo: z.number(), hi: z.number(), count: z.number().int() })),
  }),
  signals: z.array(z.object({ kind: z.string(), count: z.number().int() })),
  policies: z.array(Policy),
  /** skill funnel: versions proposed → evaluated → passed the gate → approved → live → retired */
  funnel: z.object({
    proposed: z.number().int(),
    evaluated: z.number().int(),
    passedGate: z.number().int(),
    pendingRequests: z.number().int(),
    approved: z.number().int(),
    rejected: z.number().int(),
    probationary: z.number().int(),
    active: z.number().int(),
    retired: z.number().int(),
  }),
  memoryCandidates: z.object({ created: z.number().int(), merged: z.number().int(), withdrawn: z.number().int() }),
  queueDepth: z.number().int(),
  recentEvents: z.array(
    z.object({
      id: z.string(),
      at: Time,
      kind: z.string(),
      threadId: z.string().optional(),
      episodeId: z.string().optional(),
      detail: JsonObject,
    }),
  ),
});

// ---- SkillAdmin ----

export const SkillName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, "a skill name: lower-case letters and digits in words joined by single hyphens, e.g. log-triage");
/** "v3", "3", a version id, or a content-hash prefix of 8+ characters */
const VersionRef = z.string().min(1).max(200);

export const SkillVersion = z.object({
  id: z.string(),
  seq: z.number().int(),
  contentHash: z.string(),
  description: z.string(),
  status: SkillStatus,
  author: z.string(),
  authorRef: z.string().optional(),
  trust: z.string(),
  flags: z.array(z.string()),
  allowedTools: z.array(z.string()),
  /** reliability estimate η in [0, 1] */
  eta: z.number(),
  trials: z.number().int(),
  passes: z.number().int(),
  views: z.number().int(),
  uses: z.number().int(),
  successes: z.number().int(),
  failures: z.number().int(),
  parentId: z.string().optional(),
  createdAt: Time,
  publishedAt: Time.optional(),
  /** place on the publication stack; absent when not on it */
  liveOrder: z.number().int().optional(),
  /** SKILL.md body and support files: only in GetSkill's `selected` */
  body: z.string().optional(),
  files: z.array(z.object({ path: z.string(), content: z.string() })),
});

export const Skill = z.object({
  id: z.string(),
  name: z.string(),
  pinned: z.boolean(),
  publishedVersionId: z.string().optional(),
  createdAt: Time,
  updatedAt: Time,
});

export const SkillSummary = z.object({
  skill: Skill,
  published: SkillVersion.optional(),
  candidates: z.number().int(),
  pendingRequests: z.number().int(),
});

export const EvalArm = z.object({
  label: z.string(),
  successRate: z.number(),
  meanSteps: z.number(),
  meanScore: z.number(),
  tasks: z.array(
    z.object({ id: z.string(), kind: z.string(), completed: z.boolean(), steps: z.number().int(), score: z.number(), why: z.string() }),
  ),
});
export const EvalReport = z.object({
  id: z.number().int(),
  skillName: z.string(),
  versionId: z.string().optional(),
  baselineVersionId: z.string().optional(),
  policyId: z.string().optional(),
  passed: z.boolean(),
  createdAt: Time,
  candidate: EvalArm,
  baseline: EvalArm,
  margin: z.number(),
  requiredMargin: z.number(),
  regressions: z.array(z.string()),
  reasons: z.array(z.string()),
  model: z.string(),
  verification: z.array(z.string()),
  source: z.string().optional(),
});

export const SkillRequest = z.object({
  id: z.string(),
  /** "publish" | "merge" | "retire" */
  kind: z.string(),
  skillName: z.string(),
  versionId: z.string().optional(),
  otherSkill: z.string().optional(),
  policyId: z.string().optional(),
  reportId: z.number().int().optional(),
  status: RequestStatus,
  detail: JsonObject,
  createdAt: Time,
  decidedAt: Time.optional(),
  decidedBy: z.string().optional(),
});

export const Trial = z.object({
  id: z.string(),
  versionId: z.string(),
  seq: z.number().int(),
  passed: z.boolean(),
  note: z.string().optional(),
  threadId: z.string().optional(),
  at: Time,
});

export const Toggle = z.object({ level: ToggleLevel, key: z.string(), enabled: z.boolean(), updatedAt: Time });
export const Grant = z.object({ tool: z.string(), grantedBy: z.string(), at: Time });

export const ListSkillsRequest = z.strictObject({});
export const ListSkillsResponse = z.object({ skills: z.array(SkillSummary) });

export const GetSkillRequest = z.strictObject({
  name: SkillName,
  /** the version whose body and files come back in `selected`; default the published one, else the newest */
  version: VersionRef.optional(),
});
export const GetSkillResponse = z.object({
  skill: Skill,
  /** oldest first, without bodies */
  versions: z.array(SkillVersion),
  selected: SkillVersion,
  grants: z.array(Grant),
  toggles: z.array(Toggle),
  /** every trial of every version, oldest first (at most 1000, the newest) */
  trials: z.array(Trial),
  /** η changes from the audit trail (feedback, drift, thumbs), oldest first */
  etaHistory: z.array(z.object({ at: Time, versionId: z.string(), eta: z.number(), cause: z.string() })),
  reports: z.array(EvalReport),
  requests: z.array(SkillRequest),
  policies: z.array(Policy),
  audit: z.array(AuditEntry),
});

export const DiffVersionsRequest = z.strictObject({
  name: SkillName,
  from: VersionRef,
  /** default the published version */
  to: VersionRef.optional(),
});
export const DiffVersionsResponse = z.object({
  /** unified diff of SKILL.md and support files; empty when identical */
  diff: z.string(),
  fromSeq: z.number().int(),
  toSeq: z.number().int(),
});

export const ListCandidatesRequest = z.strictObject({
  /** requests with this status; default "pending"; "all" for every one */
  status: z.enum(["pending", "approving", "approved", "rejected", "superseded", "all"]).optional(),
  /** default 100 */
  limit: z.number().int().min(1).max(500).optional(),
});
export const CandidateItem = z.object({
  /** absent for a candidate version proposed without a request (e.g. by skill_propose) */
  request: SkillRequest.optional(),
  skillName: z.string(),
  version: SkillVersion.optional(),
  /** the newest evaluation report of the version (or the request's report) */
  report: EvalReport.optional(),
  /** unified diff from the published version (or from nothing) to the candidate */
  diff: z.string().optional(),
});
export const ListCandidatesResponse = z.object({ items: z.array(CandidateItem) });

/** Either `requestId` (a learning-loop / curator request) or `name` (+ optional `version`, default the newest candidate). */
export const ApproveCandidateRequest = z.strictObject({
  requestId: Id.optional(),
  name: SkillName.optional(),
  version: VersionRef.optional(),
});
export const ApproveCandidateResponse = z.object({
  request: SkillRequest.optional(),
  skillName: z.string(),
  /** the published version after the call (absent for a retire/merge request that left nothing published) */
  published: SkillVersion.optional(),
});

export const RejectCandidateRequest = z.strictObject({
  requestId: Id.optional(),
  name: SkillName.optional(),
  version: VersionRef.optional(),
  reason: z.string().max(500).optional(),
});
export const RejectCandidateResponse = z.object({
  request: SkillRequest.optional(),
  skillName: z.string(),
  rejected: SkillVersion.optional(),
});

export const RollbackSkillRequest = z.strictObject({
  name: SkillName,
  /** an earlier published version; default the one before the current */
  to: VersionRef.optional(),
});
export const RollbackSkillResponse = z.object({ published: SkillVersion, previous: SkillVersion });

export const PinSkillRequest = z.strictObject({ name: SkillName });
export const PinSkillResponse = z.object({ skill: Skill });
export const UnpinSkillRequest = PinSkillRequest;
export const UnpinSkillResponse = PinSkillResponse;

/**
 * `key`: the user id (level "user", default the local user), the project path ("project"), or
 * the session / thread id ("session", "thread"). `clear` removes the setting instead.
 */
export const EnableSkillRequest = z.strictObject({
  name: SkillName,
  level: ToggleLevel,
  key: z.string().min(1).max(4000).optional(),
  clear: z.boolean().optional(),
});
export const EnableSkillResponse = z.object({ toggles: z.array(Toggle) });
export const DisableSkillRequest = EnableSkillRequest;
export const DisableSkillResponse = EnableSkillResponse;

export const QuerySkillAuditRequest = z.strictObject({ name: SkillName.optional(), ...AuditFilter });
export const QuerySkillAuditResponse = QueryAuditResponse;

// ---- routes ----

/** Every call: `POST /api/v1/<service>/<method>` with the request as JSON; the response JSON on 200. */
export const ROUTES = {
  MemoryAdmin: {
    ListMemories: { request: ListMemoriesRequest, response: ListMemoriesResponse },
    SearchMemories: { request: SearchMemoriesRequest, response: SearchMemoriesResponse },
    GetMemory: { request: GetMemoryRequest, response: GetMemoryResponse },
    UpdateMemory: { request: UpdateMemoryRequest, response: UpdateMemoryResponse },
    ForgetMemory: { request: ForgetMemoryRequest, response: ForgetMemoryResponse },
    ListPending: { request: ListPendingRequest, response: ListPendingResponse },
    ConfirmPending: { request: ConfirmPendingRequest, response: ConfirmPendingResponse },
    RejectPending: { request: RejectPendingRequest, response: RejectPendingResponse },
    QueryAudit: { request: QueryAuditRequest, response: QueryAuditResponse },
    LearningStats: { request: LearningStatsRequest, response: LearningStatsResponse },
  },
  SkillAdmin: {
    ListSkills: { request: ListSkillsRequest, response: ListSkillsResponse },
    GetSkill: { request: GetSkillRequest, response: GetSkillResponse },
    DiffVersions: { request: DiffVersionsRequest, response: DiffVersionsResponse },
    ListCandidates: { request: ListCandidatesRequest, response: ListCandidatesResponse },
    ApproveCandidate: { request: ApproveCandidateRequest, response: ApproveCandidateResponse },
    RejectCandidate: { request: RejectCandidateRequest, response: RejectCandidateResponse },
    RollbackSkill: { request: RollbackSkillRequest, response: RollbackSkillResponse },
    PinSkill: { request: PinSkillRequest, response: PinSkillResponse },
    UnpinSkill: { request: UnpinSkillRequest, response: UnpinSkillResponse },
    EnableSkill: { request: EnableSkillRequest, response: EnableSkillResponse },
    DisableSkill: { request: DisableSkillRequest, response: DisableSkillResponse },
    QuerySkillAudit: { request: QuerySkillAuditRequest, response: QuerySkillAuditResponse },
  },
} as const;

export type Routes = typeof ROUTES;
export type ServiceName = keyof Routes;
export type MethodName<S extends ServiceName> = keyof Routes[S] & string;
export type RequestOf<S extends ServiceName, M extends MethodName<S>> = Routes[S][M] extends { request: infer Q extends z.ZodType }
  ? z.input<Q>
  : never;
export type ResponseOf<S extends ServiceName, M extends MethodName<S>> = Routes[S][M] extends { response: infer R extends z.ZodType }
  ? z.infer<R>
  : never;

export const API_PREFIX = "/api/v1";
export const EVENTS_PATH = "/api/v1/events";

/** Error body of every non-200 answer. */
export const ErrorBody = z.object({
  error: z.string(),
  /** invalid_argument | unauthenticated | not_found | conflict | forbidden | too_large | unsupported_media_type | method_not_allowed | internal | … */
  code: z.string(),
  /** the request field at fault, dotted (e.g. "ids.0"), when one is */
  field: z.string().optional(),
});

/** Topics of a live-update event: which views to refetch. */
export const Topic = z.enum(["memories", "pending", "skills", "candidates", "learning", "audit"]);
/** `event: change` data on GET /api/v1/events */
export const ChangeEvent = z.object({
  topics: z.array(Topic),
  /** newest audit_log seq seen (decimal string) */
  auditSeq: z.string(),
  at: Time,
});

export type Memory = z.infer<typeof Memory>;
export type AuditEntry = z.infer<typeof AuditEntry>;
export type SkillVersion = z.infer<typeof SkillVersion>;
export type SkillRequest = z.infer<typeof SkillRequest>;
export type EvalReport = z.infer<typeof EvalReport>;
export type Policy = z.infer<typeof Policy>;
export type ChangeEvent = z.infer<typeof ChangeEvent>;
export type Topic = z.infer<typeof Topic>;
export type ErrorBody = z.infer<typeof ErrorBody>;

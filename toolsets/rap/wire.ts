// RAP wire types, one zod schema per message (mirrors Infinity's `rap-protocol` crate, the
// byte-level contract: reference §1.2). Only schemas and their inferred types live here.
//
// Serde rules carried over: unknown fields are ignored (plain z.object strips them), unknown tag
// values are rejected, `null` is rejected for every non-Option field except JSON `Value` fields,
// an `Option` may be missing or null, a `#[serde(default)]` field may be missing.
import { z } from "zod";
import { externalIdProblem } from "../../core/ids.js";

/** serde `usize`: a non-negative integer */
const usize = z.int().nonnegative();

/** serde `serde_json::Value` without `default`: required, but `null` is a value */
const requiredValue = z.unknown();

/**
 * An identifier the runtime sends. Infinity's are UUIDs and thread ids; one holding a NUL is
 * malformed (PostgreSQL text cannot journal it) and one past MAX_EXTERNAL_ID_BYTES cannot key a
 * PostgreSQL index, so either is refused with a 400.
 */
const ident = z.string().superRefine((s, ctx) => {
  const problem = externalIdProblem(s);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/** A URL the runtime sends: stored, never a key, so only a NUL makes it malformed. */
const url = z.string().refine((s) => !s.includes("\u0000"), "must not contain a NUL character (U+0000)");

// ---- runtime → tool ----

export const RapInvocation = z.object({
  operation: ident,
  /** `#[serde(default)] Value`: a missing field is `null` */
  arguments: z.unknown().default(null),
  id: ident,
  /** `Option<String>` without default: serde still reads a missing field as `None` */
  call_id: ident.nullable().default(null),
  callback_url: url,
  group_id: ident,
  user_id: ident.nullish(),
  /** `[root, …, parent]`; `null` (or missing) for a root thread */
  thread_ancestors: z.array(ident).nullable().default(null),
});
export type RapInvocation = z.output<typeof RapInvocation>;

export const CancelToolCallRequest = z.object({
  thread_id: ident,
  tool_call_id: ident,
});
export type CancelToolCallRequest = z.output<typeof CancelToolCallRequest>;

export const CloseThreadRequest = z.object({
  thread_id: ident,
});
export type CloseThreadRequest = z.output<typeof CloseThreadRequest>;

export const MigrateRequest = z.object({
  session_id: ident,
  /** `""` when the daemon has no destination mapped for this server */
  destination_url: url,
});
export type MigrateRequest = z.output<typeof MigrateRequest>;

export const UserChoiceResponse = z.object({
  id: ident,
  selected: usize,
});
export type UserChoiceResponse = z.output<typeof UserChoiceResponse>;

// ---- manifest ----

export const ToolDef = z.object({
  name: z.string(),
  description: z.string(),
  inputSchema: requiredValue,
  annotations: z.unknown().optional(),
  displayScript: z.string().nullish(),
});
export type ToolDef = z.output<typeof ToolDef>;

export const ToolsetManifest = z.object({
  name: z.string(),
  description: z.string().nullish(),
  endpoint: z.string(),
  tools: z.array(ToolDef),
  needsMigration: z.boolean().default(false),
});
export type ToolsetManifest = z.output<typeof ToolsetManifest>;

// ---- tool → runtime callbacks ----

/** `RapToolResultContent`, internally tagged; the key is exactly `mediaType` */
export const ToolResultContent = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({ type: z.literal("image"), data: z.string(), mediaType: z.string() }),
]);
export type ToolResultContent = z.output<typeof ToolResultContent>;

/** `DisplaySegment`, adjacently tagged `{type, content}` */
export const DisplaySegment = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), content: z.string() }),
  z.object({
    type: z.literal("diff"),
    content: z.object({ path: z.string(), patch: z.string() }),
  }),
  z.object({
    type: z.literal("image"),
    content: z.object({ data: z.string(), mediaType: z.string() }),
  }),
]);
export type DisplaySegment = z.output<typeof DisplaySegment>;

export const RapToolResult = z.object({
  type: z.literal("tool_result"),
  group_id: z.string(),
  id: z.string(),
  call_id: z.string().nullish(),
  text: z.string().nullish(),
  content: z.array(ToolResultContent).nullish(),
  display_as: z.array(DisplaySegment).nullish(),
  subscription: z.boolean().nullish(),
});
export type RapToolResult = z.output<typeof RapToolResult>;

export const RapSubscriptionEvent = z.object({
  type: z.literal("subscription_event"),
  group_id: z.string(),
  /** the subscribing call's id (not `id`) */
  tool_call_id: z.string(),
  text: z.string(),
  associative: z.boolean().default(false),
  final: z.boolean().nullish(),
});
export type RapSubscriptionEvent = z.output<typeof RapSubscriptionEvent>;

export const RapOAuth = z.object({
  type: z.literal("oauth"),
  group_id: z.string(),
  id: z.string(),
  call_id: z.string().nullish(),
  auth_url: z.string(),
});
export type RapOAuth = z.output<typeof RapOAuth>;

export const RapUserChoice = z.object({
  type: z.literal("user_choice"),
  group_id: z.string(),
  id: z.string(),
  call_id: z.string().nullish(),
  prompt: z.string(),
  choices: z.array(z.string()),
  default: usize.default(0),
  response_url: z.string(),
});
export type RapUserChoice = z.output<typeof RapUserChoice>;

export const RapViewUpdate = z.object({
  type: z.literal("view_update"),
  group_id: z.string(),
  view_type: z.string(),
  content: requiredValue,
});
export type RapViewUpdate = z.output<typeof RapViewUpdate>;

export const RapCallback = z.discriminatedUnion("type", [
  RapToolResult,
  RapSubscriptionEvent,
  RapOAuth,
  RapUserChoice,
  RapViewUpdate,
]);
export type RapCallback = z.output<typeof RapCallback>;

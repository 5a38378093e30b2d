// Infinity's persisted message and state types (`infinity-agent-core` message.rs, stores.rs,
// system/events.rs; reference §3.2), one zod schema each with its inferred type. The schemas
// round-trip the daemon's JSON: parse → JSON.stringify gives the same keys and values.
import { z } from "zod";
import {
  AssistantContent,
  DisplaySegment,
  ToolCall,
  ToolResult,
  UserContent,
  isTextContent,
  isToolCallContent,
  usize,
  type ToolResultContent,
} from "./rig.js";
import { headOf } from "../../core/text.js";

export * from "./rig.js";

/** serde `i64` */
const i64 = z.int();

// ---- history ----

/** One history entry, tagged `kind`. Optional display fields are omitted when None. */
export const InfinityMessage = z.discriminatedUnion("kind", [
  z.looseObject({ kind: z.literal("user"), content: UserContent }),
  z.looseObject({ kind: z.literal("assistant"), content: AssistantContent }),
  z.looseObject({
    kind: z.literal("tool_call"),
    call: ToolCall,
    display_as: z.string().nullish(),
  }),
  z.looseObject({
    kind: z.literal("tool_result"),
    result: ToolResult,
    display_segments: z.array(DisplaySegment).nullish(),
  }),
  z.looseObject({
    kind: z.literal("subscription_event"),
    result: ToolResult,
    /** the subscribing tool call */
    tool_call_id: z.string(),
    /** set for thread reports */
    child_thread_id: z.string().nullish(),
    /** the synthetic `receive_event__injected` call; absent in older histories */
    invocation: ToolCall.nullish(),
  }),
]);
export type InfinityMessage = z.output<typeof InfinityMessage>;
export type InfinityMessageKind = InfinityMessage["kind"];

// ---- input queue ----

export const OAuthRequired = z.looseObject({
  type: z.literal("oauth_required"),
  id: z.string(),
  call_id: z.string().nullish(),
  auth_url: z.string(),
});
export type OAuthRequired = z.output<typeof OAuthRequired>;

export const UserChoiceRequired = z.looseObject({
  type: z.literal("user_choice_required"),
  id: z.string(),
  call_id: z.string().nullish(),
  prompt: z.string(),
  choices: z.array(z.string()),
  default: usize,
  response_url: z.string(),
});
export type UserChoiceRequired = z.output<typeof UserChoiceRequired>;

/** untagged, tried in serde's order */
export const InputMessageContent = z.union([OAuthRequired, UserChoiceRequired, UserContent]);
export type InputMessageContent = z.output<typeof InputMessageContent>;

export const TaggedSyntheticKind = z.discriminatedUnion("type", [
  z.looseObject({
    type: z.literal("subscription_event"),
    tool_call_id: z.string(),
    associative: z.boolean().default(false),
    final: z.boolean().default(false),
  }),
  z.looseObject({
    type: z.literal("thread_report"),
    tool_call_id: z.string(),
    child_thread_id: z.string(),
  }),
  z.looseObject({ type: z.literal("parent_message"), tool_call_id: z.string() }),
  z.looseObject({ type: z.literal("compaction") }),
  z.looseObject({ type: z.literal("compaction_complete") }),
]);
export type TaggedSyntheticKind = z.output<typeof TaggedSyntheticKind>;

/** tagged kinds, or the legacy bare string = a subscription event for that tool call id */
export const SyntheticKind = z.union([TaggedSyntheticKind, z.string()]);
export type SyntheticKind = z.output<typeof SyntheticKind>;

/** `#[serde(default)]` fields come back as serde would write them (`null` / `false`). */
export const InputMessage = z.looseObject({
  content: InputMessageContent,
  group_id: z.string(),
  /** when present, replaces the root thread's metadata before processing */
  metadata: z.unknown().default(null),
  synthetic: SyntheticKind.nullable().default(null),
  display_as: z.array(DisplaySegment).nullable().default(null),
  subscription: z.boolean().default(false),
});
export type InputMessage = z.output<typeof InputMessage>;
/** what a caller may hand in: defaulted fields may be left out */
export type InputMessageInit = z.input<typeof InputMessage>;

// ---- persisted state ----

/** A choice a tool server asked the person (`system/events.rs`). */
export const UserChoice = z.object({
  id: z.string(),
  prompt: z.string(),
  choices: z.array(z.string()),
  default: usize,
  response_url: z.string(),
});
export type UserChoice = z.output<typeof UserChoice>;

/** One thread's place in the tree. Options may be missing on read (serde reads them as None). */
export const ThreadInfo = z.object({
  parent_thread_id: z.string().nullable().default(null),
  root_thread_id: z.string(),
  /** how many of the parent's messages the child inherits */
  spawn_message_order: i64.nullable().default(null),
  spawn_tool_call_id: z.string().nullable().default(null),
  closed: z.boolean(),
  is_subscription_event: z.boolean(),
  is_compaction: z.boolean().default(false),
});
export type ThreadInfo = z.output<typeof ThreadInfo>;

export const CompactionSummary = z.object({ summary: z.string(), up_to_order: i64 });
export type CompactionSummary = z.output<typeof CompactionSummary>;

/** One key's state file; the sets are arrays in no particular order. */
export const ThreadState = z.object({
  processed_message_ids: z.array(z.string()).default([]),
  processed_tool_call_ids: z.array(z.string()).default([]),
  metadata: z.unknown().default(null),
  subscriptions: z.array(z.string()).default([]),
  pending_user_choices: z.array(UserChoice).default([]),
});
export type ThreadState = z.output<typeof ThreadState>;

// ---- text for search ----

/** Longest tool-argument JSON kept in a message's text; arguments can embed whole files. */
export const TOOL_ARGS_TEXT_MAX = 1000;

/**
 * The searchable text of a history entry: user and assistant text, a tool call as
 * `name {args}` (arguments cut at TOOL_ARGS_TEXT_MAX), tool result and event text. Media,
 * reasoning and display-only fields contribute nothing.
 */
export function messageText(m: InfinityMessage): string {
  switch (m.kind) {
    case "user":
      return userContentText(m.content);
    case "assistant":
      if (isTextContent(m.content)) return m.content.text;
      if (isToolCallContent(m.content)) return toolCallText(m.content);
      return "";
    case "tool_call":
      return toolCallText(m.call);
    case "tool_result":
    case "subscription_event":
      return toolResultText(m.result);
  }
}

function userContentText(c: UserContent): string {
  switch (c.type) {
    case "text":
      return c.text;
    case "toolresult":
      return toolResultText(c);
    case "document":
      // Plain-text documents carry their text inline; other sources are binary or remote.
      return c.data.type === "string" && typeof c.data.value === "string" ? c.data.value : "";
    default:
      return "";
  }
}

function toolCallText(call: ToolCall): string {
  const args = JSON.stringify(call.function.arguments ?? null) ?? "null";
  const cut = args.length > TOOL_ARGS_TEXT_MAX ? `${headOf(args, TOOL_ARGS_TEXT_MAX)}…` : args;
  return `${call.function.name} ${cut}`;
}

function toolResultText(r: { content: ToolResultContent[] }): string {
  return r.content
    .flatMap((c) => (c.type === "text" ? [c.text] : []))
    .join("\n");
}

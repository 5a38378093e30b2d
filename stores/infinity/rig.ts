// rig-core 0.31 message content as the Infinity daemon serializes it (reference §3.2). Every object
// is loose: flattened `additional_params`, provider extras and fields of newer rig versions pass
// through untouched, so parse → JSON.stringify gives back the same keys and values. Shape keys are
// declared in serde's field order so the round trip also keeps the key order.
import { z } from "zod";

/** serde `usize` */
export const usize = z.int().nonnegative();

/** `DocumentSourceKind`, adjacently tagged `{type, value}`: url | base64 | raw | string | unknown */
export const DocumentSourceKind = z.looseObject({ type: z.string(), value: z.unknown().optional() });
export type DocumentSourceKind = z.output<typeof DocumentSourceKind>;

const textShape = { text: z.string() };
const imageShape = {
  data: DocumentSourceKind,
  media_type: z.string().nullish(),
  detail: z.string().nullish(),
};
const mediaShape = { data: DocumentSourceKind, media_type: z.string().nullish() };

export const Text = z.looseObject(textShape);
export type Text = z.output<typeof Text>;

export const Image = z.looseObject(imageShape);
export type Image = z.output<typeof Image>;

/** `ToolResultContent`, tagged `type`: text | image */
export const ToolResultContent = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text"), ...textShape }),
  z.looseObject({ type: z.literal("image"), ...imageShape }),
]);
export type ToolResultContent = z.output<typeof ToolResultContent>;

const toolResultShape = {
  id: z.string(),
  /** skipped when None */
  call_id: z.string().nullish(),
  /** `OneOrMany`, always serialized as an array */
  content: z.array(ToolResultContent),
};

export const ToolResult = z.looseObject(toolResultShape);
export type ToolResult = z.output<typeof ToolResult>;

export const ToolFunction = z.looseObject({ name: z.string(), arguments: z.unknown() });
export type ToolFunction = z.output<typeof ToolFunction>;

/** `call_id`, `signature` and `additional_params` are always serialized, as `null` when None */
export const ToolCall = z.looseObject({
  id: z.string(),
  call_id: z.string().nullish(),
  function: ToolFunction,
  signature: z.string().nullish(),
  additional_params: z.unknown().optional(),
});
export type ToolCall = z.output<typeof ToolCall>;

/**
 * `Reasoning`: opaque. rig 0.31 writes `{id, content: [ReasoningContent]}`; older rig wrote
 * `{id, reasoning: [String], signature?}`. Either is kept as is.
 */
export const Reasoning = z
  .looseObject({
    id: z.string().nullish(),
    content: z.array(z.unknown()).optional(),
    reasoning: z.array(z.unknown()).optional(),
  })
  .refine((r) => r.content !== undefined || r.reasoning !== undefined, {
    message: "reasoning needs `content` or `reasoning`",
  });
export type Reasoning = z.output<typeof Reasoning>;

/** `UserContent`, tagged `type` (lowercase) */
export const UserContent = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text"), ...textShape }),
  z.looseObject({ type: z.literal("toolresult"), ...toolResultShape }),
  z.looseObject({ type: z.literal("image"), ...imageShape }),
  z.looseObject({ type: z.literal("audio"), ...mediaShape }),
  z.looseObject({ type: z.literal("video"), ...mediaShape }),
  z.looseObject({ type: z.literal("document"), ...mediaShape }),
]);
export type UserContent = z.output<typeof UserContent>;

/** `AssistantContent`, untagged: the first shape that fits wins, in serde's variant order */
export const AssistantContent = z.union([Text, ToolCall, Reasoning, Image]);
export type AssistantContent = z.output<typeof AssistantContent>;

/** rig `Message`, tagged `role`; only the daemon's older thread files store these */
export const RigMessage = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("user"), content: z.array(UserContent) }),
  z.looseObject({
    role: z.literal("assistant"),
    id: z.string().nullish(),
    content: z.array(AssistantContent),
  }),
]);
export type RigMessage = z.output<typeof RigMessage>;

/**
 * rap-protocol `DisplaySegment` (`{type, content}`: text | diff | image) as stored in history.
 * Display-only, so it is carried through without interpreting it.
 */
export const DisplaySegment = z.looseObject({ type: z.string(), content: z.unknown().optional() });
export type DisplaySegment = z.output<typeof DisplaySegment>;

export function isToolCallContent(c: AssistantContent): c is ToolCall {
  return typeof (c as { function?: unknown }).function === "object" && "id" in c;
}

export function isTextContent(c: AssistantContent): c is Text {
  return typeof (c as { text?: unknown }).text === "string";
}

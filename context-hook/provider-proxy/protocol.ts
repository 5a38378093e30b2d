// The model provider protocol (reference §5, `infinity-provider-protocol/src/remote.rs`): one
// newline-terminated JSON request per Unix-socket connection, then response lines. Serde's
// external tagging: unit variants are bare strings, the others single-key objects. Schemas only;
// the proxy relays bytes and reads these shapes, it never re-encodes what it does not change.
import { z } from "zod";

// ---- request ----

/**
 * `WireCompletionRequest`. Only `preamble` and `chat_history` are read; everything else is carried
 * through untouched (the proxy splices the preamble into the original text).
 */
export const WireCompletionRequest = z.looseObject({
  model: z.string().nullish(),
  preamble: z.string().nullish(),
  /** rig `Message`s; read lazily (stores/infinity/rig.ts RigMessage), a long history is not validated whole */
  chat_history: z.array(z.unknown()),
  documents: z.array(z.unknown()).optional(),
  tools: z.array(z.unknown()).optional(),
  temperature: z.number().nullish(),
  max_tokens: z.number().nullish(),
  tool_choice: z.unknown().optional(),
  additional_params: z.unknown().optional(),
  output_schema: z.unknown().optional(),
});
export type WireCompletionRequest = z.output<typeof WireCompletionRequest>;

export const InvokeModelRequest = z.object({
  InvokeModel: z.looseObject({ model_id: z.string(), request: WireCompletionRequest }),
});
export type InvokeModelRequest = z.output<typeof InvokeModelRequest>;

export const ProviderRequest = z.union([z.literal("ListModels"), InvokeModelRequest]);
export type ProviderRequest = z.output<typeof ProviderRequest>;

/** where the preamble sits inside an InvokeModel request line */
export const PREAMBLE_PATH = ["InvokeModel", "request", "preamble"] as const;

// ---- responses ----

export const ModelEntry = z.looseObject({
  model_id: z.string(),
  display_name: z.string(),
  context_window: z.number(),
  max_output_tokens: z.number().nullable(),
  supports_image_input: z.boolean().default(false),
});
export type ModelEntry = z.output<typeof ModelEntry>;

export const Usage = z.looseObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  total_tokens: z.number(),
  cached_input_tokens: z.number().optional(),
});
export type Usage = z.output<typeof Usage>;

export const WireToolCall = z.looseObject({
  id: z.string(),
  internal_call_id: z.string().nullish(),
  call_id: z.string().nullish(),
  name: z.string(),
  arguments: z.unknown(),
  signature: z.string().nullish(),
  additional_params: z.unknown().optional(),
});
export type WireToolCall = z.output<typeof WireToolCall>;

/** `WireStreamItem`: one key naming the variant */
export const WireStreamItem = z.union([
  z.object({ Message: z.string() }),
  z.object({ ToolCall: WireToolCall }),
  z.object({ ToolCallDelta: z.looseObject({ id: z.string() }) }),
  z.object({ Reasoning: z.looseObject({}) }),
  z.object({ ReasoningDelta: z.looseObject({}) }),
  z.object({ Final: z.looseObject({ usage: Usage.nullable() }) }),
  /** a mid-stream error; the stream goes on */
  z.object({ Error: z.string() }),
]);
export type WireStreamItem = z.output<typeof WireStreamItem>;

export const ProviderResponse = z.union([
  z.literal("InvokeStarted"),
  z.literal("StreamEnd"),
  z.object({ Models: z.array(ModelEntry) }),
  z.object({ Chunk: WireStreamItem }),
  /** in place of Models or InvokeStarted */
  z.object({ Error: z.string() }),
]);
export type ProviderResponse = z.output<typeof ProviderResponse>;

export type ResponseKind = "models" | "started" | "chunk" | "end" | "error" | "unknown";

/**
 * The kind of one response line. Serde writes compact JSON, so the prefix decides without
 * parsing (chunk lines can be megabytes of text); anything else is parsed.
 */
export function responseKind(line: string): ResponseKind {
  if (line.startsWith('{"Chunk":')) return "chunk";
  if (line === '"StreamEnd"') return "end";
  if (line === '"InvokeStarted"') return "started";
  if (line.startsWith('{"Models":')) return "models";
  if (line.startsWith('{"Error":')) return "error";
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return "unknown";
  }
  if (v === "StreamEnd") return "end";
  if (v === "InvokeStarted") return "started";
  if (typeof v !== "object" || v === null) return "unknown";
  if ("Chunk" in v) return "chunk";
  if ("Models" in v) return "models";
  if ("Error" in v) return "error";
  return "unknown";
}

/** `{"Error":"…"}` in place of a response: what the proxy answers when it cannot relay */
export function errorLine(message: string): string {
  return `${JSON.stringify({ Error: message })}\n`;
}

/** `{"Chunk":{"Error":"…"}}`: a failure after InvokeStarted */
export function chunkErrorLine(message: string): string {
  return `${JSON.stringify({ Chunk: { Error: message } })}\n`;
}

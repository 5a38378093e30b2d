// Small builders for history entries in the daemon's exact JSON shapes.
import type { InfinityMessage } from "../../stores/infinity/messages.js";
import { messageText } from "../../stores/infinity/messages.js";

export function user(text: string): InfinityMessage {
  return { kind: "user", content: { type: "text", text } };
}

export function assistant(text: string): InfinityMessage {
  return { kind: "assistant", content: { text } };
}

export function toolCall(id: string, name: string, args: unknown): InfinityMessage {
  return {
    kind: "tool_call",
    call: { id, call_id: null, function: { name, arguments: args }, signature: null, additional_params: null },
  };
}

export function toolResult(id: string, text: string): InfinityMessage {
  return { kind: "tool_result", result: { id, content: [{ type: "text", text }] } };
}

/** `[message, id]` pairs whose text and id are both `prefix + index` */
export function numbered(prefix: string, n: number, from = 0): [InfinityMessage, string][] {
  return Array.from({ length: n }, (_, i) => [user(`${prefix}${from + i}`), `${prefix}${from + i}`]);
}

/** the text of each message, for compact assertions */
export function texts(history: InfinityMessage[]): string[] {
  return history.map(messageText);
}

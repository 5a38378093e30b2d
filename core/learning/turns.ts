// Experience normalised to one shape before episodes are cut: turns in the runtime's own order,
// each with the id of the message it came from (provenance). Two readers: the conversation
// history (most faithful: user texts, tool arguments, message ids) and the trace events the
// provider proxy and the gRPC hook record (excerpts and argument digests only, no user text).
import type { InfinityMessage, StoredTraceEvent } from "../../stores/traits.js";

export interface Turn {
  /** runtime order; for trace events, history position × TRACE_ORD_SCALE + item index */
  ord: number;
  messageId: string;
  role: "user" | "assistant" | "tool_call" | "tool_result";
  text: string;
  tool?: string;
  callId?: string;
  args?: unknown;
  /** a digest computed upstream (the proxy keeps digests, not arguments) */
  argsDigest?: string;
  isError?: boolean;
  /** observation time when the source has one (trace events) */
  at?: number;
  /** what it said was forgotten (withoutForgotten): an answer still ended its task */
  forgotten?: true;
}

/** trace events name positions in a request's history; items inside one position get sub-orders */
export const TRACE_ORD_SCALE = 64;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function resultText(content: readonly unknown[]): string {
  return content
    .filter(isObj)
    .map((p) => (typeof p.text === "string" ? p.text : p.type === "image" ? "[image]" : ""))
    .filter((t) => t.length > 0)
    .join("\n");
}

/** One history message as turns (a rig message may hold several items). */
export function turnsOfMessage(m: InfinityMessage, ord: number, messageId: string): Turn[] {
  const base = { ord, messageId };
  switch (m.kind) {
    case "user": {
      const c = m.content as Obj;
      if (c.type === "text" && typeof c.text === "string") return [{ ...base, role: "user", text: c.text }];
      if (c.type === "toolresult" && Array.isArray(c.content)) {
        return [{ ...base, role: "tool_result", text: resultText(c.content), callId: String(c.id ?? "") }];
      }
      return [];
    }
    case "assistant": {
      const c = m.content as Obj;
      if (isObj(c.function) && typeof c.function.name === "string") {
        return [{ ...base, role: "tool_call", text: "", tool: c.function.name, callId: String(c.id ?? ""), args: c.function.arguments }];
      }
      if (typeof c.text === "string") return [{ ...base, role: "assistant", text: c.text }];
      return [];
    }
    case "tool_call":
      return [{ ...base, role: "tool_call", text: "", tool: m.call.function.name, callId: m.call.id, args: m.call.function.arguments }];
    case "tool_result":
      return [{ ...base, role: "tool_result", text: resultText(m.result.content), callId: m.result.id }];
    default:
      // subscription events are asynchronous reports, not a step the model took in this task
      return [];
  }
}

/** `[message, id, its position in the thread]`: positions may skip messages left out (unknown kinds) */
export function turnsOfConversation(messages: readonly (readonly [InfinityMessage, string, number])[]): Turn[] {
  return messages.flatMap(([m, id, ord]) => turnsOfMessage(m, ord, id));
}

/**
 * Turns with what forgotten messages said left out: their texts empty and their arguments gone.
 * They keep their places, so the episodes are cut as before, and nothing is learned from them.
 */
export function withoutForgotten(turns: Turn[], forgotten: ReadonlySet<string>): Turn[] {
  if (forgotten.size === 0) return turns;
  return turns.map((t) => {
    if (!forgotten.has(t.messageId)) return t;
    const { args: _args, argsDigest: _digest, ...rest } = t;
    return { ...rest, text: "", forgotten: true, ...(t.role === "tool_call" ? { args: null } : {}) };
  });
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/**
 * Turns from trace events of one thread. A provider-proxy `model_call` is one request: the tool
 * results it carries (or, when none, the user message that opened a task) and the response's
 * tool calls or final text. A gRPC `turn` is one whole turn of the runtime.
 */
export function turnsOfTraceEvents(events: readonly StoredTraceEvent[]): Turn[] {
  const out: Turn[] = [];
  const calls = [...events].filter((e) => e.kind === "model_call" || e.kind === "turn");
  const pos = (e: StoredTraceEvent) => Number(e.body.history_len ?? e.body.historyLength ?? 0);
  calls.sort((a, b) => pos(a) - pos(b) || a.id - b.id);
  for (const e of calls) {
    const b = e.body;
    const h = pos(e);
    const mid = `trace:${e.id}`;
    let sub = 0;
    const at = (n: number) => h * TRACE_ORD_SCALE + n;
    if (e.kind === "model_call") {
      const results = arr(b.tool_results);
      if (results.length === 0) out.push({ ord: at(sub++), messageId: mid, role: "user", text: "", at: e.at });
      for (const r of results) out.push({ ord: at(sub++), messageId: mid, role: "tool_result", text: str(r.excerpt), callId: str(r.id), at: e.at });
      const toolCalls = arr(b.tool_calls);
      const final = str(b.final_text);
      // the response comes after the request's items, in the upper half of the same position
      let rsub = 0;
      const rat = (n: number) => h * TRACE_ORD_SCALE + TRACE_ORD_SCALE / 2 + n;
      if (final.length > 0) out.push({ ord: rat(rsub++), messageId: mid, role: "assistant", text: final, at: e.at });
      for (const c of toolCalls) {
        out.push({ ord: rat(rsub++), messageId: mid, role: "tool_call", text: "", tool: str(c.name), callId: str(c.id), argsDigest: str(c.args_digest), at: e.at });
      }
      if (Array.isArray(b.stream_errors) && b.stream_errors.length > 0 && toolCalls.length === 0 && final.length === 0) {
        out.push({ ord: rat(rsub++), messageId: mid, role: "assistant", text: "", isError: true, at: e.at });
      }
    } else {
      out.push({ ord: at(sub++), messageId: mid, role: "user", text: "", at: e.at });
      const results = new Map(arr(b.toolResults).map((r) => [str(r.id), str(r.excerpt)]));
      for (const c of arr(b.toolCalls)) {
        const id = str(c.id);
        out.push({ ord: at(sub++), messageId: mid, role: "tool_call", text: "", tool: str(c.name), callId: id, argsDigest: str(c.argsDigest), at: e.at });
        if (results.has(id)) out.push({ ord: at(sub++), messageId: mid, role: "tool_result", text: results.get(id)!, callId: id, at: e.at });
      }
      const final = str(b.finalText);
      if (final.length > 0) out.push({ ord: at(sub++), messageId: mid, role: "assistant", text: final, at: e.at });
    }
  }
  return out;
}

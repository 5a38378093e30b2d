// What the mock runtime reports while it runs: the core's AgentEvents per thread (reference
// §3.1, `system/events.rs`) plus harness-level records of every HTTP exchange with tool servers,
// server boots and stops, driver lifecycle and router drops. Tests assert on them; the demo
// prints them as a transcript.
import type { UserChoice } from "../../stores/infinity/messages.js";
import type { DisplaySegment } from "../../toolsets/rap/wire.js";
import type { ServerEvent } from "./command-servers.js";
import type { Usage } from "./model.js";

/** `AgentEvent`, the core's observer events. */
export type AgentEvent =
  | { type: "UserInput"; text: string }
  | { type: "ToolResult"; segments: DisplaySegment[] }
  | { type: "SubscriptionEvent"; name: string; text: string }
  | { type: "OAuthRequired"; auth_url: string }
  | { type: "CompactionApplied" }
  | { type: "CompletionStarted" }
  | { type: "TextChunk"; text: string }
  | { type: "ThinkingStarted" }
  | { type: "ThinkingChunk"; text: string }
  | { type: "ThinkingEnded" }
  | { type: "ToolCall"; name: string; args: unknown; display_as: string | null }
  | { type: "CompletionFinished"; usage: Usage | null }
  | { type: "UserChoiceRequired"; choice: UserChoice }
  | { type: "UserChoiceDismissed"; choice_id: string }
  | { type: "Info"; text: string };

export type HarnessEvent =
  | { type: "agent"; threadId: string; event: AgentEvent }
  /** an invocation POST: the exact body, and the status (null on transport failure) */
  | { type: "invocation"; threadId: string; operation: string; toolCallId: string; endpoint: string; body: string; status: number | null; error?: string }
  /** a `/cancel_tool_call` or `/close_thread` notification */
  | { type: "notify"; path: "/cancel_tool_call" | "/close_thread"; url: string; body: string; status: number | null; error?: string }
  /** the answer to a user choice, POSTed to its response_url */
  | { type: "user_choice_answer"; threadId: string; url: string; body: string; status: number | null; error?: string }
  | { type: "view_update"; threadId: string; viewType: string; content: unknown }
  | { type: "lifecycle"; threadId: string; state: "live" | "idle" }
  | { type: "input_dropped"; threadId: string; dedupId: string; reason: "unknown_thread" | "stopped_thread" }
  | { type: "session_idle"; sessionId: string; serversStopped: boolean }
  /** the daemon's Info lines to a session's clients (config source, boot warnings, tool count) */
  | { type: "session_info"; sessionId: string; text: string }
  | ServerEvent;

/** rap-protocol `build_display_segments`: the tool's segments, then the raw text. */
export function buildDisplaySegments(displayAs: readonly DisplaySegment[] | null | undefined, text: string): DisplaySegment[] {
  return [...(displayAs ?? []), { type: "text", content: text }];
}

function short(s: string, max = 240): string {
  const one = s.replace(/\n/g, "⏎");
  return one.length > max ? `${one.slice(0, max)}…` : one;
}

export interface TranscriptOptions {
  /** label threads (default: the first 8 characters of the id) */
  label?: (threadId: string) => string;
  /** include harness records (invocations, notifications, boots); default true */
  wire?: boolean;
}

/**
 * A readable transcript: one line per user input, assistant text (chunks of one completion
 * joined), tool call, tool result, event, choice and notable runtime record.
 */
export function formatTranscript(events: readonly HarnessEvent[], opts: TranscriptOptions = {}): string {
  const label = opts.label ?? ((id: string) => id.slice(0, 8));
  const wire = opts.wire ?? true;
  const lines: string[] = [];
  const text = new Map<string, string>();
  const flush = (threadId: string) => {
    const t = text.get(threadId);
    if (t) lines.push(`[${label(threadId)}] assistant: ${short(t)}`);
    text.delete(threadId);
  };
  for (const e of events) {
    if (e.type === "agent") {
      const who = `[${label(e.threadId)}]`;
      const ev = e.event;
      switch (ev.type) {
        case "TextChunk":
          text.set(e.threadId, (text.get(e.threadId) ?? "") + ev.text);
          break;
        case "CompletionFinished":
          flush(e.threadId);
          break;
        case "UserInput":
          lines.push(`${who} user: ${short(ev.text)}`);
          break;
        case "ToolCall":
          flush(e.threadId);
          lines.push(`${who} tool call ${ev.name} ${short(JSON.stringify(ev.args ?? null))}`);
          break;
        case "ToolResult":
          lines.push(`${who} tool result: ${short(ev.segments.map((s) => (s.type === "text" ? s.content : `[${s.type}]`)).join(" | "))}`);
          break;
        case "SubscriptionEvent":
          lines.push(`${who} event ${ev.name}: ${short(ev.text)}`);
          break;
        case "UserChoiceRequired":
          lines.push(`${who} choice ${ev.choice.id}: ${ev.choice.prompt} [${ev.choice.choices.join(" / ")}] (default ${ev.choice.default})`);
          break;
        case "UserChoiceDismissed":
          lines.push(`${who} choice ${ev.choice_id} dismissed`);
          break;
        case "OAuthRequired":
          lines.push(`${who} oauth required: ${ev.auth_url}`);
          break;
        case "CompactionApplied":
          lines.push(`${who} compaction applied`);
          break;
        case "Info":
          lines.push(`${who} info: ${short(ev.text)}`);
          break;
        default:
          break;
      }
    } else if (wire) {
      switch (e.type) {
        case "invocation":
          lines.push(`    → POST ${e.endpoint} ${e.operation} (${e.status ?? e.error})`);
          break;
        case "notify":
          lines.push(`    → POST ${e.url} ${e.body} (${e.status ?? e.error})`);
          break;
        case "user_choice_answer":
          lines.push(`    → POST ${e.url} ${e.body} (${e.status ?? e.error})`);
          break;
        case "server_booted":
          lines.push(`    ⚙ server${e.configId ? ` ${e.configId}` : ""} up at ${e.baseUrl}`);
          break;
        case "server_stopped":
          lines.push(`    ⚙ server${e.configId ? ` ${e.configId}` : ""} at ${e.baseUrl} stopped${e.cleanExit ? "" : " (not cleanly)"}`);
          break;
        case "server_boot_failed":
          lines.push(`    ⚙ server${e.configId ? ` ${e.configId}` : ""} failed: ${short(e.error)}`);
          break;
        case "view_update":
          lines.push(`    ◫ view ${e.viewType} of ${label(e.threadId)}: ${short(JSON.stringify(e.content))}`);
          break;
        case "session_info":
          lines.push(`    ⓘ ${e.text}`);
          break;
        case "input_dropped":
          lines.push(`    ✗ input ${e.dedupId} for ${label(e.threadId)} dropped (${e.reason})`);
          break;
        default:
          break;
      }
    }
  }
  for (const id of [...text.keys()]) flush(id);
  return lines.join("\n");
}

// Tool and toolset definitions: a tool is a name, a zod input schema and a handler. The
// manifest's JSON Schema is generated from that schema, and every call is validated against it
// and answered with text, never an exception (errors become `Error: …` results for the model).
import { z } from "zod";
import type { Logger } from "pino";
import { CoreError, isCoreError } from "../../core/errors.js";
import { badCharacterArgumentText, invalidArgumentsText } from "./arg-errors.js";
import { safeParseWire } from "./safe-parse.js";
import type { DisplaySegment, RapInvocation, ToolDef, ToolsetManifest } from "./wire.js";

export interface ToolOutput {
  text: string;
  display_as?: DisplaySegment[] | undefined;
}

export interface ToolContext {
  invocation: RapInvocation;
  /** aborted on /cancel_tool_call, /close_thread of this thread, or server shutdown */
  signal: AbortSignal;
  /**
   * Ask the person through RAP `user_choice`; resolves with the chosen index. Rejects with
   * CoreError("cancelled") when the call is aborted while waiting.
   */
  askUser(prompt: string, choices: string[], defaultIndex?: number): Promise<number>;
  log: Logger;
}

/** The input schema must accept an object (the model's arguments). */
export type ToolInput = z.ZodType<object>;

export interface Tool<S extends ToolInput = ToolInput> {
  name: string;
  description: string;
  input: S;
  /** Rhai expression over `args` the runtime shows instead of the raw call */
  displayScript?: string;
  annotations?: Record<string, unknown>;
  // Method syntax keeps tools with different schemas assignable to Tool[].
  handler(args: z.output<S>, ctx: ToolContext): Promise<ToolOutput>;
}

export interface Toolset {
  name: string;
  description?: string;
  needsMigration?: boolean;
  tools: Tool[];
  /** a string answers the call with that text and skips the handler (per-thread disabling) */
  gate?(invocation: RapInvocation): Promise<string | null>;
}

export function defineTool<S extends ToolInput>(tool: Tool<S>): Tool<S> {
  return tool;
}

/** Names the runtime's built-ins shadow or reject (reference §1.3). */
const RESERVED_NAMES = new Set([
  "spawn_thread",
  "report_to_parent",
  "close_thread",
  "send_message_to_child",
  "cancel_subscription",
  "sleep_until_event_or_input",
  "sleep",
  "sleep_until",
  "set_title",
  "receive_event__injected",
  "__harness_begin_compaction__",
]);

/** Reject toolsets the runtime would silently mangle (it validates nothing itself). */
export function checkToolset(ts: Toolset): void {
  if (ts.name.length === 0) throw new CoreError("invalid_argument", "a toolset needs a name");
  const seen = new Set<string>();
  for (const t of ts.tools) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(t.name)) {
      throw new CoreError("invalid_argument", `tool name "${t.name}" must be 1-64 letters, digits, _ or -`);
    }
    if (RESERVED_NAMES.has(t.name)) {
      throw new CoreError("invalid_argument", `tool name "${t.name}" is reserved by the Infinity runtime`);
    }
    if (seen.has(t.name)) throw new CoreError("invalid_argument", `duplicate tool name "${t.name}" in toolset "${ts.name}"`);
    seen.add(t.name);
  }
}

/** JSON Schema of what the model may send (input side: fields with defaults are optional). */
export function inputJsonSchema(schema: ToolInput): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return rest;
}

export function toolDefOf(t: Tool): ToolDef {
  const def: ToolDef = { name: t.name, description: t.description, inputSchema: inputJsonSchema(t.input) };
  if (t.annotations !== undefined) def.annotations = t.annotations;
  if (t.displayScript !== undefined) def.displayScript = t.displayScript;
  return def;
}

export function toolsetManifest(ts: Toolset, endpoint: string): ToolsetManifest {
  const m: ToolsetManifest = {
    name: ts.name,
    endpoint,
    tools: ts.tools.map(toolDefOf),
    needsMigration: ts.needsMigration ?? false,
  };
  if (ts.description !== undefined) m.description = ts.description;
  return m;
}

function errorText(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg.startsWith("Error: ") ? msg.slice("Error: ".length) : msg;
}

/**
 * Run one invocation against a toolset: gate, tool lookup, argument validation, handler.
 * Every failure becomes an `Error: …` text the model can act on, except one `rethrow` picks
 * (the caller runs the call again instead).
 */
export async function dispatch(ts: Toolset, ctx: ToolContext, opts: { rethrow?: (e: unknown) => boolean } = {}): Promise<ToolOutput> {
  const inv = ctx.invocation;
  const tool = ts.tools.find((t) => t.name === inv.operation);
  const name = tool?.name ?? inv.operation;
  try {
    const gated = ts.gate ? await ts.gate(inv) : null;
    if (gated !== null) return { text: gated };
    if (!tool) {
      const available = ts.tools.map((t) => t.name).join(", ") || "none";
      return { text: `Error: unknown tool "${inv.operation}" on toolset "${ts.name}"; available: ${available}` };
    }
    // The runtime sends `null` when the model gave no arguments.
    const raw = inv.arguments ?? {};
    const parsed = safeParseWire(tool.input, raw);
    if (!parsed.success) return { text: invalidArgumentsText(tool.name, tool.input, raw, parsed.error.issues) };
    const bad = badCharacterArgumentText(tool.name, raw);
    if (bad !== null) return { text: bad };
    const out = await tool.handler(parsed.data, ctx);
    if (typeof out?.text !== "string") throw new Error("the handler returned no text");
    return out;
  } catch (e) {
    if (opts.rethrow?.(e)) throw e;
    if (isCoreError(e)) return { text: `Error: ${errorText(e)}` };
    ctx.log.error({ err: e, tool: name }, "tool handler failed");
    return { text: `Error: ${name} failed: ${errorText(e)}` };
  }
}

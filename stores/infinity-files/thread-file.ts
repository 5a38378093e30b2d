// The daemon's per-thread files (`crates/infinity-daemon/src/memory_store.rs`): the current
// `ThreadSnapshot`, the older snapshot of bare rig `Message`s with a `display_as` sidecar, and the
// flat `ThreadMeta`. Older files are converted the way the daemon converts them on load.
import { createHash } from "node:crypto";
import { z } from "zod";
import { InfinityStoreError } from "../infinity/errors.js";
import {
  CompactionSummary,
  DisplaySegment,
  InfinityMessage,
  RigMessage,
  ThreadInfo,
  isToolCallContent,
  usize,
} from "../infinity/messages.js";

/** `{thread_id}.meta.json`: ThreadInfo and the daemon's ThreadExtras flattened into one object */
export const ThreadMeta = z.looseObject({
  ...ThreadInfo.shape,
  title: z.string().nullish(),
  children: z.array(z.string()).optional(),
  total_tokens_used: usize.optional(),
  /** RFC 3339 */
  last_updated: z.string().optional(),
  selected_model: z.looseObject({ provider_id: z.string(), model_id: z.string() }).optional(),
});
export type ThreadMeta = z.output<typeof ThreadMeta>;

/** `{thread_id}.json` as the daemon writes it now: `[message, message id]` pairs */
export const ThreadSnapshot = z.looseObject({
  messages: z.array(z.tuple([InfinityMessage, z.string()])),
  compaction_summaries: z.array(CompactionSummary).default([]),
});
export type ThreadSnapshot = z.output<typeof ThreadSnapshot>;

/** the older format; entries without an id get `legacy-{index}` */
export const LegacyThreadSnapshot = z.looseObject({
  messages: z.array(z.union([z.tuple([RigMessage, z.string()]), RigMessage])).default([]),
  /** tool result id → display text (oldest) or display segments */
  display_as: z.record(z.string(), z.unknown()).default({}),
  compaction_summaries: z.array(CompactionSummary).default([]),
});
export type LegacyThreadSnapshot = z.output<typeof LegacyThreadSnapshot>;

/** a history entry of a kind this version does not know (a newer daemon's): where it is and its kind */
export interface UnknownEntry {
  index: number;
  kind: string;
}

export interface ThreadFile {
  format: "current" | "legacy";
  /** every entry in file order; an entry listed in `unknown` is null in its place, so positions stay store indices */
  messages: [InfinityMessage | null, string][];
  unknown: UnknownEntry[];
  compactionSummaries: CompactionSummary[];
  /** `thread_info` that older daemons kept inside `{id}.json`; used when `.meta.json` is absent */
  embeddedMeta: ThreadMeta | null;
}

/** Current format first, as the daemon tries it; the older one only when that fails. */
export function parseThreadFile(raw: unknown): ThreadFile {
  const embeddedMeta = embedded(raw);
  const current = ThreadSnapshot.safeParse(raw);
  if (current.success) {
    return {
      format: "current",
      messages: current.data.messages,
      unknown: [],
      compactionSummaries: current.data.compaction_summaries,
      embeddedMeta,
    };
  }
  const newer = withUnknownKinds(raw, embeddedMeta);
  if (newer) return newer;
  const legacy = LegacyThreadSnapshot.safeParse(raw);
  if (!legacy.success) {
    throw new InfinityStoreError(
      "corrupt",
      `not a thread snapshot in either format: ${current.error.issues[0]?.message ?? "invalid"} at ${current.error.issues[0]?.path.join(".") ?? ""}`,
    );
  }
  const display = legacyDisplayMap(legacy.data.display_as);
  return {
    format: "legacy",
    messages: legacy.data.messages.map((entry, i) => {
      const [msg, id] = Array.isArray(entry) ? entry : [entry, `legacy-${i}`];
      return [fromRigMessage(msg, display, i), id];
    }),
    unknown: [],
    compactionSummaries: legacy.data.compaction_summaries,
    embeddedMeta,
  };
}

const KNOWN_KINDS: ReadonlySet<string> = new Set(InfinityMessage.options.map((o) => o.shape.kind.value));

/** the current format with every entry `[{kind, …}, id]`, but loosely: each message is checked on its own */
const LooseSnapshot = z.looseObject({
  messages: z.array(z.tuple([z.looseObject({ kind: z.string() }), z.string()])),
  compaction_summaries: z.array(CompactionSummary).default([]),
});

/**
 * A current-format file holding messages this version does not read (a newer daemon wrote them:
 * a new kind, or a known one with new content): those stay in place as null, the rest is read.
 * Null when the file is not that (damaged, or the legacy format).
 */
function withUnknownKinds(raw: unknown, embeddedMeta: ThreadMeta | null): ThreadFile | null {
  const loose = LooseSnapshot.safeParse(raw);
  if (!loose.success) return null;
  const unknown: UnknownEntry[] = [];
  const messages: [InfinityMessage | null, string][] = [];
  for (const [i, [msg, id]] of loose.data.messages.entries()) {
    if (!KNOWN_KINDS.has(msg.kind)) {
      unknown.push({ index: i, kind: msg.kind });
      messages.push([null, id]);
      continue;
    }
    const parsed = InfinityMessage.safeParse(msg);
    if (!parsed.success) {
      // a kind we know in a form we do not (a content variant rig added since): as unknown
      unknown.push({ index: i, kind: `${msg.kind} (in a form this version does not read)` });
      messages.push([null, id]);
      continue;
    }
    messages.push([parsed.data, id]);
  }
  return unknown.length === 0 ? null : { format: "current", messages, unknown, compactionSummaries: loose.data.compaction_summaries, embeddedMeta };
}

let format: string | null = null;

/**
 * The message forms this version reads, as a short hash of their schema: a version that learns a
 * kind or a form (and only such a version) gets another value, so what an older one left out as
 * unknown is read again after the upgrade.
 */
export function messageFormat(): string {
  format ??= createHash("sha256")
    .update(JSON.stringify(z.toJSONSchema(InfinityMessage, { unrepresentable: "any", io: "input" })))
    .digest("hex")
    .slice(0, 16);
  return format;
}

export function parseThreadMeta(raw: unknown): ThreadMeta {
  return ThreadMeta.parse(raw);
}

export function threadInfoOf(meta: ThreadMeta): ThreadInfo {
  return {
    parent_thread_id: meta.parent_thread_id,
    root_thread_id: meta.root_thread_id,
    spawn_message_order: meta.spawn_message_order,
    spawn_tool_call_id: meta.spawn_tool_call_id,
    closed: meta.closed,
    is_subscription_event: meta.is_subscription_event,
    is_compaction: meta.is_compaction,
  };
}

/**
 * `InfinityMessage::from_rig_message`: a rig message becomes one history entry built from its
 * FIRST content item (tool results and tool calls get their own kinds). Splitting multi-item
 * messages instead would shift every store index that spawn cutoffs and summaries count in.
 */
export function fromRigMessage(
  msg: RigMessage,
  display: ReadonlyMap<string, DisplaySegment[]>,
  index: number,
): InfinityMessage {
  if (msg.role === "user") {
    const first = msg.content[0];
    if (!first) throw new InfinityStoreError("corrupt", `legacy message ${index} has no content`);
    if (first.type !== "toolresult") return { kind: "user", content: first };
    const { type: _type, ...result } = first;
    const segments = display.get(result.id);
    return segments
      ? { kind: "tool_result", result, display_segments: segments }
      : { kind: "tool_result", result };
  }
  const first = msg.content[0];
  if (!first) throw new InfinityStoreError("corrupt", `legacy message ${index} has no content`);
  return isToolCallContent(first) ? { kind: "tool_call", call: first } : { kind: "assistant", content: first };
}

/** A bare string is one text segment; anything but a segment list is skipped, as in the daemon. */
function legacyDisplayMap(raw: Record<string, unknown>): Map<string, DisplaySegment[]> {
  const out = new Map<string, DisplaySegment[]>();
  for (const [id, v] of Object.entries(raw)) {
    if (typeof v === "string") out.set(id, [{ type: "text", content: v }]);
    else if (Array.isArray(v)) {
      const segs = z.array(DisplaySegment).safeParse(v);
      if (!segs.success) throw new InfinityStoreError("corrupt", `display_as for ${id} is not a segment list`);
      out.set(id, segs.data);
    }
  }
  return out;
}

function embedded(raw: unknown): ThreadMeta | null {
  if (typeof raw !== "object" || raw === null || !("thread_info" in raw)) return null;
  const meta = ThreadMeta.safeParse((raw as { thread_info: unknown }).thread_info);
  return meta.success ? meta.data : null;
}

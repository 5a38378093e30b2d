// JSON text of RAP messages exactly as Infinity's serde derives write it (reference §1.2): struct
// fields in declaration order with the tag first, skipped `Option`s left out, and the keys of
// free-form JSON values (`arguments`, `inputSchema`, `annotations`, view `content`) sorted at
// every level, because Infinity's serde_json does not preserve insertion order.
import type {
  DisplaySegment,
  RapCallback,
  RapInvocation,
  RapToolResult,
  ToolDef,
  ToolResultContent,
  ToolsetManifest,
} from "./wire.js";
import { wellFormed } from "../../core/text.js";

type Obj = Record<string, unknown>;

/** A `serde_json::Value` as serde_json writes it: object keys sorted recursively. */
export function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value === null || typeof value !== "object") return value;
  const out: Obj = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeysDeep((value as Obj)[key]);
  return out;
}

/** `skip_serializing_if = "Option::is_none"`: absent and null both mean None */
function putSome(obj: Obj, key: string, value: unknown): void {
  if (value !== undefined && value !== null) obj[key] = value;
}

/** a `Value` field: `null` when absent */
function value(v: unknown): unknown {
  return v === undefined ? null : sortKeysDeep(v);
}

function contentItem(c: ToolResultContent): Obj {
  return c.type === "text"
    ? { type: "text", text: c.text }
    : { type: "image", data: c.data, mediaType: c.mediaType };
}

function segment(s: DisplaySegment): Obj {
  switch (s.type) {
    case "text":
      return { type: "text", content: s.content };
    case "diff":
      return { type: "diff", content: { path: s.content.path, patch: s.content.patch } };
    case "image":
      return { type: "image", content: { data: s.content.data, mediaType: s.content.mediaType } };
  }
}

function toolResultObject(r: RapToolResult): Obj {
  const o: Obj = { type: "tool_result", group_id: r.group_id, id: r.id };
  putSome(o, "call_id", r.call_id);
  putSome(o, "text", r.text);
  putSome(o, "content", r.content?.map(contentItem));
  putSome(o, "display_as", r.display_as?.map(segment));
  putSome(o, "subscription", r.subscription);
  return o;
}

function callbackObject(cb: RapCallback): Obj {
  switch (cb.type) {
    case "tool_result":
      return toolResultObject(cb);
    case "subscription_event": {
      const o: Obj = {
        type: cb.type,
        group_id: cb.group_id,
        tool_call_id: cb.tool_call_id,
        text: cb.text,
        associative: cb.associative,
      };
      putSome(o, "final", cb.final);
      return o;
    }
    case "oauth": {
      const o: Obj = { type: cb.type, group_id: cb.group_id, id: cb.id };
      putSome(o, "call_id", cb.call_id);
      o.auth_url = cb.auth_url;
      return o;
    }
    case "user_choice": {
      const o: Obj = { type: cb.type, group_id: cb.group_id, id: cb.id };
      putSome(o, "call_id", cb.call_id);
      o.prompt = cb.prompt;
      o.choices = [...cb.choices];
      o.default = cb.default;
      o.response_url = cb.response_url;
      return o;
    }
    case "view_update":
      return {
        type: cb.type,
        group_id: cb.group_id,
        view_type: cb.view_type,
        content: value(cb.content),
      };
  }
}

/**
 * A callback body. Strings go out well-formed: serde_json refuses a lone surrogate's "\ud83d"
 * escape with a 400 the daemon does not retry, which would lose the result or the question.
 */
export function callbackJson(cb: RapCallback): string {
  return JSON.stringify(callbackObject(cb), (_key, v: unknown) => (typeof v === "string" ? wellFormed(v) : v));
}

function toolDefObject(t: ToolDef): Obj {
  const o: Obj = { name: t.name, description: t.description, inputSchema: value(t.inputSchema) };
  putSome(o, "annotations", t.annotations === undefined ? undefined : sortKeysDeep(t.annotations));
  putSome(o, "displayScript", t.displayScript);
  return o;
}

export function manifestJson(m: ToolsetManifest): string {
  const o: Obj = { name: m.name };
  putSome(o, "description", m.description);
  o.endpoint = m.endpoint;
  o.tools = m.tools.map(toolDefObject);
  o.needsMigration = m.needsMigration;
  return JSON.stringify(o);
}

/** An invocation as the daemon sends it (mock runtimes and tests use this). */
export function invocationJson(inv: RapInvocation): string {
  const o: Obj = {
    operation: inv.operation,
    arguments: value(inv.arguments),
    id: inv.id,
    call_id: inv.call_id ?? null,
    callback_url: inv.callback_url,
    group_id: inv.group_id,
  };
  putSome(o, "user_id", inv.user_id);
  o.thread_ancestors = inv.thread_ancestors ?? null;
  return JSON.stringify(o);
}

// Readable tool results: what the model sees after each memory tool call.
import type { MemoryRecord } from "../../core/memory/record.js";
import { clip } from "../../core/text.js";

export function age(ms: number, now: number): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return "just now";
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m ago`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h}h ago`;
  const d = Math.round(h / 24);
  if (d < 60) return `${d}d ago`;
  const mo = Math.round(d / 30);
  return mo < 24 ? `${mo}mo ago` : `${Math.round(d / 365)}y ago`;
}

function short(id: string | null | undefined): string {
  if (!id) return "?";
  return id.length > 13 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id;
}

export function sourceLine(r: MemoryRecord): string {
  const s = r.sources[0];
  if (!s) return "source unknown";
  const parts = [`${s.actor}`];
  if (s.threadId) parts.push(`thread ${short(s.threadId)}`);
  if (s.messageIds.length > 0) parts.push(`message ${s.messageIds.join(",")}`);
  if (s.toolCallId) parts.push(`call ${s.toolCallId}`);
  const more = r.sources.length > 1 ? ` (+${r.sources.length - 1} more source${r.sources.length > 2 ? "s" : ""})` : "";
  return `from ${parts.join(" ")}${more}`;
}

function statusMark(r: MemoryRecord): string {
  const marks: string[] = [];
  if (r.status !== "active") marks.push(r.status);
  if (r.flags.length > 0) marks.push(`flagged: ${r.flags.join(", ")}`);
  if (r.version > 1) marks.push(`v${r.version}`);
  return marks.length > 0 ? ` [${marks.join("; ")}]` : "";
}

/**
 * An expiry with its time of day (UTC), and how far off it is when that is under two days: a
 * 12-hour expiry shown as the date alone ("expires 2026-12-07") read as good for all of that day.
 * One already behind (a past version in memory_history) says "expired".
 */
export function expiryText(ms: number, now: number): string {
  const at = `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
  if (ms <= now) return `expired ${at}`;
  const minutes = Math.ceil((ms - now) / 60_000);
  if (minutes >= 48 * 60) return `expires ${at}`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  // minutes matter in the next few hours; past that the hour is near enough
  const left = h === 0 ? `${m}m` : h < 10 && m > 0 ? `${h}h${m}m` : `${Math.round(minutes / 60)}h`;
  return `expires ${at} (in ${left})`;
}

/** One record as a header line plus its content, indented. */
export function recordBlock(r: MemoryRecord, now: number, n?: number): string {
  const head =
    `${n !== undefined ? `${n}. ` : ""}${r.id}${statusMark(r)} · ${r.kind} · ${r.scope.level} scope · trust ${r.trust}` +
    ` · confidence ${r.confidence.toFixed(2)} · ${age(r.createdAt, now)} · ${sourceLine(r)}` +
    (r.tags.length > 0 ? ` · tags ${r.tags.join(", ")}` : "") +
    (r.expiresAt ? ` · ${expiryText(r.expiresAt, now)}` : "");
  const body = r.status === "deleted" ? "(forgotten)" : r.content;
  return `${head}\n   ${body.replace(/\n/g, "\n   ")}`;
}

/** A list page's total as a person reads it: "10000+" when the count stopped at its cap. */
export function totalText(page: { total: number; totalCapped: boolean }): string {
  return page.totalCapped ? `${page.total}+` : String(page.total);
}

export function recordList(rs: MemoryRecord[], now: number): string {
  return rs.map((r, i) => recordBlock(r, now, i + 1)).join("\n");
}

/**
 * What a list filter is narrowed to, for the empty answer: "no memories yet" after a filter
 * would tell the reader the store is empty when only the filter matched nothing.
 */
export function filterText(f: { kinds?: readonly string[] | undefined; scopes?: readonly string[] | undefined; statuses?: readonly string[] | undefined }): string | null {
  const parts = [
    f.kinds?.length ? `kind ${f.kinds.join(" or ")}` : null,
    f.scopes?.length ? `scope ${f.scopes.join(" or ")}` : null,
    f.statuses?.length ? `status ${f.statuses.join(" or ")}` : null,
  ].filter((p): p is string => p !== null);
  return parts.length > 0 ? parts.join(", ") : null;
}

function clipFlat(text: string, n: number): string {
  return clip(text.replace(/\s+/g, " ").trim(), n);
}

/** The messages around a session match, one line each, the match marked with ">". */
export function windowLines(m: { hit: { ord: number }; window: { ord: number; role: string; text: string }[] }, indent: string): string[] {
  return m.window.map((w) => `${indent}${w.ord === m.hit.ord ? ">" : " "} #${w.ord} ${w.role}: ${clipFlat(w.text, 240)}`);
}

// What a model call is about, read from its chat history (rig `Message`s, reference §3.2): the
// latest user message plus a short window of recent turns become the prefix builder's task; the
// texts of the recent history let it skip what the model already sees.
import { clip, headOf } from "../../core/text.js";

export interface TaskOptions {
  /** recent messages rendered after the user message */
  windowMessages: number;
  /** each rendered turn is cut to this many characters */
  turnChars: number;
  /** the user message is cut to this many characters */
  userChars: number;
  /** messages whose texts go into `recent` */
  recentMessages: number;
  recentChars: number;
}

export const DEFAULT_TASK_OPTIONS: TaskOptions = {
  windowMessages: 6,
  turnChars: 300,
  userChars: 4000,
  recentMessages: 20,
  recentChars: 4000,
};

export interface Turn {
  role: "user" | "assistant" | "tool_call" | "tool_result";
  text: string;
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function contentItems(msg: unknown): Obj[] {
  if (!isObj(msg) || !Array.isArray(msg.content)) return [];
  return msg.content.filter(isObj);
}

function resultText(item: Obj): string {
  const parts = Array.isArray(item.content) ? item.content.filter(isObj) : [];
  return parts
    .map((p) => (typeof p.text === "string" ? p.text : p.type === "image" ? "[image]" : ""))
    .filter((t) => t.length > 0)
    .join("\n");
}

function compactJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return "";
  }
}

/** one rig message as turns; content the task does not use (images, reasoning) is skipped */
export function turnsOf(msg: unknown): Turn[] {
  const role = isObj(msg) ? msg.role : undefined;
  const out: Turn[] = [];
  for (const item of contentItems(msg)) {
    if (role === "user") {
      if (item.type === "text" && typeof item.text === "string") out.push({ role: "user", text: item.text });
      else if (item.type === "toolresult") out.push({ role: "tool_result", text: resultText(item) });
    } else if (role === "assistant") {
      if (isObj(item.function) && typeof item.function.name === "string") {
        out.push({ role: "tool_call", text: `${item.function.name}(${compactJson(item.function.arguments)})` });
      } else if (typeof item.text === "string") {
        out.push({ role: "assistant", text: item.text });
      }
    }
  }
  return out;
}

const cut = clip;

const LABEL: Record<Turn["role"], string> = {
  user: "user",
  assistant: "assistant",
  tool_call: "tool call",
  tool_result: "tool result",
};

export interface Task {
  task: string;
  recent: string[];
}

export function buildTask(history: readonly unknown[], opts: TaskOptions = DEFAULT_TASK_OPTIONS): Task {
  let userIndex = -1;
  let userText = "";
  for (let i = history.length - 1; i >= 0 && userIndex < 0; i--) {
    const texts = turnsOf(history[i]).filter((t) => t.role === "user");
    if (texts.length > 0) {
      userIndex = i;
      userText = texts.map((t) => t.text).join("\n");
    }
  }

  const windowStart = Math.max(0, history.length - opts.windowMessages);
  const window: string[] = [];
  for (let i = windowStart; i < history.length; i++) {
    if (i === userIndex) continue; // already the head of the task
    for (const t of turnsOf(history[i])) {
      // Only a turn's head is kept, so only a head is flattened: a pasted 20 MB log took seconds
      // here, on the event loop, before the deadline could cut in (and every other stream waited).
      const flat = headOf(t.text.trimStart(), opts.turnChars * 4).replace(/\s+/g, " ").trim();
      if (flat.length > 0) window.push(`${LABEL[t.role]}: ${cut(flat, opts.turnChars)}`);
    }
  }

  const userHead = headOf(userText.trimStart(), opts.userChars * 2).trim();
  const head = userHead.length > 0 ? cut(userHead, opts.userChars) : "";
  const task = window.length === 0 ? head : [head, `Recent turns:\n${window.join("\n")}`].filter((p) => p.length > 0).join("\n\n");

  const recent: string[] = [];
  for (let i = Math.max(0, history.length - opts.recentMessages); i < history.length; i++) {
    for (const t of turnsOf(history[i])) {
      if (t.text.length > 0) recent.push(cut(t.text, opts.recentChars));
    }
  }
  return { task, recent };
}

/** The synthetic call the runtime writes into a compaction thread before seeding it (reference §3.4). */
export const COMPACTION_CALL = "__harness_begin_compaction__";

/**
 * A compaction thread's history: it holds the runtime's synthetic compaction call. Such a call
 * gets no prefix: its summary replaces the parent's history for good, so recalled memories would
 * outlive a later forget there.
 */
export function isCompactionHistory(history: readonly unknown[]): boolean {
  return history.some(
    (msg) => isObj(msg) && msg.role === "assistant" && contentItems(msg).some((c) => isObj(c.function) && c.function.name === COMPACTION_CALL),
  );
}

/** the tool results the model is answering: the trailing run of tool-result messages */
export function trailingToolResults(history: readonly unknown[], maxChars: number, maxResults = 8): { id: string; excerpt: string }[] {
  const out: { id: string; excerpt: string }[] = [];
  for (let i = history.length - 1; i >= 0; i--) {
    const msg = history[i];
    if (!isObj(msg) || msg.role !== "user") break;
    const results = contentItems(msg).filter((c) => c.type === "toolresult");
    if (results.length === 0) break;
    for (const r of results.reverse()) {
      out.push({ id: typeof r.id === "string" ? r.id : "", excerpt: cut(resultText(r), maxChars) });
    }
  }
  return out.reverse().slice(-maxResults);
}

/** an id (or, failing that, the text) naming the last message: part of a call's dedup key */
export function lastMessageKey(history: readonly unknown[]): string {
  const msg = history.at(-1);
  if (msg === undefined) return "";
  if (isObj(msg) && typeof msg.id === "string" && msg.id.length > 0) return `id:${msg.id}`;
  const first = contentItems(msg)[0];
  if (first && typeof first.id === "string") return `id:${first.id}`;
  return `json:${compactJson(msg)}`;
}

// Cutting turns into episodes and steps. An episode is one task: a user message up to the final
// answer with no pending call. Consecutive user messages before any response are one task; a
// user message arriving before the answer interrupts the episode. Feedback tools are signals,
// not steps.
import { createHash } from "node:crypto";
import type { MemoryConfig } from "../config.js";
import { argsDigest, argsShape } from "./args.js";
import { classifyResult } from "./outcome.js";
import type { Turn } from "./turns.js";
import type { EpisodeDraft, EpisodeMessage, EpisodeSource, Step } from "./types.js";
import { clip } from "../text.js";

/** tools whose calls rate the work instead of doing it */
export const FEEDBACK_TOOLS = new Set(["task_feedback", "skill_feedback"]);

type Limits = Pick<MemoryConfig["learning"], "taskChars" | "excerptChars" | "argsShapeChars" | "maxStepsPerEpisode">;

export function excerpt(text: string, max: number): string {
  // A NUL (a binary tool result) cannot be stored in PostgreSQL text: the episode failed there
  // ("invalid byte sequence") and was never learned from. A space takes its place, as in the
  // session index; the conversation itself is untouched.
  return clip(text.replace(/\u0000/g, " ").trim(), max);
}

interface Building {
  startOrd: number;
  endOrd: number;
  userTexts: { ord: number; messageId: string; text: string }[];
  messages: EpisodeMessage[];
  steps: Step[];
  stepByCall: Map<string, Step>;
  callAt: Map<string, number>;
  pending: Set<string>;
  feedbackCalls: { tool: string; callId: string | null; args: unknown }[];
  feedbackIds: Set<string>;
  lastAssistant: string | null;
  /** did the last response turn end the task (text after every call was answered)? */
  answered: boolean;
  responded: boolean;
}

function open(t: Turn): Building {
  return {
    startOrd: t.ord,
    endOrd: t.ord,
    userTexts: [],
    messages: [],
    steps: [],
    stepByCall: new Map(),
    callAt: new Map(),
    pending: new Set(),
    feedbackCalls: [],
    feedbackIds: new Set(),
    lastAssistant: null,
    answered: false,
    responded: false,
  };
}

function addMessage(b: Building, t: Turn): void {
  const last = b.messages.at(-1);
  if (last && last.ord === t.ord) return; // one edge per message, even for multi-item messages
  b.messages.push({ ord: t.ord, messageId: t.messageId, role: t.role });
}

export function segmentEpisodes(
  turns: readonly Turn[],
  ctx: { source: EpisodeSource; threadId: string; rootThreadId: string },
  limits: Limits,
): EpisodeDraft[] {
  const out: EpisodeDraft[] = [];
  let cur: Building | null = null;

  const finish = (b: Building, next: Turn | null) => {
    const state = b.answered && b.pending.size === 0 ? "done" : next ? "interrupted" : "open";
    const draft: Omit<EpisodeDraft, "contentHash"> = {
      source: ctx.source,
      threadId: ctx.threadId,
      rootThreadId: ctx.rootThreadId,
      startOrd: b.startOrd,
      endOrd: b.endOrd,
      state,
      task: excerpt(b.userTexts.map((u) => u.text).join("\n"), limits.taskChars),
      finalExcerpt: b.lastAssistant === null ? null : excerpt(b.lastAssistant, limits.excerptChars),
      steps: b.steps,
      messages: b.messages,
      userTexts: b.userTexts.map((u) => ({ ...u, text: excerpt(u.text, limits.taskChars) })),
      nextUserText: next ? { ord: next.ord, messageId: next.messageId, text: excerpt(next.text, limits.taskChars) } : null,
      feedbackCalls: b.feedbackCalls,
    };
    const contentHash = createHash("sha256").update(JSON.stringify(draft)).digest("hex").slice(0, 32);
    out.push({ ...draft, contentHash });
  };

  for (const t of turns) {
    if (t.role === "user") {
      if (cur && cur.responded) {
        finish(cur, t);
        cur = null;
      }
      cur ??= open(t);
      cur.userTexts.push({ ord: t.ord, messageId: t.messageId, text: t.text });
      cur.endOrd = t.ord;
      addMessage(cur, t);
      continue;
    }
    if (!cur) continue; // before the first task (e.g. a child thread's inherited context)
    cur.responded = true;
    cur.endOrd = t.ord;
    addMessage(cur, t);
    if (t.role === "tool_call") {
      const id = t.callId ?? "";
      cur.answered = false;
      if (FEEDBACK_TOOLS.has(t.tool ?? "")) {
        cur.feedbackCalls.push({ tool: t.tool!, callId: id || null, args: t.args ?? null });
        if (id) cur.feedbackIds.add(id);
        continue;
      }
      if (id) cur.pending.add(id);
      if (cur.steps.length >= limits.maxStepsPerEpisode) continue;
      const shape = t.argsDigest && t.args === undefined ? "<digest>" : argsShape(t.args ?? null, limits.argsShapeChars);
      const step: Step = {
        idx: cur.steps.length,
        ord: t.ord,
        tool: t.tool ?? "",
        callId: id || null,
        argsDigest: t.argsDigest && t.args === undefined ? t.argsDigest : argsDigest(t.tool ?? "", shape),
        argsShape: shape,
        outcome: "pending",
        verdict: null,
        excerpt: "",
        latencyMs: null,
      };
      cur.steps.push(step);
      if (id) {
        cur.stepByCall.set(id, step);
        if (t.at !== undefined) cur.callAt.set(id, t.at);
      }
    } else if (t.role === "tool_result") {
      const id = t.callId ?? "";
      cur.pending.delete(id);
      cur.answered = false;
      if (cur.feedbackIds.has(id)) continue;
      const step = cur.stepByCall.get(id);
      if (!step) continue;
      const c = classifyResult(t.text, t.isError);
      step.outcome = c.outcome;
      step.verdict = c.verdict;
      step.excerpt = excerpt(t.text, limits.excerptChars);
      const calledAt = cur.callAt.get(id);
      if (calledAt !== undefined && t.at !== undefined) step.latencyMs = Math.max(0, t.at - calledAt);
    } else {
      cur.lastAssistant = t.text;
      // the answer is final only when nothing is still running
      cur.answered = !t.isError && (t.text.trim().length > 0 || t.forgotten === true) && cur.pending.size === 0;
    }
  }
  if (cur) finish(cur, null);
  return out;
}

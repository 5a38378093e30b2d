// `ctx.askUser`: sends a RAP `user_choice` callback through the outbox and waits for the
// daemon's POST to `/user_choice_response`. The question and its answer are stored, so a call
// re-run after a crash finds an answer given meanwhile instead of asking again.
import type { Logger } from "pino";
import type { Clock } from "../../core/clock.js";
import { CoreError } from "../../core/errors.js";
import type { RapOutboxEntry, RapUserChoiceStore } from "../../stores/traits.js";
import { callbackJson } from "./wire-json.js";
import type { RapInvocation } from "./wire.js";

interface Waiter {
  resolve(selected: number): void;
  reject(e: Error): void;
}

export type AnswerOutcome = { ok: true } | { ok: false; status: 200 | 400; message: string };

function sameQuestion(a: { prompt: string; choices: string[] }, prompt: string, choices: string[]): boolean {
  return a.prompt === prompt && a.choices.length === choices.length && a.choices.every((c, i) => c === choices[i]);
}

/**
 * How long a question may stay unanswered. The daemon notifies only servers that were up when a
 * thread was loaded, so after an idle-out and reboot an interrupted call's /cancel_tool_call can
 * never reach us; without a limit such a call would wait forever.
 */
export const DEFAULT_CHOICE_TIMEOUT_MS = 15 * 60_000;

/**
 * A question is one thread's: the call id alone is not unique (some providers number calls
 * "call_0", "call_1" … in every thread), so two threads' questions replaced each other. The
 * key pairs thread and call id; the thread travels in the response URL's query, since the daemon
 * posts back only {"id","selected"}.
 */
export function choiceKey(groupId: string, callId: string): string {
  return JSON.stringify([groupId, callId]);
}

/** The response URL for a question of this thread. */
export function choiceResponseUrl(baseUrl: string, groupId: string): string {
  return `${baseUrl}/user_choice_response?thread=${encodeURIComponent(groupId)}`;
}

export class ChoiceBroker {
  private readonly waiters = new Map<string, Waiter>();
  /** answers the database refused to store (locked by another process, full), kept until their call ends */
  private readonly unstored = new Map<string, { prompt: string; choices: string[]; selected: number }>();

  constructor(
    private readonly toolset: string,
    private readonly store: RapUserChoiceStore,
    /** durably enqueue a callback for delivery */
    private readonly send: (entry: RapOutboxEntry) => Promise<void>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly timeoutMs = DEFAULT_CHOICE_TIMEOUT_MS,
  ) {}

  async ask(
    inv: RapInvocation,
    responseUrl: string,
    signal: AbortSignal,
    prompt: string,
    choices: string[],
    defaultIndex = 0,
  ): Promise<number> {
    const cancelled = () => new CoreError("cancelled", "the tool call was cancelled while waiting for the person to choose");
    if (signal.aborted) throw cancelled();
    if (choices.length === 0) throw new CoreError("invalid_argument", "askUser needs at least one choice");
    if (!Number.isInteger(defaultIndex) || defaultIndex < 0 || defaultIndex >= choices.length) {
      throw new CoreError("invalid_argument", `askUser default ${defaultIndex} is not an index into ${choices.length} choices`);
    }
    const id = choiceKey(inv.group_id, inv.id);
    const kept = this.unstored.get(id);
    if (kept && sameQuestion(kept, prompt, choices)) return kept.selected;
    const prior = await this.store.get(this.toolset, id);
    if (prior?.status === "answered" && prior.selected !== null && sameQuestion(prior, prompt, choices)) {
      return prior.selected;
    }

    // The daemon keys a pending choice by call id, so a second question replaces the first.
    this.waiters.get(id)?.reject(new CoreError("conflict", "a newer question of the same tool call replaced this one"));
    let waiter!: Waiter;
    const answered = new Promise<number>((resolve, reject) => {
      waiter = { resolve, reject };
    });
    // Registered before the callback goes out: the answer may arrive before send() returns.
    this.waiters.set(id, waiter);
    answered.catch(() => undefined);
    const onAbort = () => {
      waiter.reject(cancelled());
      this.store.dismiss(this.toolset, id, this.clock.now()).catch((e: unknown) => {
        this.log.error({ err: e, group_id: inv.group_id, call_id: inv.id }, "user choice: recording the dismissal failed");
      });
    };
    signal.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => {
      waiter.reject(
        new CoreError("cancelled", `no answer from the person within ${Math.round(this.timeoutMs / 60_000)} minutes; nothing was changed`),
      );
      this.store.dismiss(this.toolset, id, this.clock.now()).catch(() => undefined);
    }, this.timeoutMs);
    timer.unref();
    try {
      await this.store.ask({ toolset: this.toolset, choiceId: id, groupId: inv.group_id, prompt, choices }, this.clock.now());
      const body = callbackJson({
        type: "user_choice",
        group_id: inv.group_id,
        // the daemon's own key for the pending choice: the tool call id
        id: inv.id,
        call_id: inv.call_id,
        prompt,
        choices,
        default: defaultIndex,
        response_url: responseUrl,
      });
      await this.send({ toolset: this.toolset, groupId: inv.group_id, callId: inv.id, callbackUrl: inv.callback_url, body });
      return await answered;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      if (this.waiters.get(id) === waiter) this.waiters.delete(id);
    }
  }

  /**
   * Handle POST /user_choice_response: `thread` is the response URL's query parameter. Without
   * one (a URL handed out by an older build, still pending), the call id is looked up alone.
   */
  async answer(callId: string, selected: number, thread: string | null = null): Promise<AnswerOutcome> {
    const id = thread !== null ? choiceKey(thread, callId) : callId;
    const q = await this.store.get(this.toolset, id);
    if (!q || q.status !== "waiting") {
      return { ok: false, status: 200, message: `no question with id ${JSON.stringify(callId)} is waiting${thread !== null ? ` in thread ${JSON.stringify(thread)}` : ""}` };
    }
    if (selected >= q.choices.length) {
      return { ok: false, status: 400, message: `selected ${selected} is out of range: the question has ${q.choices.length} choices` };
    }
    try {
      await this.store.answer(this.toolset, id, selected, this.clock.now());
    } catch (e) {
      // The daemon sends an answer once: refused by the database (another process holds its lock
      // past the busy timeout, a full disk), it is still the person's decision. The call waiting
      // here acts on it, and a re-run of the call in this process finds it.
      this.unstored.set(id, { prompt: q.prompt, choices: q.choices, selected });
      this.log.warn({ err: e, group_id: q.groupId, choice: id }, "user choice: the answer could not be stored; it is applied in this process");
    }
    this.waiters.get(id)?.resolve(selected);
    return { ok: true };
  }

  /** The call finished: its question is no longer needed. */
  async forget(groupId: string, callId: string): Promise<void> {
    this.unstored.delete(choiceKey(groupId, callId));
    await this.store.remove(this.toolset, choiceKey(groupId, callId));
  }
}

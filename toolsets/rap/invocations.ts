// Runs acknowledged invocations: one AbortController per call, the result enqueued in the same
// transaction that closes the journal entry, cancellation by call or thread, a bounded drain on
// shutdown, and the re-run of calls a dead process left open.
import { setTimeout as wait } from "node:timers/promises";
import type { Logger } from "pino";
import type { Clock } from "../../core/clock.js";
import { CoreError } from "../../core/errors.js";
import type { RapCallKey, RapJournalStore, RapOutboxEntry } from "../../stores/traits.js";
import { isOwnerDead } from "./owner.js";
import { dispatch, type ToolContext, type ToolOutput, type Toolset } from "./registry.js";
import { choiceResponseUrl, type ChoiceBroker } from "./user-choice.js";
import { callbackJson } from "./wire-json.js";
import { RapInvocation, RapToolResult } from "./wire.js";

/** How long aborted handlers get to settle once shutdown gave up waiting for them. */
const ABORT_SETTLE_MS = 1000;
/** Turns a handler start may wait for open requests before it runs anyway (no starvation). */
const MAX_YIELDS = 50;

/**
 * Waits between attempts when the database refused a call's writes (locked past its busy timeout
 * by a long transaction elsewhere, or full): to store a finished call's result, and to run a call
 * whose handler it refused. Doubling from base to max.
 */
export interface CompleteRetry {
  baseDelayMs: number;
  maxDelayMs: number;
}
const COMPLETE_RETRY: CompleteRetry = { baseDelayMs: 500, maxDelayMs: 30_000 };

interface InFlight {
  groupId: string;
  controller: AbortController;
  done: Promise<void>;
}

export interface RunnerDeps {
  toolset: Toolset;
  /** the name calls are journaled and re-run under (default: the toolset's name) */
  journalName?: string;
  /** true while HTTP requests wait for an answer; handler starts yield to them */
  requestsWaiting?: () => boolean;
  journal: RapJournalStore;
  choices: ChoiceBroker;
  /** called after a result was enqueued, so delivery starts at once */
  onEnqueued(): void;
  owner: string;
  clock: Clock;
  log: Logger;
  completeRetry?: Partial<CompleteRetry>;
  /**
   * The database refused a handler's write for now, not for what it wrote (e.g. SQLite's lock held
   * elsewhere past the busy timeout, a full disk): the call is run again later instead of answered
   * with the engine's error.
   */
  refusedForNow?: (e: unknown) => boolean;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * Starts queued work one item per event-loop turn. Handlers run synchronous SQLite work; starting
 * them back to back would hold the loop and delay the acks of invocations still arriving, which
 * the daemon awaits inside a thread step. A turn between starts lets pending requests be answered.
 */
class TurnQueue {
  private readonly tasks: (() => void)[] = [];
  private scheduled = false;
  private yielded = 0;

  /** `busy`: requests are waiting; a start is put off for at most MAX_YIELDS turns in a row */
  constructor(private readonly busy: () => boolean) {}

  push(task: () => void): void {
    this.tasks.push(task);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.tasks.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.busy() && this.yielded < MAX_YIELDS) {
        this.yielded++;
      } else {
        this.yielded = 0;
        this.tasks.shift()?.();
      }
      this.schedule();
    });
  }
}

export class InvocationRunner {
  private readonly inflight = new Map<string, InFlight>();
  private readonly queue: TurnQueue;
  /** set once shutdown stopped waiting: late results stay unsent and the call stays open */
  private stopped = false;

  constructor(private readonly d: RunnerDeps) {
    this.queue = new TurnQueue(d.requestsWaiting ?? (() => false));
  }

  private get journalName(): string {
    return this.d.journalName ?? this.d.toolset.name;
  }

  key(groupId: string, callId: string): RapCallKey {
    return { toolset: this.journalName, groupId, callId };
  }

  get activeCount(): number {
    return this.inflight.size;
  }

  /** Calls of one thread accepted and not finished (queued or running). */
  activeFor(groupId: string): number {
    let n = 0;
    for (const e of this.inflight.values()) if (e.groupId === groupId) n++;
    return n;
  }

  /** This call is already accepted and not finished here (a duplicate delivery). */
  isActive(groupId: string, callId: string): boolean {
    return this.inflight.has(`${groupId}\u0000${callId}`);
  }

  /** Start a journaled invocation in the background; never throws, never blocks the caller. */
  run(inv: RapInvocation, baseUrl: string): void {
    const k = `${inv.group_id}\u0000${inv.id}`;
    if (this.inflight.has(k) || this.stopped) return;
    const controller = new AbortController();
    const log = this.d.log.child({ tool: inv.operation, group_id: inv.group_id, call_id: inv.id });
    const ctx: ToolContext = {
      invocation: inv,
      signal: controller.signal,
      log,
      askUser: (prompt, choices, defaultIndex) =>
        this.d.choices.ask(inv, choiceResponseUrl(baseUrl, inv.group_id), controller.signal, prompt, choices, defaultIndex),
    };
    const entry: InFlight = { groupId: inv.group_id, controller, done: Promise.resolve() };
    this.inflight.set(k, entry);
    entry.done = new Promise<void>((started) => this.queue.push(started))
      .then(() => this.execute(ctx))
      .catch((e: unknown) => log.error({ err: e }, "tool call could not be completed; it stays open for a later re-run"))
      .finally(() => {
        if (this.inflight.get(k) === entry) this.inflight.delete(k);
      });
  }

  private async execute(ctx: ToolContext): Promise<void> {
    const inv = ctx.invocation;
    const started = this.d.clock.now();
    // Cancelled or closed while it waited for its turn: the handler never starts.
    const out = ctx.signal.aborted ? { text: "" } : await this.dispatchDurably(ctx);
    // Cancel and close have closed the journal entry already; on shutdown it stays open so the
    // next process re-runs the call.
    if (out === null || ctx.signal.aborted || this.stopped) {
      ctx.log.info({ reason: String(ctx.signal.reason ?? "shutdown") }, "tool call aborted; no result sent");
      if (!this.stopped) await this.forgetQuestion(inv, ctx.log);
      return;
    }
    const key = this.key(inv.group_id, inv.id);
    const body = this.resultJson(inv, out, ctx.log);
    const entry = { ...key, callbackUrl: inv.callback_url, body };
    const closed = await this.completeDurably(key, entry, ctx);
    if (closed === null) return;
    await this.forgetQuestion(inv, ctx.log);
    if (!closed) {
      ctx.log.info("tool call was closed meanwhile (cancelled or taken over); result dropped");
      return;
    }
    ctx.log.info({ ms: this.d.clock.now() - started }, "tool call finished");
    this.d.onEnqueued();
  }

  /**
   * Run the handler, again while the database refuses its writes (another process holds the lock
   * past the busy timeout, as a reindex or an import of a large store does; a full disk): the
   * runtime waits for this result, and handlers are idempotent per call id (the re-run of a call
   * a dead process left open relies on it too), so the call answers late instead of with
   * "database is locked". Null when the call was cancelled or the server stopped first (the entry
   * stays open: the next process re-runs it).
   */
  private async dispatchDurably(ctx: ToolContext): Promise<ToolOutput | null> {
    const refused = this.d.refusedForNow;
    if (!refused) return dispatch(this.d.toolset, ctx);
    const r = { ...COMPLETE_RETRY, ...this.d.completeRetry };
    for (let attempt = 1; ; attempt++) {
      try {
        const out = await dispatch(this.d.toolset, ctx, { rethrow: refused });
        if (attempt > 1) ctx.log.info({ attempts: attempt }, "tool call ran after the database refused it");
        return out;
      } catch (e) {
        if (this.stopped || ctx.signal.aborted) {
          ctx.log.error({ err: e }, "the database refused the tool call; it stays open for a later re-run");
          return null;
        }
        const ms = Math.min(r.maxDelayMs, r.baseDelayMs * 2 ** (attempt - 1));
        ctx.log.warn({ err: e, attempt, retry_in_ms: ms }, "the database refused the tool call's writes; running it again");
        await wait(ms, undefined, { signal: ctx.signal, ref: false }).catch(() => {});
      }
    }
  }

  /**
   * Close the journal entry and enqueue the result in one transaction, trying again while the
   * database refuses (a lock held past the busy timeout, a full disk): the runtime waits for this
   * result, and without it the call would stay open until the next process re-ran it. The result
   * is kept meanwhile, so the tool's work is not done twice. Null when the call was cancelled or
   * the server stopped first (the entry stays open: the next process re-runs it).
   */
  private async completeDurably(key: RapCallKey, entry: RapOutboxEntry, ctx: ToolContext): Promise<boolean | null> {
    const r = { ...COMPLETE_RETRY, ...this.d.completeRetry };
    for (let attempt = 1; ; attempt++) {
      try {
        const closed = await this.d.journal.complete(key, this.d.owner, entry, this.d.clock.now());
        if (attempt > 1) ctx.log.info({ attempts: attempt }, "tool result stored after the database refused it");
        return closed;
      } catch (e) {
        if (this.stopped || ctx.signal.aborted) {
          ctx.log.error({ err: e }, "tool result could not be stored; the call stays open for a later re-run");
          return null;
        }
        const ms = Math.min(r.maxDelayMs, r.baseDelayMs * 2 ** (attempt - 1));
        ctx.log.warn({ err: e, attempt, retry_in_ms: ms }, "storing the tool result failed; trying again");
        await wait(ms, undefined, { signal: ctx.signal, ref: false }).catch(() => {});
      }
    }
  }

  private async forgetQuestion(inv: RapInvocation, log: Logger): Promise<void> {
    await this.d.choices.forget(inv.group_id, inv.id).catch((e: unknown) => log.error({ err: e }, "user choice: removing the question failed"));
  }

  /** The tool_result JSON; a result the runtime would reject as a whole becomes an error text. */
  private resultJson(inv: RapInvocation, out: ToolOutput, log: Logger): string {
    const result = RapToolResult.safeParse({
      type: "tool_result",
      group_id: inv.group_id,
      id: inv.id,
      call_id: inv.call_id,
      text: out.text,
      display_as: out.display_as,
    });
    if (result.success) return callbackJson(result.data);
    log.error({ issues: result.error.issues.length }, "tool returned a result the runtime would reject");
    return callbackJson({
      type: "tool_result",
      group_id: inv.group_id,
      id: inv.id,
      call_id: inv.call_id,
      text: `Error: ${inv.operation} failed: it produced a malformed result`,
    });
  }

  /** /cancel_tool_call: the abort happens before this returns its promise. */
  async cancel(groupId: string, callId: string): Promise<void> {
    this.inflight
      .get(`${groupId}\u0000${callId}`)
      ?.controller.abort(new CoreError("cancelled", "the runtime cancelled this tool call"));
    await this.recordCancel(this.key(groupId, callId));
  }

  /** /close_thread: abort every call of the thread and forget them. */
  async closeThread(groupId: string): Promise<number> {
    const calls = [...this.inflight.entries()].filter(([, e]) => e.groupId === groupId);
    for (const [, e] of calls) e.controller.abort(new CoreError("cancelled", "the thread was closed"));
    for (const [k] of calls) {
      const callId = k.slice(k.indexOf("\u0000") + 1);
      await this.recordCancel(this.key(groupId, callId));
    }
    return calls.length;
  }

  /**
   * Close the journal entry of a cancelled call, again while the database refuses (another process
   * holds its lock past the busy timeout, a full disk): left open, the entry was run again by the
   * next process to start, a call the runtime had cancelled.
   */
  private async recordCancel(key: RapCallKey): Promise<void> {
    const r = { ...COMPLETE_RETRY, ...this.d.completeRetry };
    for (let attempt = 1; ; attempt++) {
      try {
        await this.d.journal.cancel(key, this.d.clock.now());
        return;
      } catch (e) {
        if (this.stopped || !this.d.refusedForNow?.(e)) throw e;
        const ms = Math.min(r.maxDelayMs, r.baseDelayMs * 2 ** (attempt - 1));
        this.d.log.warn({ err: e, group_id: key.groupId, call_id: key.callId, attempt, retry_in_ms: ms }, "recording a cancel failed; trying again");
        await sleep(ms);
      }
    }
  }

  /** A duplicate delivery of a call whose owner died: take it over and run it here. */
  async resumeIfOrphaned(inv: RapInvocation, baseUrl: string): Promise<boolean> {
    const key = this.key(inv.group_id, inv.id);
    const j = await this.d.journal.get(key);
    if (!j || j.status !== "received" || j.owner === this.d.owner || !isOwnerDead(j.owner)) return false;
    if (!(await this.d.journal.takeOver(key, j.owner, this.d.owner))) return false;
    this.run(inv, baseUrl);
    return true;
  }

  /** Re-run open invocations whose owner is gone (crashed, or an earlier boot of this process). */
  async replay(baseUrl: string): Promise<number> {
    let n = 0;
    for (const j of await this.d.journal.open(this.journalName)) {
      if (j.owner === this.d.owner || !isOwnerDead(j.owner)) continue;
      if (!(await this.d.journal.takeOver(j, j.owner, this.d.owner))) continue;
      const inv = parseJournaled(j.body);
      if (!inv) {
        await this.d.journal.fail(j, this.d.owner, this.d.clock.now());
        this.d.log.error({ group_id: j.groupId, call_id: j.callId }, "journaled invocation is unreadable; marked failed");
        continue;
      }
      this.d.log.info({ tool: inv.operation, group_id: j.groupId, call_id: j.callId, previous_owner: j.owner }, "re-running an unfinished invocation");
      this.run(inv, baseUrl);
      n++;
    }
    return n;
  }

  /** Wait up to graceMs for running calls, abort the rest, and drop whatever finishes later. */
  async shutdown(graceMs: number): Promise<void> {
    const settled = () => Promise.allSettled([...this.inflight.values()].map((e) => e.done));
    await Promise.race([settled(), sleep(graceMs)]);
    if (this.inflight.size > 0) {
      this.d.log.warn({ calls: this.inflight.size }, "aborting tool calls still running at shutdown; they will be re-run");
      this.stopped = true;
      for (const e of this.inflight.values()) e.controller.abort(new CoreError("cancelled", "the server is shutting down"));
      await Promise.race([settled(), sleep(ABORT_SETTLE_MS)]);
    }
    this.stopped = true;
  }
}

function parseJournaled(body: string | null): RapInvocation | null {
  if (body === null) return null;
  try {
    const r = RapInvocation.safeParse(JSON.parse(body));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

// MockInfinity: an in-process stand-in for infinity-daemon, built for tests and the demo
// (reference §6). It owns the router and per-thread drivers of the core's local system, the
// daemon's sessions and per-session RAP servers, one shared callback listener, and a scripted
// model. Everything a tool server can observe (invocation bytes, ack handling, callbacks,
// /cancel_tool_call, /close_thread, user-choice answers, command-server lifecycle) follows the
// daemon; see README.md in this folder for the API and the few deliberate deviations.
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MemoryInputSender } from "../../stores/infinity/input-sender.js";
import { MemoryConversationStore, MemoryStateStore } from "../../stores/infinity/memory-store.js";
import type { InfinityMessage, InputMessage, InputMessageInit, UserChoice } from "../../stores/infinity/messages.js";
import type { ConversationStore, StateStore } from "../../stores/infinity/traits.js";
import { startCallbackServer, prepareCallback, type CallbackServerHandle } from "./callback-server.js";
import { killAllCommandServers, type ManagedRapServer } from "./command-servers.js";
import { isCompactionComplete, isUserTextInput, CancelSignal } from "./event-processor.js";
import { formatTranscript, type AgentEvent, type HarnessEvent, type TranscriptOptions } from "./events.js";
import { DEFAULT_MODEL_ENTRY, ScriptedModel, type ModelEntry } from "./model.js";
import { DEFAULT_PROMPT } from "./preamble.js";
import { postJson } from "./rap-http.js";
import { SessionRapManager } from "./session-toolsets.js";
import { Thread, type DeferQueue, type PromptPrefix, type StepOutcome, type SystemInner } from "./thread.js";
import { Timers, type ThreadConfig } from "./tools.js";

export type { PromptBudget, PromptPrefix } from "./thread.js";
export type { ThreadConfig, Tool } from "./tools.js";

/**
 * The per-thread `ThreadConfigSource` seam: receives what the daemon would resolve for the
 * thread (its session's RAP tools + set_title, the extra prompt, the notifier) and may return a
 * different config, e.g. with tools filtered for this thread. Built-ins are appended afterwards.
 */
export type ThreadConfigFilter = (threadId: string, daemonConfig: ThreadConfig) => ThreadConfig | Promise<ThreadConfig>;

export interface MockInfinityOptions {
  /** the daemon's state dir (`~/.infinity`): `rap.json` (user config) and `sessions.json` live here */
  infinityHome?: string | null;
  /** default: in-memory; pass SQLite stores (and the same infinityHome) to survive a restart */
  conversationStore?: ConversationStore;
  stateStore?: StateStore;
  /** the model; default a ScriptedModel with `modelEntry` */
  model?: ScriptedModel;
  /** default context_window 0 (no auto-compaction), no image input */
  modelEntry?: Partial<ModelEntry>;
  /** stands in for default_prompt.md */
  defaultPrompt?: string;
  promptPrefix?: PromptPrefix;
  threadConfig?: ThreadConfigFilter;
  /** the core built-ins (spawn_thread … sleep_until_event_or_input); default true */
  builtinTools?: boolean;
  /** the daemon's `sleep` and `sleep_until`; default true */
  sleepTools?: boolean;
  /** environment of command servers (RAP_EMBEDDED=1 is added); default process.env */
  serverEnv?: NodeJS.ProcessEnv;
  /** SIGINT grace before the harness SIGKILLs a command server; default 10 s */
  serverStopTimeoutMs?: number;
  /** session ids; default UUIDv4 */
  idSource?: () => string;
  /** the pause before a retried model stream (daemon: 1 s) */
  streamRetryDelayMs?: number;
  /** how long shutdown() waits for thread drivers to wind down; default 5 s */
  shutdownGraceMs?: number;
}

export interface CreateSessionOptions {
  cwd: string;
  /** stored as root metadata {"user_id"}; becomes `user_id` in invocations */
  userId?: string;
  /**
   * A keep-alive client is attached (daemon tests and the CLI do this): the session's servers
   * stay up while it idles; stop them with idleSession(). With false they are SIGINTed as soon
   * as the session goes idle, as for a detached session.
   */
  keepAlive?: boolean;
}

interface SessionEntry {
  cwd: string;
  shut_down: boolean;
  idle: boolean;
  archived: boolean;
}

class Inbox {
  private items: [InputMessage, string][] = [];
  closed = false;
  private waiters: (() => void)[] = [];
  push(item: [InputMessage, string]): void {
    this.items.push(item);
    this.wake();
  }
  close(): void {
    this.closed = true;
    this.wake();
  }
  drain(): [InputMessage, string][] {
    return this.items.splice(0);
  }
  get empty(): boolean {
    return this.items.length === 0;
  }
  /** resolves once an item is queued or the inbox is closed */
  wait(): Promise<void> {
    if (!this.empty || this.closed) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }
  private wake(): void {
    const w = this.waiters.splice(0);
    for (const f of w) f();
  }
}

interface Driver {
  threadId: string;
  inbox: Inbox;
  /** the receiving end is gone: the router must spawn a new driver */
  closed: boolean;
  done: Promise<void>;
}

type StepResult = { ok: true; outcome: StepOutcome } | { ok: false; error: Error };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class MockInfinity {
  readonly model: ScriptedModel;
  readonly conversationStore: ConversationStore;
  readonly stateStore: StateStore;
  /** everything that happened, in order */
  readonly events: HarnessEvent[] = [];
  readonly callbackUrl: string;

  private readonly listeners = new Set<(e: HarnessEvent) => void>();
  private readonly sessions = new Map<string, SessionEntry>();
  private readonly keepAlive = new Map<string, boolean>();
  private readonly drivers = new Map<string, Driver>();
  private readonly activeThreads = new Set<string>();
  private readonly views = new Map<string, Map<string, unknown>>();
  private readonly titles = new Map<string, string>();
  private readonly rootCache = new Map<string, string>();
  private readonly routerQueue: [InputMessage, string][] = [];
  private routerBusy = false;
  private stopping = false;
  private readonly timers = new Timers();
  private readonly sender: MemoryInputSender;
  private readonly rap: SessionRapManager;
  private readonly inner: SystemInner;
  private readonly idSource: () => string;
  private readonly sessionsFile: string | null;

  private constructor(
    private readonly opts: MockInfinityOptions,
    private readonly callbacks: CallbackServerHandle,
  ) {
    this.model = opts.model ?? new ScriptedModel({ ...DEFAULT_MODEL_ENTRY, ...opts.modelEntry });
    this.conversationStore = opts.conversationStore ?? new MemoryConversationStore();
    this.stateStore = opts.stateStore ?? new MemoryStateStore();
    this.callbackUrl = callbacks.url;
    this.idSource = opts.idSource ?? randomUUID;
    const home = opts.infinityHome ?? null;
    this.sessionsFile = home === null ? null : join(home, "sessions.json");
    this.loadSessions();
    // The router's input queue; callbacks and loopbacks enter here like in ChannelSender.
    this.sender = new MemoryInputSender((m, id) => this.enqueue(m, id));
    this.rap = new SessionRapManager({
      sessionCwd: (id) => this.sessions.get(id)?.cwd ?? null,
      userConfigPath: home === null ? null : join(home, "rap.json"),
      rootOf: (t) => this.rootOf(t),
      server: { env: opts.serverEnv ?? process.env, stopTimeoutMs: opts.serverStopTimeoutMs ?? 10_000 },
      record: (e) => this.record(e),
      setTitle: (t, title) => this.titles.set(t, title),
    });
    const filter = opts.threadConfig;
    this.inner = {
      conv: this.conversationStore,
      state: this.stoppedAwareState(),
      sender: this.sender,
      resolveConfig: async (threadId) => {
        const base = await this.rap.resolve(threadId);
        return filter ? filter(threadId, base) : base;
      },
      model: this.model,
      callbackUrl: callbacks.url,
      builtinTools: opts.builtinTools ?? true,
      sleepTools: opts.sleepTools ?? true,
      timers: this.timers,
      defaultPrompt: opts.defaultPrompt ?? DEFAULT_PROMPT,
      promptPrefix: opts.promptPrefix ?? null,
      retryDelayMs: opts.streamRetryDelayMs ?? 1000,
      newId: randomUUID,
      record: (e) => this.record(e),
    };
  }

  /** Start the runtime: binds the callback listener on 127.0.0.1:0. */
  static async start(opts: MockInfinityOptions = {}): Promise<MockInfinity> {
    let self: MockInfinity | null = null;
    const callbacks = await startCallbackServer(async (cb) => {
      const delivery = prepareCallback(cb);
      if (delivery.kind === "view_update") self!.setView(delivery.update.group_id, delivery.update.view_type, delivery.update.content);
      else await self!.sender.sendToInputQueue(delivery.message, delivery.dedupId);
    });
    self = new MockInfinity(opts, callbacks);
    return self;
  }

  // ---- events ----

  private record(e: HarnessEvent): void {
    this.events.push(e);
    for (const l of this.listeners) l(e);
  }

  /** Subscribe to events as they happen; returns the unsubscribe function. */
  on(listener: (e: HarnessEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The AgentEvents of one thread so far. */
  agentEvents(threadId: string): AgentEvent[] {
    return this.events.flatMap((e) => (e.type === "agent" && e.threadId === threadId ? [e.event] : []));
  }

  /** A readable transcript of everything so far (the demo prints this). */
  transcript(opts: TranscriptOptions = {}): string {
    return formatTranscript(this.events, opts);
  }

  /** Position in `events`, to wait for something that happens after it. */
  mark(): number {
    return this.events.length;
  }

  /** Resolve with the first event (at index ≥ since) matching `pred`. */
  async waitForEvent<E extends HarnessEvent>(pred: (e: HarnessEvent) => e is E, opts?: { since?: number; timeoutMs?: number }): Promise<E>;
  async waitForEvent(pred: (e: HarnessEvent) => boolean, opts?: { since?: number; timeoutMs?: number }): Promise<HarnessEvent>;
  async waitForEvent(pred: (e: HarnessEvent) => boolean, opts: { since?: number; timeoutMs?: number } = {}): Promise<HarnessEvent> {
    const since = opts.since ?? 0;
    let found: HarnessEvent | undefined;
    await this.waitUntil(() => (found = this.events.slice(since).find(pred)) !== undefined, opts.timeoutMs ?? 10_000, "event");
    return found!;
  }

  private async waitUntil(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n--- transcript ---\n${this.transcript()}`);
      await sleep(5);
    }
  }

  // ---- sessions ----

  private loadSessions(): void {
    if (!this.sessionsFile || !existsSync(this.sessionsFile)) return;
    try {
      const data = JSON.parse(readFileSync(this.sessionsFile, "utf8")) as { sessions?: Record<string, Partial<SessionEntry>> };
      for (const [id, s] of Object.entries(data.sessions ?? {})) {
        if (typeof s.cwd === "string") this.sessions.set(id, { cwd: s.cwd, shut_down: s.shut_down ?? false, idle: s.idle ?? false, archived: s.archived ?? false });
      }
    } catch {
      // an unreadable sessions.json starts empty, as the daemon does
    }
  }

  private saveSessions(): void {
    if (!this.sessionsFile) return;
    mkdirSync(join(this.sessionsFile, ".."), { recursive: true });
    writeFileSync(this.sessionsFile, JSON.stringify({ sessions: Object.fromEntries(this.sessions) }, null, 2));
  }

  /** `CreateSession`: a new root thread (session id = root thread id) working in `cwd`. */
  async createSession(o: CreateSessionOptions): Promise<string> {
    const id = this.idSource();
    this.sessions.set(id, { cwd: o.cwd, shut_down: false, idle: false, archived: false });
    this.keepAlive.set(id, o.keepAlive ?? true);
    this.saveSessions();
    await this.conversationStore.ensureRootThread(id);
    if (o.userId !== undefined) await this.stateStore.setMetadata(id, { user_id: o.userId });
    return id;
  }

  /** Re-attach to a session known from sessions.json (after a harness restart). */
  attachSession(sessionId: string, o: { keepAlive?: boolean } = {}): void {
    if (!this.sessions.has(sessionId)) throw new Error(`unknown session ${sessionId}`);
    this.keepAlive.set(sessionId, o.keepAlive ?? true);
  }

  sessionCwd(sessionId: string): string | null {
    return this.sessions.get(sessionId)?.cwd ?? null;
  }

  /** The session's configured servers (after its first step), to inspect ports and boots. */
  serversOf(sessionId: string): Promise<ManagedRapServer[]> {
    return this.rap.servers(sessionId);
  }

  /** `shutdown_session` on idle: SIGINT every command server of the session and await exit. */
  async idleSession(sessionId: string): Promise<void> {
    await this.rap.shutdownSession(sessionId);
  }

  /**
   * `ShutdownSession` (cleanup_session): clear its pending choices, stop and forget its
   * servers, flag it shut down — callbacks are then dropped until user text revives it.
   */
  async shutdownSession(sessionId: string): Promise<void> {
    const reader = this.conversationStore as Partial<{ listThreads(): Promise<string[]> }>;
    const threads = reader.listThreads ? await reader.listThreads() : [...this.rootCache.keys(), sessionId];
    for (const t of new Set(threads)) {
      if ((await this.rootOf(t)) !== sessionId) continue;
      for (const c of await this.stateStore.getPendingUserChoices(t)) await this.stateStore.removePendingUserChoice(t, c.id);
    }
    await this.rap.evictSession(sessionId);
    const s = this.sessions.get(sessionId);
    if (s) {
      s.shut_down = true;
      this.saveSessions();
    }
  }

  private async rootOf(threadId: string): Promise<string> {
    const cached = this.rootCache.get(threadId);
    if (cached) return cached;
    const chain = await this.conversationStore.getAncestorChain(threadId).catch(() => []);
    const root = chain[0]?.[0] ?? threadId;
    this.rootCache.set(threadId, root);
    return root;
  }

  /** The daemon's StateStore answers is_thread_stopped from its session's shut_down flag. */
  private stoppedAwareState(): StateStore {
    const base = this.stateStore;
    return new Proxy(base, {
      get: (target, prop, receiver) => {
        if (prop === "isThreadStopped") {
          return async (threadId: string) => {
            const s = this.sessions.get(await this.rootOf(threadId));
            return s?.shut_down === true || (await target.isThreadStopped(threadId));
          };
        }
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }

  // ---- input ----

  /** `UserInput`: plain user text (random UUID dedup id); creates the thread if unknown. */
  async sendUserText(threadId: string, text: string): Promise<void> {
    await this.send({ content: { type: "text", text }, group_id: threadId }, randomUUID());
  }

  /** Put any InputMessage on the input queue, as a callback or loopback would. */
  async send(message: InputMessage | InputMessageInit, dedupId: string): Promise<void> {
    await this.sender.sendToInputQueue(message, dedupId);
  }

  /** `TriggerCompaction`: the synthetic compaction input for a thread. */
  async triggerCompaction(threadId: string): Promise<void> {
    await this.send({ content: { type: "text", text: "" }, group_id: threadId, synthetic: { type: "compaction" } }, randomUUID());
  }

  private enqueue(message: InputMessage, dedupId: string): void {
    if (this.stopping) return;
    this.routerQueue.push([message, dedupId]);
    if (!this.routerBusy) void this.route();
  }

  /** The router: hand inputs to live drivers, else admit and spawn one. */
  private async route(): Promise<void> {
    this.routerBusy = true;
    try {
      while (this.routerQueue.length > 0 && !this.stopping) {
        const [message, dedupId] = this.routerQueue.shift()!;
        const threadId = message.group_id;
        const live = this.drivers.get(threadId);
        if (live && !live.closed) {
          live.inbox.push([message, dedupId]);
          continue;
        }
        if (!isUserTextInput(message)) {
          // Events cannot create or resume threads; both checks fail open on store errors.
          const exists = await this.conversationStore.threadExists(threadId).catch(() => true);
          if (!exists) {
            this.record({ type: "input_dropped", threadId, dedupId, reason: "unknown_thread" });
            continue;
          }
          const stopped = await this.inner.state.isThreadStopped(threadId).catch(() => false);
          if (stopped) {
            this.record({ type: "input_dropped", threadId, dedupId, reason: "stopped_thread" });
            continue;
          }
        }
        // The admission awaits may have let a driver appear.
        const again = this.drivers.get(threadId);
        if (again && !again.closed) {
          again.inbox.push([message, dedupId]);
          continue;
        }
        const driver: Driver = { threadId, inbox: new Inbox(), closed: false, done: Promise.resolve() };
        driver.inbox.push([message, dedupId]);
        this.drivers.set(threadId, driver);
        driver.done = this.drive(driver);
      }
    } finally {
      this.routerBusy = false;
    }
  }

  // ---- drivers ----

  private lifecycle(threadId: string, state: "live" | "idle"): void {
    this.record({ type: "lifecycle", threadId, state });
    void this.sessionActivity(threadId, state);
  }

  /** The daemon's session activity watcher: idle sessions without keep-alive lose their servers. */
  private async sessionActivity(threadId: string, state: "live" | "idle"): Promise<void> {
    const sessionId = await this.rootOf(threadId);
    const s = this.sessions.get(sessionId);
    if (state === "live") {
      this.activeThreads.add(threadId);
      if (s && (s.idle || s.shut_down)) {
        s.idle = false;
        s.shut_down = false;
        this.saveSessions();
      }
      return;
    }
    const subscribed = (await this.stateStore.getActiveSubscriptions(threadId).catch(() => [])).length > 0;
    if (!subscribed) this.activeThreads.delete(threadId);
    for (const t of this.activeThreads) if ((await this.rootOf(t)) === sessionId) return;
    if (!s) return;
    s.idle = true;
    this.saveSessions();
    const stop = this.keepAlive.get(sessionId) === false && !this.stopping;
    if (stop) await this.rap.shutdownSession(sessionId);
    this.record({ type: "session_idle", sessionId, serversStopped: stop });
  }

  private async drive(d: Driver): Promise<void> {
    const threadId = d.threadId;
    this.lifecycle(threadId, "live");
    try {
      let thread: Thread;
      try {
        thread = await Thread.load(this.inner, threadId);
      } catch (e) {
        this.record({ type: "agent", threadId, event: { type: "Info", text: `Error: ${(e as Error).message}` } });
        return;
      }
      const defer: DeferQueue = [];
      const pendingBatch: [InputMessage, string][] = [];
      let compactionTriggered = false;
      let totalTokens = 0;
      let inFlight: { settled: Promise<StepResult>; cancel: CancelSignal; result: StepResult | null } | null = null;

      const handleStepResult = (res: StepResult) => {
        if (!res.ok) {
          this.record({ type: "agent", threadId, event: { type: "Info", text: `Error: ${res.error.message}` } });
          return;
        }
        if (res.outcome.kind !== "completed") return;
        const { usage, contextWindow } = res.outcome;
        if (usage) totalTokens = usage.total_tokens;
        // Background compaction when the context is more than 75% full.
        if (!compactionTriggered && contextWindow > 0 && totalTokens > Math.floor((contextWindow * 3) / 4)) {
          compactionTriggered = true;
          this.record({ type: "agent", threadId, event: { type: "Info", text: "✦ Auto-compaction triggered (context > 75%)" } });
          pendingBatch.push([
            { content: { type: "text", text: "" }, group_id: threadId, metadata: null, synthetic: { type: "compaction" }, display_as: null, subscription: false },
            randomUUID(),
          ]);
        }
      };

      for (;;) {
        // Shutdown: an in-flight step is cancelled (and commits what it has); queued input is
        // not started, so no new model round waits for an answer that will never come.
        if (d.inbox.closed) {
          if (inFlight) {
            inFlight.cancel.cancel();
            await inFlight.settled;
          }
          return;
        }
        let newInputs: [InputMessage, string][];
        if (inFlight) {
          const flight = inFlight;
          if (flight.result === null && d.inbox.empty && !d.inbox.closed) await Promise.race([flight.settled, d.inbox.wait()]);
          // biased: a finished step is handled before new input
          if (flight.result !== null) {
            inFlight = null;
            handleStepResult(flight.result);
            continue;
          }
          if (d.inbox.closed && d.inbox.empty) {
            flight.cancel.cancel();
            await flight.settled;
            return;
          }
          const batch = d.inbox.drain();
          if (!batch.some(([m]) => isUserTextInput(m))) {
            pendingBatch.push(...batch);
            continue;
          }
          // User text interrupts the in-flight completion.
          flight.cancel.cancel();
          const res = await flight.settled;
          inFlight = null;
          handleStepResult(res);
          const user = batch.filter(([m]) => isUserTextInput(m));
          pendingBatch.push(...batch.filter(([m]) => !isUserTextInput(m)));
          const [first, firstId] = user[0]!;
          const text = (first.content as { text: string }).text;
          user[0] = [{ ...first, content: { ...first.content, type: "text", text: `<interrupt>${text}` } as InputMessage["content"] }, firstId];
          newInputs = user;
        } else {
          let batch = [...pendingBatch.splice(0), ...d.inbox.drain()];
          const deferReady = defer.length > 0 && thread.pendingActiveToolCall() === null;
          if (batch.length === 0 && !deferReady) {
            // The idle decision is synchronous with respect to the router.
            if (!d.inbox.empty) {
              batch = d.inbox.drain();
            } else if (thread.awaitingToolResult()) {
              await d.inbox.wait();
              if (d.inbox.closed && d.inbox.empty) return;
              batch = d.inbox.drain();
            } else {
              d.closed = true;
              return;
            }
          }
          newInputs = batch;
        }

        for (const [m] of newInputs) {
          if (isCompactionComplete(m)) {
            compactionTriggered = false;
            totalTokens = 0;
          }
        }
        let batch: [InputMessage, string][];
        try {
          batch = await thread.filterDeferrable(newInputs, defer);
        } catch (e) {
          this.record({ type: "agent", threadId, event: { type: "Info", text: `Error: ${(e as Error).message}` } });
          continue;
        }
        if (batch.length === 0) continue;
        const cancel = new CancelSignal();
        const flight: { settled: Promise<StepResult>; cancel: CancelSignal; result: StepResult | null } = { settled: Promise.resolve({ ok: true, outcome: { kind: "skipped" } }), cancel, result: null };
        flight.settled = thread.stepNoDefer(batch, cancel).then(
          (outcome): StepResult => (flight.result = { ok: true, outcome }),
          (error: unknown): StepResult => (flight.result = { ok: false, error: error instanceof Error ? error : new Error(String(error)) }),
        );
        inFlight = flight;
      }
    } finally {
      d.closed = true;
      if (this.drivers.get(threadId) === d) this.drivers.delete(threadId);
      this.lifecycle(threadId, "idle");
    }
  }

  /** Whether a driver is live for the thread (or for any thread). */
  isLive(threadId?: string): boolean {
    if (threadId === undefined) return [...this.drivers.values()].some((d) => !d.closed);
    const d = this.drivers.get(threadId);
    return d !== undefined && !d.closed;
  }

  /**
   * Wait until the thread's driver has exited (no queued input, no completion running, no tool
   * result outstanding) — or, without a thread id, until every driver has. A thread waiting for
   * the model or for a tool result is not idle: answer it first.
   */
  async waitIdle(threadId?: string, timeoutMs = 10_000): Promise<void> {
    await this.waitUntil(
      () => !this.routerBusy && this.routerQueue.length === 0 && !this.isLive(threadId),
      timeoutMs,
      threadId ? `thread ${threadId} to go idle` : "all threads to go idle",
    );
  }

  // ---- user choices, views, titles, history ----

  private setView(threadId: string, viewType: string, content: unknown): void {
    let m = this.views.get(threadId);
    if (!m) this.views.set(threadId, (m = new Map()));
    m.set(viewType, content);
    this.record({ type: "view_update", threadId, viewType, content });
  }

  /** The views a thread's tool servers published (`set_view`; kept out of history). */
  viewsOf(threadId: string): Map<string, unknown> {
    return new Map(this.views.get(threadId) ?? []);
  }

  titleOf(threadId: string): string | null {
    return this.titles.get(threadId) ?? null;
  }

  pendingUserChoices(threadId: string): Promise<UserChoice[]> {
    return this.stateStore.getPendingUserChoices(threadId);
  }

  /**
   * `UserChoiceAnswered`: POST `{"id","selected"}` to the pending choice's response_url.
   * Resolves with the HTTP status (the daemon does not wait for it), or null when the thread has
   * no such pending choice (the daemon then sends nothing). The choice stays pending until its
   * call's result arrives or the call is interrupted.
   */
  async answerUserChoice(threadId: string, choiceId: string, selected: number): Promise<number | null> {
    const choice = (await this.stateStore.getPendingUserChoices(threadId)).find((c) => c.id === choiceId);
    if (!choice) return null;
    const body = JSON.stringify({ id: choice.id, selected });
    try {
      const status = await postJson(choice.response_url, body);
      this.record({ type: "user_choice_answer", threadId, url: choice.response_url, body, status });
      return status;
    } catch (e) {
      this.record({ type: "user_choice_answer", threadId, url: choice.response_url, body, status: null, error: (e as Error).message });
      return null;
    }
  }

  /** The thread's own stored messages. */
  history(threadId: string): Promise<InfinityMessage[]> {
    return this.conversationStore.loadHistoryUpTo(threadId, null, null);
  }

  /** What the thread's model sees: inherited prefix (or summary) + own messages. */
  async historyWithAncestors(threadId: string): Promise<InfinityMessage[]> {
    return (await this.conversationStore.loadHistoryWithAncestors(threadId))[0];
  }

  /** The thread's direct children, from the store (needs a store that can list threads). */
  async childrenOf(threadId: string): Promise<string[]> {
    const reader = this.conversationStore as Partial<{ listThreads(): Promise<string[]> }>;
    if (!reader.listThreads) throw new Error("the conversation store cannot list threads");
    const out: string[] = [];
    for (const t of await reader.listThreads()) {
      const p = await this.conversationStore.getThreadParentInfo(t);
      if (p?.[0] === threadId) out.push(t);
    }
    return out;
  }

  /** Every request the callback listener received. */
  get callbackRequests(): CallbackServerHandle["requests"] {
    return this.callbacks.requests;
  }

  // ---- shutdown ----

  /** Stop everything: drivers wind down (in-flight steps are cancelled and committed), servers get SIGINT. */
  async shutdown(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.routerQueue.length = 0;
    const drivers = [...this.drivers.values()];
    for (const d of drivers) d.inbox.close();
    // A step stuck on a tool server's ack would hold the daemon forever; the harness moves on.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(drivers.map((d) => d.done.catch(() => undefined))),
      new Promise<void>((r) => (timer = setTimeout(r, this.opts.shutdownGraceMs ?? 5000))),
    ]);
    clearTimeout(timer);
    this.timers.clear();
    await this.rap.shutdownAll();
    await this.callbacks.close();
  }
}

/** Test teardown safety net: SIGKILL any command server a failed test left running. */
export { killAllCommandServers };

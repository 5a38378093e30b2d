// Delivers outbox rows to their callback URLs. At-least-once: a row leaves the outbox only when
// the receiver answered 2xx (delivered), refused it with a 4xx (rejected), or it grew older than
// maxAgeMs (dead). 5xx, timeouts and network errors are retried with capped exponential backoff.
import http from "node:http";
import https from "node:https";
import type { Logger } from "pino";
import type { Clock } from "../../core/clock.js";
import type { RapOutboxRow, RapOutboxStore } from "../../stores/traits.js";

export interface DeliveryOptions {
  /** how often to look for due retries when nothing else wakes the loop */
  pollMs: number;
  /** per-attempt HTTP timeout */
  attemptTimeoutMs: number;
  /** how long a claimed row stays invisible to other processes; must exceed attemptTimeoutMs */
  leaseMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** pending rows older than this are given up on */
  maxAgeMs: number;
  /** rows sent concurrently per pass */
  batch: number;
  /**
   * rows sent concurrently to one receiver (origin: scheme, host and port), so a receiver that
   * accepts connections and never answers cannot hold every slot while others' results wait
   */
  perReceiver: number;
}

export const DEFAULT_DELIVERY: DeliveryOptions = {
  pollMs: 500,
  attemptTimeoutMs: 10_000,
  leaseMs: 30_000,
  baseDelayMs: 200,
  maxDelayMs: 30_000,
  maxAgeMs: 24 * 60 * 60 * 1000,
  batch: 16,
  perReceiver: 4,
};

/** Backoff before attempt `attempts + 1`: doubling from baseDelayMs, capped, with equal jitter. */
export function retryDelay(attempts: number, o: Pick<DeliveryOptions, "baseDelayMs" | "maxDelayMs">, random: () => number): number {
  const full = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** Math.min(attempts, 30));
  return Math.round(full / 2 + (random() * full) / 2);
}

const MIN_WAIT_MS = 50;

type Outcome = { kind: "delivered" } | { kind: "rejected"; error: string } | { kind: "retry"; error: string };

/** 408 and 429 mean "later", not "never", even though they are 4xx. */
function isPermanent(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** An absolute http(s) URL: the only kind of callback_url a result can be posted to. */
export function isCallbackUrl(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const p = new URL(url).protocol;
  return p === "http:" || p === "https:";
}

/** The receiver a callback goes to, for the per-receiver limit: its origin (the URL itself when it has none). */
export function callbackReceiver(url: string): string {
  if (!URL.canParse(url)) return url;
  const origin = new URL(url).origin;
  return origin === "null" ? url : origin;
}

export class CallbackDeliverer {
  private readonly opts: DeliveryOptions;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private again = false;
  private stopped = false;
  /**
   * Deliveries under way. A pass starts them and returns without waiting, so a receiver that
   * takes the whole attempt timeout to answer (a daemon suspended with Ctrl-Z still accepts
   * connections) holds up only its own rows: awaited as a batch, it held every other thread's
   * result back by up to attemptTimeoutMs at every retry.
   */
  private readonly inflight = new Set<Promise<void>>();
  /** deliveries under way per receiver (callbackReceiver), for the perReceiver limit */
  private readonly perReceiver = new Map<string, number>();
  /** the last pass passed over due rows of a receiver at its limit */
  private saturated = false;
  /** aborts in-flight POSTs when stop() gives up waiting */
  private readonly halt = new AbortController();

  constructor(
    private readonly store: RapOutboxStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    opts: Partial<DeliveryOptions> = {},
    private readonly random: () => number = Math.random,
  ) {
    this.opts = { ...DEFAULT_DELIVERY, ...opts };
  }

  start(): void {
    this.kick();
  }

  /** Attempt due rows now (called right after a row is enqueued). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.clearTimer();
    this.running = this.pass().finally(() => {
      this.running = null;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.kick();
      } else {
        void this.scheduleNext();
      }
    });
  }

  /**
   * Stop the loop. With finalPass, first attempt every due row once more, so a result produced
   * during shutdown is not left waiting for the next process.
   */
  async stop(opts: { finalPass: boolean; timeoutMs?: number } = { finalPass: true }): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    const deadline = new Promise<void>((resolve) => {
      const t = setTimeout(resolve, opts.timeoutMs ?? this.opts.attemptTimeoutMs);
      t.unref();
    });
    const work = (async () => {
      await this.running;
      // the final pass goes on while it finds due rows, as a pass did when it awaited its batches
      for (let more = opts.finalPass; ; ) {
        if (more) more = await this.pass();
        await Promise.all(this.inflight);
        if (!more || this.halt.signal.aborted) return;
      }
    })();
    await Promise.race([work, deadline]);
    this.halt.abort(new Error("server stopped"));
    await work.catch(() => undefined);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async scheduleNext(): Promise<void> {
    let wait = this.opts.pollMs;
    try {
      const due = await this.store.nextDueAt();
      // The floor keeps a row that is due but blocked (leased elsewhere, or queued behind an
      // older row of its call) from turning this loop into a busy poll.
      // Rows due but waiting for a receiver at its limit are sent when one of its deliveries
      // ends (that kicks the loop); polling for them every MIN_WAIT_MS only took the write lock
      // to find them still waiting.
      if (due !== null) wait = Math.max(this.saturated ? this.opts.pollMs : MIN_WAIT_MS, Math.min(wait, due - this.clock.now()));
    } catch (e) {
      this.log.error({ err: e }, "outbox: reading next due time failed");
    }
    if (this.stopped || this.running) return;
    this.clearTimer();
    this.timer = setTimeout(() => this.kick(), wait);
    // The HTTP server keeps a serving process alive; this timer alone must not.
    this.timer.unref();
  }

  /**
   * One pass: give up on expired rows, then start sending due rows, at most `batch` under way at
   * once and `perReceiver` to one receiver. True when a limit cut it short (more rows may be
   * due); each delivery that ends kicks the loop again.
   */
  private async pass(): Promise<boolean> {
    try {
      const now = this.clock.now();
      const dead = await this.store.expire(now - this.opts.maxAgeMs, now);
      if (dead > 0) this.log.warn({ dead }, "outbox: gave up on callbacks older than maxAgeMs");
      const room = this.opts.batch - this.inflight.size;
      if (room <= 0 || this.halt.signal.aborted) return room <= 0;
      const spread = { key: callbackReceiver, room: (key: string) => this.opts.perReceiver - (this.perReceiver.get(key) ?? 0) };
      const rows = await this.store.claimDue(this.clock.now(), this.opts.leaseMs, room, spread);
      for (const r of rows) this.track(callbackReceiver(r.callbackUrl), this.deliver(r));
      // A short claim means nothing else was due, unless a receiver is at its limit: rows of
      // it were passed over. A full claim means there may be more.
      this.saturated = [...this.perReceiver.values()].some((n) => n >= this.opts.perReceiver);
      return rows.length === room || this.saturated;
    } catch (e) {
      this.log.error({ err: e }, "outbox: delivery pass failed");
      return false;
    }
  }

  private track(receiver: string, delivery: Promise<void>): void {
    this.perReceiver.set(receiver, (this.perReceiver.get(receiver) ?? 0) + 1);
    const tracked: Promise<void> = delivery
      .catch((e: unknown) => this.log.error({ err: e }, "outbox: delivery failed"))
      .finally(() => {
        this.inflight.delete(tracked);
        const n = (this.perReceiver.get(receiver) ?? 1) - 1;
        if (n > 0) this.perReceiver.set(receiver, n);
        else this.perReceiver.delete(receiver);
        // its slot is free and its outcome recorded: send what is due now (a later row of its call)
        this.kick();
      });
    this.inflight.add(tracked);
  }

  private async deliver(row: RapOutboxRow): Promise<void> {
    const leaseEnds = this.clock.now() + this.opts.leaseMs;
    const outcome = await this.post(row);
    const now = this.clock.now();
    const log = this.log.child({ outbox_id: row.id, group_id: row.groupId, call_id: row.callId });
    switch (outcome.kind) {
      case "delivered":
        if (await this.record(() => this.store.markDelivered(row.id, now), leaseEnds, log)) log.debug({ attempts: row.attempts + 1 }, "callback delivered");
        return;
      case "rejected":
        if (await this.record(() => this.store.markRejected(row.id, now, outcome.error), leaseEnds, log)) {
          log.warn({ error: outcome.error }, "callback rejected by the receiver; not retrying");
        }
        return;
      case "retry": {
        const delay = retryDelay(row.attempts, this.opts, this.random);
        if (await this.record(() => this.store.retryAt(row.id, now + delay, outcome.error), leaseEnds, log)) {
          log.info({ error: outcome.error, attempts: row.attempts + 1, retry_in_ms: delay }, "callback delivery failed; will retry");
        }
        return;
      }
    }
  }

  /**
   * Record a delivery's outcome, trying again while the database refuses (another process holds
   * its lock past the busy timeout) and this row's lease lasts. Left to the lease, a delivered
   * callback was sent a second time once the lease ran out (a question the person had already
   * answered), and the later rows of its call waited behind it until then.
   */
  private async record(write: () => Promise<void>, leaseEnds: number, log: Logger): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        await write();
        return true;
      } catch (e) {
        const delay = Math.min(this.opts.maxDelayMs, this.opts.baseDelayMs * 2 ** attempt);
        if (this.stopped || this.clock.now() + delay >= leaseEnds) {
          // The lease expires on its own, so the row is retried even if this write failed.
          log.error({ err: e }, "outbox: recording the delivery outcome failed");
          return false;
        }
        log.warn({ err: e, retry_in_ms: delay }, "outbox: recording the delivery outcome failed; trying again");
        await new Promise<void>((r) => setTimeout(r, delay).unref());
      }
    }
  }

  private async post(row: RapOutboxRow): Promise<Outcome> {
    if (!isCallbackUrl(row.callbackUrl)) return { kind: "rejected", error: `invalid callback_url ${JSON.stringify(row.callbackUrl)}` };
    try {
      const res = await postJson(row.callbackUrl, row.body ?? "", this.opts.attemptTimeoutMs, this.halt.signal);
      if (res.status >= 200 && res.status < 300) return { kind: "delivered" };
      const error = `HTTP ${res.status}${res.text ? `: ${res.text.slice(0, 200)}` : ""}`;
      return isPermanent(res.status) ? { kind: "rejected", error } : { kind: "retry", error };
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      return { kind: "retry", error: err.code ?? err.message ?? String(e) };
    }
  }
}

// node:http with keep-alive: a callback is one small POST to a loopback listener, and fetch's
// per-request machinery costs more CPU than the request itself.
const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }), https: new https.Agent({ keepAlive: true, maxSockets: 64 }) };

function postJson(url: string, body: string, timeoutMs: number, halt: AbortSignal): Promise<{ status: number; text: string }> {
  return new Promise((resolveWith, rejectWith) => {
    // `timeout` below only notices silence: a receiver that sends a byte now and then kept an
    // attempt open past its row's lease, and the row was claimed and sent again beside it.
    const whole = setTimeout(() => timedOut(), timeoutMs);
    whole.unref();
    const resolve = (v: { status: number; text: string }) => {
      clearTimeout(whole);
      resolveWith(v);
    };
    const reject = (e: unknown) => {
      clearTimeout(whole);
      rejectWith(e);
    };
    const u = new URL(url);
    const secure = u.protocol === "https:";
    const req = (secure ? https : http).request(
      u,
      {
        method: "POST",
        agent: secure ? agents.https : agents.http,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        signal: halt,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          // Only the start of a reply is ever logged; do not buffer a huge one.
          if (size < 4096) chunks.push(c);
          size += c.length;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    function timedOut(): void {
      const err = Object.assign(new Error("callback timed out"), { code: "ETIMEDOUT" });
      req.destroy(err);
      reject(err);
    }
    req.on("timeout", timedOut);
    req.on("error", reject);
    req.end(body);
  });
}

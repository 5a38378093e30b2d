// The RAP HTTP server of one toolset (reference §1.1): manifest, invocation ack, cancel, close,
// migrate and user-choice answers. Every runtime→tool request is answered at once (the daemon
// awaits them inside a thread step); tool work runs afterwards, journaled so a crash re-runs it,
// and results leave through the durable outbox.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { systemClock, type Clock } from "../../core/clock.js";
import { clip } from "../../core/text.js";
import type { Backend } from "../../stores/backend.js";
import { refusedForNow, type Db } from "../../stores/sqlite/database.js";
import { SqliteRapJournal } from "../../stores/sqlite/rap-journal.js";
import { SqliteRapOutbox } from "../../stores/sqlite/rap-outbox.js";
import { SqliteRapUserChoices } from "../../stores/sqlite/rap-user-choices.js";
import type { RapOutboxStats } from "../../stores/traits.js";
import { webPageMark } from "./browser-guard.js";
import { CallbackDeliverer, isCallbackUrl, type DeliveryOptions } from "./callback-client.js";
import { HttpError, parseJson, readBody, reply } from "./http-body.js";
import { InvocationRunner, type CompleteRetry } from "./invocations.js";
import { newOwner } from "./owner.js";
import { checkToolset, toolDefOf, type Toolset } from "./registry.js";
import { ChoiceBroker } from "./user-choice.js";
import { manifestJson } from "./wire-json.js";
import { CancelToolCallRequest, CloseThreadRequest, MigrateRequest, RapInvocation, UserChoiceResponse } from "./wire.js";

export const BODY_LIMIT_BYTES = 1024 * 1024;
const DEFAULT_GRACE_MS = 5000;
/** Invocations accepted and not finished, over all threads; more are answered 429. */
export const MAX_ACTIVE_CALLS = 1024;
/** The same, per thread (group_id). */
export const MAX_ACTIVE_CALLS_PER_THREAD = 64;
/**
 * How long an idle connection is kept open. Longer than the daemon's client keeps one (reqwest
 * over hyper drops idle pooled connections after 90 s), so the client always closes first: with
 * Node's default of 5 s, an invocation sent on a connection the server was just closing failed
 * with a reset, and a thread whose tool calls came about 5 s apart met that race on every call.
 */
export const KEEP_ALIVE_MS = 100_000;

export type RapStores = Pick<Backend, "journal" | "outbox" | "userChoices">;

function rapStoresOf(db: Db | RapStores): RapStores {
  if ("journal" in db && "outbox" in db) return db;
  const sqlite = db as Db;
  return { journal: new SqliteRapJournal(sqlite), outbox: new SqliteRapOutbox(sqlite), userChoices: new SqliteRapUserChoices(sqlite) };
}

export interface RapLimits {
  /** accepted, unfinished invocations over all threads (default MAX_ACTIVE_CALLS) */
  maxActiveCalls?: number;
  /** accepted, unfinished invocations of one thread (default MAX_ACTIVE_CALLS_PER_THREAD) */
  maxActiveCallsPerThread?: number;
  /** at most `calls` new invocations per thread in any `windowMs` (off unless set) */
  perThreadRate?: { calls: number; windowMs: number };
}

export interface RapServerOptions {
  toolset: Toolset;
  /**
   * Where invocations are journaled and results wait for delivery: a SQLite connection, or the
   * stores of any backend. The caller owns them and closes them after close().
   */
  db: Db | RapStores;
  host?: string;
  /** 0 picks a free port */
  port?: number;
  logger: Logger;
  clock?: Clock;
  outbox?: Partial<DeliveryOptions>;
  bodyLimitBytes?: number;
  /** bounded work: refused invocations get 429 and the runtime reports an Error result */
  limits?: RapLimits;
  /** waits between attempts to store a finished call's result, or run its handler, the database refused */
  completeRetry?: Partial<CompleteRetry>;
  /**
   * Journal calls under this scope besides the toolset's name: a crashed server's open calls are
   * re-run only by a server of the same scope. A command server passes its project (the daemon
   * starts one per session in {session cwd}/.infinity, and that cwd is all it knows of the
   * project), so a server started for another project on the same database never re-runs a
   * call against that project's memories.
   */
  journalScope?: string;
}

export interface RapServer {
  port: number;
  /** base URL of this server, e.g. http://127.0.0.1:41234 */
  url: string;
  outbox: { pendingCount(): Promise<number>; stats(): Promise<RapOutboxStats> };
  /** stop accepting, let running calls finish for graceMs, abort the rest, flush the outbox once */
  close(opts?: { graceMs?: number }): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, base: string) => Promise<void>;

const HOST_HEADER = /^[A-Za-z0-9.\-_:[\]]+$/;

function baseUrlOf(req: IncomingMessage, fallback: string): string {
  const host = req.headers.host;
  if (!host || !HOST_HEADER.test(host)) return fallback;
  const proto = String(req.headers["x-forwarded-proto"] ?? "").split(",")[0]?.trim().toLowerCase();
  return `${proto === "https" ? "https" : "http"}://${host}`;
}

function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

export async function startRapServer(o: RapServerOptions): Promise<RapServer> {
  const { toolset, db } = o;
  checkToolset(toolset);
  const clock = o.clock ?? systemClock;
  const limit = o.bodyLimitBytes ?? BODY_LIMIT_BYTES;
  const log = o.logger.child({ toolset: toolset.name });
  // Schemas are converted once; only the endpoint differs per request.
  const tools = toolset.tools.map(toolDefOf);

  const owner = newOwner();
  const journalName = o.journalScope === undefined ? toolset.name : `${toolset.name}@${o.journalScope}`;
  const stores = rapStoresOf(db);
  const { journal, outbox } = stores;
  const deliverer = new CallbackDeliverer(outbox, clock, log, o.outbox);
  // Questions share the journal's name, so a call's question and result are one call in the outbox.
  const choices = new ChoiceBroker(
    journalName,
    stores.userChoices,
    async (entry) => {
      await outbox.enqueue(entry, clock.now());
      deliverer.kick();
    },
    clock,
    log,
  );
  const runner = new InvocationRunner({
    toolset,
    journalName,
    requestsWaiting: () => unanswered > 0,
    journal,
    choices,
    onEnqueued: () => deliverer.kick(),
    owner: owner.id,
    clock,
    log,
    ...(o.completeRetry ? { completeRetry: o.completeRetry } : {}),
    refusedForNow,
  });
  let accepting = true;
  const maxActive = o.limits?.maxActiveCalls ?? MAX_ACTIVE_CALLS;
  const maxPerThread = o.limits?.maxActiveCallsPerThread ?? MAX_ACTIVE_CALLS_PER_THREAD;
  const rate = o.limits?.perThreadRate;
  /** per thread: start times of its invocations inside the rate window */
  const recent = new Map<string, number[]>();
  /** null when the invocation may be accepted, else the 429 message */
  const overLimit = (inv: RapInvocation): string | null => {
    if (runner.isActive(inv.group_id, inv.id)) return null; // a duplicate of a call in progress
    if (runner.activeCount >= maxActive) {
      return `too many tool calls in progress (${runner.activeCount}, limit ${maxActive}); try again when some have finished`;
    }
    const mine = runner.activeFor(inv.group_id);
    if (mine >= maxPerThread) {
      return `too many tool calls in progress for thread ${inv.group_id} (${mine}, limit ${maxPerThread}); try again when some have finished`;
    }
    if (rate) {
      const now = clock.now();
      const times = (recent.get(inv.group_id) ?? []).filter((t) => t > now - rate.windowMs);
      if (times.length >= rate.calls) {
        recent.set(inv.group_id, times);
        return `rate limit: thread ${inv.group_id} sent more than ${rate.calls} tool calls in ${rate.windowMs} ms; slow down`;
      }
      times.push(now);
      recent.set(inv.group_id, times);
      // keep the map bounded: forget threads with nothing inside the window
      if (recent.size > 10_000) for (const [g, ts] of recent) if ((ts.at(-1) ?? 0) <= now - rate.windowMs) recent.delete(g);
    }
    return null;
  };

  const routes: Record<string, Record<string, Handler>> = {
    "/.well-known/rap-toolset": {
      GET: async (_req, res, base) => {
        const body = manifestJson({
          name: toolset.name,
          description: toolset.description,
          endpoint: `${base}/invoke`,
          tools,
          needsMigration: toolset.needsMigration ?? false,
        });
        reply(res, 200, body, "application/json");
      },
    },
    "/invoke": {
      POST: async (req, res, base) => {
        const arrived = performance.now();
        const raw = await readBody(req, limit);
        const inv = parseJson(raw, RapInvocation, "invocation");
        // Refused before the tool runs: acknowledged, a call ran (a memory written, a forget done)
        // and its result was dropped at delivery, with no word to the runtime that waits for it.
        if (!isCallbackUrl(inv.callback_url)) {
          throw new HttpError(400, `invalid invocation: "callback_url" must be an absolute http:// or https:// URL for the result (got ${JSON.stringify(clip(inv.callback_url, 200))}); the tool was not run`);
        }
        if (!accepting) throw new HttpError(503, "the server is shutting down");
        const limited = overLimit(inv);
        if (limited !== null) {
          log.warn({ tool: inv.operation, group_id: inv.group_id, call_id: inv.id, reason: limited }, "invocation refused: over a limit");
          throw new HttpError(429, limited);
        }
        const key = runner.key(inv.group_id, inv.id);
        let fresh: boolean;
        try {
          fresh = await journal.record(key, raw, owner.id, clock.now());
        } catch (e) {
          log.error({ err: e }, "journaling an invocation failed");
          throw new HttpError(503, "the invocation could not be recorded; try again");
        }
        reply(res, 200);
        // ack_ms: from the request's headers to the 200, as the daemon waits for it.
        const ackMs = Math.round((performance.now() - arrived) * 1000) / 1000;
        log.info({ tool: inv.operation, group_id: inv.group_id, call_id: inv.id, duplicate: !fresh, ack_ms: ackMs }, "invocation received");
        if (fresh) runner.run(inv, base);
        else await runner.resumeIfOrphaned(inv, base);
      },
    },
    "/cancel_tool_call": {
      POST: async (req, res) => {
        const body = parseJson(await readBody(req, limit), CancelToolCallRequest, "cancel_tool_call request");
        const done = runner.cancel(body.thread_id, body.tool_call_id);
        reply(res, 200);
        await done;
        log.info({ group_id: body.thread_id, call_id: body.tool_call_id }, "tool call cancelled by the runtime");
      },
    },
    "/close_thread": {
      POST: async (req, res) => {
        const body = parseJson(await readBody(req, limit), CloseThreadRequest, "close_thread request");
        const done = runner.closeThread(body.thread_id);
        reply(res, 200);
        log.info({ group_id: body.thread_id, aborted: await done }, "thread closed");
      },
    },
    "/migrate": {
      POST: async (req, res) => {
        const body = parseJson(await readBody(req, limit), MigrateRequest, "migrate request");
        // All state is in the database file, so there is nothing to hand over in process.
        reply(res, 200);
        log.info({ session_id: body.session_id, destination_url: body.destination_url }, "migration notice");
      },
    },
    "/user_choice_response": {
      POST: async (req, res) => {
        const body = parseJson(await readBody(req, limit), UserChoiceResponse, "user_choice_response");
        const thread = new URL(req.url ?? "/", "http://localhost").searchParams.get("thread");
        const outcome = await choices.answer(body.id, body.selected, thread);
        if (outcome.ok) {
          reply(res, 200);
          log.info({ call_id: body.id, selected: body.selected }, "user choice answered");
          return;
        }
        reply(res, outcome.status, outcome.message);
        log.warn({ call_id: body.id, selected: body.selected, reason: outcome.message }, "user choice answer not applied");
      },
    },
  };

  let fallbackBase = "";
  let unanswered = 0;
  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => log.error({ err: e }, "replying failed"));
  });
  server.on("clientError", (_err, socket) => socket.destroy());
  server.keepAliveTimeout = KEEP_ALIVE_MS;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    req.on("error", () => undefined);
    res.on("error", () => undefined);
    // Requests not yet answered: tool handlers wait while any are open (acks come first).
    unanswered++;
    res.once("close", () => unanswered--);
    try {
      let path: string;
      try {
        path = new URL(req.url ?? "/", "http://localhost").pathname;
      } catch {
        throw new HttpError(400, "malformed request URL");
      }
      // no RAP client is a browser: a page the user visits must not run tools (browser-guard.ts)
      const mark = webPageMark(req);
      if (mark !== null) {
        log.warn({ path, mark }, "request from a web page refused");
        res.setHeader("connection", "close");
        throw new HttpError(403, `refused: this RAP server answers the Infinity daemon, not web pages (the request carries ${mark})`);
      }
      const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
      if (!route) throw new HttpError(404, `no such endpoint: ${path}`);
      const method = req.method ?? "";
      const handler = Object.hasOwn(route, method) ? route[method] : undefined;
      if (!handler) {
        res.setHeader("allow", Object.keys(route).join(", "));
        throw new HttpError(405, `${req.method} is not allowed on ${path}; use ${Object.keys(route).join(" or ")}`);
      }
      await handler(req, res, baseUrlOf(req, fallbackBase));
    } catch (e) {
      if (e instanceof HttpError) {
        // Do not keep a connection whose request body was not read to the end.
        if (e.status === 413) res.setHeader("connection", "close");
        reply(res, e.status, e.message);
        return;
      }
      log.error({ err: e, path: req.url }, "request failed");
      reply(res, 500, "internal error");
    }
  }

  const addr = await listen(server, o.host ?? "127.0.0.1", o.port ?? 0);
  fallbackBase = `http://${urlHost(addr.address)}:${addr.port}`;
  // After listen, a server error (e.g. out of file descriptors) is logged, never fatal.
  server.on("error", (e) => log.error({ err: e }, "HTTP server error"));
  deliverer.start();
  const replayed = await runner.replay(fallbackBase).catch((e: unknown) => {
    log.error({ err: e }, "re-running unfinished invocations failed");
    return 0;
  });
  log.info({ url: fallbackBase, replayed }, "RAP server listening");

  let closing: Promise<void> | null = null;
  const close = async (opts: { graceMs?: number } = {}): Promise<void> => {
    accepting = false;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await runner.shutdown(opts.graceMs ?? DEFAULT_GRACE_MS);
    await deliverer.stop({ finalPass: true });
    server.closeAllConnections();
    await closed;
    owner.release();
    log.info("RAP server stopped");
  };

  return {
    port: addr.port,
    url: fallbackBase,
    outbox: { pendingCount: () => outbox.pendingCount(), stats: () => outbox.stats() },
    close: (opts) => (closing ??= close(opts)),
  };
}

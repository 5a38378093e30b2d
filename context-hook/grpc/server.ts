// The gRPC face of the context hook (proto/infinity/memory/v1/context_hook.proto) for a daemon
// patched with `ThreadConfigSource::prompt_prefix` (README.md here). It owns request validation,
// the proto ⇄ PrefixRequest/PrefixResult mapping and turning a finished turn into one trace
// event; the prefix itself comes from whatever PrefixBuilder it is given.
import { create } from "@bufbuild/protobuf";
import { Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall } from "@grpc/grpc-js";
import { createHash } from "node:crypto";
import { chmodSync, lstatSync, unlinkSync } from "node:fs";
import { connect } from "node:net";
import { isAbsolute, resolve } from "node:path";
import pino, { type Logger } from "pino";
import { systemClock, type Clock } from "../../core/clock.js";
import { isCoreError } from "../../core/errors.js";
import type { OmitReason, PrefixBuilder, PrefixItemType, PrefixRequest, PrefixResult } from "../../core/retrieval/prefix-types.js";
import type { TraceEvent, TraceStore } from "../../stores/traits.js";
import {
  BuildPrefixResponseSchema,
  OmitReason as WireOmitReason,
  PrefixItemType as WirePrefixItemType,
  RecordTurnResponseSchema,
  type BuildPrefixRequest,
  type BuildPrefixResponse,
  type RecordTurnRequest,
  type RecordTurnResponse,
} from "../../proto/gen/infinity/memory/v1/context_hook_pb.js";
import { contextHookService, decodeErrorOf, type ContextHookHandlers } from "./service.js";
import { clip, headOf, wellFormed } from "../../core/text.js";
import { DEFAULT_TASK_OPTIONS } from "../provider-proxy/task.js";
import { isLoopbackHost } from "../../core/loopback.js";
import { externalIdProblem } from "../../core/ids.js";
import { projectDir } from "../../stores/infinity-files/project-dir.js";

/** Where `infinity-memory serve --grpc` listens unless told otherwise (the RAP server is on 7411). */
export const DEFAULT_GRPC_ADDRESS = "127.0.0.1:7412";
/** Largest budget a request may ask for; the same ceiling as config prefix.budgetTokens. */
export const MAX_BUDGET_TOKENS = 100_000;
/** trace_events bodies hold excerpts (migration 5): result and final texts are cut to this. */
export const EXCERPT_CHARS = 2000;
export const ARGS_EXCERPT_CHARS = 500;
/** BuildPrefix's task is cut to this: the proxy's user-message head, with room for a window of turns. */
export const MAX_TASK_CHARS = 2 * DEFAULT_TASK_OPTIONS.userChars;
const DEFAULT_GRACE_MS = 2000;

/** The body of a "turn" trace event: excerpts and digests only (a type, so it is a JSON record). */
export type TurnBody = {
  historyLength: number;
  toolCalls: { id: string; name: string; argsDigest: string; argsExcerpt: string }[];
  toolResults: { id: string; excerpt: string }[];
  finalText: string;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number; cachedInputTokens: number } | null;
};

/** One finished turn as handed to the trace store. `dedupKey` is equal for identical turns; `at` is receipt time. */
export interface GrpcTraceEvent extends TraceEvent {
  source: "grpc";
  threadId: string;
  rootThreadId: string;
  kind: "turn";
  body: TurnBody;
}

/** The part of the trace store the service uses (SqliteTraceStore in production). */
export type TraceSink = Pick<TraceStore, "record">;

export interface ContextHookServerOptions {
  builder: PrefixBuilder;
  traces: TraceSink;
  /**
   * "127.0.0.1:PORT" (0 picks a free port), "[::1]:PORT", "localhost:PORT", or "unix:/path.sock"
   * (a stale socket file left by a dead server is replaced).
   */
  address: string;
  /** bind a non-loopback host too; off by default because the service has no authentication */
  allowRemote?: boolean;
  logger?: Logger;
  clock?: Clock;
}

export interface ContextHookServer {
  /** the bound address with the real port, e.g. "127.0.0.1:41234", or "unix:/abs/path.sock" */
  address: string;
  /** the TCP port; null on a Unix socket */
  port: number | null;
  /** stop accepting, give running calls graceMs to finish, then cut them off */
  close(opts?: { graceMs?: number }): Promise<void>;
}

/** A request the server refuses; `message` names the offending proto field. */
class InvalidArgument extends Error {}

type Target = { kind: "tcp"; host: string; port: number } | { kind: "unix"; path: string };

function parseAddress(address: string, allowRemote: boolean): Target {
  if (address.startsWith("unix:")) {
    // grpc-js also accepts unix:///abs; normalise so the stale-socket check sees the real path.
    const raw = address.slice("unix:".length).replace(/^\/\/(?=\/)/, "");
    if (raw.length === 0) throw new Error(`gRPC address "${address}": missing socket path`);
    return { kind: "unix", path: isAbsolute(raw) ? raw : resolve(raw) };
  }
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(address);
  const port = m ? Number(m[2]) : NaN;
  if (!m || !(port >= 0 && port <= 65535)) {
    throw new Error(`gRPC address "${address}": expected HOST:PORT (e.g. ${DEFAULT_GRPC_ADDRESS}) or unix:/path.sock`);
  }
  const host = m[1] as string;
  if (!isLoopbackHost(host) && !allowRemote) {
    throw new Error(`gRPC address "${address}": refusing a non-loopback host; the ContextHook service has no authentication`);
  }
  return { kind: "tcp", host, port };
}

/** Removes a socket file nobody listens on (a crashed server's); refuses a live or non-socket one. */
async function clearStaleSocket(path: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return; // nothing there
  }
  if (!isSocket) throw new Error(`gRPC socket path ${path} exists and is not a socket`);
  const live = await new Promise<boolean>((done) => {
    const s = connect(path);
    s.once("connect", () => {
      s.destroy();
      done(true);
    });
    s.once("error", () => done(false));
  });
  if (live) throw new Error(`gRPC socket ${path} is in use by another server`);
  unlinkSync(path);
}

// --- BuildPrefix -------------------------------------------------------------------------------

/** A path (the project): a NUL in one is malformed, and PostgreSQL text cannot store it. */
function noNul(value: string, field: string): string {
  if (value.includes("\u0000")) throw new InvalidArgument(`${field} holds a NUL character (U+0000)`);
  return value;
}

/** An identifier (thread, user, call id): no NUL, and short enough to key a PostgreSQL index. */
function idOf(value: string, field: string): string {
  const problem = externalIdProblem(noNul(value, field));
  if (problem) throw new InvalidArgument(`${field} ${problem}`);
  return value;
}

function required(value: string, field: string): string {
  if (value.trim().length === 0) throw new InvalidArgument(`${field} is required`);
  return idOf(value, field);
}

function toPrefixRequest(req: BuildPrefixRequest): PrefixRequest {
  const thread = required(req.threadId, "thread_id");
  const user = required(req.userId, "user_id");
  // the task is text, not an identifier: a NUL in it is only a separator. Its head only, as
  // the provider proxy keeps it: a user message holding a pasted log (the daemon sends the latest
  // one at every step) kept the builder, and every other call on this server, busy for seconds.
  const task = clip(req.task.trimStart(), MAX_TASK_CHARS).replaceAll("\u0000", " ");
  if (task.trim().length === 0) throw new InvalidArgument("task is required");
  idOf(req.rootThreadId, "root_thread_id");
  noNul(req.project ?? "", "project");
  req.ancestors.forEach((a, i) => {
    if (a.trim().length === 0) throw new InvalidArgument(`ancestors[${i}] is empty`);
    idOf(a, `ancestors[${i}]`);
    if (a === thread) throw new InvalidArgument(`ancestors[${i}] is thread_id itself; ancestors exclude the current thread`);
  });
  const first = req.ancestors[0];
  // Infinity's thread_ancestors start at the root, so a disagreeing root id means a confused client.
  if (req.rootThreadId !== "" && first !== undefined && first !== req.rootThreadId) {
    throw new InvalidArgument(`root_thread_id "${req.rootThreadId}" differs from ancestors[0] "${first}" (ancestors run root → parent)`);
  }
  const budget = req.budgetTokens;
  if (budget !== undefined && (budget < 1 || budget > MAX_BUDGET_TOKENS)) {
    throw new InvalidArgument(`budget_tokens must be between 1 and ${MAX_BUDGET_TOKENS} (or unset for the default), got ${budget}`);
  }
  return {
    scope: {
      user,
      // keyed as the memory toolset keys it (its own cwd, links resolved): the session's cwd
      // as the daemon recorded it may name the same directory through a link or end in "/"
      project: req.project !== undefined && req.project.length > 0 ? projectDir(req.project) : null,
      session: req.rootThreadId || first || thread,
      thread,
      ancestors: [...req.ancestors],
    },
    task,
    // heads only, as the provider proxy keeps them: a whole pasted log here took the builder
    // longer than the daemon's deadline for the prefix at every step it stayed among the recent
    recent: req.recent.map((t) => clip(t, DEFAULT_TASK_OPTIONS.recentChars)),
    budgetTokens: budget,
  };
}

// Records keyed by the builder's unions: a new item type or omit reason fails to compile here.
const ITEM_TYPE: Record<PrefixItemType, WirePrefixItemType> = {
  memory: WirePrefixItemType.MEMORY,
  skill: WirePrefixItemType.SKILL,
};
const OMIT_REASON: Record<OmitReason, WireOmitReason> = {
  budget: WireOmitReason.BUDGET,
  near_duplicate: WireOmitReason.NEAR_DUPLICATE,
  in_history: WireOmitReason.IN_HISTORY,
  below_threshold: WireOmitReason.BELOW_THRESHOLD,
  flagged: WireOmitReason.FLAGGED,
  pending: WireOmitReason.PENDING,
};

// int32 fields: protobuf-es refuses fractions and out-of-range numbers at serialisation time.
function int32(n: number): number {
  if (!Number.isFinite(n)) return 0;
  return Math.max(-2147483648, Math.min(2147483647, Math.round(n)));
}

function toBuildPrefixResponse(r: PrefixResult): BuildPrefixResponse {
  return create(BuildPrefixResponseSchema, {
    text: r.text,
    items: r.items.map((it) => ({
      id: it.id,
      type: ITEM_TYPE[it.type] ?? WirePrefixItemType.UNSPECIFIED,
      kind: it.kind,
      score: it.score,
      tokens: int32(it.tokens),
      why: it.why,
    })),
    tokensUsed: int32(r.tokensUsed),
    budgetTokens: int32(r.budgetTokens),
    omitted: r.omitted.map((o) => ({ id: o.id, reason: OMIT_REASON[o.reason] ?? WireOmitReason.UNSPECIFIED })),
    disabled: r.disabled,
  });
}

// --- RecordTurn --------------------------------------------------------------------------------

function excerpt(text: string, max: number): string {
  return text.length <= max ? text : `${headOf(text, max)}…`;
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function toTraceEvent(req: RecordTurnRequest, at: number): GrpcTraceEvent {
  const threadId = required(req.threadId, "thread_id");
  req.toolCalls.forEach((c, i) => {
    required(c.id, `tool_calls[${i}].id`);
    required(c.name, `tool_calls[${i}].name`);
    if (c.argsJson.trim().length > 0) {
      try {
        JSON.parse(c.argsJson);
      } catch (e) {
        throw new InvalidArgument(`tool_calls[${i}].args_json is not valid JSON: ${(e as Error).message}`);
      }
    }
  });
  req.toolResults.forEach((r, i) => required(r.id, `tool_results[${i}].id`));
  const rootThreadId = idOf(req.rootThreadId, "root_thread_id") || threadId;
  const usage = req.usage
    ? {
        inputTokens: req.usage.inputTokens,
        outputTokens: req.usage.outputTokens,
        totalTokens: req.usage.totalTokens,
        cachedInputTokens: req.usage.cachedInputTokens,
      }
    : null;
  // The key hashes the full turn, before excerpting, so two turns that differ only past the
  // excerpt are still two events, and a re-sent identical turn is one.
  const full = JSON.stringify([
    threadId,
    rootThreadId,
    req.historyLength,
    req.toolCalls.map((c) => [c.id, c.name, c.argsJson]),
    req.toolResults.map((r) => [r.id, r.excerpt]),
    req.finalText,
    usage,
  ]);
  return {
    source: "grpc",
    dedupKey: `grpc:turn:${threadId}:${req.historyLength}:${sha256(full).slice(0, 32)}`,
    threadId,
    rootThreadId,
    kind: "turn",
    body: {
      historyLength: req.historyLength,
      toolCalls: req.toolCalls.map((c) => ({
        id: c.id,
        name: c.name,
        argsDigest: sha256(c.argsJson),
        argsExcerpt: excerpt(c.argsJson, ARGS_EXCERPT_CHARS),
      })),
      toolResults: req.toolResults.map((r) => ({ id: r.id, excerpt: excerpt(r.excerpt, EXCERPT_CHARS) })),
      finalText: excerpt(req.finalText, EXCERPT_CHARS),
      usage,
    },
    at,
  };
}

// --- server ------------------------------------------------------------------------------------

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Longest status message sent; it travels in an HTTP/2 header. */
const MAX_DETAILS_CHARS = 1000;

/**
 * A status message grpc-js can send. It percent-encodes `grpc-message` with encodeURI, which
 * throws on a lone surrogate (V8's JSON.parse error quotes one UTF-16 unit of the bad input, half
 * of an astral character), and then never answers the call: the client waits for its deadline.
 */
export function safeDetails(message: string): string {
  return wellFormed(message.length > MAX_DETAILS_CHARS ? `${message.slice(0, MAX_DETAILS_CHARS)}…` : message);
}

/**
 * Runs `work` for one unary call and answers exactly once. InvalidArgument (and a CoreError
 * "invalid_argument" from the builder) → INVALID_ARGUMENT; anything else → INTERNAL, logged.
 * Nothing escapes: a failing call must not take the daemon's prefix source down with it.
 */
function unary<Req, Res>(
  log: Logger,
  method: "BuildPrefix" | "RecordTurn",
  what: string,
  work: (req: Req) => Promise<Res>,
): (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void {
  return (call, callback) => {
    const undecodable = decodeErrorOf(call.request);
    if (undecodable !== null) {
      callback({ code: status.INVALID_ARGUMENT, details: safeDetails(`the request is not a valid ${method}Request protobuf message: ${undecodable}`) });
      return;
    }
    let p: Promise<Res>;
    try {
      p = work(call.request);
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(
      (res) => callback(null, res),
      (e: unknown) => {
        if (e instanceof InvalidArgument || (isCoreError(e) && e.code === "invalid_argument")) {
          callback({ code: status.INVALID_ARGUMENT, details: safeDetails(e.message) });
          return;
        }
        log.error({ err: e }, `${what} failed`);
        callback({ code: status.INTERNAL, details: safeDetails(`${what} failed: ${errorMessage(e)}`) });
      },
    );
  };
}

export async function startContextHookServer(o: ContextHookServerOptions): Promise<ContextHookServer> {
  const target = parseAddress(o.address, o.allowRemote ?? false);
  const log = (o.logger ?? pino({ level: "silent" })).child({ component: "grpc-context-hook" });
  const clock = o.clock ?? systemClock;

  const handlers: ContextHookHandlers = {
    buildPrefix: unary<BuildPrefixRequest, BuildPrefixResponse>(log, "BuildPrefix", "prefix builder", async (req) => {
      const prefixRequest = toPrefixRequest(req);
      return toBuildPrefixResponse(await o.builder.build(prefixRequest));
    }),
    recordTurn: unary<RecordTurnRequest, RecordTurnResponse>(log, "RecordTurn", "trace store", async (req) => {
      const stored = await o.traces.record(toTraceEvent(req, clock.now()));
      return create(RecordTurnResponseSchema, { accepted: stored, duplicate: !stored });
    }),
  };

  const server = new Server();
  server.addService(contextHookService, handlers);
  if (target.kind === "unix") await clearStaleSocket(target.path);
  const bindTo = target.kind === "unix" ? `unix:${target.path}` : `${target.host}:${target.port}`;
  const boundPort = await new Promise<number>((done, fail) => {
    server.bindAsync(bindTo, ServerCredentials.createInsecure(), (err, port) => (err ? fail(err) : done(port)));
  }).catch((e: unknown) => {
    server.forceShutdown();
    throw new Error(`gRPC ContextHook could not bind ${bindTo}: ${errorMessage(e)}`);
  });

  // The service has no authentication: whoever can connect reads any user's memories through
  // BuildPrefix. The socket's mode came from the umask (0775 under 002): owner only, as the proxy's.
  if (target.kind === "unix") {
    try {
      chmodSync(target.path, 0o600);
    } catch (e) {
      server.forceShutdown();
      throw new Error(`gRPC ContextHook could not make ${target.path} owner-only: ${errorMessage(e)}`);
    }
  }
  const address = target.kind === "unix" ? bindTo : `${target.host}:${boundPort}`;
  log.info({ address }, "gRPC ContextHook listening");

  let closing: Promise<void> | null = null;
  const close = (opts: { graceMs?: number } = {}): Promise<void> => {
    closing ??= new Promise<void>((done) => {
      const timer = setTimeout(() => server.forceShutdown(), opts.graceMs ?? DEFAULT_GRACE_MS);
      // Closing the listener also unlinks a Unix socket file (libuv does), so a clean stop
      // leaves nothing for clearStaleSocket to find.
      server.tryShutdown(() => {
        clearTimeout(timer);
        done();
      });
    });
    return closing;
  };

  return { address, port: target.kind === "tcp" ? boundPort : null, close };
}

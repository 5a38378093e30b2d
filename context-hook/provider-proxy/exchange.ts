// One client connection: read its single request line, forward it (with the prefix spliced into
// an InvokeModel preamble) on a fresh upstream connection, and relay the upstream's response bytes
// back unchanged. The proxy speaks only when the upstream cannot: a `{"Error"}` line before the
// response started, a `{"Chunk":{"Error"}}` line after.
import { createConnection, type Socket } from "node:net";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import type { Clock } from "../../core/clock.js";
import type { TraceStore } from "../../stores/traits.js";
import { parsePreambleThreadIds } from "../thread-context.js";
import { LineBuffer, LineTooLongError, lineText } from "./line-buffer.js";
import { applyPrefix, type PrefixOutcome, type PrefixStepDeps } from "./prefix-step.js";
import { chunkErrorLine, errorLine, ProviderRequest, type InvokeModelRequest } from "./protocol.js";
import { ResponseObserver } from "./response-observer.js";
import { traceEventOf, type PrefixSummary } from "./trace.js";
import { safeParseWire } from "../../toolsets/rap/safe-parse.js";

export interface ExchangeDeps {
  /** the upstream's socket, and why it is gone once it is */
  upstream: { readonly socketPath: string; readonly exitReason: string | null };
  /** null: relay model calls without a prefix */
  prefix: PrefixStepDeps | null;
  traces: TraceStore | null;
  clock: Clock;
  logger: Logger;
  maxLineBytes: number;
  /** the trace write of a finished call (so shutdown can wait for it) */
  track(p: Promise<void>): void;
  /** how long the upstream may stay silent once the client has ended its side (default 120 s) */
  endedStallMs?: number;
}

/**
 * A client's end after its request cannot be told apart from the daemon dropping the call (a
 * cancel, its 60 s start and 120 s stall timeouts): the daemon never half-closes, a debugging
 * `nc` does. Both are answered; but an upstream silent for the daemon's stall timeout after the
 * end has no one waiting, so the call is closed then (a hung model kept both sockets open for good).
 */
const ENDED_STALL_MS = 120_000;

const NEWLINE = Buffer.from("\n");

type Parsed =
  | { kind: "list" }
  | { kind: "invoke"; request: InvokeModelRequest; text: string }
  | { kind: "other" };

function parseRequest(line: Buffer): Parsed {
  const text = lineText(line);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "other" };
  }
  // a request zod cannot even compare is relayed untouched like any other it does not know
  const req = safeParseWire(ProviderRequest, value);
  if (!req.success) return { kind: "other" };
  return req.data === "ListModels" ? { kind: "list" } : { kind: "invoke", request: req.data, text };
}

export function runExchange(client: Socket, id: number, deps: ExchangeDeps): void {
  const log = deps.logger.child({ conn: id });
  const started = performance.now();
  const request = new LineBuffer(deps.maxLineBytes);
  let gotRequest = false;
  let closed = false;
  let upstream: Socket | null = null;
  let response: ResponseObserver | null = null;

  // The daemon cancels a model call by dropping the connection: stop the upstream's work too.
  const onClientGone = () => {
    if (closed) return;
    closed = true;
    if (stall) clearTimeout(stall);
    upstream?.destroy();
    client.destroy(); // half-open after an end: our side would stay open, a descriptor per call
    if (response?.finished) log.debug("client closed after the response");
    else log.info({ ms: elapsed(started) }, "client went away; upstream call cancelled");
  };
  client.on("error", onClientGone);
  client.on("close", onClientGone);

  const reject = (message: string) => {
    closed = true;
    client.end(errorLine(`memory proxy: ${message}`));
  };

  client.on("data", (chunk: Buffer) => {
    if (gotRequest) return; // one request per connection; anything after it is not ours to read
    let lines: Buffer[];
    try {
      lines = request.push(chunk).lines;
    } catch (e) {
      if (!(e instanceof LineTooLongError)) throw e;
      gotRequest = true;
      log.warn({ limit: e.limit }, "request line too long");
      return reject(`request line longer than ${e.limit} bytes`);
    }
    const first = lines[0];
    if (first === undefined) return;
    gotRequest = true;
    void forward(first);
  });
  // A client that half-closes after its request (no newline) still sent one: LinesCodec's decode_eof.
  // An end after a whole request line is the daemon going away (it never half-closes: its framed
  // socket writes the request and reads; a cancel or a start/stall timeout drops it): without
  // this, a silent or stalled upstream kept both sockets open for good.
  let ended = false;
  let stall: NodeJS.Timeout | null = null;
  const endedStallMs = deps.endedStallMs ?? ENDED_STALL_MS;
  /** (re)starts the silence limit once the client has ended; every upstream byte restarts it */
  const watchSilence = () => {
    if (!ended || closed) return;
    if (stall) clearTimeout(stall);
    stall = setTimeout(() => {
      log.info({ ms: elapsed(started), silent_ms: endedStallMs }, "client ended its side and the upstream stayed silent; call closed");
      onClientGone();
    }, endedStallMs);
    stall.unref();
  };
  client.on("end", () => {
    ended = true;
    if (gotRequest) return watchSilence();
    gotRequest = true;
    const rest = request.rest();
    if (rest.length > 0) void forward(rest);
    else {
      closed = true;
      client.end();
    }
  });

  async function forward(line: Buffer): Promise<void> {
    const parsed = parseRequest(line);
    if (deps.upstream.exitReason !== null) return reject(`upstream provider ${deps.upstream.exitReason}`);
    // Connect while the prefix is being built; the upstream reads nothing until we write.
    const up = createConnection(deps.upstream.socketPath);
    upstream = up;
    const observer = new ResponseObserver(parsed.kind);
    response = observer;
    let outgoing: Buffer | null = null;
    let prefix: PrefixOutcome | null = null;

    relay(up, observer, () => {
      logDone(parsed, observer, prefix);
      // Only a complete stream is a trace; the runtime retries the others with the same request.
      if (parsed.kind === "invoke" && observer.state === "done") recordTrace(parsed.request, observer, prefix);
    });

    if (parsed.kind === "invoke" && deps.prefix) {
      try {
        prefix = await applyPrefix(parsed.text, parsed.request.InvokeModel.request, deps.prefix);
      } catch (e) {
        log.error({ err: e }, "prefix step failed; forwarding the request unchanged");
      }
      if (prefix?.error) log.warn({ status: prefix.summary.status, error: prefix.error }, "no prefix for this call");
      if (prefix?.line != null) outgoing = Buffer.from(`${prefix.line}\n`);
    }
    if (closed) return;
    up.write(outgoing ?? Buffer.concat([line, NEWLINE]));
  }

  function logDone(parsed: Parsed, observer: ResponseObserver, prefix: PrefixOutcome | null): void {
    const base = { kind: parsed.kind, state: observer.state, ms: elapsed(started) };
    if (parsed.kind !== "invoke") return log.debug(base, "exchange done");
    log.info(
      {
        ...base,
        model: parsed.request.InvokeModel.model_id,
        thread: prefix?.threadId ?? null,
        prefix: prefix?.summary.status ?? "off",
        prefixTokens: prefix?.summary.tokens ?? 0,
        resolveMs: round(prefix?.resolveMs ?? 0),
        buildMs: round(prefix?.buildMs ?? 0),
        prefixMs: round(prefix?.totalMs ?? 0),
      },
      "model call relayed",
    );
  }

  /** once the exchange is over (after StreamEnd); a failing write only costs the event */
  function recordTrace(request: InvokeModelRequest, observer: ResponseObserver, prefix: PrefixOutcome | null): void {
    const traces = deps.traces;
    if (!traces) return;
    const preamble = request.InvokeModel.request.preamble;
    const ids = prefix ?? (typeof preamble === "string" ? parsePreambleThreadIds(preamble) : null);
    const call = {
      threadId: ids?.threadId ?? null,
      rootId: ids?.rootId ?? null,
      modelId: request.InvokeModel.model_id,
      history: request.InvokeModel.request.chat_history,
      prefix: prefix?.summary ?? ({ status: "off", itemIds: [], tokens: 0 } satisfies PrefixSummary),
    };
    deps.track(
      new Promise<void>((res) => setImmediate(res))
        .then(() => traces.record(traceEventOf(call, observer, deps.clock.now())))
        .then(
          (stored) => log.info({ thread: call.threadId, stored }, stored ? "trace recorded" : "trace already recorded"),
          (e: unknown) => log.warn({ err: e }, "trace not recorded"),
        ),
    );
  }

  function relay(up: Socket, observer: ResponseObserver, onDone: () => void): void {
    const response = new LineBuffer(deps.maxLineBytes);
    let done = false;
    const finish = (err: Error | null) => {
      if (done) return;
      done = true;
      up.destroy();
      if (closed) return onDone();
      const rest = response.rest();
      let unterminated = false;
      if (rest.length > 0) {
        // The last line may lack its newline (LinesCodec yields it at EOF); a cut-off one is dropped.
        const text = lineText(rest);
        if (isJson(text)) {
          client.write(rest);
          observer.observe(text);
          unterminated = true;
        } else log.warn({ bytes: rest.length }, "upstream ended inside a line; partial line dropped");
      }
      if (!observer.finished) {
        const why = err
          ? `upstream provider connection failed: ${err.message}`
          : deps.upstream.exitReason !== null
            ? `upstream provider ${deps.upstream.exitReason}`
            : "upstream provider closed the connection before the response ended";
        log.warn({ state: observer.state, err: err?.message }, "response incomplete");
        if (unterminated) client.write(NEWLINE);
        client.write(observer.started ? chunkErrorLine(`memory proxy: ${why}`) : errorLine(`memory proxy: ${why}`));
      }
      closed = true;
      client.end();
      onDone();
    };

    watchSilence();
    up.on("data", (chunk: Buffer) => {
      if (closed) return;
      watchSilence();
      let pushed;
      try {
        pushed = response.push(chunk);
      } catch (e) {
        if (!(e instanceof LineTooLongError)) throw e;
        return finish(new Error(`response line longer than ${e.limit} bytes`));
      }
      if (!pushed.bytes) return;
      if (!client.write(pushed.bytes)) {
        up.pause();
        client.once("drain", () => up.resume());
      }
      for (const l of pushed.lines) observer.observe(lineText(l));
    });
    up.on("end", () => finish(null));
    up.on("error", (e) => finish(e));
    up.on("close", () => finish(null));
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function elapsed(since: number): number {
  return round(performance.now() - since);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

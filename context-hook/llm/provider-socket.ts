// One request on a provider socket (reference §5): connect, write one NDJSON line, hand each
// response line to `onLine` until it returns a result. Aborting the signal destroys the connection,
// which is how the provider learns the call is cancelled.
import { createConnection } from "node:net";
import { LineBuffer, LineTooLongError, lineText } from "../provider-proxy/line-buffer.js";
import { abortError, LlmError } from "../../core/llm/types.js";

/** a Chunk line may carry a whole answer; far beyond any sane reply */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** `undefined`: keep reading; anything else ends the exchange with that value */
export type LineHandler<R> = (line: string) => R | undefined;

export function exchange<R>(
  socketPath: string,
  request: unknown,
  onLine: LineHandler<R>,
  signal: AbortSignal,
  op: string,
): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    if (signal.aborted) return reject(abortError(signal, op));
    const socket = createConnection(socketPath);
    const lines = new LineBuffer(MAX_LINE_BYTES);
    let connected = false;
    let done = false;
    const finish = (err: LlmError | null, value?: R) => {
      if (done) return;
      done = true;
      signal.removeEventListener("abort", onAbort);
      socket.destroy();
      if (err) reject(err);
      else resolve(value as R);
    };
    const onAbort = () => finish(abortError(signal, op));
    signal.addEventListener("abort", onAbort, { once: true });

    socket.once("connect", () => {
      connected = true;
      socket.write(`${JSON.stringify(request)}\n`);
    });
    // The framing runs inside the try too: a line over the limit threw out of the data listener
    // (an uncaught exception, fatal to the server) and the call waited for its deadline.
    const handle = (read: () => Buffer[]) => {
      try {
        for (const raw of read()) {
          const line = lineText(raw);
          if (line.length === 0) continue;
          const out = onLine(line);
          if (out !== undefined) return finish(null, out);
        }
      } catch (e) {
        if (e instanceof LlmError) return finish(e);
        const why = e instanceof LineTooLongError ? e.message : `unreadable response: ${String(e)}`;
        finish(new LlmError("upstream", `${op}: provider ${why}`, { op, cause: e }));
      }
    };
    socket.on("data", (chunk: Buffer) => handle(() => lines.push(chunk).lines));
    // Like LinesCodec at EOF: a last line without its newline still counts.
    socket.on("end", () => handle(() => (lines.pendingBytes > 0 ? [lines.rest()] : [])));
    socket.on("error", (e: NodeJS.ErrnoException) => {
      // Not reachable at all: no model, so callers fall back; a broken exchange is the provider's fault.
      const code = connected ? "upstream" : "unavailable";
      finish(new LlmError(code, `${op}: provider socket ${socketPath}: ${e.message}`, { op, cause: e }));
    });
    socket.on("close", () => {
      finish(new LlmError("upstream", `${op}: the provider closed the connection before the end of its answer`, { op }));
    });
  });
}

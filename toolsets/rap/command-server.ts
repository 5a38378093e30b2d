// Boot helpers for a daemon command server (reference §2.2): the daemon runs us with
// RAP_EMBEDDED=1 in {session cwd}/.infinity, reads exactly one stdout line `{"port":N}`, then
// closes the pipe (later writes hit EPIPE) with stderr on /dev/null, and stops us with SIGINT.
import { dirname } from "node:path";
import pino, { type Logger } from "pino";
import { makePrivateDir, PRIVATE_FILE_MODE } from "../../stores/private-files.js";

export function isEmbedded(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.RAP_EMBEDDED === "1";
}

function ignore(): void {}

/**
 * Write the ready line, then silence stdout and stderr for good: nobody reads them any more,
 * and an unhandled EPIPE 'error' on either stream would crash the process.
 */
export function announcePort(port: number): void {
  process.stdout.on("error", ignore);
  process.stderr.on("error", ignore);
  process.stdout.write(`${JSON.stringify({ port })}\n`);
  const silent = ((..._args: unknown[]) => true) as typeof process.stdout.write;
  process.stdout.write = silent;
  process.stderr.write = silent;
}

/** A pino logger appending to `path` (directories created); write errors never crash us. */
export function fileLogger(path: string, level: pino.LevelWithSilent = "info"): Logger {
  // the log names sessions, threads and tools a person used: owner-only when created here
  makePrivateDir(dirname(path));
  // Synchronous writes: a few lines per call, and a crash or an early exit loses no line
  // (stderr goes to /dev/null under the daemon, so the file is the only trace).
  const dest = pino.destination({ dest: path, sync: true, mode: PRIVATE_FILE_MODE });
  dest.on("error", ignore);
  return pino({ level }, dest);
}

export interface ShutdownOptions {
  /** how long close() may take before we exit anyway */
  timeoutMs?: number;
  logger?: Logger;
}

/**
 * On SIGINT/SIGTERM run close() (bounded by timeoutMs) and exit 0; a second signal exits at
 * once. Returns a function that removes the handlers.
 */
export function installShutdown(close: () => Promise<void>, opts: ShutdownOptions = {}): () => void {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      opts.logger?.warn({ signal }, "second signal; exiting now");
      opts.logger?.flush();
      process.exit(signal === "SIGINT" ? 130 : 143);
    }
    stopping = true;
    opts.logger?.info({ signal }, "shutting down");
    const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), timeoutMs).unref());
    void Promise.race([close().then(() => "closed" as const), timer])
      .then((how) => {
        if (how === "timeout") opts.logger?.warn({ timeoutMs }, "shutdown took too long; exiting anyway");
      })
      .catch((e: unknown) => opts.logger?.error({ err: e }, "shutdown failed"))
      .finally(() => {
        opts.logger?.flush();
        process.exit(0);
      });
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  };
}

/**
 * Log what would otherwise vanish (stderr is /dev/null): an unhandled rejection is logged and
 * survived; an uncaught exception is logged and ends the process, since its state is unknown.
 */
export function installCrashGuards(logger: Logger): void {
  process.on("unhandledRejection", (reason) => logger.error({ err: reason }, "unhandled promise rejection"));
  process.on("uncaughtException", (err) => {
    logger.fatal({ err }, "uncaught exception; exiting");
    logger.flush();
    process.exit(1);
  });
}

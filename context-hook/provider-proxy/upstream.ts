// The wrapped provider process, started the way the daemon starts providers (reference §4.3 item
// 2, `infinity-daemon/src/models.rs`): argv without a shell, stdin closed, its socket path on the
// first stdout line within the timeout; what it prints later goes to our log.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import type { Logger } from "pino";

export const UPSTREAM_START_TIMEOUT_MS = 30_000;

export interface UpstreamProcess {
  readonly socketPath: string;
  readonly pid: number;
  /** why it is gone ("exited with code 1", "killed by SIGKILL"); null while running */
  readonly exitReason: string | null;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it exited */
  stop(graceMs?: number): Promise<void>;
}

export interface StartUpstreamOptions {
  timeoutMs?: number;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  onExit?: (reason: string) => void;
}

export class UpstreamStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UpstreamStartError";
  }
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `killed by ${signal}` : `exited with code ${code}`;
}

export function startUpstream(argv: readonly string[], opts: StartUpstreamOptions): Promise<UpstreamProcess> {
  const [command, ...args] = argv;
  if (!command) return Promise.reject(new UpstreamStartError("no upstream command given"));
  const timeoutMs = opts.timeoutMs ?? UPSTREAM_START_TIMEOUT_MS;
  const log = opts.logger;

  return new Promise<UpstreamProcess>((resolve, reject) => {
    const child: ChildProcess = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env: opts.env ?? process.env });
    let exitReason: string | null = null;
    let stopping = false;
    const exited = new Promise<void>((res) => {
      child.once("exit", (code, signal) => {
        exitReason = describeExit(code, signal);
        if (stopping) log.info({ upstreamPid: child.pid, reason: exitReason }, "upstream provider stopped");
        else log.warn({ upstreamPid: child.pid, reason: exitReason }, "upstream provider is gone");
        opts.onExit?.(exitReason);
        res();
      });
    });
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      reject(new UpstreamStartError(message));
    };
    const timer = setTimeout(() => fail(`upstream provider printed no socket path within ${timeoutMs} ms`), timeoutMs);
    child.once("error", (e) => fail(`cannot start upstream provider ${JSON.stringify(command)}: ${e.message}`));
    child.once("exit", (code, signal) => fail(`upstream provider ${describeExit(code, signal)} before printing its socket path`));

    // Keep draining both pipes for the process's whole life, or it blocks on a full pipe.
    const stderr = createInterface({ input: child.stderr! });
    stderr.on("line", (line) => log.info({ upstream: "stderr" }, line));
    const stdout = createInterface({ input: child.stdout!, crlfDelay: Infinity });
    stdout.on("line", (line) => {
      if (settled) {
        log.info({ upstream: "stdout" }, line);
        return;
      }
      const socketPath = line.trim();
      if (socketPath.length === 0) return fail("upstream provider printed an empty first line");
      settled = true;
      clearTimeout(timer);
      log.info({ upstreamPid: child.pid, socketPath }, "upstream provider ready");
      resolve({
        socketPath,
        pid: child.pid!,
        get exitReason() {
          return exitReason;
        },
        async stop(graceMs = 2000) {
          if (exitReason !== null) return;
          stopping = true;
          child.kill("SIGTERM");
          const kill = setTimeout(() => child.kill("SIGKILL"), graceMs);
          await exited;
          clearTimeout(kill);
        },
      });
    });
  });
}

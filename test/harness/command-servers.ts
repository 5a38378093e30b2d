// Managed RAP servers, as infinity-daemon runs them (reference §2.2; daemon `rap_servers.rs`
// `ManagedRapServer` and `spawn_rap_server`). A command server is started per session with
// `sh -c <command>`, env RAP_EMBEDDED=1, cwd `{session cwd}/.infinity` (created), in its own
// process group, stdout piped and closed after the first line `{"port":N}`, stderr to
// /dev/null. It is stopped with SIGINT to the group when the session idles and booted again
// (on a new port, manifest refetched) by the next use. External servers are never started or
// stopped.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ToolsetManifest } from "../../toolsets/rap/wire.js";
import { getJson, trimSlashes } from "./rap-http.js";
import { isIntegerLiteral, parseStrictJson, StrictJsonError } from "./strict-json.js";

export type ServerSpec = { kind: "command"; command: string; cwd: string } | { kind: "external"; url: string };

export type ServerEvent =
  | { type: "server_booted"; sessionId: string; configId: string | null; baseUrl: string; pid: number | null }
  | { type: "server_stopped"; sessionId: string; configId: string | null; baseUrl: string; cleanExit: boolean; signal: string | null; code: number | null }
  | { type: "server_boot_failed"; sessionId: string; configId: string | null; error: string };

export class ServerBootError extends Error {
  override name = "ServerBootError";
}

export interface ManagedServerOptions {
  /** environment for command servers (RAP_EMBEDDED=1 is always set on top) */
  env?: NodeJS.ProcessEnv;
  /** how long to wait for the port line (the daemon waits forever; a test should not) */
  bootTimeoutMs?: number;
  /** how long a server may take to exit after SIGINT before the harness SIGKILLs it */
  stopTimeoutMs?: number;
  onEvent?: (e: ServerEvent) => void;
}

interface Running {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

type State = { up: false } | { up: true; baseUrl: string; manifest: ToolsetManifest; proc: Running | null };

/** Every command-server child the harness started and has not yet seen exit (for cleanup). */
const liveChildren = new Set<ChildProcess>();

/** SIGKILL every command-server process group still running (test teardown safety net). */
export function killAllCommandServers(): void {
  for (const child of liveChildren) killGroup(child, "SIGKILL");
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** `CommandServerReady { port: u16 }`, parsed as strictly as serde does. */
function parseReadyLine(line: string): number {
  const trimmed = line.trim();
  let port: unknown;
  let raw: string | undefined;
  try {
    const parsed = parseStrictJson(trimmed);
    port = (parsed.value as { port?: unknown } | null)?.port;
    raw = parsed.topLevelNumbers.get("port");
  } catch (e) {
    throw new ServerBootError(`invalid startup JSON: ${(e as StrictJsonError).message} (got: ${line})`);
  }
  if (typeof port !== "number" || raw === undefined || !isIntegerLiteral(raw) || port < 0 || port > 65535) {
    throw new ServerBootError(`invalid startup JSON: "port" must be a u16 (got: ${line})`);
  }
  return port;
}

/**
 * `spawn_rap_server`: start the command and read exactly one stdout line, then drop the read
 * end of the pipe (a later stdout write by the server hits EPIPE, as under the daemon).
 */
export async function spawnRapServer(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
  bootTimeoutMs = 30_000,
): Promise<{ proc: Running; port: number }> {
  const workingDir = join(cwd, ".infinity");
  try {
    mkdirSync(workingDir, { recursive: true });
  } catch {
    // the daemon ignores this error too; spawn reports a missing cwd
  }
  const child = spawn("sh", ["-c", command], {
    cwd: workingDir,
    env: { ...env, RAP_EMBEDDED: "1" },
    detached: true, // process_group(0): SIGINT goes to the whole group
    stdio: ["ignore", "pipe", "ignore"],
  });
  liveChildren.add(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      liveChildren.delete(child);
      resolve({ code, signal });
    });
    child.once("error", () => {
      liveChildren.delete(child);
      resolve({ code: null, signal: null });
    });
  });
  const proc: Running = { child, exited };
  const stdout = child.stdout!;
  const line = await new Promise<string>((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => {
      killGroup(child, "SIGKILL");
      done(() => reject(new ServerBootError(`no port line from '${command}' within ${bootTimeoutMs} ms`)));
    }, bootTimeoutMs);
    const done = (fn: () => void) => {
      clearTimeout(timer);
      stdout.removeAllListeners("data");
      stdout.removeAllListeners("end");
      child.removeListener("error", onError);
      fn();
    };
    const onError = (e: Error) => done(() => reject(new ServerBootError(`failed to spawn '${command}': ${e.message}`)));
    child.once("error", onError);
    stdout.setEncoding("utf8");
    stdout.on("data", (chunk: string) => {
      buf += chunk;
      const nl = buf.indexOf("\n");
      if (nl >= 0) done(() => resolve(buf.slice(0, nl + 1)));
    });
    stdout.on("end", () => done(() => resolve(buf)));
  });
  stdout.destroy();
  // The daemon only reads the pipe; errors on our side of it are of no interest.
  stdout.on("error", () => undefined);
  if (line === "") {
    killGroup(child, "SIGKILL");
    await exited;
    throw new ServerBootError("server exited before emitting port");
  }
  let port: number;
  try {
    port = parseReadyLine(line);
  } catch (e) {
    // kill_on_drop: the Child is dropped on this error path
    killGroup(child, "SIGKILL");
    await exited;
    throw e;
  }
  return { proc, port };
}

/** `fetch_manifest`: GET `{base}/.well-known/rap-toolset`, any 2xx, body parsed as a ToolsetManifest. */
export async function fetchManifest(baseUrl: string): Promise<ToolsetManifest> {
  const url = `${trimSlashes(baseUrl)}/.well-known/rap-toolset`;
  let res: { status: number; body: Buffer };
  try {
    res = await getJson(url);
  } catch (e) {
    throw new ServerBootError(`failed to fetch toolset manifest from ${url}: ${(e as Error).message}`);
  }
  if (res.status < 200 || res.status >= 300) throw new ServerBootError(`toolset manifest fetch from ${url} returned status ${res.status}`);
  let value: unknown;
  try {
    value = parseStrictJson(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(res.body)).value;
  } catch (e) {
    throw new ServerBootError(`invalid toolset manifest from ${url}: ${(e as Error).message}`);
  }
  const parsed = ToolsetManifest.safeParse(value);
  if (!parsed.success) {
    throw new ServerBootError(`invalid toolset manifest from ${url}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  return parsed.data;
}

/**
 * One configured server of one session. Tools hold it and ask for the endpoint per call, so
 * a server stopped while the session idled boots again transparently.
 */
export class ManagedRapServer {
  private state: State = { up: false };
  private lock: Promise<unknown> = Promise.resolve();
  /** how many times this server has been booted (a reboot after idling increments it) */
  boots = 0;

  constructor(
    readonly sessionId: string,
    readonly configId: string | null,
    readonly spec: ServerSpec,
    private readonly opts: ManagedServerOptions = {},
  ) {}

  /** The state is guarded like the daemon's tokio Mutex: boots and stops never interleave. */
  private locked<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  /** The base URL while up, else null. */
  currentBaseUrl(): string | null {
    return this.state.up ? this.state.baseUrl : null;
  }

  /** The process group leader's pid while a command server is up. */
  currentPid(): number | null {
    return this.state.up ? (this.state.proc?.child.pid ?? null) : null;
  }

  /**
   * Boot if down and return the manifest of this boot. If the manifest cannot be fetched the
   * boot is torn down and the server stays down.
   */
  ensureUp(): Promise<ToolsetManifest> {
    return this.locked(async () => {
      if (this.state.up) return this.state.manifest;
      let baseUrl: string;
      let proc: Running | null = null;
      try {
        if (this.spec.kind === "command") {
          const booted = await spawnRapServer(this.spec.command, this.spec.cwd, this.opts.env, this.opts.bootTimeoutMs);
          proc = booted.proc;
          baseUrl = `http://127.0.0.1:${booted.port}`;
        } else {
          baseUrl = this.spec.url;
        }
      } catch (e) {
        this.opts.onEvent?.({ type: "server_boot_failed", sessionId: this.sessionId, configId: this.configId, error: (e as Error).message });
        throw e;
      }
      try {
        const manifest = await fetchManifest(baseUrl);
        this.state = { up: true, baseUrl, manifest, proc };
        this.boots++;
        this.opts.onEvent?.({ type: "server_booted", sessionId: this.sessionId, configId: this.configId, baseUrl, pid: proc?.child.pid ?? null });
        return manifest;
      } catch (e) {
        if (proc) {
          // The daemon's start_kill() hits only `sh`; the harness kills the group so no
          // orphaned server outlives the test.
          killGroup(proc.child, "SIGKILL");
          await proc.exited;
        }
        this.opts.onEvent?.({ type: "server_boot_failed", sessionId: this.sessionId, configId: this.configId, error: (e as Error).message });
        throw e;
      }
    });
  }

  /** `invoke_endpoint`: the manifest's endpoint of the current boot, booting first if needed. */
  async invokeEndpoint(): Promise<string> {
    return (await this.ensureUp()).endpoint;
  }

  /**
   * Stop a command server: SIGINT to its process group, then wait for it to exit. External
   * servers are left alone. A server that ignores SIGINT is SIGKILLed after stopTimeoutMs
   * (the daemon would wait forever) and reported with cleanExit=false.
   */
  shutdown(): Promise<void> {
    return this.locked(async () => {
      if (this.spec.kind !== "command") return;
      const state = this.state;
      this.state = { up: false };
      if (!state.up || !state.proc) return;
      const { child, exited } = state.proc;
      killGroup(child, "SIGINT");
      const timeoutMs = this.opts.stopTimeoutMs ?? 10_000;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), timeoutMs)));
      const outcome = await Promise.race([exited, timedOut]);
      clearTimeout(timer);
      if (outcome === "timeout") {
        killGroup(child, "SIGKILL");
        const after = await exited;
        this.opts.onEvent?.({ type: "server_stopped", sessionId: this.sessionId, configId: this.configId, baseUrl: state.baseUrl, cleanExit: false, ...after });
        return;
      }
      this.opts.onEvent?.({
        type: "server_stopped",
        sessionId: this.sessionId,
        configId: this.configId,
        baseUrl: state.baseUrl,
        cleanExit: outcome.code === 0 || outcome.signal === "SIGINT",
        ...outcome,
      });
    });
  }
}

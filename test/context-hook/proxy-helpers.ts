// Shared pieces of the provider proxy tests: wire-format chat history, raw request lines, a
// provider-protocol client, and the proxy / scripted provider processes.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createConnection } from "node:net";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { CLI } from "../helpers/cli.js";

const here = fileURLToPath(new URL(".", import.meta.url));
export const FIXTURES = resolve(here, "../fixtures/providers");
export const SCRIPTED = resolve(FIXTURES, "scripted-provider.mjs");
export const FIXED_BUILDER = resolve(FIXTURES, "fixed-builder.mjs");
export const HOME = resolve(FIXTURES, "infinity-home");
export { CLI };

/** the fixture home's threads: ROOT → CHILD → GRAND; ROOT2 has no state or session entry */
export const ROOT = "7c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e";
export const CHILD = "8d2e3f4a-5b6c-4d7e-9f80-a12b3c4d5e6f";
export const GRAND = "9e3f4a5b-6c7d-4e8f-a091-b23c4d5e6f70";
export const ROOT2 = "a04f5b6c-7d8e-4f90-b1a2-c34d5e6f7081";

// ---- rig messages as the daemon sends them (reference §3.2) ----

export const userMsg = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
export const assistantMsg = (text: string) => ({ role: "assistant", id: null, content: [{ text }] });
export const toolCallMsg = (id: string, name: string, args: unknown) => ({
  role: "assistant",
  id: null,
  content: [{ id, call_id: null, function: { name, arguments: args }, signature: null, additional_params: null }],
});
export const toolResultMsg = (id: string, text: string) => ({
  role: "user",
  content: [{ type: "toolresult", id, content: [{ type: "text", text }] }],
});

/** the runtime's preamble (§4.1) with a stand-in default prompt and the daemon's extra prompt */
export function daemonPreamble(threadId: string, rootId: string): string {
  return (
    "You are Infinity, a coding agent that works in threads.\n\n## Tools\nCall one tool at a time." +
    `\n\nYour current thread ID is \`${threadId}\`. The root thread ID is \`${rootId}\`.` +
    '\n\nThe user\'s current working directory is: "/work/projects/alpha"'
  );
}

/**
 * A raw InvokeModel line as serde writes it, with values JSON.parse → stringify would change
 * (`1.0`, an integer above 2^53), so byte-exact forwarding is observable.
 */
export function invokeLine(preamble: string | null, history: unknown[], modelId = "scripted-1"): string {
  return (
    `{"InvokeModel":{"model_id":${JSON.stringify(modelId)},"request":{"model":null,"preamble":${JSON.stringify(preamble)},` +
    `"chat_history":${JSON.stringify(history)},"documents":[],` +
    `"tools":[{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}],` +
    `"temperature":1.0,"max_tokens":null,"tool_choice":null,"additional_params":{"seed":12345678901234567890},"output_schema":null}}}`
  );
}

/**
 * As thread GRAND (session ROOT) asks how to deploy the staging cluster and checks that the call
 * completed and that the upstream got a recalled-memory block holding `expected` in front of the
 * daemon's preamble.
 */
export async function expectStagingRecall(socketPath: string, records: string, expected: string): Promise<void> {
  const preamble = daemonPreamble(GRAND, ROOT);
  const r = await call(socketPath, invokeLine(preamble, [userMsg("How do I deploy the staging cluster?")]));
  expect(r.lines.at(-1)).toBe('"StreamEnd"');
  const got = preambleOf(readRecords(records).at(-1)!.request!);
  expect(got.startsWith("<recalled-memory>")).toBe(true);
  expect(got).toContain(expected);
  expect(got.endsWith(`</recalled-memory>\n\n${preamble}`)).toBe(true);
}

/** the preamble of a recorded InvokeModel request line */
export const preambleOf = (raw: string) => (JSON.parse(raw) as { InvokeModel: { request: { preamble: string } } }).InvokeModel.request.preamble;

// ---- a provider-protocol client ----

export interface CallResult {
  bytes: Buffer;
  lines: string[];
  /** ms from the first request byte to the first response byte */
  firstByteMs: number;
  totalMs: number;
}

export interface CallOptions {
  /** send the request line in this many writes, `pieceDelayMs` apart */
  pieces?: number;
  pieceDelayMs?: number;
  /** hang up once this many response lines arrived */
  hangUpAfterLines?: number;
  /** hang up this long after sending the request, whatever arrived */
  hangUpAfterMs?: number;
  /** send the line without its newline and shut down the write side (LinesCodec's decode_eof) */
  halfCloseWithoutNewline?: boolean;
}

export function call(socketPath: string, requestLine: string, opts: CallOptions = {}): Promise<CallResult> {
  return new Promise((resolvePromise, reject) => {
    const s = createConnection(socketPath);
    const parts: Buffer[] = [];
    const start = performance.now();
    let firstByteMs = -1;
    s.on("data", (d: Buffer) => {
      if (firstByteMs < 0) firstByteMs = performance.now() - start;
      parts.push(d);
      if (opts.hangUpAfterLines !== undefined) {
        const n = Buffer.concat(parts).toString("utf8").split("\n").length - 1;
        if (n >= opts.hangUpAfterLines) s.destroy();
      }
    });
    const done = () => {
      const bytes = Buffer.concat(parts);
      const text = bytes.toString("utf8");
      const lines = text.split("\n");
      if (lines.at(-1) === "") lines.pop();
      resolvePromise({ bytes, lines, firstByteMs, totalMs: performance.now() - start });
    };
    s.on("close", done);
    if (opts.hangUpAfterMs !== undefined) setTimeout(() => s.destroy(), opts.hangUpAfterMs);
    s.on("error", (e) => (parts.length > 0 ? done() : reject(e)));
    const data = Buffer.from(opts.halfCloseWithoutNewline ? requestLine : `${requestLine}\n`);
    const pieces = opts.pieces ?? 1;
    const size = Math.ceil(data.length / pieces);
    void (async () => {
      for (let i = 0; i < data.length; i += size) {
        s.write(data.subarray(i, i + size));
        if (opts.pieceDelayMs) await new Promise((r) => setTimeout(r, opts.pieceDelayMs));
      }
      if (opts.halfCloseWithoutNewline) s.end();
    })();
  });
}

// ---- processes ----

export interface Proc {
  child: ChildProcess;
  socketPath: string;
  /** stdout lines after the first */
  laterStdout: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

/** start `argv` (argv[0] is the program) and wait for its first stdout line */
export function startProcess(argv: string[], env: Record<string, string>, what: string): Promise<Proc> {
  const child = spawn(argv[0]!, argv.slice(1), { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.once("exit", (code, signal) => res({ code, signal })),
  );
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const laterStdout: string[] = [];
  const rl = createInterface({ input: child.stdout! });
  return new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error(`${what}: no socket path within 20 s; stderr: ${stderr}`)), 20_000);
    let first: string | null = null;
    rl.on("line", (line) => {
      if (first !== null) return void laterStdout.push(line);
      first = line;
      clearTimeout(t);
      res({
        child,
        socketPath: line,
        laterStdout,
        exited,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
          await exited;
        },
      });
    });
    void exited.then(({ code }) => {
      clearTimeout(t);
      if (first === null) rej(new Error(`${what} exited with ${code} before its socket path; stderr: ${stderr}`));
    });
  });
}

export function startScripted(env: Record<string, string> = {}): Promise<Proc> {
  return startProcess([process.execPath, SCRIPTED], env, "scripted provider");
}

export function startProxy(args: string[], env: Record<string, string>): Promise<Proc> {
  return startProcess([process.execPath, CLI, "provider-proxy", ...args], env, "provider proxy");
}

export function readRecords(file: string): { request?: string; cancelled?: boolean }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as { request?: string; cancelled?: boolean });
}

/** the pino lines of a log file */
export function readLog(file: string): Record<string, unknown>[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

export async function waitFor<T>(probe: () => T | null | undefined | false, timeoutMs = 5000, what = "condition"): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

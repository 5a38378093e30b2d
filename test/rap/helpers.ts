// Shared test seams for the RAP server: temp databases, a real callback listener that records
// what it receives, a small toolset, and raw HTTP helpers.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { z } from "zod";
import { CoreError } from "../../core/errors.js";
import { openDatabase, type Db } from "../../stores/sqlite/database.js";
import { defineTool, type Toolset } from "../../toolsets/rap/registry.js";
import { startRapServer, type RapServer, type RapServerOptions } from "../../toolsets/rap/server.js";

export const silentLogger = pino({ level: "silent" });

export function tempDir(prefix = "rap-test-"): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function waitFor<T>(probe: () => T | Promise<T>, what: string, timeoutMs = 5000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(15);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

// ---- callback listener (plays the daemon's callback server) ----

export interface Listener {
  url: string;
  port: number;
  /** bodies of every POST, including the ones answered with an error status */
  bodies: string[];
  /** the parsed bodies the listener accepted (2xx) */
  accepted(): Record<string, unknown>[];
  close(): Promise<void>;
}

export async function startListener(
  opts: { port?: number; status?: (body: string, index: number) => number } = {},
): Promise<Listener> {
  const bodies: string[] = [];
  const acceptedIdx: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const i = bodies.push(body) - 1;
      const status = opts.status?.(body, i) ?? 200;
      if (status >= 200 && status < 300) acceptedIdx.push(i);
      res.writeHead(status, { "content-type": "text/plain" });
      res.end(status === 200 ? "OK" : "nope");
    });
  });
  const port = await listenOn(server, opts.port ?? 0);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    bodies,
    accepted: () => acceptedIdx.map((i) => JSON.parse(bodies[i]!) as Record<string, unknown>),
    close: () => closeServer(server),
  };
}

function listenOn(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** A port that was free a moment ago (for a listener that is "down" at first). */
export async function freePort(): Promise<number> {
  const s = createServer();
  const port = await listenOn(s, 0);
  await closeServer(s);
  return port;
}

// ---- HTTP helpers ----

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** node:http, so tests control every header (Host included) and the exact body bytes. */
export function raw(
  base: string,
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, method, path, headers: body === undefined ? headers : { "content-type": "application/json", ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
      },
    );
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export function post(base: string, path: string, body: unknown): Promise<RawResponse> {
  return raw(base, "POST", path, typeof body === "string" ? body : JSON.stringify(body));
}

/** POST to an absolute URL handed out by the server (a user choice's response_url). */
export function postTo(url: string, body: unknown): Promise<RawResponse> {
  const u = new URL(url);
  return post(u.origin, `${u.pathname}${u.search}`, body);
}

export function invocation(callbackUrl: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    operation: "echo",
    arguments: { text: "hi" },
    id: `tooluse_${Math.random().toString(36).slice(2, 10)}`,
    call_id: null,
    callback_url: callbackUrl,
    group_id: "6f1c2c7e-5b7e-4d0b-9a57-2b0c1d7f9e11",
    thread_ancestors: null,
    ...over,
  };
}

// ---- the test toolset ----

export interface ToolState {
  /** handler runs per call id */
  runs: Map<string, number>;
  /** release functions of `slow` calls that are waiting */
  release: Map<string, (text: string) => void>;
  aborted: string[];
}

export function newToolState(): ToolState {
  return { runs: new Map(), release: new Map(), aborted: [] };
}

export function testToolset(state: ToolState, over: Partial<Toolset> = {}): Toolset {
  const count = (id: string) => state.runs.set(id, (state.runs.get(id) ?? 0) + 1);
  return {
    name: "testing",
    description: "Tools for the RAP server tests",
    tools: [
      defineTool({
        name: "echo",
        description: "Echo the text back.",
        input: z.object({ text: z.string().describe("what to echo") }),
        displayScript: `"Echo " + args.text`,
        handler: async (a, ctx) => {
          count(ctx.invocation.id);
          return { text: `echo: ${a.text}`, display_as: [{ type: "text", content: `Echoed ${a.text.length} characters` }] };
        },
      }),
      defineTool({
        name: "slow",
        description: "Wait until the test releases the call or it is aborted.",
        input: z.object({}),
        handler: async (_a, ctx) => {
          count(ctx.invocation.id);
          return new Promise((resolve, reject) => {
            state.release.set(ctx.invocation.id, (text) => resolve({ text }));
            ctx.signal.addEventListener("abort", () => {
              state.aborted.push(ctx.invocation.id);
              reject(new CoreError("cancelled", "aborted"));
            });
          });
        },
      }),
      defineTool({
        name: "ask",
        description: "Ask the person a yes/no question.",
        input: z.object({ question: z.string() }),
        handler: async (a, ctx) => {
          count(ctx.invocation.id);
          const i = await ctx.askUser(a.question, ["Yes", "No"], 1);
          return { text: `the person chose ${i === 0 ? "Yes" : "No"}` };
        },
      }),
      defineTool({
        name: "fail",
        description: "Fail on purpose.",
        input: z.object({ how: z.enum(["core", "bug"]) }),
        handler: async (a) => {
          if (a.how === "core") throw new CoreError("not_found", "memory mem_1 does not exist; search first");
          throw new Error("disk on fire");
        },
      }),
      defineTool({
        name: "memory_write",
        description: "Store a note.",
        input: z.object({ key: z.string(), text: z.string() }),
        annotations: { idempotent: true },
        handler: async (a, ctx) => {
          count(ctx.invocation.id);
          return { text: `stored ${a.key}` };
        },
      }),
      defineTool({
        name: "memory_search",
        description: "Search notes.",
        input: z.object({ query: z.string(), limit: z.int().min(1).max(50).default(10) }),
        handler: async (a) => ({ text: `searched ${a.query} (limit ${a.limit})` }),
      }),
      defineTool({
        name: "mock_list_tools",
        description: "List tools.",
        input: z.object({}),
        handler: async () => ({ text: "echo, slow, ask" }),
      }),
    ],
    ...over,
  };
}

// ---- server under test ----

export interface Harness {
  dir: string;
  dbPath: string;
  db: Db;
  state: ToolState;
  server: RapServer;
  listener: Listener;
  /** close the server and database (idempotent) */
  stop(): Promise<void>;
}

export const FAST_OUTBOX = { pollMs: 50, baseDelayMs: 20, maxDelayMs: 100, attemptTimeoutMs: 2000 };

export async function startHarness(
  opts: { listenerStatus?: (body: string, index: number) => number; server?: Partial<RapServerOptions>; toolset?: Partial<Toolset> } = {},
): Promise<Harness> {
  const { dir, cleanup } = tempDir();
  const dbPath = join(dir, "rap.sqlite");
  const db = openDatabase(dbPath);
  const state = newToolState();
  const listener = await startListener({ status: opts.listenerStatus });
  const server = await startRapServer({
    toolset: testToolset(state, opts.toolset),
    db,
    logger: silentLogger,
    outbox: FAST_OUTBOX,
    ...opts.server,
  });
  let stopped = false;
  return {
    dir,
    dbPath,
    db,
    state,
    server,
    listener,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await server.close({ graceMs: 200 });
      await listener.close();
      db.close();
      cleanup();
    },
  };
}

/** The tool_result for call `id`, once the listener accepted it. */
export function resultFor(l: Listener, id: string): Promise<Record<string, unknown>> {
  return waitFor(() => l.accepted().find((b) => b.type === "tool_result" && b.id === id), `tool_result for ${id}`);
}

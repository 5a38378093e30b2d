// Adapter (a): a model behind Infinity's provider protocol (reference §5). Either an existing
// socket, or a providers.json command spawned the way the daemon does it (§4.3 item 2) on first
// use and stopped on close(). One InvokeModel per call, no tools; the text chunks are the answer.
import { readFileSync } from "node:fs";
import pino, { type Logger } from "pino";
import { z } from "zod";
import {
  ProviderResponse,
  Usage,
  WireStreamItem,
  responseKind,
  type InvokeModelRequest,
} from "../provider-proxy/protocol.js";
import { startUpstream, UPSTREAM_START_TIMEOUT_MS, type UpstreamProcess } from "../provider-proxy/upstream.js";
import { isLlmError, LlmError, type LlmBackend, type LlmCall, type LlmReply, type LlmUsage } from "../../core/llm/types.js";
import { exchange } from "./provider-socket.js";

export interface ProviderLlmOptions {
  /** connect to this socket... */
  socket?: string;
  /** ...or spawn this argv and read its socket path from the first stdout line */
  command?: readonly string[];
  /** default: the first model `ListModels` returns (the provider's default) */
  modelId?: string;
  startTimeoutMs?: number;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
}

const ProvidersJson = z.record(z.string(), z.looseObject({ command: z.array(z.string()).min(1) }));

/** the argv of a providers.json entry; `id` may be left out when the file has exactly one */
export function providerCommandFromFile(path: string, id?: string): string[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new LlmError("unavailable", `cannot read providers file ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const parsed = ProvidersJson.safeParse(raw);
  if (!parsed.success) {
    throw new LlmError("unavailable", `${path} is not a providers.json: ${z.prettifyError(parsed.error)}`);
  }
  const ids = Object.keys(parsed.data);
  const key = id ?? (ids.length === 1 ? ids[0] : undefined);
  if (key === undefined) {
    throw new LlmError("unavailable", `${path} has ${ids.length} providers (${ids.join(", ")}); set llm.provider.id`);
  }
  const entry = parsed.data[key];
  if (!entry) throw new LlmError("unavailable", `${path} has no provider ${JSON.stringify(key)}`);
  return entry.command;
}

export class ProviderLlmBackend implements LlmBackend {
  readonly name = "provider";
  private readonly log: Logger;
  private socket: Promise<string> | null = null;
  private upstream: UpstreamProcess | null = null;
  private modelId: Promise<string> | null;
  private closed = false;

  constructor(private readonly opts: ProviderLlmOptions) {
    if (!opts.socket && !opts.command?.length) throw new Error("ProviderLlmBackend needs a socket or a command");
    this.log = opts.logger ?? pino({ level: "silent" });
    this.modelId = opts.modelId ? Promise.resolve(opts.modelId) : null;
  }

  /** the spawned provider's pid while it runs (null for a configured socket) */
  get pid(): number | null {
    return this.upstream?.pid ?? null;
  }

  async generate(call: LlmCall): Promise<LlmReply> {
    const socketPath = await this.socketPath(call.op);
    const modelId = await this.model(socketPath, call);
    const request: InvokeModelRequest = {
      InvokeModel: {
        model_id: modelId,
        request: {
          model: null,
          preamble: call.system ?? null,
          chat_history: [{ role: "user", content: [{ type: "text", text: call.prompt }] }],
          documents: [],
          tools: [],
          temperature: null,
          max_tokens: call.maxTokens ?? null,
          tool_choice: null,
          additional_params: null,
          output_schema: null,
        },
      },
    };
    const parts: string[] = [];
    let usage: LlmUsage | null = null;
    return exchange<LlmReply>(
      socketPath,
      request,
      (line) => {
        const kind = responseKind(line);
        if (kind === "end") return { text: parts.join(""), usage };
        if (kind === "started") return undefined;
        if (kind === "chunk") {
          const item = WireStreamItem.safeParse((JSON.parse(line) as { Chunk: unknown }).Chunk);
          // Reasoning and unknown variants carry no answer text.
          if (!item.success) return undefined;
          const v = item.data;
          if ("Message" in v) parts.push(v.Message);
          else if ("Final" in v && v.Final.usage) usage = toUsage(v.Final.usage);
          else if ("Error" in v) {
            // the provider goes on after a mid-stream error; an answer with a hole is no answer
            throw new LlmError("upstream", `${call.op}: provider error mid-stream: ${v.Error}`, { op: call.op });
          }
          return undefined;
        }
        throw unexpected(line, call.op);
      },
      call.signal,
      call.op,
    );
  }

  /** the provider's models, default first */
  async listModels(signal: AbortSignal, op = "list_models"): Promise<string[]> {
    const socketPath = await this.socketPath(op);
    return exchange(
      socketPath,
      "ListModels",
      (line) => {
        const r = ProviderResponse.safeParse(JSON.parse(line));
        if (r.success && typeof r.data === "object" && "Models" in r.data) return r.data.Models.map((m) => m.model_id);
        throw unexpected(line, op);
      },
      signal,
      op,
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    const up = this.upstream;
    this.upstream = null;
    this.socket = null;
    await up?.stop();
  }

  private model(socketPath: string, call: LlmCall): Promise<string> {
    if (!this.modelId) {
      // Shared by concurrent calls, so not tied to this call's signal (the client stops waiting
      // for a cancelled call on its own); bounded like the provider's start.
      const limitMs = this.opts.startTimeoutMs ?? UPSTREAM_START_TIMEOUT_MS;
      const { op } = call;
      const p = this.listModels(AbortSignal.timeout(limitMs), op).then(
        (ids) => {
          const first = ids[0];
          if (first === undefined) {
            throw new LlmError("unavailable", `${op}: the provider at ${socketPath} lists no models`, { op });
          }
          return first;
        },
        (e: unknown) => {
          if (isLlmError(e, "cancelled")) {
            throw new LlmError("unavailable", `${op}: the provider did not list its models within ${limitMs} ms`, { op });
          }
          throw e;
        },
      );
      this.modelId = p;
      p.catch(() => {
        if (this.modelId === p) this.modelId = null;
      });
    }
    return this.modelId;
  }

  private socketPath(op: string): Promise<string> {
    if (this.closed) return Promise.reject(new LlmError("unavailable", `${op}: the provider adapter is closed`, { op }));
    if (this.opts.socket) return Promise.resolve(this.opts.socket);
    if (!this.socket) {
      const p = this.spawn(op);
      this.socket = p;
      p.catch(() => {
        if (this.socket === p) this.socket = null;
      });
    }
    return this.socket;
  }

  private async spawn(op: string): Promise<string> {
    const argv = this.opts.command ?? [];
    let up: UpstreamProcess;
    try {
      up = await startUpstream(argv, {
        timeoutMs: this.opts.startTimeoutMs ?? UPSTREAM_START_TIMEOUT_MS,
        logger: this.log,
        env: this.opts.env,
        // a provider that died is started again by the next call
        onExit: () => {
          if (this.upstream === up) {
            this.upstream = null;
            this.socket = null;
          }
        },
      });
    } catch (e) {
      throw new LlmError("unavailable", `${op}: ${e instanceof Error ? e.message : String(e)}`, { op, cause: e });
    }
    if (this.closed) {
      await up.stop();
      throw new LlmError("unavailable", `${op}: the provider adapter is closed`, { op });
    }
    this.upstream = up;
    return up.socketPath;
  }
}

function toUsage(u: Usage): LlmUsage {
  const out: LlmUsage = { inputTokens: u.input_tokens, outputTokens: u.output_tokens, totalTokens: u.total_tokens };
  if (u.cached_input_tokens !== undefined) out.cachedInputTokens = u.cached_input_tokens;
  return out;
}

function unexpected(line: string, op: string): LlmError {
  const r = ProviderResponse.safeParse(safeJson(line));
  if (r.success && typeof r.data === "object" && "Error" in r.data) {
    return new LlmError("upstream", `${op}: provider error: ${r.data.Error}`, { op });
  }
  return new LlmError("upstream", `${op}: unexpected provider response ${line.slice(0, 200)}`, { op });
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}

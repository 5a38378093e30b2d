// Adapter (b): an OpenAI-compatible chat completions endpoint (OpenAI, vLLM, llama.cpp, Ollama…).
// One POST per call; the key is read from the environment at call time, never from config.
import { z } from "zod";
import { abortError, LlmError, type LlmBackend, type LlmCall, type LlmReply, type LlmUsage } from "../../core/llm/types.js";

export interface OpenAiLlmOptions {
  /** e.g. https://api.openai.com/v1 (the path up to /chat/completions) */
  baseUrl: string;
  model: string;
  /** environment variable with the API key; no Authorization header when it is unset */
  apiKeyEnv?: string;
  env?: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
}

const ChatResponse = z.looseObject({
  choices: z.array(z.looseObject({ message: z.looseObject({ content: z.string().nullish() }) })).min(1),
  usage: z
    .looseObject({
      prompt_tokens: z.number(),
      completion_tokens: z.number(),
      total_tokens: z.number(),
      prompt_tokens_details: z.looseObject({ cached_tokens: z.number().optional() }).nullish(),
    })
    .nullish(),
});

const EXCERPT_CHARS = 300;

export class OpenAiLlmBackend implements LlmBackend {
  readonly name = "openai";
  private readonly url: string;
  /** the answer-length parameter this endpoint takes (see generate) */
  private limitField: "max_tokens" | "max_completion_tokens" = "max_tokens";

  constructor(private readonly opts: OpenAiLlmOptions) {
    this.url = `${opts.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  }

  private async post(headers: Record<string, string>, body: Record<string, unknown>, call: LlmCall): Promise<{ res: Response; text: string }> {
    const { op } = call;
    try {
      const init: RequestInit = { method: "POST", headers, body: JSON.stringify(body), signal: call.signal };
      const res = await (this.opts.fetch ?? fetch)(this.url, init);
      return { res, text: await res.text() };
    } catch (e) {
      if (call.signal.aborted) throw abortError(call.signal, op);
      // Nothing answered (refused, DNS): no model, callers fall back.
      const why = e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e);
      throw new LlmError("unavailable", `${op}: ${this.url}: ${why}`, { op, cause: e });
    }
  }

  async generate(call: LlmCall): Promise<LlmReply> {
    const { op } = call;
    const messages = [
      ...(call.system ? [{ role: "system", content: call.system }] : []),
      { role: "user", content: call.prompt },
    ];
    const body: Record<string, unknown> = { model: this.opts.model, messages };
    if (call.maxTokens !== undefined) body[this.limitField] = call.maxTokens;
    const headers: Record<string, string> = { "content-type": "application/json" };
    const keyEnv = this.opts.apiKeyEnv ?? "OPENAI_API_KEY";
    const key = (this.opts.env ?? process.env)[keyEnv]?.trim();
    if (key) {
      // fetch refuses such a value with an error quoting it, key and all, into logs and stored events
      if (/[^\x20-\x7e]/.test(key)) {
        throw new LlmError(
          "unavailable",
          `${op}: the API key in $${keyEnv} holds a line break or a non-ASCII character, which no HTTP header can carry; set ${keyEnv} to the key alone`,
          { op },
        );
      }
      headers.authorization = `Bearer ${key}`;
    }

    let { res, text } = await this.post(headers, body, call);
    if (res.status === 400 && "max_tokens" in body && refusesMaxTokens(text)) {
      // OpenAI's reasoning models (o-series, gpt-5) take only max_completion_tokens, which older
      // compatible servers do not know: switch on their refusal, for this call and the next ones.
      this.limitField = "max_completion_tokens";
      const { max_tokens: limit, ...rest } = body;
      ({ res, text } = await this.post(headers, { ...rest, max_completion_tokens: limit }, call));
    }
    if (!res.ok) {
      const message = `${op}: ${this.url} answered HTTP ${res.status}: ${excerpt(text)}`;
      throw new LlmError("upstream", message, { op, status: res.status });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new LlmError("upstream", `${op}: ${this.url} answered non-JSON: ${excerpt(text)}`, { op, status: res.status });
    }
    const parsed = ChatResponse.safeParse(json);
    const content = parsed.success ? parsed.data.choices[0]?.message.content : undefined;
    if (!parsed.success || typeof content !== "string") {
      throw new LlmError("upstream", `${op}: ${this.url} answered without message content: ${excerpt(text)}`, {
        op,
        status: res.status,
      });
    }
    return { text: content, usage: toUsage(parsed.data.usage) };
  }
}

/** a 400 refusing max_tokens as such ("… Use 'max_completion_tokens' instead."), not its value */
function refusesMaxTokens(text: string): boolean {
  try {
    const err = (JSON.parse(text) as { error?: { param?: unknown; code?: unknown; message?: unknown } } | null)?.error;
    if (err?.param === "max_tokens" && err.code === "unsupported_parameter") return true;
    return typeof err?.message === "string" && err.message.includes("max_completion_tokens");
  } catch {
    return false;
  }
}

function toUsage(u: z.output<typeof ChatResponse>["usage"]): LlmUsage | null {
  if (!u) return null;
  const out: LlmUsage = { inputTokens: u.prompt_tokens, outputTokens: u.completion_tokens, totalTokens: u.total_tokens };
  const cached = u.prompt_tokens_details?.cached_tokens;
  if (cached !== undefined) out.cachedInputTokens = cached;
  return out;
}

function excerpt(s: string): string {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat || "(empty body)";
}

// Adapter (b) against a local node:http server standing in for an OpenAI-compatible endpoint.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { fixedClock } from "../../core/clock.js";
import { MemoryConfig } from "../../core/config.js";
import { MemoryLlmBudgetStore } from "../../core/llm/budget.js";
import { createLlm } from "../../core/llm/client.js";
import { LlmError, type Llm } from "../../core/llm/types.js";
import { llmFromConfig } from "../../context-hook/llm/from-config.js";
import { OpenAiLlmBackend } from "../../context-hook/llm/openai-llm.js";

interface Seen {
  method: string | undefined;
  url: string | undefined;
  auth: string | undefined;
  body: unknown;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function fakeEndpoint(handler: Handler): Promise<{ baseUrl: string; seen: Seen[]; closed: () => number }> {
  const seen: Seen[] = [];
  let closedEarly = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, body: JSON.parse(body) });
      res.on("close", () => {
        if (!res.writableFinished) closedEarly++;
      });
      handler(req, res, body);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1/`, seen, closed: () => closedEarly };
}

const completion = (content: string) =>
  JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 21, completion_tokens: 4, total_tokens: 25, prompt_tokens_details: { cached_tokens: 8 } },
  });

function llmFor(baseUrl: string, env: NodeJS.ProcessEnv = { TEST_LLM_KEY: "sk-test-123" }, timeoutMs = 5000): Llm {
  const config = MemoryConfig.parse({
    llm: { adapter: "openai", timeoutMs, openai: { baseUrl, model: "gpt-test", apiKeyEnv: "TEST_LLM_KEY" } },
  }).llm;
  return llmFromConfig(config, { budgetStore: new MemoryLlmBudgetStore(), clock: fixedClock(0), env });
}

async function failure(p: Promise<unknown>): Promise<LlmError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  if (!(e instanceof LlmError)) throw new Error(`expected an LlmError, got ${String(e)}`);
  return e;
}

describe("openai-compatible adapter", () => {
  it("posts system + user messages with the key from the environment and parses content and usage", async () => {
    const ep = await fakeEndpoint((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(completion("Paris.")));
    const r = await llmFor(ep.baseUrl).complete({ op: "ask", system: "Answer briefly.", prompt: "Capital of France?", maxTokens: 64 });
    expect(r).toMatchObject({ text: "Paris.", value: "Paris.", adapter: "openai", op: "ask", calls: 1 });
    expect(r.usage).toEqual({ inputTokens: 21, outputTokens: 4, totalTokens: 25, cachedInputTokens: 8 });
    expect(ep.seen).toEqual([
      {
        method: "POST",
        url: "/v1/chat/completions",
        auth: "Bearer sk-test-123",
        body: {
          model: "gpt-test",
          messages: [
            { role: "system", content: "Answer briefly." },
            { role: "user", content: "Capital of France?" },
          ],
          max_tokens: 64,
        },
      },
    ]);
  });

  it("sends no Authorization header and no system message when there is neither", async () => {
    const ep = await fakeEndpoint((_req, res) => res.end(completion('{"n": 3}')));
    const r = await llmFor(ep.baseUrl, {}).complete({ op: "count", prompt: "How many?", schema: z.object({ n: z.number() }) });
    expect(r.value).toEqual({ n: 3 });
    expect(ep.seen[0]!.auth).toBeUndefined();
    const body = ep.seen[0]!.body as { messages: { role: string }[]; max_tokens?: number };
    expect(body.messages.map((m) => m.role)).toEqual(["user"]);
    expect(body.max_tokens).toBeUndefined();
  });

  it("refuses an API key that cannot go in a header, naming the variable and never the key", async () => {
    // e.g. OPENAI_API_KEY=$(cat key.txt) of a file with two lines: fetch's own error quoted the
    // whole "Bearer …" value, which the learning loop stores in its events
    const ep = await fakeEndpoint((_req, res) => res.end(completion("hi")));
    for (const key of ["sk-live-abc123\nsk-old-xyz789", "“sk-live-abc123”"]) {
      const e = await failure(llmFor(ep.baseUrl, { TEST_LLM_KEY: key }).complete({ op: "ask", prompt: "?" }));
      expect(e.code).toBe("unavailable");
      expect(e.message).toContain("TEST_LLM_KEY");
      expect(e.message).not.toContain("abc123");
    }
    expect(ep.seen).toHaveLength(0);
    // surrounding whitespace (a trailing newline) is what a header trims anyway
    expect((await llmFor(ep.baseUrl, { TEST_LLM_KEY: " sk-test-123\n" }).complete({ op: "ask", prompt: "?" })).text).toBe("hi");
    expect(ep.seen[0]!.auth).toBe("Bearer sk-test-123");
  });

  it("reads structured output after a reasoning model's inline <think> block, not from inside it", async () => {
    // DeepSeek-R1 and other reasoning models behind Ollama, LM Studio or vLLM put their reasoning in
    // the content: a JSON-looking draft in it was taken as the answer, and validated
    const answer =
      '<think>\nThe user wants a rating. Something like {"score": 1, "reason": "failed"} would fit a failure,\n' +
      "but the tests passed, so the score is high.\n</think>\n\n" +
      '{"score": 4, "reason": "the tests passed"}';
    const ep = await fakeEndpoint((_req, res) => res.end(completion(answer)));
    const schema = z.object({ score: z.number(), reason: z.string() });
    const r = await llmFor(ep.baseUrl).complete({ op: "rate", prompt: "Rate the episode.", schema });
    expect(r.value).toEqual({ score: 4, reason: "the tests passed" });
    expect(r.text).toBe(answer);
    expect(r.calls).toBe(1);
  });

  it("sends max_completion_tokens to a model that refuses max_tokens, and keeps doing so", async () => {
    // OpenAI's reasoning models (o-series, gpt-5) answer every call with max_tokens this 400
    const refusal = {
      error: {
        message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        type: "invalid_request_error",
        param: "max_tokens",
        code: "unsupported_parameter",
      },
    };
    const ep = await fakeEndpoint((_req, res, body) => {
      if ("max_tokens" in (JSON.parse(body) as object)) res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify(refusal));
      else res.end(completion("Paris."));
    });
    const llm = llmFor(ep.baseUrl);
    expect((await llm.complete({ op: "ask", prompt: "Capital of France?", maxTokens: 64 })).text).toBe("Paris.");
    expect((await llm.complete({ op: "ask", prompt: "And of Spain?", maxTokens: 32 })).text).toBe("Paris.");
    const limits = ep.seen.map((s) => s.body as { max_tokens?: number; max_completion_tokens?: number });
    expect(limits.map((b) => [b.max_tokens, b.max_completion_tokens])).toEqual([
      [64, undefined],
      [undefined, 64],
      [undefined, 32],
    ]);

    // a value refused (too large) is the caller's error, not a reason to switch parameters
    const tooLarge = { error: { message: "max_tokens is too large: 99999. This model supports at most 4096 completion tokens.", param: "max_tokens", code: null } };
    const ep2 = await fakeEndpoint((_req, res) => res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify(tooLarge)));
    const e = await failure(llmFor(ep2.baseUrl).complete({ op: "ask", prompt: "?", maxTokens: 99999 }));
    expect(e.status).toBe(400);
    expect(ep2.seen).toHaveLength(1);
  });

  it("turns a 500 into upstream with the status and a short excerpt of the body", async () => {
    const ep = await fakeEndpoint((_req, res) =>
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "model overloaded", pad: "x".repeat(5000) } })),
    );
    const e = await failure(llmFor(ep.baseUrl).complete({ op: "ask", prompt: "?" }));
    expect(e.code).toBe("upstream");
    expect(e.status).toBe(500);
    expect(e.message).toContain("HTTP 500");
    expect(e.message).toContain("model overloaded");
    expect(e.message.length).toBeLessThan(600);
  });

  it("turns a 200 without message content into upstream", async () => {
    const ep = await fakeEndpoint((_req, res) => res.end(JSON.stringify({ choices: [] })));
    const e = await failure(llmFor(ep.baseUrl).complete({ op: "ask", prompt: "?" }));
    expect(e.code).toBe("upstream");
    expect(e.message).toContain("without message content");
  });

  it("times out a server that never answers and drops the request", async () => {
    const ep = await fakeEndpoint(() => {});
    const t0 = performance.now();
    const e = await failure(llmFor(ep.baseUrl, {}, 200).complete({ op: "ask", prompt: "?" }));
    expect(e.code).toBe("timeout");
    expect(performance.now() - t0).toBeLessThan(1500);
    await expect.poll(() => ep.closed(), { timeout: 3000 }).toBe(1);
  });

  it("cancels on the caller's signal and drops the request", async () => {
    const ep = await fakeEndpoint(() => {});
    const ac = new AbortController();
    const p = llmFor(ep.baseUrl).complete({ op: "ask", prompt: "?", signal: ac.signal });
    // abort once the request is there: a fixed 50 ms beat a cold first fetch to the server, which
    // then saw nothing to drop (the test failed whenever it ran alone)
    await expect.poll(() => ep.seen.length, { timeout: 3000 }).toBe(1);
    ac.abort();
    const e = await failure(p);
    expect(e.code).toBe("cancelled");
    await expect.poll(() => ep.closed(), { timeout: 3000 }).toBe(1);
  });

  it("is unavailable when nothing listens", async () => {
    const ep = await fakeEndpoint(() => {});
    const url = ep.baseUrl;
    const s = servers.pop()!;
    await new Promise((r) => s.close(r));
    const llm = createLlm(new OpenAiLlmBackend({ baseUrl: url, model: "m", env: {} }));
    expect((await failure(llm.complete({ op: "ask", prompt: "?" }))).code).toBe("unavailable");
  });

  it("the config refuses the openai adapter without its section", () => {
    expect(() => MemoryConfig.parse({ llm: { adapter: "openai" } })).toThrow(/llm\.openai/);
    const d = MemoryConfig.parse({}).llm;
    expect(d).toMatchObject({ adapter: "none", timeoutMs: 60_000, dailyCallBudget: 200, provider: { startTimeoutMs: 30_000 } });
    expect(llmFromConfig(d, { budgetStore: new MemoryLlmBudgetStore(), clock: fixedClock(0) }).adapter).toBe("none");
  });
});

// The OpenAI-compatible embeddings client against a real loopback HTTP server: request shape,
// batching, answer order by index, and every failure named clearly.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { EmbedderError } from "../../core/embedding/embedder.js";
import { HashingEmbedder } from "../../core/embedding/hashing.js";
import { norm } from "../../core/embedding/vector.js";
import { OpenAiEmbedder, retryAfterMs } from "../../stores/embedding/openai-embedder.js";

type Handler = (body: Record<string, unknown>, rq: IncomingMessage, rs: ServerResponse) => void;

let server: Server | null = null;
afterEach(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise((r) => server!.close(r));
  }
  server = null;
});

async function serve(handler: Handler): Promise<string> {
  server = createServer((rq, rs) => {
    let raw = "";
    rq.on("data", (c) => (raw += c));
    rq.on("end", () => handler(raw ? (JSON.parse(raw) as Record<string, unknown>) : {}, rq, rs));
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

const DIMS = 12;
const hashing = new HashingEmbedder({ dimensions: DIMS });
const json = (rs: ServerResponse, status: number, body: unknown) =>
  rs.writeHead(status, { "content-type": "application/json" }).end(typeof body === "string" ? body : JSON.stringify(body));

describe("OpenAI-compatible embeddings endpoint", () => {
  it("refuses an API key that cannot go in a header, naming the variable and never the key", async () => {
    let calls = 0;
    const base = await serve((body, _rq, rs) => {
      calls++;
      json(rs, 200, { data: (body.input as string[]).map((t, index) => ({ index, embedding: Array.from(hashing.embedOne(t)) })) });
    });
    for (const key of ["sk-live-abc123\nsk-old-xyz789", "“sk-live-abc123”"]) {
      const e = new OpenAiEmbedder({ baseUrl: base, model: "m", dimensions: DIMS, env: { EMB_KEY: key }, apiKeyEnv: "EMB_KEY" });
      const err = (await e.embed(["hello"]).catch((x: unknown) => x)) as EmbedderError;
      expect(err).toBeInstanceOf(EmbedderError);
      expect(err.message).toContain("EMB_KEY");
      expect(err.message).not.toContain("abc123");
    }
    expect(calls).toBe(0);
    // a trailing newline (a key file read with $(cat)) is trimmed, as a header would
    const ok = new OpenAiEmbedder({ baseUrl: base, model: "m", dimensions: DIMS, env: { EMB_KEY: "sk-test-123\n" }, apiKeyEnv: "EMB_KEY" });
    expect(await ok.embed(["hello"])).toHaveLength(1);
    expect(calls).toBe(1);
  });

  it("posts model and inputs, batches, restores input order from index, normalises", async () => {
    const seen: { path: string; auth: string | undefined; body: Record<string, unknown> }[] = [];
    const base = await serve((body, rq, rs) => {
      seen.push({ path: rq.url ?? "", auth: rq.headers.authorization, body });
      const input = body.input as string[];
      // answer in reverse order, scaled ×3 (the client must re-order and normalise)
      const data = input.map((t, index) => ({ object: "embedding", index, embedding: Array.from(hashing.embedOne(t)).map((x) => x * 3) })).reverse();
      json(rs, 200, { object: "list", data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } });
    });
    const e = new OpenAiEmbedder({ baseUrl: `${base}/`, model: "text-embed-small", dimensions: DIMS, batchSize: 2, env: { MY_KEY: "sk-test" }, apiKeyEnv: "MY_KEY" });
    expect(e.id).toBe(`openai:text-embed-small:${DIMS}`);
    const texts = ["alpha beta", "gamma", "", "delta epsilon", "zeta"];
    const out = await e.embed(texts);
    expect(seen.map((s) => (s.body.input as string[]).length)).toEqual([2, 2, 1]);
    expect(seen[0]).toMatchObject({ path: "/v1/embeddings", auth: "Bearer sk-test", body: { model: "text-embed-small", encoding_format: "float" } });
    expect(seen[0]!.body.dimensions).toBeUndefined();
    expect((seen[1]!.body.input as string[])[0]).toBe(" "); // empty text sent as a space
    texts.forEach((t, i) => {
      if (t === "") return;
      const want = hashing.embedOne(t);
      for (let j = 0; j < DIMS; j++) expect(out[i]![j]).toBeCloseTo(want[j]!, 5);
      expect(norm(out[i]!)).toBeCloseTo(1, 5);
    });
  });

  it("sends dimensions when asked and no Authorization header without a key", async () => {
    const seen: { auth: string | undefined; body: Record<string, unknown> }[] = [];
    const base = await serve((body, rq, rs) => {
      seen.push({ auth: rq.headers.authorization, body });
      json(rs, 200, { data: (body.input as string[]).map((t) => ({ embedding: Array.from(hashing.embedOne(t)) })) });
    });
    const e = new OpenAiEmbedder({ baseUrl: base, model: "m", dimensions: DIMS, requestDimensions: true, env: {} });
    const [v] = await e.embed(["no index field: input order"]);
    expect(v!.length).toBe(DIMS);
    expect(seen[0]!.auth).toBeUndefined();
    expect(seen[0]!.body.dimensions).toBe(DIMS);
  });

  const failures: [string, Handler, RegExp][] = [
    ["an HTTP error with its body", (_b, _q, rs) => json(rs, 401, { error: { message: "Incorrect API key provided" } }), /answered HTTP 401: .*Incorrect API key/],
    ["a non-JSON answer", (_b, _q, rs) => rs.writeHead(200).end("<html>gateway</html>"), /answered non-JSON: <html>gateway/],
    ["an answer without data", (_b, _q, rs) => json(rs, 200, { result: [] }), /without data\[\]\.embedding/],
    ["too few embeddings", (_b, _q, rs) => json(rs, 200, { data: [{ index: 0, embedding: new Array(DIMS).fill(0.1) }] }), /returned 1 embeddings for 2 inputs/],
    [
      "the wrong dimension",
      (b, _q, rs) => json(rs, 200, { data: (b.input as string[]).map((_, index) => ({ index, embedding: [1, 2, 3] })) }),
      /returned 3 dimensions, config says 12 \(embedder.openai.dimensions\)/,
    ],
    [
      "a repeated index",
      (b, _q, rs) => json(rs, 200, { data: (b.input as string[]).map(() => ({ index: 0, embedding: new Array(DIMS).fill(0.1) })) }),
      /index 0 twice or out of range/,
    ],
  ];
  for (const [what, handler, message] of failures) {
    it(`names ${what}`, async () => {
      const base = await serve(handler);
      const err = await new OpenAiEmbedder({ baseUrl: base, model: "m", dimensions: DIMS, env: {} }).embed(["a", "b"]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmbedderError);
      expect((err as EmbedderError).code).toBe("upstream");
      expect((err as Error).message).toMatch(message);
    });
  }

  /** answers with `statuses` in turn (extra headers per status), then 200 with real embeddings */
  async function flaky(statuses: [number, Record<string, string>?][]): Promise<{ base: string; times: number[] }> {
    const times: number[] = [];
    const base = await serve((body, _q, rs) => {
      times.push(Date.now());
      const next = statuses.shift();
      if (next) {
        rs.writeHead(next[0], { "content-type": "application/json", ...next[1] }).end(`{"error":"status ${next[0]}"}`);
        return;
      }
      json(rs, 200, { data: (body.input as string[]).map((t, index) => ({ index, embedding: Array.from(hashing.embedOne(t)) })) });
    });
    return { base, times };
  }

  it("retries 503 twice and then succeeds, after the configured delays", async () => {
    const { base, times } = await flaky([[503], [503]]);
    const e = new OpenAiEmbedder({ baseUrl: base, model: "m", dimensions: DIMS, env: {}, retryDelaysMs: [20, 60] });
    const [v] = await e.embed(["hello"]);
    expect(times).toHaveLength(3);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(15);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(55);
    expect(norm(v!)).toBeCloseTo(1, 5);
  });

  it("retries 429, 502 and 504 too", async () => {
    for (const status of [429, 502, 504]) {
      const { base, times } = await flaky([[status]]);
      await new OpenAiEmbedder({ baseUrl: base, model: "m", dimensions: DIMS, env: {}, retryDelaysMs: [0, 0] }).embed(["x"]);
      expect(times).toHaveLength(2);
      server!.closeAllConnections();
      await new Promise((r) => server!.close(r));
      server = null;
    }
  });

  it("honours Retry-After (seconds) on a 429, capped by maxRetryAfterMs", async () => {
    const honoured = await flaky([[429, { "retry-after": "0.3" }]]);
    await new OpenAiEmbedder({ baseUrl: honoured.base, model: "m", dimensions: DIMS, env: {}, retryDelaysMs: [0, 0] }).embed(["x"]);
    expect(honoured.times).toHaveLength(2);
    expect(honoured.times[1]! - honoured.times[0]!).toBeGreaterThanOrEqual(280);
    server!.closeAllConnections();
    await new Promise((r) => server!.close(r));
    const capped = await flaky([[429, { "retry-after": "3600" }]]);
    const t0 = Date.now();
    await new OpenAiEmbedder({ baseUrl: capped.base, model: "m", dimensions: DIMS, env: {}, retryDelaysMs: [0, 0], maxRetryAfterMs: 100 }).embed(["x"]);
    expect(capped.times).toHaveLength(2);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(retryAfterMs("2")).toBe(2000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs("soon")).toBeUndefined();
    expect(retryAfterMs(new Date(10_000).toUTCString(), 7_000)).toBe(3000);
  });

  it("a persistent 503 is 'unavailable' after 3 requests, the status in the message", async () => {
    const { base, times } = await flaky([[503], [503], [503], [503]]);
    const err = await new OpenAiEmbedder({ baseUrl: base, model: "m", dimensions: DIMS, env: {}, retryDelaysMs: [0, 0] }).embed(["x"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbedderError);
    expect((err as EmbedderError).code).toBe("unavailable");
    expect((err as Error).message).toMatch(/answered HTTP 503 \(3 tries\): .*status 503/);
    expect(times).toHaveLength(3);
  });

  it("a 400 (per-input error, e.g. context length) or a 500 is 'upstream' at once: one request", async () => {
    for (const status of [400, 500]) {
      const { base, times } = await flaky([[status], [status]]);
      const err = await new OpenAiEmbedder({ baseUrl: base, model: "m", dimensions: DIMS, env: {}, retryDelaysMs: [0, 0] }).embed(["x"]).catch((e: unknown) => e);
      expect((err as EmbedderError).code).toBe("upstream");
      expect((err as Error).message).toMatch(new RegExp(`answered HTTP ${status}: `));
      expect(times).toHaveLength(1);
      server!.closeAllConnections();
      await new Promise((r) => server!.close(r));
      server = null;
    }
  });

  it("gives up after timeoutMs when the server never answers", async () => {
    const base = await serve(() => undefined);
    const t0 = Date.now();
    const err = await new OpenAiEmbedder({ baseUrl: base, model: "m", dimensions: DIMS, timeoutMs: 200, env: {} }).embed(["x"]).catch((e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect((err as EmbedderError).code).toBe("unavailable");
    expect((err as Error).message).toMatch(/no answer within 200 ms \(embedder.timeoutMs\)/);
  });

  it("says when nothing listens", async () => {
    const base = await serve(() => undefined);
    server!.close();
    server = null;
    const err = await new OpenAiEmbedder({ baseUrl: base, model: "m", dimensions: DIMS, env: {} }).embed(["x"]).catch((e: unknown) => e);
    expect((err as EmbedderError).code).toBe("unavailable");
    expect((err as Error).message).toMatch(/127\.0\.0\.1:\d+\/v1\/embeddings: .*ECONNREFUSED/);
  });

  it("refuses a nonsensical dimension up front", () => {
    expect(() => new OpenAiEmbedder({ baseUrl: "http://127.0.0.1:1/v1", model: "m", dimensions: 0 })).toThrow(/dimensions must be a positive integer/);
  });
});

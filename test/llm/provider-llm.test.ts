// Adapter (a) against the scripted provider PROCESS, spawned from a providers.json the way the
// daemon does it. `#mode=<m>` in the prompt picks the provider's script for one call.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { fixedClock } from "../../core/clock.js";
import { MemoryConfig, type LlmConfig } from "../../core/config.js";
import { MemoryLlmBudgetStore } from "../../core/llm/budget.js";
import { createLlm } from "../../core/llm/client.js";
import { LlmError, type Llm } from "../../core/llm/types.js";
import { llmFromConfig } from "../../context-hook/llm/from-config.js";
import { ProviderLlmBackend } from "../../context-hook/llm/provider-llm.js";
import { startUpstream } from "../../context-hook/provider-proxy/upstream.js";
import { tempDir } from "../helpers/tmp.js";

const SCRIPTED = resolve(fileURLToPath(new URL(".", import.meta.url)), "../fixtures/providers/scripted-provider.mjs");
const HANGING = resolve(fileURLToPath(new URL(".", import.meta.url)), "../fixtures/llm/hanging-provider.mjs");
const silent = pino({ level: "silent" });

type Rec = { request?: string; cancelled?: boolean };
const records = (file: string): Rec[] =>
  existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Rec) : [];

const open: Llm[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((l) => l.close()));
});

type LlmInput = NonNullable<z.input<typeof MemoryConfig>["llm"]>;

function setup(llm: Omit<LlmInput, "provider"> = {}, providers?: unknown, provider: LlmInput["provider"] = {}) {
  const dir = tempDir("imem-llm-prov-");
  const recordFile = join(dir, "records.ndjson");
  const providersJson = join(dir, "providers.json");
  writeFileSync(providersJson, JSON.stringify(providers ?? { scripted: { command: [process.execPath, SCRIPTED] } }));
  const config: LlmConfig = MemoryConfig.parse({
    llm: { adapter: "provider", provider: { providersJson, ...provider }, ...llm },
  }).llm;
  const l = llmFromConfig(config, {
    budgetStore: new MemoryLlmBudgetStore(),
    clock: fixedClock(Date.UTC(2026, 10, 30)),
    logger: silent,
    env: { ...process.env, SCRIPTED_RECORD_FILE: recordFile },
  });
  open.push(l);
  return { llm: l, recordFile, dir };
}

async function failure(p: Promise<unknown>): Promise<LlmError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  if (!(e instanceof LlmError)) throw new Error(`expected an LlmError, got ${String(e)}`);
  return e;
}

describe("provider-protocol adapter", () => {
  it("spawns the provider, asks for its default model, and collects the answer text", async () => {
    const { llm, recordFile } = setup();
    const r = await llm.complete({ op: "summarize", system: "You summarize.", prompt: "Summarize this.", maxTokens: 300 });
    expect(r).toMatchObject({ text: "Hello, world", value: "Hello, world", adapter: "provider", op: "summarize", calls: 1 });
    expect(r.usage).toEqual({ inputTokens: 1200, outputTokens: 34, totalTokens: 1234, cachedInputTokens: 1000 });

    const [list, invoke] = records(recordFile);
    expect(list?.request).toBe('"ListModels"');
    const sent = JSON.parse(invoke!.request!) as { InvokeModel: { model_id: string; request: Record<string, unknown> } };
    expect(sent.InvokeModel.model_id).toBe("scripted-1");
    expect(sent.InvokeModel.request).toEqual({
      model: null,
      preamble: "You summarize.",
      chat_history: [{ role: "user", content: [{ type: "text", text: "Summarize this." }] }],
      documents: [],
      tools: [],
      temperature: null,
      max_tokens: 300,
      tool_choice: null,
      additional_params: null,
      output_schema: null,
    });

    // the process and the model id are reused
    await llm.complete({ op: "summarize", prompt: "again" });
    expect(records(recordFile).map((x) => x.request?.slice(0, 14))).toEqual([
      '"ListModels"',
      '{"InvokeModel"',
      '{"InvokeModel"',
    ]);
  });

  it("uses the configured model id without listing models", async () => {
    const { llm, recordFile } = setup({}, undefined, { modelId: "scripted-2" });
    await llm.complete({ op: "x", prompt: "hi" });
    const reqs = records(recordFile);
    expect(reqs).toHaveLength(1);
    expect(reqs[0]!.request).toContain('"model_id":"scripted-2"');
  });

  it("validates structured output from the provider (repair path included)", async () => {
    const { llm } = setup();
    const e = await failure(llm.complete({ op: "judge", prompt: "rate it", schema: z.object({ score: z.number() }) }));
    // "Hello, world" twice: no JSON in the answer, nor in the repair
    expect(e.code).toBe("invalid_output");
  });

  it("reads a last line that lacks its newline", async () => {
    const { llm } = setup();
    expect((await llm.complete({ op: "x", prompt: "go #mode=no-final-newline" })).text).toBe("Hello, world");
  });

  it("assembles lines split across many small writes", async () => {
    const { llm } = setup();
    // the fragmented script is the tool-call one: its text chunk is the answer, the tool call is ignored
    expect((await llm.complete({ op: "x", prompt: "go #mode=fragmented" })).text).toBe("Let me look.");
  });

  it("maps an Error in place of InvokeStarted to upstream", async () => {
    const { llm } = setup();
    const e = await failure(llm.complete({ op: "x", prompt: "go #mode=error-before-start" }));
    expect(e.code).toBe("upstream");
    expect(e.message).toContain("rate limited: please try again");
  });

  it("maps a mid-stream Error chunk to upstream", async () => {
    const { llm } = setup();
    const e = await failure(llm.complete({ op: "x", prompt: "go #mode=mid-stream-error" }));
    expect(e.code).toBe("upstream");
    expect(e.message).toContain("upstream hiccup: overloaded");
  });

  it("fails a provider that dies mid-stream as upstream, then respawns it for the next call", async () => {
    const { llm } = setup();
    const e = await failure(llm.complete({ op: "x", prompt: "go #mode=die-mid-stream" }));
    expect(e.code).toBe("upstream");
    await vi.waitFor(async () => expect((await llm.complete({ op: "x", prompt: "hi" })).text).toBe("Hello, world"), {
      timeout: 5000,
      interval: 100,
    });
  });

  it("fails a response line over its limit as upstream, without throwing out of the socket handler", async () => {
    // A provider that streams 65 MB without a newline and keeps the connection open: the line
    // limit (64 MiB) must end the call, not throw from the data listener (an uncaught exception
    // that stopped the server) and leave the call waiting for its deadline.
    const path = join(tempDir("imem-llm-long-"), "p.sock");
    const server = createServer((s) => {
      s.on("error", () => {});
      s.once("data", () => {
        s.write('"InvokeStarted"\n{"Chunk":{"Message":"');
        s.write(Buffer.alloc(65 * 1024 * 1024, 0x78));
      });
    });
    await new Promise<void>((r) => server.listen(path, r));
    try {
      const llm = createLlm(new ProviderLlmBackend({ socket: path, modelId: "m" }), { timeoutMs: 10_000 });
      open.push(llm);
      const e = await failure(llm.complete({ op: "x", prompt: "hi" }));
      expect(e.code).toBe("upstream");
      expect(e.message).toContain("line longer than");
    } finally {
      server.close();
    }
  });

  describe("against a provider whose answers never end", () => {
    async function hanging() {
      const dir = tempDir("imem-llm-hang-");
      const recordFile = join(dir, "records.ndjson");
      const backend = new ProviderLlmBackend({
        command: [process.execPath, HANGING],
        modelId: "hang-1",
        logger: silent,
        env: { ...process.env, HANGING_RECORD_FILE: recordFile },
      });
      const llm = createLlm(backend, { timeoutMs: 5000 });
      open.push(llm);
      // spawn it outside the deadlines under test
      await backend.listModels(AbortSignal.timeout(10_000));
      return { llm, recordFile };
    }

    it("times out and hangs up on the provider", async () => {
      const { llm, recordFile } = await hanging();
      const t0 = performance.now();
      const e = await failure(llm.complete({ op: "x", prompt: "hi", timeoutMs: 300 }));
      expect(e.code).toBe("timeout");
      expect(performance.now() - t0).toBeLessThan(2000);
      // the warm-up ListModels, the InvokeModel that got a partial answer, and the hang-up
      await vi.waitFor(() => expect(records(recordFile).at(-1)).toEqual({ hungUp: true }), { timeout: 3000 });
      expect(records(recordFile)).toHaveLength(3);
    });

    it("cancels on the caller's signal and hangs up on the provider", async () => {
      const { llm, recordFile } = await hanging();
      const ac = new AbortController();
      const p = llm.complete({ op: "x", prompt: "hi", signal: ac.signal });
      await vi.waitFor(() => expect(records(recordFile)).toHaveLength(2), { timeout: 5000 });
      ac.abort();
      expect((await failure(p)).code).toBe("cancelled");
      await vi.waitFor(() => expect(records(recordFile).at(-1)).toEqual({ hungUp: true }), { timeout: 3000 });
    });
  });

  it("is unavailable when the command cannot start, providers.json is ambiguous, or the id is unknown", async () => {
    const bad = setup({}, { p: { command: [join("/nonexistent", "provider-binary")] } });
    expect((await failure(bad.llm.complete({ op: "x", prompt: "hi" }))).code).toBe("unavailable");

    const two = { a: { command: [process.execPath, SCRIPTED] }, b: { command: [process.execPath, SCRIPTED] } };
    const ambiguous = setup({}, two);
    const e = await failure(ambiguous.llm.complete({ op: "x", prompt: "hi" }));
    expect(e.code).toBe("unavailable");
    expect(e.message).toContain("llm.provider.id");

    const unknown = setup({}, two, { id: "zzz" });
    expect((await failure(unknown.llm.complete({ op: "x", prompt: "hi" }))).message).toContain('"zzz"');

    const picked = setup({}, two);
    const byId = llmFromConfig(MemoryConfig.parse({ llm: { adapter: "provider", provider: { providersJson: join(picked.dir, "providers.json"), id: "b" } } }).llm, {
      budgetStore: new MemoryLlmBudgetStore(),
      clock: fixedClock(0),
      logger: silent,
    });
    open.push(byId);
    expect((await byId.complete({ op: "x", prompt: "hi" })).text).toBe("Hello, world");
  });

  it("is unavailable when the configured socket does not exist", async () => {
    const dir = tempDir("imem-llm-sock-");
    const l = llmFromConfig(MemoryConfig.parse({ llm: { adapter: "provider", provider: { socket: join(dir, "none.sock"), modelId: "m" } } }).llm, {
      budgetStore: new MemoryLlmBudgetStore(),
      clock: fixedClock(0),
    });
    expect((await failure(l.complete({ op: "x", prompt: "hi" }))).code).toBe("unavailable");
  });

  it("talks to an existing socket, and close() stops a provider it spawned", async () => {
    const up = await startUpstream([process.execPath, SCRIPTED], { logger: silent });
    try {
      const viaSocket = createLlm(new ProviderLlmBackend({ socket: up.socketPath }));
      expect((await viaSocket.complete({ op: "x", prompt: "hi" })).text).toBe("Hello, world");
      await viaSocket.close();
      expect(up.exitReason).toBeNull(); // not ours to stop
    } finally {
      await up.stop();
    }

    const backend = new ProviderLlmBackend({ command: [process.execPath, SCRIPTED], logger: silent });
    const owned = createLlm(backend);
    await owned.complete({ op: "x", prompt: "hi" });
    const pid = backend.pid;
    expect(pid).toBeTypeOf("number");
    expect(() => process.kill(pid!, 0)).not.toThrow();
    await owned.close();
    expect(() => process.kill(pid!, 0)).toThrow();
    expect((await failure(owned.complete({ op: "x", prompt: "hi" }))).code).toBe("unavailable");
  });
});

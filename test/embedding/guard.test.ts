// EmbedderGuard: an unreachable embedder rests with a doubling backoff, a search waits a short
// deadline for its query vector, and one refused text costs only itself its vector. The embedder
// here is an in-memory fake (allowed for the embedder); the store-level checks over a real
// endpoint are in vector-store.test.ts.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../core/config.js";
import { EmbedderError, type Embedder } from "../../core/embedding/embedder.js";
import { EmbedderGuard } from "../../core/embedding/guard.js";
import { HashingEmbedder } from "../../core/embedding/hashing.js";
import { fixedClock } from "../../core/clock.js";
import { openMemory } from "../../cli/context.js";
import { modelOrigin, req, T0 } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const hashing = new HashingEmbedder({ dimensions: 16 });

/** A fake embedder whose behaviour per call the test sets. */
function fake(behave: (texts: string[]) => Promise<Float32Array[]> | "hang") {
  const calls: string[][] = [];
  const e: Embedder = {
    id: "fake:16",
    dimensions: 16,
    embed: (texts) => {
      calls.push(texts);
      const r = behave(texts);
      return r === "hang" ? new Promise(() => undefined) : r;
    },
  };
  return { e, calls };
}

const down = () => Promise.reject(new EmbedderError("unavailable", "http://127.0.0.1:9/v1/embeddings: ECONNREFUSED"));

describe("EmbedderGuard", () => {
  it("rests after an unreachable embedder, with a doubling pause, and recovers", async () => {
    let now = 0;
    let up = false;
    const { e, calls } = fake((t) => (up ? hashing.embed(t) : down()));
    const g = new EmbedderGuard(e, { now: () => now, backoffMinMs: 1000, backoffMaxMs: 3000 });
    expect(await g.forWrite(["a"])).toEqual([null]);
    expect(calls).toHaveLength(1);
    // resting: nothing is asked, nothing waits
    expect(await g.forWrite(["b"])).toEqual([null]);
    expect(await g.forQuery("b")).toBeNull();
    expect(calls).toHaveLength(1);
    now = 1001;
    expect(await g.forWrite(["c"])).toEqual([null]);
    expect(calls).toHaveLength(2);
    // the second pause is twice as long
    now = 2500;
    expect(g.resting).toBe(true);
    now = 3002;
    up = true;
    const [v] = await g.forWrite(["d"]);
    expect(v).toBeInstanceOf(Float32Array);
    expect(g.resting).toBe(false);
  });

  it("one refused text in a batch costs only itself its vector", async () => {
    const { e, calls } = fake((t) =>
      t.some((x) => x.startsWith("LONG")) ? Promise.reject(new EmbedderError("upstream", "HTTP 400: maximum context length")) : hashing.embed(t),
    );
    const g = new EmbedderGuard(e);
    const texts = Array.from({ length: 16 }, (_, i) => (i === 11 ? "LONG log" : `text ${i}`));
    const out = await g.forWrite(texts);
    expect(out.map((v) => v === null)).toEqual(texts.map((_, i) => i === 11));
    // halving: far fewer calls than one per text
    expect(calls.length).toBeLessThanOrEqual(1 + 2 * Math.log2(16));
    const bf = await g.forBackfill(texts);
    expect(bf.vectors.filter((v) => v === null)).toHaveLength(1);
    expect(bf.refused).toMatch(/maximum context length/);
  });

  it("a backfill stops on an unreachable embedder; a write does not", async () => {
    const { e } = fake(() => down());
    await expect(new EmbedderGuard(e).forBackfill(["a", "b"])).rejects.toThrow(/ECONNREFUSED/);
    expect(await new EmbedderGuard(e).forWrite(["a", "b"])).toEqual([null, null]);
  });

  it("a search waits at most the query deadline, then rests the embedder", async () => {
    let now = 0;
    const { e } = fake(() => "hang");
    const failures: string[] = [];
    const g = new EmbedderGuard(e, { now: () => now, queryTimeoutMs: 100, onFailure: (_w, err) => failures.push((err as Error).message) });
    const t0 = performance.now();
    expect(await g.forQuery("where is the printer")).toBeNull();
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(failures[0]).toMatch(/no query vector within 100 ms/);
    expect(g.resting).toBe(true);
  });

  it("all-zero vectors are no vectors", async () => {
    const { e } = fake((t) => Promise.resolve(t.map(() => new Float32Array(16))));
    const g = new EmbedderGuard(e);
    expect(await g.forWrite(["👍"])).toEqual([null]);
    expect(await g.forQuery("👍")).toBeNull();
  });
});

describe("a store over an endpoint that accepts and never answers", () => {
  let server: Server | null = null;
  afterEach(async () => {
    server?.closeAllConnections();
    if (server) await new Promise((r) => server!.close(r));
    server = null;
  });

  it("waits the timeout once, then writes and searches without waiting while it rests", async () => {
    let asked = 0;
    server = createServer(() => void asked++);
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const ctx = openMemory({
      dbPath: join(tempDir(), "memory.db"),
      config: defaultConfig({
        localUser: "alice",
        // a timeout long against a loaded machine's own delays, so "waited" and "did not wait" stay apart
        embedder: { kind: "openai", timeoutMs: 2000, openai: { baseUrl: `http://127.0.0.1:${port}/v1`, model: "m", dimensions: 16 } } as never,
      }),
      clock: fixedClock(T0),
      env: {},
    });
    const alice = req({ user: "alice", project: null, session: "s", thread: "s" });
    try {
      const t0 = performance.now();
      const first = await ctx.service.remember(alice, { content: "Alice's printer is on floor 3", kind: "fact", scope: "user" }, modelOrigin());
      expect(first.status).toBe("created");
      expect(performance.now() - t0).toBeGreaterThanOrEqual(1900);
      const t1 = performance.now();
      const second = await ctx.service.remember(alice, { content: "Alice's scanner is on floor 2", kind: "fact", scope: "user" }, modelOrigin());
      const hits = await ctx.service.search({ thread: alice }, { query: "scanner floor" });
      expect(performance.now() - t1).toBeLessThan(1000);
      expect(hits[0]?.record.id).toBe(second.record.id);
      expect(asked).toBe(1);
      expect(ctx.store.vectors!.lastError).toMatch(/no answer within 2000 ms/);
    } finally {
      ctx.close();
    }
  });
});

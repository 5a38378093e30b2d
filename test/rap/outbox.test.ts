// Durable callback delivery: retries, refusals, expiry, redelivery after a restart and leases
// that keep two processes sharing one database file from sending a callback twice.
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fixedClock, systemClock } from "../../core/clock.js";
import { openDatabase, type Db } from "../../stores/sqlite/database.js";
import { SqliteRapOutbox } from "../../stores/sqlite/rap-outbox.js";
import { CallbackDeliverer, retryDelay } from "../../toolsets/rap/callback-client.js";
import { startRapServer } from "../../toolsets/rap/server.js";
import {
  FAST_OUTBOX,
  freePort,
  invocation,
  newToolState,
  post,
  resultFor,
  silentLogger,
  sleep,
  startHarness,
  startListener,
  tempDir,
  testToolset,
  waitFor,
  type Harness,
} from "./helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * A callback receiver on loopback that reads each request and answers only as `onRequest` does
 * (never, by default), closed when the test ends: before anything set up earlier in the test, such
 * as a harness whose stop would otherwise wait out the hung attempt.
 */
async function hungReceiver(onRequest: RequestListener = (req) => req.resume()): Promise<string> {
  const hung = createServer(onRequest);
  await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => {
    hung.closeAllConnections();
    hung.close();
  });
  return `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
}

async function harness(opts: Parameters<typeof startHarness>[0]): Promise<Harness> {
  const h = await startHarness(opts);
  cleanups.push(() => h.stop());
  return h;
}

function tempDb(): { db: Db; path: string } {
  const t = tempDir();
  const path = join(t.dir, "rap.sqlite");
  const db = openDatabase(path);
  cleanups.push(() => {
    db.close();
    t.cleanup();
  });
  return { db, path };
}

describe("retry policy", () => {
  it("retries 5xx until the receiver accepts, sending the same body each time", async () => {
    const h = await harness({ listenerStatus: (_b, i) => (i < 2 ? 503 : 200) });
    await post(h.server.url, "/invoke", invocation(h.listener.url, { id: "retry-1" }));
    const result = await resultFor(h.listener, "retry-1");
    expect(result.text).toBe("echo: hi");
    expect(h.listener.bodies).toHaveLength(3);
    expect(new Set(h.listener.bodies).size).toBe(1);
    expect(h.listener.accepted()).toHaveLength(1);
    await waitFor(async () => (await h.server.outbox.stats()).delivered === 1, "delivered mark");
    const row = h.db.prepare("SELECT attempts, status, body, last_error FROM rap_outbox").get();
    expect(row).toEqual({ attempts: 3, status: "delivered", body: null, last_error: null });
  });

  it("does not retry a 4xx refusal", async () => {
    const h = await harness({ listenerStatus: () => 400 });
    await post(h.server.url, "/invoke", invocation(h.listener.url, { id: "refused" }));
    await waitFor(async () => (await h.server.outbox.stats()).rejected === 1, "rejected mark");
    await sleep(300);
    expect(h.listener.bodies).toHaveLength(1);
    const row = h.db.prepare("SELECT status, body, attempts, last_error FROM rap_outbox").get();
    expect(row).toEqual({ status: "rejected", body: null, attempts: 1, last_error: "HTTP 400: nope" });
  });

  it("rejects a callback_url that is not an http(s) URL without sending anything", async () => {
    // the server refuses such an invocation (400); a row journaled by an older build may still hold one
    const { db } = tempDb();
    const store = new SqliteRapOutbox(db);
    await store.enqueue({ toolset: "t", groupId: "g", callId: "bad-url", callbackUrl: "ftp://127.0.0.1/x", body: "{}" }, Date.now());
    const d = new CallbackDeliverer(store, systemClock, silentLogger, FAST_OUTBOX);
    d.start();
    await waitFor(async () => (await store.stats()).rejected === 1, "rejected mark");
    await d.stop({ finalPass: false });
    const row = db.prepare("SELECT last_error FROM rap_outbox").get() as { last_error: string };
    expect(row.last_error).toMatch(/invalid callback_url/);
  });

  it("backs off exponentially from the base delay, capped, with jitter in [half, full]", () => {
    const o = { baseDelayMs: 200, maxDelayMs: 30_000 };
    expect(retryDelay(0, o, () => 1)).toBe(200);
    expect(retryDelay(0, o, () => 0)).toBe(100);
    expect(retryDelay(3, o, () => 1)).toBe(1600);
    expect(retryDelay(20, o, () => 1)).toBe(30_000);
    expect(retryDelay(1000, o, () => 0)).toBe(15_000);
  });

  it("gives up on callbacks older than maxAgeMs (dead, body dropped, never sent)", async () => {
    const { db } = tempDb();
    const listener = await startListener();
    cleanups.push(() => listener.close());
    const clock = fixedClock(1_000_000);
    const store = new SqliteRapOutbox(db);
    await store.enqueue({ toolset: "t", groupId: "g", callId: "old", callbackUrl: listener.url, body: "{}" }, 1_000_000);
    clock.advance(60_000);
    const d = new CallbackDeliverer(store, clock, silentLogger, { ...FAST_OUTBOX, maxAgeMs: 30_000 });
    d.start();
    await waitFor(async () => (await store.stats()).dead === 1, "dead mark");
    await d.stop({ finalPass: false });
    expect(listener.bodies).toHaveLength(0);
    expect(db.prepare("SELECT status, body FROM rap_outbox").get()).toEqual({ status: "dead", body: null });
  });

  it("a receiver that takes the whole attempt timeout holds up only its own callbacks, not another thread's result", async () => {
    // reads the request and never answers, as the kernel does for a daemon suspended with Ctrl-Z
    let hungRequests = 0;
    const h = await harness({ server: { outbox: { ...FAST_OUTBOX, attemptTimeoutMs: 4000 } } });
    // set up after the harness, so it is closed before the harness stops
    const hungUrl = await hungReceiver((req) => {
      hungRequests++;
      req.resume();
    });
    await post(h.server.url, "/invoke", invocation(hungUrl, { id: "to-hung", group_id: "thread-of-a-hung-daemon" }));
    await waitFor(() => hungRequests > 0, "the hung receiver to get its callback");
    const sent = Date.now();
    await post(h.server.url, "/invoke", invocation(h.listener.url, { id: "to-live" }));
    expect((await resultFor(h.listener, "to-live")).text).toBe("echo: hi");
    expect(Date.now() - sent).toBeLessThan(1500);
  });

  it("twenty callbacks due at once to a hung receiver leave slots for another receiver, and all are delivered once it answers", async () => {
    // accepts the connection, reads the request and holds the answer until released
    const held: (() => void)[] = [];
    let answer = false;
    const hungUrl = await hungReceiver((req, res) => {
      req.resume();
      const reply = () => res.end("OK");
      if (answer) reply();
      else held.push(reply);
    });
    const { db } = tempDb();
    const store = new SqliteRapOutbox(db);
    for (let i = 0; i < 24; i++) {
      await store.enqueue({ toolset: "t", groupId: `g${i % 3}`, callId: `hung-${i}`, callbackUrl: hungUrl, body: `{"i":${i}}` }, Date.now());
    }
    const listener = await startListener();
    cleanups.push(() => listener.close());
    const d = new CallbackDeliverer(store, systemClock, silentLogger, { ...FAST_OUTBOX, attemptTimeoutMs: 5000, leaseMs: 10_000 });
    cleanups.push(() => d.stop({ finalPass: false, timeoutMs: 100 }));
    d.start();
    await waitFor(() => held.length >= 4, "the hung receiver to hold callbacks");
    const sent = Date.now();
    await store.enqueue({ toolset: "t", groupId: "live", callId: "to-live", callbackUrl: listener.url, body: '{"live":true}' }, Date.now());
    d.kick();
    await waitFor(() => listener.accepted().length === 1, "the live receiver's callback");
    expect(Date.now() - sent).toBeLessThan(1500);
    expect(held.length).toBeLessThan(16);
    // the hung receiver's rows were passed over, not lost: once it answers, each arrives
    answer = true;
    for (const reply of held.splice(0)) reply();
    await waitFor(async () => (await store.stats()).delivered === 25, "every callback delivered", 10_000);
  });

  it("ends an attempt at the attempt timeout even when the receiver sends a byte now and then, so a row is never sent twice at once", async () => {
    // answers 200 at once, then one byte of body every 100 ms, never ending it
    let open = 0;
    let maxOpen = 0;
    const timers = new Set<NodeJS.Timeout>();
    const trickle = createServer((req, res) => {
      req.resume();
      open++;
      maxOpen = Math.max(maxOpen, open);
      res.writeHead(200, { "content-type": "text/plain" });
      const t = setInterval(() => res.write("."), 100);
      timers.add(t);
      res.on("close", () => {
        clearInterval(t);
        timers.delete(t);
        open--;
      });
    });
    await new Promise<void>((resolve) => trickle.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => {
      for (const t of timers) clearInterval(t);
      trickle.closeAllConnections();
      trickle.close();
    });
    const { db } = tempDb();
    const store = new SqliteRapOutbox(db);
    const url = `http://127.0.0.1:${(trickle.address() as AddressInfo).port}`;
    await store.enqueue({ toolset: "t", groupId: "g", callId: "slow", callbackUrl: url, body: "{}" }, Date.now());
    const d = new CallbackDeliverer(store, systemClock, silentLogger, { ...FAST_OUTBOX, attemptTimeoutMs: 300, leaseMs: 800 });
    cleanups.push(() => d.stop({ finalPass: false, timeoutMs: 100 }));
    d.start();
    await waitFor(async () => (await store.stats()).pendingAttempts >= 2, "two attempts that ended", 5000);
    expect(db.prepare("SELECT last_error FROM rap_outbox").pluck().get()).toBe("ETIMEDOUT");
    // past the lease: still never two POSTs of the row at once
    await sleep(1000);
    expect(maxOpen).toBe(1);
  });

  it("does not poll the outbox every few ms for rows that wait on a receiver at its limit", async () => {
    const hungUrl = await hungReceiver();
    const { db } = tempDb();
    const store = new ClaimCountingOutbox(db);
    for (let i = 0; i < 12; i++) {
      await store.enqueue({ toolset: "t", groupId: "g", callId: `c${i}`, callbackUrl: hungUrl, body: `{"i":${i}}` }, Date.now());
    }
    const d = new CallbackDeliverer(store, systemClock, silentLogger, { ...FAST_OUTBOX, pollMs: 400, attemptTimeoutMs: 5000, leaseMs: 10_000 });
    cleanups.push(() => d.stop({ finalPass: false, timeoutMs: 100 }));
    d.start();
    await waitFor(async () => (await store.stats()).pending === 12 && store.claims > 0, "the first claim");
    await sleep(300);
    const before = store.claims;
    await sleep(1200);
    // the 8 rows passed over are looked at again every pollMs (or when a delivery ends), not every 50 ms
    expect(store.claims - before).toBeLessThanOrEqual(4);
  });

  it("the final pass at stop sends every due callback, past the per-receiver limit", async () => {
    const { db } = tempDb();
    const listener = await startListener();
    cleanups.push(() => listener.close());
    const store = new SqliteRapOutbox(db);
    for (let i = 0; i < 12; i++) {
      await store.enqueue({ toolset: "t", groupId: "g", callId: `c${i}`, callbackUrl: listener.url, body: `{"i":${i}}` }, Date.now());
    }
    const d = new CallbackDeliverer(store, systemClock, silentLogger, { ...FAST_OUTBOX, perReceiver: 4 });
    await d.stop({ finalPass: true });
    expect(listener.accepted()).toHaveLength(12);
    expect(await store.pendingCount()).toBe(0);
  });

  it("sends the callbacks of one call in order even when the first needs retries", async () => {
    const { db } = tempDb();
    let firstTries = 0;
    const listener = await startListener({
      status: (b) => (b.includes('"n":1') && ++firstTries < 3 ? 503 : 200),
    });
    cleanups.push(() => listener.close());
    const store = new SqliteRapOutbox(db);
    for (const n of [1, 2, 3]) {
      await store.enqueue({ toolset: "t", groupId: "g", callId: "c", callbackUrl: listener.url, body: `{"n":${n}}` }, Date.now());
    }
    const d = new CallbackDeliverer(store, systemClock, silentLogger, FAST_OUTBOX);
    d.start();
    await waitFor(() => listener.accepted().length === 3, "three deliveries");
    await d.stop({ finalPass: false });
    expect(listener.accepted().map((b) => b.n)).toEqual([1, 2, 3]);
  });
});

class ClaimCountingOutbox extends SqliteRapOutbox {
  claims = 0;
  override async claimDue(...args: Parameters<SqliteRapOutbox["claimDue"]>): ReturnType<SqliteRapOutbox["claimDue"]> {
    this.claims++;
    return super.claimDue(...args);
  }
}

class CountingOutbox extends SqliteRapOutbox {
  deliveredCount = 0;
  override async markDelivered(id: number, at: number): Promise<void> {
    this.deliveredCount++;
    await super.markDelivered(id, at);
  }
}

describe("durability", () => {
  it("redelivers a pending result after a restart", async () => {
    const { db, path } = tempDb();
    const port = await freePort();
    const callbackUrl = `http://127.0.0.1:${port}`;
    const state = newToolState();
    const first = await startRapServer({ toolset: testToolset(state), db, logger: silentLogger, outbox: FAST_OUTBOX });
    await post(first.url, "/invoke", invocation(callbackUrl, { id: "survives" }));
    await waitFor(async () => (await first.outbox.stats()).pendingAttempts >= 1, "a failed attempt");
    expect(await first.outbox.pendingCount()).toBe(1);
    await first.close({ graceMs: 100 });
    db.close();

    const listener = await startListener({ port });
    cleanups.push(() => listener.close());
    const db2 = openDatabase(path);
    const second = await startRapServer({ toolset: testToolset(newToolState()), db: db2, logger: silentLogger, outbox: FAST_OUTBOX });
    cleanups.push(async () => {
      await second.close({ graceMs: 100 });
      db2.close();
    });
    const result = await resultFor(listener, "survives");
    expect(result.text).toBe("echo: hi");
    await waitFor(async () => (await second.outbox.pendingCount()) === 0, "empty outbox");
    expect(state.runs.get("survives")).toBe(1);
  });

  it("two processes sharing one database file never send a callback twice", async () => {
    const { path } = tempDb();
    const listener = await startListener();
    cleanups.push(() => listener.close());
    // separate connections, as separate processes would have
    const dbs = [openDatabase(path), openDatabase(path)];
    const stores = dbs.map((db) => new CountingOutbox(db));
    for (let i = 0; i < 60; i++) {
      await stores[0]!.enqueue({ toolset: "t", groupId: "g", callId: `c${i}`, callbackUrl: listener.url, body: `{"i":${i}}` }, Date.now());
    }
    const deliverers = stores.map((s) => new CallbackDeliverer(s, systemClock, silentLogger, { ...FAST_OUTBOX, batch: 4 }));
    for (const d of deliverers) d.start();
    await waitFor(async () => (await stores[1]!.pendingCount()) === 0, "all delivered");
    for (const d of deliverers) await d.stop({ finalPass: false });
    for (const db of dbs) db.close();
    expect(listener.bodies).toHaveLength(60);
    expect(new Set(listener.bodies).size).toBe(60);
    // both really competed for the rows
    expect(stores.map((s) => s.deliveredCount).every((n) => n > 0)).toBe(true);
    expect(stores[0]!.deliveredCount + stores[1]!.deliveredCount).toBe(60);
  });
});

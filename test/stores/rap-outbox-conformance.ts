// Behaviour every RapOutboxStore must have (stores/sqlite/rap-outbox.ts is the reference),
// including two handles claiming at once: every row is claimed exactly once.
import { describe, expect, it } from "vitest";
import type { RapOutboxEntry } from "../../stores/traits.js";
import { useCatalog, type CatalogFactory } from "./catalog-harness.js";

const entry = (callId: string, n = 0): RapOutboxEntry => ({
  toolset: "t",
  groupId: "g",
  callId,
  callbackUrl: "http://127.0.0.1:9/cb",
  body: `{"call":"${callId}","n":${n}}`,
});

export function rapOutboxConformance(name: string, factory: CatalogFactory): void {
  describe(`${name}: RAP outbox conformance`, () => {
    const c = useCatalog(factory);

    it("claims due rows oldest first and leases them until the lease runs out", async () => {
      const s = await c.fresh();
      const a = await s.outbox.enqueue(entry("a"), 100);
      const b = await s.outbox.enqueue(entry("b"), 200);
      expect(b).toBeGreaterThan(a);
      await s.outbox.enqueue(entry("later"), 10_000);
      const first = await s.outbox.claimDue(1000, 500, 10);
      expect(first.map((r) => r.id)).toEqual([a, b]);
      expect(first[0]).toEqual({ id: a, ...entry("a"), attempts: 0, createdAt: 100 });
      expect(await s.outbox.claimDue(1200, 500, 10)).toEqual([]);
      expect(await s.outbox.nextDueAt()).toBe(1501);
      expect((await s.outbox.claimDue(1501, 500, 1)).map((r) => r.id)).toEqual([a]);
    });

    it("holds back later callbacks of a call while an earlier one is pending", async () => {
      const s = await c.fresh();
      const one = await s.outbox.enqueue(entry("x", 1), 1);
      const two = await s.outbox.enqueue(entry("x", 2), 2);
      const other = await s.outbox.enqueue(entry("y", 1), 3);
      expect((await s.outbox.claimDue(10, 100, 10)).map((r) => r.id)).toEqual([one, other]);
      await s.outbox.retryAt(one, 50, "HTTP 503");
      expect(await s.outbox.claimDue(20, 100, 10)).toEqual([]);
      const again = await s.outbox.claimDue(50, 100, 10);
      expect(again.map((r) => [r.id, r.attempts])).toEqual([[one, 1]]);
      await s.outbox.markDelivered(one, 60);
      expect((await s.outbox.claimDue(60, 100, 10)).map((r) => r.id)).toEqual([two]);
    });

    it("with a spread, passes over the rows of a receiver that has no room and leaves them unleased, in order", async () => {
      const s = await c.fresh();
      const hung = (callId: string, n = 0) => ({ ...entry(callId, n), callbackUrl: "http://127.0.0.1:9/hung" });
      // more rows for one receiver than a page holds, then one for another receiver
      const hungIds: number[] = [];
      for (let i = 0; i < 600; i++) hungIds.push(await s.outbox.enqueue(hung(`h${i}`), i));
      const second = await s.outbox.enqueue(hung("h0", 1), 600);
      const live = await s.outbox.enqueue({ ...entry("live"), callbackUrl: "http://127.0.0.1:10/cb" }, 601);
      const key = (u: string) => new URL(u).host;
      const spread = { key, room: (k: string) => (k === "127.0.0.1:9" ? 2 : 5) };
      const first = await s.outbox.claimDue(1000, 500, 10, spread);
      expect(first.map((r) => r.id)).toEqual([hungIds[0], hungIds[1], live]);
      // the passed-over rows are neither leased nor finished, and a call's later row still waits
      const full = { key, room: () => 0 };
      expect(await s.outbox.claimDue(1000, 500, 10, full)).toEqual([]);
      const rest = await s.outbox.claimDue(1000, 500, 1000);
      expect(rest.map((r) => r.id)).toEqual(hungIds.slice(2));
      expect(rest.map((r) => r.id)).not.toContain(second);
    });

    it("finishing a row drops its body and counts it; finished rows cannot change again", async () => {
      const s = await c.fresh();
      const d = await s.outbox.enqueue(entry("d"), 1);
      const r = await s.outbox.enqueue(entry("r"), 1);
      const p = await s.outbox.enqueue(entry("p"), 1);
      await s.outbox.markDelivered(d, 5);
      await s.outbox.markRejected(r, 5, "HTTP 400: nope");
      await s.outbox.retryAt(p, 100, "HTTP 503");
      await s.outbox.markDelivered(d, 6);
      await s.outbox.retryAt(r, 7, "late");
      expect(await s.outbox.stats()).toEqual({ pending: 1, delivered: 1, rejected: 1, dead: 0, pendingAttempts: 1 });
      expect(await s.outbox.pendingCount()).toBe(1);
      expect(await s.outbox.nextDueAt()).toBe(100);
      expect(await s.outbox.claimDue(99, 10, 10)).toEqual([]);
    });

    it("expires old pending rows that are not leased", async () => {
      const s = await c.fresh();
      await s.outbox.enqueue(entry("old"), 10);
      await s.outbox.enqueue(entry("leased"), 10);
      await s.outbox.enqueue(entry("young"), 500);
      const leased = (await s.outbox.claimDue(20, 10_000, 10)).find((r) => r.callId === "leased");
      expect(leased).toBeDefined();
      // both old rows are leased now: nothing may expire until the leases run out
      expect(await s.outbox.claimDue(20, 0, 10)).toEqual([]);
      expect(await s.outbox.expire(100, 20)).toBe(0);
      expect(await s.outbox.expire(100, 20_000)).toBe(2);
      expect(await s.outbox.stats()).toMatchObject({ pending: 1, dead: 2 });
      expect(await s.outbox.nextDueAt()).toBe(500);
    });

    it("finds pending bodies by their text and replaces a body only while its row is pending", async () => {
      const s = await c.fresh();
      const quoting = await s.outbox.enqueue({ ...entry("q"), body: '{"text":"The Vault code is QUOKKA-1"}' }, 1);
      const sent = await s.outbox.enqueue({ ...entry("s"), body: '{"text":"quokka-1 again"}' }, 2);
      await s.outbox.enqueue(entry("other"), 3);
      await s.outbox.markDelivered(sent, 4);
      expect(await s.outbox.pendingMentioning(["absent", "quokka"])).toEqual([{ id: quoting, body: '{"text":"The Vault code is QUOKKA-1"}' }]);
      expect(await s.outbox.pendingMentioning([""])).toHaveLength(2);
      expect(await s.outbox.replacePending(quoting, '{"text":"withheld"}')).toBe(true);
      expect(await s.outbox.replacePending(sent, '{"text":"withheld"}')).toBe(false);
      expect(await s.outbox.pendingMentioning(["quokka"])).toEqual([]);
      expect((await s.outbox.claimDue(10, 100, 10)).find((r) => r.id === quoting)?.body).toBe('{"text":"withheld"}');
    });

    it("is empty when new", async () => {
      const s = await c.fresh();
      expect(await s.outbox.nextDueAt()).toBeNull();
      expect(await s.outbox.pendingCount()).toBe(0);
      expect(await s.outbox.stats()).toEqual({ pending: 0, delivered: 0, rejected: 0, dead: 0, pendingAttempts: 0 });
      expect(await s.outbox.claimDue(Date.now(), 1000, 10)).toEqual([]);
    });

    it("two handles claiming at once: every row is claimed and delivered exactly once", async () => {
      const [a, b] = await c.freshPair(2);
      const n = 300;
      for (let i = 0; i < n; i++) await a!.outbox.enqueue(entry(`c${i}`), i);
      const claimed: number[] = [];
      // half the workers claim with a per-receiver share, as the deliverer does
      const spread = { key: (u: string) => u, room: () => 3 };
      const worker = async (h: typeof a, share?: typeof spread) => {
        for (;;) {
          const rows = await h!.outbox.claimDue(10_000, 60_000, 7, share);
          if (rows.length === 0) return;
          for (const r of rows) {
            claimed.push(r.id);
            await h!.outbox.markDelivered(r.id, 10_001);
          }
        }
      };
      await Promise.all([worker(a), worker(b, spread), worker(a, spread), worker(b)]);
      expect(claimed).toHaveLength(n);
      expect(new Set(claimed).size).toBe(n);
      expect(await b!.outbox.stats()).toMatchObject({ pending: 0, delivered: n });
    });
  });
}

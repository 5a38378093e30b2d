// Behaviour every RapJournalStore must have (stores/sqlite/rap-journal.ts is the reference).
import { describe, expect, it } from "vitest";
import { useCatalog, type CatalogFactory } from "./catalog-harness.js";

const key = (callId: string, toolset = "t") => ({ toolset, groupId: "g", callId });
const result = (callId: string) => ({ ...key(callId), callbackUrl: "http://127.0.0.1:9/cb", body: `{"id":"${callId}"}` });

export function rapJournalConformance(name: string, factory: CatalogFactory): void {
  describe(`${name}: RAP journal conformance`, () => {
    const c = useCatalog(factory);

    it("records a call once and reads it back open", async () => {
      const s = await c.fresh();
      expect(await s.journal.record(key("a"), "{}", "p:1", 1000)).toBe(true);
      expect(await s.journal.record(key("a"), "{\"x\":1}", "p:2", 2000)).toBe(false);
      expect(await s.journal.get(key("a"))).toEqual({ ...key("a"), body: "{}", status: "received", owner: "p:1", receivedAt: 1000, finishedAt: null });
      expect(await s.journal.get(key("nope"))).toBeNull();
    });

    it("complete enqueues the result and closes the call atomically, once, only for its owner", async () => {
      const s = await c.fresh();
      await s.journal.record(key("a"), "{}", "p:1", 1000);
      expect(await s.journal.complete(key("a"), "p:2", result("a"), 1100)).toBe(false);
      expect(await s.outbox.pendingCount()).toBe(0);
      expect(await s.journal.complete(key("a"), "p:1", result("a"), 1200)).toBe(true);
      expect(await s.journal.get(key("a"))).toMatchObject({ status: "done", body: null, finishedAt: 1200 });
      expect(await s.journal.complete(key("a"), "p:1", result("a"), 1300)).toBe(false);
      const rows = await s.outbox.claimDue(5000, 1000, 10);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ ...result("a"), attempts: 0, createdAt: 1200 });
    });

    it("fail and cancel close an open call; a closed call cannot be completed", async () => {
      const s = await c.fresh();
      await s.journal.record(key("f"), "{}", "p:1", 1);
      await s.journal.record(key("c"), "{}", "p:1", 2);
      expect(await s.journal.fail(key("f"), "p:9", 3)).toBe(false);
      expect(await s.journal.fail(key("f"), "p:1", 3)).toBe(true);
      expect(await s.journal.get(key("f"))).toMatchObject({ status: "failed", body: null, finishedAt: 3 });
      expect(await s.journal.cancel(key("c"), 4)).toBe(true);
      expect(await s.journal.cancel(key("c"), 5)).toBe(false);
      expect(await s.journal.get(key("c"))).toMatchObject({ status: "cancelled", body: null, finishedAt: 4 });
      expect(await s.journal.complete(key("c"), "p:1", result("c"), 6)).toBe(false);
      expect(await s.journal.cancel(key("unknown"), 7)).toBe(false);
      expect(await s.outbox.pendingCount()).toBe(0);
    });

    it("lists open calls of one toolset, oldest first", async () => {
      const s = await c.fresh();
      await s.journal.record(key("late"), "{}", "p:1", 300);
      await s.journal.record(key("early"), "{}", "p:1", 100);
      await s.journal.record(key("same-1"), "{}", "p:1", 200);
      await s.journal.record(key("same-2"), "{}", "p:1", 200);
      await s.journal.record(key("other", "u"), "{}", "p:1", 50);
      await s.journal.record(key("closed"), "{}", "p:1", 10);
      await s.journal.fail(key("closed"), "p:1", 11);
      expect((await s.journal.open("t")).map((e) => e.callId)).toEqual(["early", "same-1", "same-2", "late"]);
      expect((await s.journal.open("u")).map((e) => e.callId)).toEqual(["other"]);
    });

    it("takeOver moves an open call once; the old owner can no longer finish it", async () => {
      const s = await c.fresh();
      await s.journal.record(key("a"), "{}", "dead:1", 1);
      expect(await s.journal.takeOver(key("a"), "wrong:1", "me:2")).toBe(false);
      expect(await s.journal.takeOver(key("a"), "dead:1", "me:2")).toBe(true);
      expect(await s.journal.takeOver(key("a"), "dead:1", "other:3")).toBe(false);
      expect(await s.journal.complete(key("a"), "dead:1", result("a"), 2)).toBe(false);
      expect(await s.journal.complete(key("a"), "me:2", result("a"), 3)).toBe(true);
    });

    it("two handles racing to take over and complete the same calls: each call completes once", async () => {
      const [a, b] = await c.freshPair(2);
      const n = 40;
      for (let i = 0; i < n; i++) await a!.journal.record(key(`c${i}`), "{}", "dead:0", i);
      const run = async (h: typeof a, me: string) => {
        let won = 0;
        for (const e of await h!.journal.open("t")) {
          if (!(await h!.journal.takeOver(e, "dead:0", me))) continue;
          if (await h!.journal.complete(e, me, result(e.callId), 100)) won++;
        }
        return won;
      };
      const [wa, wb] = await Promise.all([run(a, "a:1"), run(b, "b:1")]);
      expect(wa + wb).toBe(n);
      expect(await a!.outbox.pendingCount()).toBe(n);
      expect(await a!.journal.open("t")).toEqual([]);
    });
  });
}

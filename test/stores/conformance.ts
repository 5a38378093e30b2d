// One behaviour suite for every ConversationStore + StateStore + ConversationReader
// implementation (in-memory, SQLite, later PostgreSQL). Expected values follow the reference
// in-memory stores of infinity-agent-core (reference §3.1, §3.3, §3.4).
import { afterEach, describe, expect, it } from "vitest";
import { COMPACTION_SUMMARY_HEADER } from "../../stores/infinity/history.js";
import type { UserChoice } from "../../stores/infinity/messages.js";
import type { ConversationReader, ConversationStore, StateStore } from "../../stores/infinity/traits.js";
import { InfinityStoreError } from "../../stores/infinity/traits.js";
import { assistant, numbered, texts, toolCall, toolResult, user } from "./builders.js";

export interface StoresUnderTest {
  conversation: ConversationStore & ConversationReader;
  state: StateStore;
  /** durable stores: a fresh handle on the same data (a reopened file, a new connection) */
  reopen?: () => Promise<StoresUnderTest>;
  close?: () => Promise<void>;
}

export interface ConformanceOptions {
  /** run the "survives reopening" tests (needs `reopen`) */
  durable?: boolean;
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function choice(id: string, prompt: string): UserChoice {
  return { id, prompt, choices: ["Approve", "Reject"], default: 1, response_url: `http://127.0.0.1:9/choice/${id}` };
}

export function conformance(
  name: string,
  makeStores: () => Promise<StoresUnderTest>,
  opts: ConformanceOptions = {},
): void {
  describe(`${name}: Infinity store conformance`, () => {
    const open: StoresUnderTest[] = [];
    async function fresh(): Promise<StoresUnderTest> {
      const s = await makeStores();
      open.push(s);
      return s;
    }
    async function reopened(s: StoresUnderTest): Promise<StoresUnderTest> {
      await s.close?.();
      const r = await s.reopen!();
      open.push(r);
      return r;
    }
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close?.();
    });

    describe("thread records", () => {
      it("threadExists never creates a thread, and unknown ids read as defaults", async () => {
        const { conversation: c } = await fresh();
        expect(await c.threadExists("nope")).toBe(false);
        expect(await c.threadExists("nope")).toBe(false);
        expect(await c.isThreadClosed("nope")).toBe(false);
        expect(await c.isSubscriptionEventThread("nope")).toBe(false);
        expect(await c.isCompactionThread("nope")).toBe(false);
        expect(await c.getThreadParentInfo("nope")).toBeNull();
        expect(await c.getThreadSpawnOrder("nope")).toBeNull();
        expect(await c.getAncestorChain("nope")).toEqual([]);
        expect(await c.threadInfo("nope")).toBeNull();
        expect(await c.getRootThreadId("nope")).toBe("nope");
        expect(await c.listThreads()).toEqual([]);
      });

      it("closeThread and markThreadAsCompaction on unknown ids are no-ops that create nothing", async () => {
        const { conversation: c } = await fresh();
        await c.closeThread("ghost");
        await c.markThreadAsCompaction("ghost");
        expect(await c.threadExists("ghost")).toBe(false);
        expect(await c.isThreadClosed("ghost")).toBe(false);
        expect(await c.isCompactionThread("ghost")).toBe(false);
      });

      it("ensureRootThread creates a root once and never resets it", async () => {
        const { conversation: c } = await fresh();
        await c.ensureRootThread("r");
        expect(await c.threadInfo("r")).toEqual({
          parent_thread_id: null,
          root_thread_id: "r",
          spawn_message_order: null,
          spawn_tool_call_id: null,
          closed: false,
          is_subscription_event: false,
          is_compaction: false,
        });
        await c.closeThread("r");
        await c.ensureRootThread("r");
        expect(await c.isThreadClosed("r")).toBe(true);
        expect(await c.threadExists("r")).toBe(true);
        expect(await c.getThreadParentInfo("r")).toBeNull();
        expect(await c.getAncestorChain("r")).toEqual([]);
      });

      it("appending to a thread without a record stores messages but does not create the record", async () => {
        const { conversation: c } = await fresh();
        await c.appendMessages("loose", numbered("m", 2));
        expect(await c.threadExists("loose")).toBe(false);
        expect(await c.messageCount("loose")).toBe(2);
        expect(await c.listThreads()).toContain("loose");
      });
    });

    describe("history", () => {
      it("appends in order and keeps each message's id", async () => {
        const { conversation: c } = await fresh();
        await c.ensureRootThread("r");
        await c.appendMessages("r", [
          [user("hi"), "in-1"],
          [toolCall("tc-1", "read_file", { path: "a.ts" }), "r-in-1-completion-0"],
        ]);
        await c.appendMessages("r", []);
        await c.appendMessages("r", [[toolResult("tc-1", "contents"), "tc-1-sync-result-0"]]);
        const withIds = await c.loadMessagesWithIds("r");
        expect(withIds.map(([, id]) => id)).toEqual(["in-1", "r-in-1-completion-0", "tc-1-sync-result-0"]);
        expect(withIds[1]![0]).toEqual(toolCall("tc-1", "read_file", { path: "a.ts" }));
        expect(await c.messageCount("r")).toBe(3);
        expect(texts(await c.loadHistoryUpTo("r"))).toEqual(["hi", 'read_file {"path":"a.ts"}', "contents"]);
      });

      it("loadHistoryUpTo is the slice [startFrom ?? 0, min(upTo ?? len, len))", async () => {
        const { conversation: c } = await fresh();
        await c.appendMessages("r", numbered("m", 5));
        const slice = async (s?: number | null, u?: number | null) => texts(await c.loadHistoryUpTo("r", s, u));
        expect(await slice()).toEqual(["m0", "m1", "m2", "m3", "m4"]);
        expect(await slice(null, null)).toEqual(["m0", "m1", "m2", "m3", "m4"]);
        expect(await slice(2)).toEqual(["m2", "m3", "m4"]);
        expect(await slice(1, 3)).toEqual(["m1", "m2"]);
        expect(await slice(null, 2)).toEqual(["m0", "m1"]);
        expect(await slice(0, 0)).toEqual([]);
        expect(await slice(3, 100)).toEqual(["m3", "m4"]);
        expect(await slice(5)).toEqual([]);
        expect(await slice(10)).toEqual([]);
        expect(await slice(4, 2)).toEqual([]);
        expect(await slice(-3, 1)).toEqual(["m0"]);
        expect(await c.loadHistoryUpTo("unknown", 0, 10)).toEqual([]);
        expect((await c.loadMessagesWithIds("r", 1, 3)).map(([, id]) => id)).toEqual(["m1", "m2"]);
      });

      it("returned history is a copy: editing it does not change the store", async () => {
        const { conversation: c } = await fresh();
        await c.appendMessages("r", [[user("original"), "u1"]]);
        const [first] = await c.loadHistoryUpTo("r");
        (first as { content: { text: string } }).content.text = "edited";
        expect(texts(await c.loadHistoryUpTo("r"))).toEqual(["original"]);
      });

      it("rejects a malformed message and appends nothing of its batch", async () => {
        const { conversation: c } = await fresh();
        const bad = [
          [user("fine"), "ok"],
          [{ kind: "user", content: { type: "bogus" } }, "bad"],
        ] as unknown as [ReturnType<typeof user>, string][];
        await expect(c.appendMessages("r", bad)).rejects.toMatchObject({ code: "invalid_message" });
        await expect(c.appendMessages("r", bad)).rejects.toBeInstanceOf(InfinityStoreError);
        expect(await c.messageCount("r")).toBe(0);
      });

      it("rejects non-integer history bounds", async () => {
        const { conversation: c } = await fresh();
        await expect(c.loadHistoryUpTo("r", 1.5)).rejects.toMatchObject({ code: "invalid_argument" });
      });
    });

    describe("spawning", () => {
      it("spawns UUIDv4 children that inherit the parent's current message count", async () => {
        const { conversation: c } = await fresh();
        await c.ensureRootThread("r");
        await c.appendMessages("r", numbered("r", 3));
        const a = await c.spawnThread("r", "tc-spawn", false);
        const b = await c.spawnThread("r", "tc-event", true);
        expect(a).toMatch(UUID_V4);
        expect(b).toMatch(UUID_V4);
        expect(a).not.toBe(b);
        expect(await c.threadExists(a)).toBe(true);
        expect(await c.getThreadSpawnOrder(a)).toBe(3);
        expect(await c.getThreadParentInfo(a)).toEqual(["r", "tc-spawn"]);
        expect(await c.isSubscriptionEventThread(a)).toBe(false);
        expect(await c.isSubscriptionEventThread(b)).toBe(true);
        expect(await c.getRootThreadId(a)).toBe("r");
        expect(await c.threadInfo(b)).toEqual({
          parent_thread_id: "r",
          root_thread_id: "r",
          spawn_message_order: 3,
          spawn_tool_call_id: "tc-event",
          closed: false,
          is_subscription_event: true,
          is_compaction: false,
        });
        expect((await c.listThreads()).sort()).toEqual([a, b, "r"].sort());
      });

      it("an override sets the spawn order, even 0 or past the parent's end", async () => {
        const { conversation: c } = await fresh();
        await c.ensureRootThread("r");
        await c.appendMessages("r", numbered("r", 4));
        expect(await c.getThreadSpawnOrder(await c.spawnThread("r", "t1", false, 2))).toBe(2);
        expect(await c.getThreadSpawnOrder(await c.spawnThread("r", "t2", false, 0))).toBe(0);
        expect(await c.getThreadSpawnOrder(await c.spawnThread("r", "t3", false, 9))).toBe(9);
        expect(await c.getThreadSpawnOrder(await c.spawnThread("r", "t4", false, null))).toBe(4);
        await expect(c.spawnThread("r", "t5", false, -1)).rejects.toMatchObject({ code: "invalid_argument" });
      });

      it("grandchildren take the root's id as their root; an unknown parent is its own root", async () => {
        const { conversation: c } = await fresh();
        await c.ensureRootThread("r");
        const child = await c.spawnThread("r", "tc1", false);
        const grandchild = await c.spawnThread(child, "tc2", false);
        expect(await c.getRootThreadId(grandchild)).toBe("r");
        expect((await c.threadInfo(grandchild))?.root_thread_id).toBe("r");
        const orphan = await c.spawnThread("missing-parent", "tc3", false);
        expect(await c.getRootThreadId(orphan)).toBe("missing-parent");
        expect(await c.getThreadSpawnOrder(orphan)).toBe(0);
        expect(await c.threadExists("missing-parent")).toBe(false);
      });

      it("closes and marks compaction threads per thread", async () => {
        const { conversation: c } = await fresh();
        await c.ensureRootThread("r");
        await c.appendMessages("r", [
          [user("long task"), "u1"],
          [toolCall("tc-open", "execute_command", {}), "c1"],
        ]);
        // compaction children spawn at the safe point, before the unanswered trailing call
        const comp = await c.spawnThread("r", "comp-call", false, 1);
        await c.markThreadAsCompaction(comp);
        expect(await c.isCompactionThread(comp)).toBe(true);
        expect(await c.isCompactionThread("r")).toBe(false);
        expect(await c.getThreadSpawnOrder(comp)).toBe(1);
        await c.closeThread(comp);
        expect(await c.isThreadClosed(comp)).toBe(true);
        expect(await c.isThreadClosed("r")).toBe(false);
      });
    });

    describe("ancestors", () => {
      /** r: r0..r5 (child spawned at 4); child: c0..c2 (grandchild spawned at 2); gc: g0..g1 */
      async function tree(c: ConversationStore) {
        await c.ensureRootThread("r");
        await c.appendMessages("r", numbered("r", 4));
        const child = await c.spawnThread("r", "spawn-child", false);
        await c.appendMessages("r", numbered("r", 2, 4));
        await c.appendMessages(child, numbered("c", 3));
        const gc = await c.spawnThread(child, "spawn-gc", false, 2);
        await c.appendMessages(gc, numbered("g", 2));
        return { child, gc };
      }

      it("lists ancestors root first with the cutoff each inherits", async () => {
        const { conversation: c } = await fresh();
        const { child, gc } = await tree(c);
        expect(await c.getAncestorChain(child)).toEqual([["r", 4]]);
        expect(await c.getAncestorChain(gc)).toEqual([
          ["r", 4],
          [child, 2],
        ]);
      });

      it("inherits each ancestor's messages up to its cutoff, then its own", async () => {
        const { conversation: c } = await fresh();
        const { child, gc } = await tree(c);
        const [h, leaf, prefix] = await c.loadHistoryWithAncestors(gc);
        expect(texts(h)).toEqual(["r0", "r1", "r2", "r3", "c0", "c1", "g0", "g1"]);
        expect(leaf).toBeNull();
        expect(prefix).toBe(6);
        const [hc, , pc] = await c.loadHistoryWithAncestors(child);
        expect(texts(hc)).toEqual(["r0", "r1", "r2", "r3", "c0", "c1", "c2"]);
        expect(pc).toBe(4);
        expect(texts((await c.loadHistoryWithAncestors("r"))[0])).toEqual(["r0", "r1", "r2", "r3", "r4", "r5"]);
      });
    });

    describe("compaction summaries", () => {
      it("returns the latest pushed summary within the bound, not the largest", async () => {
        const { conversation: c } = await fresh();
        expect(await c.loadLatestCompactionSummaryUpTo("r")).toBeNull();
        await c.saveCompactionSummary("r", "A", 5);
        await c.saveCompactionSummary("r", "B", 3);
        expect(await c.loadLatestCompactionSummaryUpTo("r")).toEqual(["B", 3]);
        expect(await c.loadLatestCompactionSummaryUpTo("r", null)).toEqual(["B", 3]);
        expect(await c.loadLatestCompactionSummaryUpTo("r", 6)).toEqual(["B", 3]);
        expect(await c.loadLatestCompactionSummaryUpTo("r", 3)).toEqual(["B", 3]);
        expect(await c.loadLatestCompactionSummaryUpTo("r", 2)).toBeNull();
        await c.saveCompactionSummary("r", "C", 8);
        expect(await c.loadLatestCompactionSummaryUpTo("r", 7)).toEqual(["B", 3]);
        expect(await c.loadLatestCompactionSummaryUpTo("r", 8)).toEqual(["C", 8]);
        expect(await c.loadLatestCompactionSummaryUpTo("other")).toBeNull();
        await expect(c.saveCompactionSummary("r", "D", -1)).rejects.toMatchObject({ code: "invalid_argument" });
      });

      it("bounds past 32 bits (Rust i64 / usize) read like any other: the whole history, no slice, the latest summary", async () => {
        const { conversation: c } = await fresh();
        await c.ensureRootThread("r");
        await c.appendMessages("r", numbered("r", 3));
        await c.saveCompactionSummary("r", "A", 2);
        expect(texts(await c.loadHistoryUpTo("r", 0, 2 ** 40))).toEqual(["r0", "r1", "r2"]);
        expect(await c.loadHistoryUpTo("r", 2 ** 40, 2 ** 41)).toEqual([]);
        expect((await c.loadMessagesWithIds("r", 1, Number.MAX_SAFE_INTEGER)).map(([, id]) => id)).toHaveLength(2);
        expect(await c.loadLatestCompactionSummaryUpTo("r", 2 ** 40)).toEqual(["A", 2]);
        expect(await c.loadLatestCompactionSummaryUpTo("r", Number.MAX_SAFE_INTEGER)).toEqual(["A", 2]);
      });

      it("a thread's own summary replaces everything before its up_to_order", async () => {
        const { conversation: c } = await fresh();
        await c.ensureRootThread("r");
        await c.appendMessages("r", numbered("r", 6));
        await c.saveCompactionSummary("r", "old", 2);
        await c.saveCompactionSummary("r", "newest", 4);
        const [h, leaf, prefix] = await c.loadHistoryWithAncestors("r");
        expect(h[0]).toEqual(assistant(`${COMPACTION_SUMMARY_HEADER}newest`));
        expect(texts(h)).toEqual(["[Compacted conversation summary]\nnewest", "r4", "r5"]);
        expect(leaf).toBe(4);
        expect(prefix).toBe(0);
      });

      it("a child's own summary wins over its ancestors", async () => {
        const { conversation: c } = await fresh();
        await c.ensureRootThread("r");
        await c.appendMessages("r", numbered("r", 3));
        const child = await c.spawnThread("r", "s", false);
        await c.appendMessages(child, numbered("c", 3));
        await c.saveCompactionSummary(child, "child summary", 1);
        const [h, leaf, prefix] = await c.loadHistoryWithAncestors(child);
        expect(texts(h)).toEqual([`${COMPACTION_SUMMARY_HEADER}child summary`, "c1", "c2"]);
        expect(leaf).toBe(1);
        expect(prefix).toBe(0);
      });

      it("uses an ancestor's summary only when it fits within the inherited cutoff", async () => {
        const { conversation: c } = await fresh();
        await c.ensureRootThread("r");
        await c.appendMessages("r", numbered("r", 4));
        const child = await c.spawnThread("r", "s", false);
        await c.appendMessages(child, numbered("c", 2));
        await c.appendMessages("r", numbered("r", 3, 4));
        // covers r0..r5: more than the child inherited, so the child cannot use it
        await c.saveCompactionSummary("r", "too far", 6);
        let [h, leaf, prefix] = await c.loadHistoryWithAncestors(child);
        expect(texts(h)).toEqual(["r0", "r1", "r2", "r3", "c0", "c1"]);
        expect([leaf, prefix]).toEqual([null, 4]);
        // pushed later and within the cutoff: used, with the rest of the inherited prefix
        await c.saveCompactionSummary("r", "fits", 2);
        [h, leaf, prefix] = await c.loadHistoryWithAncestors(child);
        expect(texts(h)).toEqual([`${COMPACTION_SUMMARY_HEADER}fits`, "r2", "r3", "c0", "c1"]);
        expect([leaf, prefix]).toEqual([null, 3]);
      });

      it("takes the nearest ancestor's summary and skips every ancestor above it", async () => {
        const { conversation: c } = await fresh();
        await c.ensureRootThread("r");
        await c.appendMessages("r", numbered("r", 3));
        const child = await c.spawnThread("r", "s1", false);
        await c.appendMessages(child, numbered("c", 4));
        const gc = await c.spawnThread(child, "s2", false);
        await c.appendMessages(gc, numbered("g", 1));
        await c.saveCompactionSummary("r", "root summary", 2);
        await c.saveCompactionSummary(child, "child summary", 3);
        const [h, leaf, prefix] = await c.loadHistoryWithAncestors(gc);
        expect(texts(h)).toEqual([`${COMPACTION_SUMMARY_HEADER}child summary`, "c3", "g0"]);
        expect([leaf, prefix]).toEqual([null, 2]);
      });

      it("an ancestor summary above the nearest one still applies when the nearer has none", async () => {
        const { conversation: c } = await fresh();
        await c.ensureRootThread("r");
        await c.appendMessages("r", numbered("r", 3));
        const child = await c.spawnThread("r", "s1", false);
        await c.appendMessages(child, numbered("c", 2));
        const gc = await c.spawnThread(child, "s2", false);
        await c.saveCompactionSummary("r", "root summary", 1);
        const [h, , prefix] = await c.loadHistoryWithAncestors(gc);
        expect(texts(h)).toEqual([`${COMPACTION_SUMMARY_HEADER}root summary`, "r1", "r2", "c0", "c1"]);
        expect(prefix).toBe(5);
      });
    });

    describe("state", () => {
      it("keeps processed message and tool call ids per thread as sets", async () => {
        const { state: s } = await fresh();
        expect(await s.getProcessedIds("t")).toEqual([new Set(), new Set()]);
        await s.addProcessedMessageIds("t", ["m1", "m2"]);
        await s.addProcessedMessageIds("t", ["m2", "m3"]);
        await s.addProcessedToolCalls("t", ["tc1", "tc1"]);
        await s.addProcessedMessageIds("t", []);
        await s.addProcessedMessageIds("other", ["x"]);
        const [messages, calls] = await s.getProcessedIds("t");
        expect(messages).toEqual(new Set(["m1", "m2", "m3"]));
        expect(calls).toEqual(new Set(["tc1"]));
        expect(await s.getProcessedIds("other")).toEqual([new Set(["x"]), new Set()]);
      });

      it("stores metadata under the exact (root) key and replaces it whole", async () => {
        const { state: s } = await fresh();
        expect(await s.getMetadata("root")).toBeNull();
        await s.setMetadata("root", { user_id: "alice", prefs: { units: "metric" }, tags: [1, "two", null] });
        expect(await s.getMetadata("root")).toEqual({ user_id: "alice", prefs: { units: "metric" }, tags: [1, "two", null] });
        await s.setMetadata("root", { user_id: "bob" });
        expect(await s.getMetadata("root")).toEqual({ user_id: "bob" });
        expect(await s.getMetadata("child-of-root")).toBeNull();
        await s.setMetadata("other", "just a string");
        expect(await s.getMetadata("other")).toBe("just a string");
        await s.setMetadata("root", null);
        expect(await s.getMetadata("root")).toBeNull();
        const got = (await s.getMetadata("other2")) ?? "absent";
        expect(got).toBe("absent");
      });

      it("tracks active subscriptions per thread, once each, oldest first", async () => {
        const { state: s } = await fresh();
        expect(await s.getActiveSubscriptions("t")).toEqual([]);
        await s.addActiveSubscription("t", "tc-a");
        await s.addActiveSubscription("t", "tc-b");
        await s.addActiveSubscription("t", "tc-a");
        await s.addActiveSubscription("u", "tc-c");
        expect(await s.getActiveSubscriptions("t")).toEqual(["tc-a", "tc-b"]);
        await s.removeActiveSubscription("t", "tc-a");
        await s.removeActiveSubscription("t", "never");
        await s.removeActiveSubscription("nobody", "tc-a");
        expect(await s.getActiveSubscriptions("t")).toEqual(["tc-b"]);
        expect(await s.getActiveSubscriptions("u")).toEqual(["tc-c"]);
      });

      it("upserts pending user choices by id in place and removes them", async () => {
        const { state: s } = await fresh();
        expect(await s.getPendingUserChoices("t")).toEqual([]);
        await s.addPendingUserChoice("t", choice("c1", "Publish v1?"));
        await s.addPendingUserChoice("t", choice("c2", "Forget 3 memories?"));
        await s.addPendingUserChoice("t", choice("c1", "Publish v2?"));
        await s.addPendingUserChoice("u", choice("c1", "elsewhere"));
        expect(await s.getPendingUserChoices("t")).toEqual([choice("c1", "Publish v2?"), choice("c2", "Forget 3 memories?")]);
        await s.removePendingUserChoice("t", "c1");
        await s.removePendingUserChoice("t", "unknown");
        expect(await s.getPendingUserChoices("t")).toEqual([choice("c2", "Forget 3 memories?")]);
        expect(await s.getPendingUserChoices("u")).toEqual([choice("c1", "elsewhere")]);
        await expect(
          s.addPendingUserChoice("t", { id: "bad", prompt: "?" } as unknown as UserChoice),
        ).rejects.toMatchObject({ code: "invalid_message" });
      });

      it("isThreadStopped answers false by default", async () => {
        const { state: s } = await fresh();
        expect(await s.isThreadStopped("any")).toBe(false);
      });
    });

    if (opts.durable) {
      describe("durability", () => {
        it("threads, history, summaries and state survive reopening", async () => {
          const first = await fresh();
          const c = first.conversation;
          await c.ensureRootThread("r");
          await c.appendMessages("r", [
            [user("persist me"), "u1"],
            [toolCall("tc1", "spawn_thread", { instructions: "x" }), "c1"],
          ]);
          const child = await c.spawnThread("r", "tc1", false);
          await c.appendMessages(child, [[toolResult("tc1", "seed"), "tc1"]]);
          await c.saveCompactionSummary("r", "sum", 1);
          await c.closeThread(child);
          await first.state.addProcessedMessageIds("r", ["u1"]);
          await first.state.addProcessedToolCalls(child, ["tc1"]);
          await first.state.setMetadata("r", { user_id: "alice" });
          await first.state.addActiveSubscription(child, "sub1");
          await first.state.addPendingUserChoice("r", choice("ch1", "ok?"));

          const again = await reopened(first);
          const c2 = again.conversation;
          expect(await c2.threadExists("r")).toBe(true);
          expect(await c2.isThreadClosed(child)).toBe(true);
          expect(await c2.getAncestorChain(child)).toEqual([["r", 2]]);
          expect(await c2.loadMessagesWithIds("r")).toEqual([
            [user("persist me"), "u1"],
            [toolCall("tc1", "spawn_thread", { instructions: "x" }), "c1"],
          ]);
          expect(await c2.loadLatestCompactionSummaryUpTo("r")).toEqual(["sum", 1]);
          expect(texts((await c2.loadHistoryWithAncestors(child))[0])).toEqual([
            `${COMPACTION_SUMMARY_HEADER}sum`,
            'spawn_thread {"instructions":"x"}',
            "seed",
          ]);
          expect(await again.state.getProcessedIds("r")).toEqual([new Set(["u1"]), new Set()]);
          expect(await again.state.getProcessedIds(child)).toEqual([new Set(), new Set(["tc1"])]);
          expect(await again.state.getMetadata("r")).toEqual({ user_id: "alice" });
          expect(await again.state.getActiveSubscriptions(child)).toEqual(["sub1"]);
          expect(await again.state.getPendingUserChoices("r")).toEqual([choice("ch1", "ok?")]);
          // appends continue after the stored messages, not over them
          await c2.appendMessages("r", [[assistant("after reopen"), "a1"]]);
          expect((await c2.loadMessagesWithIds("r")).map(([, id]) => id)).toEqual(["u1", "c1", "a1"]);
        });
      });
    }
  });
}

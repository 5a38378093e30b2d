// Behaviour every LearningStore must have (stores/sqlite/learning-store.ts is the reference),
// including two workers claiming the queue at once: each thread is claimed exactly once.
import { describe, expect, it } from "vitest";
import { FORGOTTEN_EPISODE_HASH, type EpisodeDraft, type RewardSignal, type Step } from "../../core/learning/types.js";
import { useCatalog, type CatalogFactory } from "./catalog-harness.js";

const step = (idx: number, tool: string, callId: string | null = `call-${idx}`): Step => ({
  idx,
  ord: idx * 2 + 1,
  tool,
  callId,
  argsDigest: `d${idx}`,
  argsShape: `{"path":"<path>"}`,
  outcome: "ok",
  verdict: idx === 1 ? "pass" : null,
  excerpt: `result ${idx}`,
  latencyMs: 12,
});

export function draft(threadId: string, startOrd: number, hash: string, steps: Step[] = [step(0, "read"), step(1, "test")]): EpisodeDraft {
  return {
    source: "conversation",
    threadId,
    rootThreadId: `root-${threadId}`,
    startOrd,
    endOrd: startOrd + 5,
    state: "done",
    task: `fix the build ${threadId}`,
    finalExcerpt: "done",
    steps,
    messages: [
      { ord: startOrd, messageId: `m${startOrd}`, role: "user" },
      { ord: startOrd + 5, messageId: `m${startOrd + 5}`, role: "assistant" },
    ],
    userTexts: [],
    nextUserText: null,
    feedbackCalls: [],
    contentHash: hash,
  };
}

const sig = (kind: RewardSignal["kind"], dedupKey: string, value = 1): RewardSignal => ({
  kind,
  source: kind === "explicit" ? "task_feedback" : "outcome",
  value,
  weight: 1,
  note: null,
  dedupKey,
  at: 5,
});

export function learningConformance(name: string, factory: CatalogFactory): void {
  describe(`${name}: learning store conformance`, () => {
    const c = useCatalog(factory);

    it("upserts an episode by (source, thread, start) and rewrites it only when its content changed", async () => {
      const s = await c.fresh();
      const first = await s.learning.upsertEpisode(draft("t", 0, "h1"), [sig("outcome", "o1")], ["outcome"], "ep-1", 100);
      expect(first).toMatchObject({ changed: true, created: true });
      expect(first.episode).toMatchObject({ id: "ep-1", threadId: "t", rootThreadId: "root-t", startOrd: 0, endOrd: 5, state: "done", reward: null, grounded: false, suppressed: false, candidatesDone: false, contentHash: "h1", createdAt: 100, updatedAt: 100 });
      expect(await s.learning.addSignal("ep-1", sig("explicit", "x1", 0.5))).toBe(true);
      expect(await s.learning.addSignal("ep-1", sig("explicit", "x1", 0.5))).toBe(false);

      const same = await s.learning.upsertEpisode(draft("t", 0, "h1"), [], ["outcome"], "ep-unused", 200);
      expect(same).toMatchObject({ changed: false, created: false, episode: { id: "ep-1", updatedAt: 100 } });
      expect((await s.learning.signalsOf("ep-1")).map((x) => x.dedupKey)).toEqual(["o1", "x1"]);

      const changed = await s.learning.upsertEpisode(draft("t", 0, "h2", [step(0, "edit")]), [sig("outcome", "o2", -1)], ["outcome"], "ep-unused", 300);
      expect(changed).toMatchObject({ changed: true, created: false, episode: { id: "ep-1", contentHash: "h2", updatedAt: 300, createdAt: 100 } });
      expect((await s.learning.stepsOf("ep-1")).map((x) => [x.tool, x.alpha, x.value])).toEqual([["edit", 0, null]]);
      const signals = await s.learning.signalsOf("ep-1");
      expect(signals.map((x) => [x.kind, x.dedupKey, x.value])).toEqual([["explicit", "x1", 0.5], ["outcome", "o2", -1]]);
      expect(signals[0]).toMatchObject({ episodeId: "ep-1", source: "task_feedback", weight: 1, note: null, at: 5 });
      expect(await s.learning.episode("nope")).toBeNull();
    });

    it("stores steps, scores, suppression, candidates and finds the episode of a call", async () => {
      const s = await c.fresh();
      await s.learning.upsertEpisode(draft("t", 0, "h"), [], [], "e0", 1);
      await s.learning.upsertEpisode(draft("t", 10, "h"), [], [], "e10", 2);
      const steps = await s.learning.stepsOf("e0");
      expect(steps[1]).toEqual({ ...step(1, "test"), alpha: 0, value: null });
      await s.learning.setScores("e0", 0.75, true, [{ idx: 0, alpha: 0.25, value: 0.5 }, { idx: 1, alpha: 1, value: -0.5 }], 50);
      expect(await s.learning.episode("e0")).toMatchObject({ reward: 0.75, grounded: true, updatedAt: 50 });
      expect((await s.learning.stepsOf("e0")).map((x) => [x.alpha, x.value])).toEqual([[0.25, 0.5], [1, -0.5]]);
      await s.learning.setScores("e0", null, false, [], 60);
      expect(await s.learning.episode("e0")).toMatchObject({ reward: null, grounded: false });
      await s.learning.setSuppressed("e0", 70);
      await s.learning.markCandidatesDone("e0", 80);
      expect(await s.learning.episode("e0")).toMatchObject({ suppressed: true, candidatesDone: true, updatedAt: 80 });
      await s.learning.addCandidate("e0", "mem-b", "created", 1);
      await s.learning.addCandidate("e0", "mem-a", "merged", 1);
      await s.learning.addCandidate("e0", "mem-b", "withdrawn", 2);
      expect(await s.learning.candidatesOf("e0")).toEqual([{ memoryId: "mem-a", disposition: "merged" }, { memoryId: "mem-b", disposition: "withdrawn" }]);
      expect((await s.learning.episodeOfCall("t", "call-1"))?.id).toBe("e10");
      expect(await s.learning.episodeOfCall("t", "nope")).toBeNull();
      expect((await s.learning.episodesOfThread("conversation", "t")).map((e) => e.id)).toEqual(["e0", "e10"]);
    });

    it("finds episodes by any of their texts and forgets them for good: blank, suppressed, never rewritten", async () => {
      const s = await c.fresh();
      const noted = (kind: RewardSignal["kind"], dedupKey: string, note: string): RewardSignal => ({ ...sig(kind, dedupKey), note });
      await s.learning.upsertEpisode({ ...draft("t", 0, "h0"), task: "Keep my Locker code QUOKKA-1" }, [], [], "e-task", 1);
      await s.learning.upsertEpisode(draft("t", 10, "h10", [{ ...step(0, "read"), excerpt: "found quokka-1 in notes" }]), [noted("outcome", "n10", "quokka-1 seen")], ["outcome"], "e-step", 1);
      await s.learning.upsertEpisode(draft("t", 20, "h20"), [], [], "e-other", 1);
      await s.learning.recordFeedback({ threadId: "t", callId: "f", episodeId: "e-other", rating: 1, note: "QUOKKA-1 was right", at: 1 });
      await s.learning.upsertEpisode({ ...draft("u", 0, "hu"), finalExcerpt: "It is quokka-1." }, [], [], "e-final", 1);
      const found = await s.learning.episodesMentioning(["absent", "quokka"]);
      expect(found.map((e) => e.id).sort()).toEqual(["e-final", "e-other", "e-step", "e-task"]);
      expect(found.find((e) => e.id === "e-step")).toMatchObject({ rootThreadId: "root-t", texts: expect.arrayContaining(["found quokka-1 in notes", "quokka-1 seen"]) });
      expect(found.find((e) => e.id === "e-task")!.texts).toContain("Keep my Locker code QUOKKA-1");
      expect(found.find((e) => e.id === "e-other")!.texts).toContain("QUOKKA-1 was right");
      expect((await s.learning.episodesMentioning([""])).map((e) => e.id).sort()).toEqual(["e-final", "e-other", "e-step", "e-task"]);

      await s.learning.forgetEpisodes(["e-task", "e-step", "e-other"], 5);
      expect(await s.learning.episodesMentioning(["quokka"])).toEqual([found.find((e) => e.id === "e-final")]);
      expect(await s.learning.episode("e-step")).toMatchObject({ task: "", finalExcerpt: null, suppressed: true, candidatesDone: true, contentHash: FORGOTTEN_EPISODE_HASH, updatedAt: 5 });
      expect(await s.learning.stepsOf("e-step")).toEqual([]);
      expect((await s.learning.signalsOf("e-step")).map((x) => [x.dedupKey, x.note])).toEqual([["n10", null]]);
      // the thread read again: the forgotten episode stays as the forget left it
      const again = await s.learning.upsertEpisode(draft("t", 10, "h10-grown"), [sig("outcome", "n11")], ["outcome"], "unused", 9);
      expect(again).toMatchObject({ changed: false, created: false, episode: { id: "e-step", task: "", updatedAt: 5 } });
      expect(await s.learning.stepsOf("e-step")).toEqual([]);
      expect(await s.learning.resumeOrd("conversation", "t")).toBe(20);
    });

    it("finds the episodes built from given messages, not those forgotten already", async () => {
      const s = await c.fresh();
      await s.learning.upsertEpisode(draft("t", 0, "h0"), [], [], "e0", 1);
      await s.learning.upsertEpisode(draft("t", 10, "h10"), [], [], "e10", 1);
      await s.learning.upsertEpisode(draft("u", 0, "hu"), [], [], "u0", 1);
      const found = await s.learning.episodesOfMessages([{ threadId: "t", messageId: "m10" }, { threadId: "t", messageId: "m15" }, { threadId: "t", messageId: "m0" }, { threadId: "x", messageId: "m0" }]);
      expect(found.sort((a, b) => a.id.localeCompare(b.id))).toEqual([{ id: "e0", rootThreadId: "root-t" }, { id: "e10", rootThreadId: "root-t" }]);
      await s.learning.forgetEpisodes(["e0"], 2);
      expect(await s.learning.episodesOfMessages([{ threadId: "t", messageId: "m0" }, { threadId: "u", messageId: "m0" }])).toEqual([{ id: "u0", rootThreadId: "root-u" }]);
      expect(await s.learning.episodesOfMessages([])).toEqual([]);
      // a later step of the cascade still finds which episodes those were
      const withForgotten = await s.learning.episodesOfMessages([{ threadId: "t", messageId: "m0" }, { threadId: "u", messageId: "m0" }], { withForgotten: true });
      expect(withForgotten.sort((a, b) => a.id.localeCompare(b.id))).toEqual([{ id: "e0", rootThreadId: "root-t" }, { id: "u0", rootThreadId: "root-u" }]);
    });

    it("names the messages a thread's forgotten episodes were built from", async () => {
      const s = await c.fresh();
      await s.learning.upsertEpisode(draft("t", 0, "h0"), [], [], "e0", 1);
      await s.learning.upsertEpisode(draft("t", 10, "h10"), [], [], "e10", 1);
      await s.learning.upsertEpisode(draft("u", 0, "hu"), [], [], "u0", 1);
      expect(await s.learning.forgottenEpisodeMessages("conversation", "t")).toEqual(new Set());
      await s.learning.forgetEpisodes(["e10", "u0"], 2);
      expect(await s.learning.forgottenEpisodeMessages("conversation", "t")).toEqual(new Set(["m10", "m15"]));
      expect(await s.learning.forgottenEpisodeMessages("grpc", "t")).toEqual(new Set());
    });

    it("resumes at the last episode, or an earlier one whose candidates are not done", async () => {
      const s = await c.fresh();
      expect(await s.learning.resumeOrd("conversation", "t")).toBeNull();
      for (const [ord, id] of [[0, "a"], [10, "b"], [20, "c"]] as const) await s.learning.upsertEpisode(draft("t", ord, "h"), [], [], id, 1);
      expect(await s.learning.resumeOrd("conversation", "t")).toBe(0);
      await s.learning.markCandidatesDone("a", 2);
      expect(await s.learning.resumeOrd("conversation", "t")).toBe(10);
      await s.learning.markCandidatesDone("b", 2);
      expect(await s.learning.resumeOrd("conversation", "t")).toBe(20);
    });

    it("keeps task feedback once until it is attached to an episode", async () => {
      const s = await c.fresh();
      const fb = { threadId: "t", callId: "f1", episodeId: null, rating: -0.5, note: "meh", at: 9 };
      expect(await s.learning.recordFeedback(fb)).toBe(true);
      expect(await s.learning.recordFeedback({ ...fb, rating: 1 })).toBe(false);
      await s.learning.recordFeedback({ ...fb, callId: "f0", at: 3, note: null });
      expect((await s.learning.unresolvedFeedback("t")).map((f) => f.callId)).toEqual(["f0", "f1"]);
      expect((await s.learning.unresolvedFeedback("t"))[1]).toEqual(fb);
      await s.learning.resolveFeedback("t", "f0", "ep");
      expect((await s.learning.unresolvedFeedback("t")).map((f) => f.callId)).toEqual(["f1"]);
    });

    it("runs the work queue: lease, complete, re-enqueue while running, failures and drops", async () => {
      const s = await c.fresh();
      await s.learning.enqueue("conversation", "t2", "r2", 20);
      await s.learning.enqueue("conversation", "t1", "r1", 10);
      await s.learning.enqueue("conversation", "t1", "r1", 5);
      expect(await s.learning.queueDepth()).toBe(2);
      const got = await s.learning.claim(100, 1000, 10);
      expect(got).toEqual([
        { source: "conversation", threadId: "t1", rootThreadId: "r1", attempts: 0 },
        { source: "conversation", threadId: "t2", rootThreadId: "r2", attempts: 0 },
      ]);
      expect(await s.learning.claim(200, 1000, 10)).toEqual([]);
      await s.learning.complete("conversation", "t1", 100);
      await s.learning.enqueue("conversation", "t2", "r2", 150);
      await s.learning.complete("conversation", "t2", 100);
      expect(await s.learning.queueDepth()).toBe(1);
      expect((await s.learning.claim(200, 1000, 10)).map((q) => q.threadId)).toEqual(["t2"]);
      expect(await s.learning.fail("conversation", "t2", "boom", 3, 500)).toBe(false);
      expect(await s.learning.claim(499, 1000, 10)).toEqual([]);
      expect((await s.learning.claim(500, 1000, 10))[0]).toMatchObject({ threadId: "t2", attempts: 1 });
      expect(await s.learning.fail("conversation", "t2", "boom", 3, 600)).toBe(false);
      expect(await s.learning.fail("conversation", "t2", "boom", 3, 700)).toBe(true);
      expect(await s.learning.queueDepth()).toBe(0);
      expect(await s.learning.fail("conversation", "t2", "boom", 3, 800)).toBe(false);
    });

    it("keeps cursors and events", async () => {
      const s = await c.fresh();
      expect(await s.learning.cursor("trace", "all")).toBe(0);
      await s.learning.setCursor("trace", "all", 42);
      await s.learning.setCursor("trace", "all", 1_700_000_000_123);
      expect(await s.learning.cursor("trace", "all")).toBe(1_700_000_000_123);
      await s.learning.event("ingest", "t", null, { n: 1 }, 1);
      await s.learning.event("error", null, "e", { why: "x" }, 2);
      await s.learning.event("ingest", "t", null, { n: 2 }, 3);
      expect((await s.learning.events()).map((e) => e.at)).toEqual([3, 2, 1]);
      const ingest = await s.learning.events({ kind: "ingest", limit: 1 });
      expect(ingest).toHaveLength(1);
      expect(ingest[0]).toMatchObject({ kind: "ingest", threadId: "t", episodeId: null, detail: { n: 2 }, at: 3 });
    });

    it("keeps the first message a thread's reader left out, with its format, until cleared", async () => {
      const s = await c.fresh();
      expect(await s.learning.skipped("conversation", "t1")).toBeNull();
      await s.learning.setSkipped("conversation", "t1", { from: 3, format: "v1" });
      await s.learning.setSkipped("conversation", "t2", { from: 2_147_483_650, format: "v1" });
      await s.learning.setSkipped("conversation", "t1", { from: 1, format: "v2" });
      expect(await s.learning.skipped("conversation", "t1")).toEqual({ from: 1, format: "v2" });
      expect(await s.learning.skippedThreads("conversation")).toEqual([
        { threadId: "t1", from: 1, format: "v2" },
        { threadId: "t2", from: 2_147_483_650, format: "v1" },
      ]);
      expect(await s.learning.skippedThreads("provider_proxy")).toEqual([]);
      await s.learning.setSkipped("conversation", "t1", null);
      expect(await s.learning.skipped("conversation", "t1")).toBeNull();
      expect((await s.learning.skippedThreads("conversation")).map((k) => k.threadId)).toEqual(["t2"]);
    });

    it("keeps the fingerprints of rejected candidates per visibility key, each once", async () => {
      const s = await c.fresh();
      expect(await s.learning.isRejected("u:alice", "f1")).toBe(false);
      await s.learning.addRejected("u:alice", ["f1", "f2", "f1"], 1);
      await s.learning.addRejected("u:alice", ["f2"], 2);
      await s.learning.addRejected("u:alice", [], 3);
      expect(await s.learning.isRejected("u:alice", "f1")).toBe(true);
      expect(await s.learning.isRejected("u:alice", "f2")).toBe(true);
      // another scope's rejection is its own
      expect(await s.learning.isRejected("u:bob", "f1")).toBe(false);
      expect(await s.learning.isRejected("u:alice", "f3")).toBe(false);
    });

    it("says which memories the loop proposed or added a candidate to", async () => {
      const s = await c.fresh();
      const ep = (await s.learning.upsertEpisode(draft("t", 0, "h1"), [], [], "ep-p", 1)).episode;
      await s.learning.addCandidate(ep.id, "mem-a", "created", 2);
      await s.learning.addCandidate(ep.id, "mem-b", "merged", 2);
      expect(await s.learning.proposedAmong([])).toEqual(new Set());
      expect(await s.learning.proposedAmong(["mem-b", "mem-x", "mem-a"])).toEqual(new Set(["mem-a", "mem-b"]));
      expect(await s.learning.proposedAmong(["mem-x"])).toEqual(new Set());
    });

    it("keeps the threads dropped after their retries until cleared", async () => {
      const s = await c.fresh();
      expect(await s.learning.droppedThreads()).toEqual([]);
      await s.learning.setDropped("grpc", "t2", { rootThreadId: "r2", format: "", drops: 0, retryAt: 5, reason: "boom" });
      await s.learning.setDropped("conversation", "t1", { rootThreadId: "r1", format: "v1", drops: 0, retryAt: 10, reason: "corrupt" });
      await s.learning.setDropped("conversation", "t1", { rootThreadId: "r1", format: "v2", drops: 1, retryAt: 1_700_000_000_123, reason: "x".repeat(600) });
      const all = await s.learning.droppedThreads();
      expect(all.map(({ reason, ...d }) => [d, reason.length])).toEqual([
        [{ source: "conversation", threadId: "t1", rootThreadId: "r1", format: "v2", drops: 1, retryAt: 1_700_000_000_123 }, 500],
        [{ source: "grpc", threadId: "t2", rootThreadId: "r2", format: "", drops: 0, retryAt: 5 }, 4],
      ]);
      await s.learning.setDropped("conversation", "t1", null);
      expect((await s.learning.droppedThreads()).map((d) => d.threadId)).toEqual(["t2"]);
    });

    it("two workers claiming at once: each queued thread is claimed exactly once", async () => {
      const [a, b] = await c.freshPair(2);
      const n = 120;
      for (let i = 0; i < n; i++) await a!.learning.enqueue("conversation", `t${i}`, "r", i);
      const claimed: string[] = [];
      const worker = async (h: typeof a) => {
        for (;;) {
          const items = await h!.learning.claim(10_000, 60_000, 3);
          if (items.length === 0) return;
          for (const it of items) {
            claimed.push(it.threadId);
            await h!.learning.complete(it.source, it.threadId, 10_000);
          }
        }
      };
      await Promise.all([worker(a), worker(b), worker(a), worker(b)]);
      expect(claimed).toHaveLength(n);
      expect(new Set(claimed).size).toBe(n);
      expect(await b!.learning.queueDepth()).toBe(0);
    });

    it("two servers building the same episode at once end with one episode", async () => {
      const [a, b] = await c.freshPair(2);
      const [ra, rb] = await Promise.all([
        a!.learning.upsertEpisode(draft("t", 0, "h"), [sig("outcome", "o")], ["outcome"], "id-a", 1),
        b!.learning.upsertEpisode(draft("t", 0, "h"), [sig("outcome", "o")], ["outcome"], "id-b", 1),
      ]);
      expect([ra.created, rb.created].filter(Boolean)).toHaveLength(1);
      expect(ra.episode.id).toBe(rb.episode.id);
      expect(await a!.learning.episodesOfThread("conversation", "t")).toHaveLength(1);
      expect(await a!.learning.signalsOf(ra.episode.id)).toHaveLength(1);
    });
  });
}

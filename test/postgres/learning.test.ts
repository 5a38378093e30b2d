// The learning worker on PostgreSQL (both profiles), for what SQLite takes and PostgreSQL text
// does not: a conversation holding a NUL (a binary tool result, a refused skill_feedback call's
// arguments) is learned from, not failed.
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import { scopeResolver } from "../../core/learning/scope.js";
import { LearningService } from "../../core/learning/service.js";
import { LearningWorker } from "../../core/learning/worker.js";
import { openPostgresBackend, type PostgresBackend } from "../../stores/postgres/backend.js";
import type { InfinityMessage } from "../../stores/traits.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";
import { T0 } from "../helpers/memory.js";
import { msg } from "../learning/world.js";

for (const profile of ["postgres", "dsql"] as const) {
  describePg(`postgres learning worker (${profile} profile)`, (base) => {
    let backend: PostgresBackend;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      const t = await createTestDatabase(base(), `learn_${profile}`);
      drop = t.drop;
      backend = await openPostgresBackend(t.url, { profile, max: 4 });
    });
    afterAll(async () => {
      await backend?.close();
      await drop?.();
    });

    it("a conversation with a binary tool result and a NUL in skill_feedback arguments is cut into episodes, steps and signals", async () => {
      const clock = fixedClock(T0);
      const config = defaultConfig({ localUser: "alice" });
      const service = new LearningService({
        store: backend.learning,
        memory: backend.memory,
        config,
        clock,
        conversation: backend.conversations,
        traces: { feed: backend.traceFeed, store: backend.traces },
        scopeOf: scopeResolver({ localUser: "alice", projectOf: () => "/work/proj-a" }),
        llm: null,
      });
      const worker = new LearningWorker(service, config.learning.worker, clock);
      const thread = "t-binary";
      const msgs: InfinityMessage[] = [
        msg.user("Show me the header of the tool"),
        msg.call("c1", "cat", { path: "/bin/tool" }),
        msg.result("c1", "\u007fELF\u0002\u0001\u0000\u0000 binary"),
        msg.text("It is an ELF binary."),
        // refused by the tool, still in the conversation the worker reads
        msg.call("c2", "skill_feedback", { name: "elf\u0000tools", outcome: "pass", note: "worked\u0000 well" }),
        msg.result("c2", 'Error: "note" holds a NUL character (U+0000)'),
        msg.text("Done."),
        msg.user("Thanks, that works"),
      ];
      await backend.conversations.ensureRootThread(thread);
      await backend.conversations.appendMessages(thread, msgs.map((m, i) => [m, `${thread}-m${i}`] as const));
      await worker.drain();
      expect((await backend.learning.events({ kind: "episode_failed" })).map((e) => e.detail)).toEqual([]);
      const [ep] = await backend.learning.episodesOfThread("conversation", thread);
      expect(ep?.state).toBe("done");
      expect((await backend.learning.stepsOf(ep!.id)).map((s) => [s.tool, s.excerpt])).toEqual([["cat", "\u007fELF\u0002\u0001   binary"]]);
      expect((await backend.learning.signalsOf(ep!.id)).filter((s) => s.kind === "explicit").map((s) => [s.source, s.note])).toEqual([["skill_feedback:elf tools", "worked  well"]]);
    });
  });
}

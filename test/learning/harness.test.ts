// A multi-turn session in the mock Infinity runtime (threads persisted in a SQLite conversation
// store): the learning worker reads the runtime's own history — message ids and order — and
// turns it into episodes, rewards and a pending candidate.
import { describe, expect, it } from "vitest";
import { SqliteConversationStore } from "../../stores/sqlite/conversation-store.js";
import { SqliteStateStore } from "../../stores/sqlite/state-store.js";
import { startHarness } from "../harness-tests/setup.js";
import { tempDir } from "../helpers/tmp.js";
import { openWorld } from "./world.js";

describe("episodes from the mock runtime's conversation store", () => {
  it("a scripted session: a failing tool, a fixed task, a preference and a correction", async () => {
    const w = openWorld(tempDir("learn-harness-"));
    const { inf, cwd } = await startHarness({ conversationStore: new SqliteConversationStore(w.mem.db), stateStore: new SqliteStateStore(w.mem.db) });
    try {
      const s = await inf.createSession({ cwd, userId: "alice" });
      await inf.sendUserText(s, "Check the build. I prefer tabs.");
      let r = await inf.model.nextRequest({ threadId: s, timeoutMs: 10_000 });
      r.sendToolCall("tu-1", "run_build", { target: "all" }).finish(); // no such tool: the runtime answers with an error
      r = await inf.model.nextRequest({ threadId: s, timeoutMs: 10_000 });
      r.sendText("The build tool is not available here.").finish();
      await inf.waitIdle(s);
      await inf.sendUserText(s, "No, that's wrong: use the shell tool instead next time.");
      r = await inf.model.nextRequest({ threadId: s, timeoutMs: 10_000 });
      r.sendText("Understood.").finish();
      await inf.waitIdle(s);

      await w.worker.drain();
      const eps = await w.store.episodesOfThread("conversation", s);
      expect(eps.map((e) => [e.state, e.task])).toEqual([
        ["done", "Check the build. I prefer tabs."],
        ["done", "No, that's wrong: use the shell tool instead next time."],
      ]);
      const [step] = await w.store.stepsOf(eps[0]!.id);
      expect(step).toMatchObject({ tool: "run_build", callId: "tu-1", outcome: "error" });
      expect(eps[0]!.reward).toBeLessThan(0); // a tool error and the user's correction
      const edges = w.mem.db.prepare(`SELECT message_id FROM learning_episode_messages WHERE episode_id = ? ORDER BY ord`).all(eps[0]!.id) as { message_id: string }[];
      const history = await w.conv.loadMessagesWithIds(s);
      expect(edges.map((e) => e.message_id)).toEqual(history.slice(0, edges.length).map(([, id]) => id));
      const pending = (await w.mem.service.pending({ owner: "alice" }, 10)).items.map((m) => m.content).sort();
      expect(pending).toEqual([
        'Correction from the user about "Check the build. I prefer tabs.": use the shell tool instead next time.',
        "User prefers tabs.",
      ]);
    } finally {
      await inf.shutdown();
    }
  });
});

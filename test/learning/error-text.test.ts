// What the learning worker stores about a thread it failed on holds none of the thread's text.
// Node's JSON.parse quotes the input it stopped at ("Unexpected token 's', ...": sk-…"... is not
// valid JSON"), and the worker kept 500 characters of that message in the queue row, its events
// and the dropped thread's reason, where no forget reaches. Now those rows name the error's class,
// code, file and position (where the parser gives one). The daemon's files on disk, a SQLite file;
// the thread queued by a server stopped before it processed it, then damaged by a rewrite.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSources } from "../../cli/sessions.js";
import { defaultConfig } from "../../core/config.js";
import { holding } from "../helpers/holding.js";
import { openTestMemory } from "../helpers/memory.js";
import { copiedHome } from "../helpers/session-home.js";
import { learnerOver, msg } from "./world.js";

const SESSION = "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35";
const SECRET = "sk-9f8e7d";

const config = defaultConfig({ localUser: "alice", learning: { worker: { intervalMs: 1000, maxAttempts: 2 } } });


describe("a thread file the learning worker cannot parse", () => {
  it("leaves no text of the file in the queue, the events or the dropped thread's reason", async () => {
    const { dir, home, m, src } = copiedHome();
    const file = join(home, "threads", `${SESSION}.json`);
    const messages = [
      [msg.user("Run the tests."), "m0"],
      [msg.text("All 4 pass."), "m1"],
    ];
    writeFileSync(file, JSON.stringify({ messages, compaction_summaries: [] }, null, 2));
    // a server found the thread and stopped before processing it
    await learnerOver(m, src.sources[0]!.reader, { config }).service.discover();
    src.close();
    m.close();
    // the daemon's next write of it broke off: the key the user pasted lost its quotes
    writeFileSync(file, `{"messages": [[{"kind": "user", "content": {"type": "text", "text": ${SECRET}}}, "m2"]], "compaction_summaries": []}`);

    const m2 = openTestMemory(dir);
    const src2 = openSources([`infinity-home:${home}`], m2.db, m2.dbPath);
    try {
      const l = learnerOver(m2, src2.sources[0]!.reader, { config });
      expect(await l.worker.runOnce()).toMatchObject({ failed: 1 });
      expect(holding(m2.db, SECRET)).toEqual([]);
      m2.clock.advance(config.learning.worker.intervalMs * 2 + config.learning.worker.leaseMs);
      expect(await l.worker.runOnce()).toMatchObject({ failed: 1 });
      const kinds = (await l.store.events()).filter((e) => e.threadId === SESSION).map((e) => e.kind);
      expect(kinds).toEqual(["thread_dropped", "thread_failed"]);
      expect(holding(m2.db, SECRET)).toEqual([]);
      // what is kept says what failed and where
      const [dropped] = await l.store.droppedThreads();
      expect(dropped?.reason).toBe(`InfinityStoreError corrupt in ${file}`);
      const [ev] = await l.store.events({ kind: "thread_failed" });
      expect(ev?.detail.error).toBe(`InfinityStoreError corrupt in ${file}`);
    } finally {
      src2.close();
      m2.close();
    }
  });
});

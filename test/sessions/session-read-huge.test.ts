// session_search's read mode over RAP (real HTTP server, real callback listener, conversations in
// the SQLite file): user and assistant texts are indexed whole, so a message can be megabytes.
import { join } from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { openMemory } from "../../cli/context.js";
import { makeSessionSearch, openSources } from "../../cli/sessions.js";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import { READ_MAX_CHARS } from "../../core/sessions/search.js";
import { SqliteConversationStore } from "../../stores/sqlite/conversation-store.js";
import { memoryToolset } from "../../toolsets/memory/tools.js";
import { startRapServer } from "../../toolsets/rap/server.js";
import { postJson, startCallbackSink } from "../helpers/callback-sink.js";
import { T0 } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

describe("session_search read mode", () => {
  it("shows the head of a huge message and says how much it left out, not megabytes", async () => {
    const dir = tempDir();
    const ctx = openMemory({ dbPath: join(dir, "memory.db"), config: defaultConfig({ localUser: "alice" }), clock: fixedClock(T0), env: {} });
    const sink = await startCallbackSink();
    const sessions = makeSessionSearch(ctx.db, openSources([`sqlite:${ctx.dbPath}`], ctx.db, ctx.dbPath).sources, ctx.clock, "alice");
    const toolset = memoryToolset({ sessions, service: ctx.service, toggles: ctx.toggles, clock: ctx.clock, localUser: "alice", projectOf: () => "/work/app" });
    const server = await startRapServer({ toolset, db: ctx.db, host: "127.0.0.1", port: 0, logger: pino({ level: "silent" }) });
    try {
      // a pasted 3 MB build log, as the user said it
      const log = `Here is the full build log from the nightly run:\n${"step 4711 linking libfoo.so with -O2 🚀 ok\n".repeat(70_000)}`;
      const conv = new SqliteConversationStore(ctx.db);
      await conv.ensureRootThread("past-1");
      await conv.appendMessages("past-1", [
        [{ kind: "user", content: { type: "text", text: log } }, "u-1"],
        [{ kind: "assistant", content: { text: "The nightly build linked fine." } }, "a-1"],
        [{ kind: "user", content: { type: "text", text: "short one" } }, "u-2"],
      ]);
      let n = 0;
      const call = async (args: unknown): Promise<string> => {
        const id = `tooluse_${++n}`;
        const body = `{"operation":"session_search","arguments":${JSON.stringify(args)},"id":"${id}","call_id":null,"callback_url":${JSON.stringify(sink.url)},"group_id":"now-1","thread_ancestors":null}`;
        expect((await postJson(`http://127.0.0.1:${server.port}/invoke`, body)).status).toBe(200);
        return (await sink.next((b) => b.type === "tool_result" && b.id === id)).text as string;
      };

      const read = await call({ thread_id: "past-1", message_index: 0, window: 1 });
      expect(read).toContain("Here is the full build log from the nightly run:");
      expect(read.length).toBeLessThan(READ_MAX_CHARS + 2000);
      expect(read).toMatch(/… \[\d+ more characters not shown\]/);
      expect(read).toContain("#1 assistant: The nightly build linked fine.");
      // a lone surrogate would make the daemon refuse the result: the cut never splits the emoji
      expect(read).not.toMatch(/\p{Cs}/u);
      // a short message still comes back whole
      const short = await call({ thread_id: "past-1", message_index: 2, window: 0 });
      expect(short).toContain("short one");
      expect(short).not.toContain("not shown");
    } finally {
      await server.close({ graceMs: 1000 });
      await sink.close();
      ctx.close();
    }
  });
});

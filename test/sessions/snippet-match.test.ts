// The snippet of a session_search match shows where the query matched, also when the index
// matched it through CJK character pairs or folded accents, which the query's words do not show.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeSessionSearch, openSources } from "../../cli/sessions.js";
import { openTestMemory } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const SESSION = "7d1e2f30-4a5b-4c6d-8e7f-901a2b3c4d5e";

function writeThread(home: string, texts: string[]): void {
  mkdirSync(join(home, "threads"), { recursive: true });
  const messages = texts.map((text, i) => [{ kind: "user", content: { type: "text", text } }, `${SESSION}-u${i}`]);
  writeFileSync(join(home, "threads", `${SESSION}.json`), JSON.stringify({ messages, compaction_summaries: [] }, null, 2));
  writeFileSync(
    join(home, "threads", `${SESSION}.meta.json`),
    JSON.stringify({ parent_thread_id: null, root_thread_id: SESSION, spawn_message_order: null, spawn_tool_call_id: null, closed: false, is_subscription_event: false, is_compaction: false }),
  );
}

describe("session search snippets", () => {
  it("centre on a CJK or accent-folded match in a long message, not on the message's opening", async () => {
    const dir = tempDir();
    const home = join(dir, "home");
    writeThread(home, [
      `${"今天的会议记录很长。".repeat(60)}我们决定把服务部署到法兰克福的机房。${"其他事项。".repeat(60)}`,
      `${"Notes from the long planning call. ".repeat(20)}Then we booked the Zürich offsite at the Café Müller for June. ${"More notes. ".repeat(30)}`,
    ]);
    const m = openTestMemory(dir);
    const src = openSources([`infinity-home:${home}`], m.db, m.dbPath);
    const s = makeSessionSearch(m.db, src.sources, m.clock, "alice");

    const cjk = await s.search("alice", { query: "法兰克福", limit: 1, window: 0 });
    expect(cjk[0]?.hit.ord).toBe(0);
    expect(cjk[0]!.snippet).toContain("部署到法兰克福的机房");

    const folded = await s.search("alice", { query: "zurich cafe", limit: 1, window: 0 });
    expect(folded[0]?.hit.ord).toBe(1);
    expect(folded[0]!.snippet).toContain("Zürich offsite at the Café");
    src.close();
    m.close();
  });
});

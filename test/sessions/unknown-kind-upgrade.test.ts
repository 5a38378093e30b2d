// Messages an older version left out of the session index as kinds it did not know are indexed once
// a version that reads them runs, at their own message numbers; a version that reads no more than
// the one before does not read them again on every run. Before, the thread's watermark had moved
// past them and they were never indexed. The daemon's files on disk, the index in a SQLite file;
// the older version is the file reader with one form hidden (as a version before it was added).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeSessionSearch, openSources } from "../../cli/sessions.js";
import { copiedHome } from "../helpers/session-home.js";
import { olderReader } from "../helpers/paused-reader.js";
import { openTestMemory } from "../helpers/memory.js";

const SESSION = "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35";

const said = (text: string, id: string) => [{ kind: "user", content: { type: "text", text } }, id];


describe("messages an older version left out as unknown kinds", () => {
  it("are indexed after the upgrade, and not read again by the same version", async () => {
    const { dir, home, m, src } = copiedHome();
    const messages = [
      said("Tail the staging logs and tell me when the deploy finishes.", "u-0"),
      said("Book the Marrowvale conference room for Friday", "u-1"),
      said("Order the Quillfeather lamps", "u-2"),
      [{ kind: "model_switch", from: "a", to: "b", at: "2026-12-01T10:00:00Z" }, "switch-3"],
      said("Water the ficus on the landing", "u-4"),
    ];
    writeFileSync(join(home, "threads", `${SESSION}.json`), JSON.stringify({ messages, compaction_summaries: [] }, null, 2));
    const find = async (s: ReturnType<typeof makeSessionSearch>, query: string) =>
      (await s.search("local", { query, limit: 5, window: 0 })).map((h) => [h.hit.threadId, h.hit.ord, h.hit.messageId]);

    // the older version: u-1 is of a form it does not read
    const older = makeSessionSearch(m.db, src.sources.map((s) => ({ ...s, reader: olderReader(s.reader, new Set(["u-1"])) })), m.clock, "local");
    const first = (await older.refresh(true))[0]!;
    expect(first.unknownKinds).toEqual([{ threadId: SESSION, kinds: ["hologram", "model_switch"], messages: 2 }]);
    expect(await find(older, "Marrowvale conference")).toEqual([]);
    expect(await find(older, "Quillfeather lamps")).toEqual([[SESSION, 2, "u-2"]]);
    src.close();
    m.close();

    // the upgrade: a new process over the same index and the same files
    const m2 = openTestMemory(dir);
    const src2 = openSources([`infinity-home:${home}`], m2.db, m2.dbPath);
    const upgraded = makeSessionSearch(m2.db, src2.sources, m2.clock, "local");
    const second = (await upgraded.refresh(true))[0]!;
    expect(second.unknownKinds).toEqual([{ threadId: SESSION, kinds: ["model_switch"], messages: 1 }]);
    expect(await find(upgraded, "Marrowvale conference")).toEqual([[SESSION, 1, "u-1"]]);
    expect(await find(upgraded, "Quillfeather lamps")).toEqual([[SESSION, 2, "u-2"]]);
    expect(await find(upgraded, "ficus landing")).toEqual([[SESSION, 4, "u-4"]]);
    src2.close();
    m2.close();

    // the same version again (a restart): what it cannot read is not read again
    const m3 = openTestMemory(dir);
    const src3 = openSources([`infinity-home:${home}`], m3.db, m3.dbPath);
    const again = makeSessionSearch(m3.db, src3.sources, m3.clock, "local");
    const third = (await again.refresh(true))[0]!;
    expect(third.unknownKinds).toEqual([]);
    expect(third.threadsChanged).toBe(0);
    expect(await find(again, "Marrowvale conference")).toEqual([[SESSION, 1, "u-1"]]);
    src3.close();
    m3.close();
  });
});

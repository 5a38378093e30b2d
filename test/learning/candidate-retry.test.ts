// An episode whose candidates fail half way (the database refused one write) is retried by the
// worker. The candidate written before the failure is the episode's own: the retry must not count
// it again as "merged" evidence (a second, identical source), and "don't remember this" in the
// user's next turn must still withdraw it.
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/tmp.js";
import { msg, openWorld } from "./world.js";

const T = "root-r";
const viewer = { owner: "alice" };

describe("memory candidates after a failed pass", () => {
  it("the retry keeps the first write as created, adds no duplicate source, and a later 'don't remember this' withdraws it", async () => {
    const w = openWorld(tempDir("learn-"));
    // The second candidate's insert is refused once, as a busy database would.
    const insert = w.mem.store.insert.bind(w.mem.store);
    let inserts = 0;
    w.mem.store.insert = async (...args: Parameters<typeof insert>) => {
      if (++inserts === 2) throw new Error("SQLITE_BUSY: database is locked");
      return insert(...args);
    };
    await w.append(T, [msg.user("Reformat utils.ts. I prefer tabs for indentation. Our project uses pnpm for installs."), msg.text("Done.")]);
    const first = await w.worker.runOnce();
    expect(first.failed).toBe(1);
    expect((await w.store.events({ kind: "episode_failed" })).length).toBe(1);
    // the back-off has passed: the worker takes the thread again
    w.mem.clock.advance(60_000);
    await w.worker.drain();

    const [ep] = await w.store.episodesOfThread("conversation", T);
    const cands = await w.store.candidatesOf(ep!.id);
    expect(cands.map((c) => c.disposition)).toEqual(["created", "created"]);
    const pending = (await w.mem.service.pending(viewer, 10)).items;
    expect(pending).toHaveLength(2);
    for (const m of pending) expect(m.sources).toHaveLength(1);

    // the user asks in the next turn not to keep it: both pending candidates are withdrawn
    await w.append(T, [msg.user("Actually, don't remember this.")]);
    await w.worker.drain();
    expect((await w.mem.service.list(viewer, { statuses: ["active", "pending"] })).total).toBe(0);
  });
});

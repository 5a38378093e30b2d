// The review page's reward histogram (MemoryAdmin/LearningStats over real HTTP): ten bins of
// width 0.2 over [−1, 1], each [lo, hi). A reward on an edge (a person's rating of 0.2 or −0.4 is
// exactly that) belongs to the bin it opens, not the one below it.
import { afterEach, describe, expect, it } from "vitest";
import { LearningStatsResponse } from "../../admin/api/contract.js";
import { msg, openWorld } from "../learning/world.js";
import { tempDir } from "../helpers/tmp.js";
import { T0 } from "../helpers/memory.js";
import { startSeeded } from "./seed.js";

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

describe("LearningStats reward bins", () => {
  it("puts rewards on bin edges in the bin they open", async () => {
    const dir = tempDir("imem-bins-");
    const w = openWorld(dir);
    const ratings = [-1, -0.8, -0.4, 0.2, 0.4, 1];
    for (const [i, rating] of ratings.entries()) {
      await w.append(`chat-${i}`, [msg.user(`Tell me joke number ${i}`), msg.text("Why did the tree go to the dentist? Root canal.")]);
      await w.worker.drain();
      const [ep] = await w.store.episodesOfThread("conversation", `chat-${i}`);
      await w.service.feedback({ threadId: `chat-${i}`, callId: `fb-${i}`, rating, episodeId: ep!.id });
    }
    w.mem.close();

    const s = await startSeeded(dir);
    close = s.close;
    const res = await fetch(`${s.base}/api/v1/MemoryAdmin/LearningStats`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${s.admin.token}` },
      body: "{}",
    });
    expect(res.status).toBe(200);
    const st = LearningStatsResponse.parse(await res.json());
    expect(st.rewards.count).toBe(ratings.length);
    const filled = st.rewards.bins.filter((b) => b.count > 0).map((b) => [b.lo, b.hi, b.count]);
    expect(filled).toEqual([
      [-1, -0.8, 1],
      [-0.8, -0.6, 1],
      [-0.4, -0.2, 1],
      [0.2, 0.4, 1],
      [0.4, 0.6, 1],
      [0.8, 1, 1], // the last bin holds 1 as well
    ]);
  });

  it("lists every day of the period, a day without episodes at 0, so the chart's bars are days", async () => {
    const dir = tempDir("imem-perday-");
    const w = openWorld(dir);
    // episodes six days and one day before the server's today (T0), none in between
    for (const [i, daysAgo] of [6, 6, 1].entries()) {
      w.mem.clock.set(T0 - daysAgo * 86_400_000);
      await w.append(`day-${i}`, [msg.user(`Summarise the release notes, part ${i}`), msg.text("Here is the summary.")]);
      await w.worker.drain();
    }
    w.mem.close();

    const s = await startSeeded(dir);
    close = s.close;
    const res = await fetch(`${s.base}/api/v1/MemoryAdmin/LearningStats`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${s.admin.token}` },
      body: JSON.stringify({ days: 7 }),
    });
    expect(res.status).toBe(200);
    const st = LearningStatsResponse.parse(await res.json());
    expect(st.episodes.perDay.map((d) => [d.day, d.count])).toEqual([
      ["2026-10-26", 2],
      ["2026-10-27", 0],
      ["2026-10-28", 0],
      ["2026-10-29", 0],
      ["2026-10-30", 0],
      ["2026-10-31", 1],
      ["2026-11-01", 0],
    ]);
  });
});

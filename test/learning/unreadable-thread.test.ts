// One thread file of the daemon's home that cannot be read (damaged, or caught mid-rewrite) must not
// stop the learning worker from learning from the others. Before, it failed the whole discovery on
// every pass while it stayed so: no thread after it was ever queued. Now it is logged once and
// tried again each pass; once it reads, it is learned from too. Real server process, the daemon's
// file layout on disk.
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../stores/sqlite/database.js";
import { tempDir } from "../helpers/tmp.js";
import { msg, serveLearningFrom } from "./world.js";

const SESSION = "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35";
/** sorts before every thread of the fixture home: discovery meets it first */
const DAMAGED = "0a1b2c3d-0000-4000-8000-000000000001";

async function until<T>(probe: () => T | null | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const task = (said: string, p: string) => ({
  messages: [
    [msg.user(said), `${p}0`],
    [msg.call(`${p}c1`, "shell", { cmd: "npm test" }), `${p}1`],
    [msg.result(`${p}c1`, "Tests  4 passed (4)"), `${p}2`],
    [msg.text("All 4 pass."), `${p}3`],
  ],
  compaction_summaries: [],
});

describe("the learning worker over a daemon home with an unreadable thread file", () => {
  it("learns from the other threads, logs the unreadable one once and learns from it once it reads", { timeout: 40_000 }, async () => {
    const dir = tempDir("learn-unreadable-");
    const home = join(dir, "home");
    cpSync(resolve("test/fixtures/infinity-home"), home, { recursive: true });
    writeFileSync(join(home, "threads", `${SESSION}.json`), JSON.stringify(task("Run the tests. I prefer tabs.", "m"), null, 2));
    const damaged = join(home, "threads", `${DAMAGED}.json`);
    writeFileSync(damaged, `{"messages": [[{"kind": "user", "content": {"type": "te`);
    const { child, exited, log } = await serveLearningFrom(dir, home);
    const db = openDatabase(join(dir, "memory.db"));
    const learned = (thread: string) => db.prepare(`SELECT task FROM learning_episodes WHERE thread_id = ? AND candidates_done = 1`).get(thread) as { task: string } | undefined;
    try {
      expect((await until(() => learned(SESSION), "the worker to learn from the readable thread")).task).toBe("Run the tests. I prefer tabs.");
      // a few more passes meet the damaged file again
      await new Promise((r) => setTimeout(r, 300));
      writeFileSync(damaged, JSON.stringify(task("Run the tests. Answer in French.", "d"), null, 2));
      expect((await until(() => learned(DAMAGED), "the worker to learn from the repaired thread")).task).toBe("Run the tests. Answer in French.");
    } finally {
      db.close();
      child.kill("SIGINT");
    }
    expect(await exited).toBe(0);
    const told = readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => l.includes("learning") && l.includes(DAMAGED));
    expect(told).toHaveLength(1);
  });
});

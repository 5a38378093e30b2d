// A newer daemon may write a message kind this version does not know. The learning worker reads the
// daemon's thread files around it, as the session index does: the known messages are learned from
// at their own positions, and the unknown kind is logged once per thread. Before, the strict read
// failed the thread on every pass until its retries ran out and it was dropped, unlearned.
// Real server process, the daemon's file layout on disk.
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../stores/sqlite/database.js";
import { tempDir } from "../helpers/tmp.js";
import { msg, serveLearningFrom } from "./world.js";

const SESSION = "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35";

async function until<T>(probe: () => T | null | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const newer = (n: number) => [{ kind: "model_switch", from: "a", to: `b${n}`, at: "2026-12-01T10:00:00Z" }, `switch-${n}`];

describe("the learning worker over a thread holding a message kind from a newer daemon", () => {
  it("learns from the known messages, keeps their positions and logs the unknown kind once", { timeout: 40_000 }, async () => {
    const dir = tempDir("learn-unknown-");
    const home = join(dir, "home");
    cpSync(resolve("test/fixtures/infinity-home"), home, { recursive: true });
    const threadFile = join(home, "threads", `${SESSION}.json`);
    const messages: unknown[] = [
      [msg.user("Run the tests. I prefer tabs."), "m0"],
      newer(1),
      [msg.call("c1", "shell", { cmd: "npm test" }), "m2"],
      [msg.result("c1", "Tests  4 passed (4)"), "m3"],
      [msg.text("All 4 pass."), "m4"],
    ];
    writeFileSync(threadFile, JSON.stringify({ messages, compaction_summaries: [] }, null, 2));
    const { child, exited, log } = await serveLearningFrom(dir, home);
    const db = openDatabase(join(dir, "memory.db"));
    try {
      const episodes = () => db.prepare(`SELECT start_ord, end_ord, task, candidates_done FROM learning_episodes WHERE thread_id = ? ORDER BY start_ord`).all(SESSION) as {
        start_ord: number;
        end_ord: number;
        task: string;
        candidates_done: number;
      }[];
      await until(() => episodes().some((e) => e.candidates_done === 1), "the worker to learn from the thread");
      expect(episodes()[0]).toMatchObject({ start_ord: 0, end_ord: 4, task: "Run the tests. I prefer tabs." });
      expect(db.prepare(`SELECT content, status FROM memories`).all()).toEqual([{ content: "User prefers tabs.", status: "pending" }]);

      // the daemon goes on: another unknown message and a task; the thread is read again
      messages.push(newer(5), [msg.user("Now run the linter"), "m6"], [msg.text("Lint is clean."), "m7"]);
      writeFileSync(threadFile, JSON.stringify({ messages, compaction_summaries: [] }, null, 2));
      await until(() => episodes().some((e) => e.start_ord === 6 && e.candidates_done === 1), "the worker to learn from the new task");
      const failures = db.prepare(`SELECT kind FROM learning_events WHERE thread_id = ? AND kind IN ('thread_failed', 'thread_dropped')`).all(SESSION);
      expect(failures).toEqual([]);
    } finally {
      db.close();
      child.kill("SIGINT");
    }
    expect(await exited).toBe(0);
    const told = readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => l.includes("learning") && l.includes("model_switch"));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain(SESSION);
  });
});

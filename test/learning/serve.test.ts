// `infinity-memory serve` runs the learning worker: experience in the session source becomes a
// pending candidate in the background, and task_feedback over RAP re-scores an episode.
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteConversationStore } from "../../stores/sqlite/conversation-store.js";
import { postJson, startCallbackSink } from "../helpers/callback-sink.js";
import { CLI } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";
import { msg } from "./world.js";

async function until<T>(probe: () => T | null | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== null && v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("serve with the learning worker", () => {
  it("proposes a candidate in the background and answers task_feedback", async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run the build first`);
    const dir = tempDir("learn-serve-");
    const convDb = openDatabase(join(dir, "conv.db"));
    const conv = new SqliteConversationStore(convDb);
    const T = "3b0c1d7f-9e11-4d0b-9a57-6f1c2c7e5b7e";
    await conv.ensureRootThread(T);
    await conv.appendMessages(T, [
      [msg.user("Run the tests. I prefer tabs."), "m0"],
      [msg.call("c1", "shell", { cmd: "npm test" }), "m1"],
      [msg.result("c1", "Tests  4 passed (4)"), "m2"],
      [msg.text("All 4 pass."), "m3"],
    ]);
    convDb.close();
    writeFileSync(join(dir, "config.json"), JSON.stringify({ learning: { worker: { intervalMs: 50 } } }));

    const child = spawn(
      process.execPath,
      [CLI, "serve", "--toolset", "memory", "--port", "0", "--db", join(dir, "memory.db"), "--sessions-from", `sqlite:${join(dir, "conv.db")}`, "--log", join(dir, "serve.log")],
      { env: { ...process.env, INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" }, stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const sink = await startCallbackSink();
    try {
      const base = await new Promise<string>((res) =>
        createInterface({ input: child.stdout! }).on("line", (l) => {
          const m = /listening on (http:\/\/\S+)/.exec(l);
          if (m) res(m[1]!);
        }),
      );
      const db = openDatabase(join(dir, "memory.db"));
      const episode = await until(
        () => db.prepare(`SELECT id, reward FROM learning_episodes WHERE thread_id = ? AND candidates_done = 1`).get(T) as { id: string; reward: number } | undefined,
        "the worker to process the thread",
      );
      expect(episode.reward).toBe(1);
      const cand = db.prepare(`SELECT content, status, trust FROM memories`).all();
      expect(cand).toEqual([{ content: "User prefers tabs.", status: "pending", trust: "model_inferred" }]);

      const body = JSON.stringify({
        operation: "task_feedback",
        arguments: { rating: -1, note: "the tests were the wrong ones", episode_id: episode.id },
        id: "tooluse_fb_1",
        call_id: null,
        callback_url: sink.url,
        group_id: T,
        thread_ancestors: null,
      });
      expect((await postJson(`${base}/invoke`, body)).status).toBe(200);
      const result = await sink.next((b) => b.type === "tool_result" && b.id === "tooluse_fb_1");
      expect(result.text).toMatch(new RegExp(`^Recorded rating -1\\.00 for episode ${episode.id}: its reward is now -0\\.11 from 2 signal\\(s\\)\\.$`));
      const after = db.prepare(`SELECT reward FROM learning_episodes WHERE id = ?`).get(episode.id) as { reward: number };
      expect(after.reward).toBeCloseTo((0.8 - 1) / 1.8, 10);

      // another user's session cannot rate alice's episode, nor learn that the id exists
      const rate = async (id: string, groupId: string, userId: string | null, rating: number) => {
        const b = { operation: "task_feedback", arguments: { rating, episode_id: episode.id }, id, call_id: null, callback_url: sink.url, group_id: groupId, thread_ancestors: null, ...(userId ? { user_id: userId } : {}) };
        expect((await postJson(`${base}/invoke`, JSON.stringify(b))).status).toBe(200);
        return (await sink.next((x) => x.type === "tool_result" && x.id === id)).text as string;
      };
      const bob = await rate("tooluse_fb_bob", "7d7f3a52-1c1e-4f7e-8a7e-2b4b0f0c9d11", "bob", 1);
      expect(bob).toBe(`Error: no episode with id "${episode.id}"; leave episode_id out to rate the current task`);
      expect((db.prepare(`SELECT reward FROM learning_episodes WHERE id = ?`).get(episode.id) as { reward: number }).reward).toBe(after.reward);
      expect(db.prepare(`SELECT count(*) AS n FROM learning_feedback WHERE call_id = 'tooluse_fb_bob'`).get()).toEqual({ n: 0 });
      // alice herself, from a later session, still can
      const later = await rate("tooluse_fb_alice2", "0e0f4c1a-5b6d-4e7f-8a9b-0c1d2e3f4a5b", "alice", 1);
      expect(later).toMatch(new RegExp(`^Recorded rating 1\\.00 for episode ${episode.id}`));
      db.close();
    } finally {
      child.kill("SIGINT");
      expect(await exited).toBe(0);
      await sink.close();
    }
  });
});

// Forgetting a memory reaches the learning loop's copies of it: the episodes and steps built from
// the conversation that stated or quoted it, and the trace events the provider proxy recorded.
import { spawn } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteTraceStore } from "../../stores/sqlite/trace-store.js";
import { T0, req } from "../helpers/memory.js";
import { CLI, runCli } from "../helpers/cli.js";
import { holding } from "../helpers/holding.js";
import { tempDir } from "../helpers/tmp.js";
import { msg, openWorld } from "./world.js";

/** a session of the fixture daemon home (test/fixtures/infinity-home) */
const SESSION = "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35";

describe("forget and the learning loop", () => {
  it("blanks the episodes and drops the trace events that hold the forgotten text, and a later pass does not write it back", async () => {
    const w = openWorld(tempDir("learn-forget-"));
    const T = "root-1";
    const content = "The user's locker code is quokkalocker 4471";
    const saved = await w.mem.service.remember(req(), { content }, { actor: "model", threadId: T, toolCallId: "c1" });
    const id = saved.record.id;
    // an unrelated task, then what the daemon recorded: the request, the remember call and its
    // result, the answer
    await w.append(T, [msg.user("Run the tests"), msg.call("c2", "shell", { cmd: "npm test" }), msg.result("c2", "Tests  4 passed (4)"), msg.text("All 4 pass.")]);
    await w.append(T, [
      msg.user("Please keep my locker code in mind: quokkalocker 4471"),
      msg.call("c1", "memory_remember", { content }),
      msg.result("c1", `Remembered as ${id} (fact, user scope, trust model_inferred).`),
      msg.text(`Saved: ${content}.`),
    ]);
    // a model call the provider proxy relayed in another session, whose search result quoted it
    await new SqliteTraceStore(w.mem.db).record({
      source: "provider_proxy",
      dedupKey: "k-1",
      threadId: "root-2",
      rootThreadId: "root-2",
      kind: "model_call",
      body: {
        thread_id: "root-2",
        tool_calls: [],
        tool_results: [{ id: "c9", text: `1 memory for "locker":\n1. ${id} · fact · user scope\n   ${content}` }],
        final_text: "Your locker code is quokkalocker 4471.",
      },
      at: T0,
    });
    await w.worker.drain();
    expect(holding(w.mem.db, "quokkalocker")).toEqual(
      expect.arrayContaining(["learning_episodes.task", "learning_episodes.final_excerpt", "learning_steps.args_shape", "trace_events.body"]),
    );

    await w.mem.service.forget({ owner: "alice" }, [id], { actor: "user", threadId: null, toolCallId: null });
    expect(holding(w.mem.db, "quokkalocker")).toEqual([]);
    // the id stays only where a forget keeps it: the tombstone and the audit trail
    expect(holding(w.mem.db, id)).toEqual(["audit_log.detail", "audit_log.target_id", "memories.id", "memories.lineage_id"]);
    // the unrelated task keeps its text and its place in learning
    const episodes = await w.store.episodesOfThread("conversation", T);
    expect(episodes.map((e) => [e.task, e.suppressed])).toEqual([
      ["Run the tests", false],
      ["", true],
    ]);

    // the thread goes on: the worker reads it again from its last episode (the forgotten one),
    // which stays blank
    await w.append(T, [msg.user("What is my locker code?"), msg.text("I don't have it any more.")]);
    await w.store.enqueue("conversation", T, T, w.mem.clock.now());
    await w.worker.drain();
    expect(holding(w.mem.db, "quokkalocker")).toEqual([]);
  });

  it("finds copies past the first page of a long scan, in every table it reads", async () => {
    const w = openWorld(tempDir("learn-forget-"));
    const db = w.mem.db;
    const n = 9001;
    db.transaction(() => {
      const ep = db.prepare(
        `INSERT INTO learning_episodes (id, source, thread_id, root_thread_id, start_ord, end_ord, state, task, final_excerpt, content_hash, created_at, updated_at)
         VALUES (?, 'conversation', 't', 'root-t', ?, ?, 'done', 'a task', 'an answer', 'h', 1, 1)`,
      );
      const st = db.prepare(
        `INSERT INTO learning_steps (episode_id, idx, ord, tool, args_digest, args_shape, outcome, excerpt, alpha) VALUES (?, 0, ?, 'shell', 'd', '{}', 'ok', ?, 0)`,
      );
      const sg = db.prepare(`INSERT INTO learning_signals (episode_id, kind, source, value, weight, note, dedup_key, at) VALUES (?, 'outcome', 'outcome', 1, 1, ?, ?, 1)`);
      const ev = db.prepare(`INSERT INTO trace_events (source, dedup_key, thread_id, root_thread_id, kind, body, at) VALUES ('provider_proxy', ?, 't', 'root-t', 'model_call', ?, 1)`);
      for (let i = 0; i < n; i++) {
        const id = `ep-${String(i).padStart(5, "0")}`;
        ep.run(id, i * 2, i * 2 + 1);
        st.run(id, i * 2, i === n - 2 ? "quoted: the vault opens with tern-zephyr-88" : "ok");
        sg.run(id, i === n - 3 ? "saw tern-zephyr-88" : null, `s${i}`);
        ev.run(`k${i}`, JSON.stringify({ final_text: i === n - 1 ? "It is TERN-ZEPHYR-88." : "fine" }));
      }
    })();
    const saved = await w.mem.service.remember(req(), { content: "tern-zephyr-88" }, { actor: "user", threadId: null, toolCallId: null });
    await w.mem.service.forget({ owner: "alice" }, [saved.record.id], { actor: "user", threadId: null, toolCallId: null });
    expect(holding(db, "tern-zephyr")).toEqual([]);
    expect(db.prepare(`SELECT id FROM learning_episodes WHERE suppressed = 1 ORDER BY id`).pluck().all()).toEqual([`ep-0${n - 3}`, `ep-0${n - 2}`]);
    expect(db.prepare(`SELECT count(*) FROM trace_events`).pluck().get()).toBe(n - 1);
  });

  it("a conversation the worker had not read when the person forgot is not learned from afterwards (CLI forget, then a server)", { timeout: 60_000 }, async () => {
    const dir = tempDir("learn-forget-");
    const home = join(dir, "infinity");
    cpSync(resolve("test/fixtures/infinity-home"), home, { recursive: true });
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "ops", INFINITY_HOME: home };
    const content = "User's editor is Zorblattine Vim.";
    const id = /remembered as (mem_\w+)/.exec(runCli(["memory", "add", content], env).stdout)![1]!;
    // the daemon's record of the session that said it: the request, the remember call, its result
    const file = join(home, "threads", `${SESSION}.json`);
    const thread = JSON.parse(readFileSync(file, "utf8")) as { messages: unknown[] };
    thread.messages.push(
      [msg.user("Remember that my editor is Zorblattine Vim."), "u-remember"],
      [msg.call("toolu_R1", "memory_remember", { content }), "toolu_R1"],
      [msg.result("toolu_R1", `Remembered as ${id} (fact, user scope, trust model_inferred).`), "toolu_R1-result"],
      [msg.text("Noted."), "a-noted"],
    );
    writeFileSync(file, JSON.stringify(thread));
    // forgotten from the command line while no server runs: nothing has learned from the session yet
    expect(runCli(["memory", "forget", id], env).stdout).toMatch(/^forgot 1 memory/);

    writeFileSync(join(dir, "config.json"), JSON.stringify({ learning: { worker: { intervalMs: 50 } } }));
    const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--log", join(dir, "serve.log"), "--infinity-home", home], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "ignore"],
    });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    try {
      await new Promise<void>((ok) => createInterface({ input: child.stdout }).on("line", (l) => /listening on/.test(l) && ok()));
      const db = openDatabase(join(dir, "memory.db"), { readonly: true });
      try {
        const end = Date.now() + 20_000;
        const done = () => db.prepare(`SELECT count(*) FROM learning_episodes WHERE thread_id = ? AND candidates_done = 1 AND end_ord >= ?`).pluck().get(SESSION, thread.messages.length - 1) as number;
        while (done() === 0) {
          if (Date.now() > end) throw new Error("the server's worker did not process the session");
          await new Promise((r) => setTimeout(r, 50));
        }
        // no pending candidate brings the forgotten fact back, and no episode keeps it
        expect(holding(db, "Zorblattine")).toEqual([]);
      } finally {
        db.close();
      }
    } finally {
      child.kill("SIGINT");
      expect(await exited).toBe(0);
    }
  });

  it("rejecting a candidate the worker proposed forgets the user turn it was made from: session search and the episode", { timeout: 60_000 }, async () => {
    const dir = tempDir("learn-forget-");
    const home = join(dir, "infinity");
    cpSync(resolve("test/fixtures/infinity-home"), home, { recursive: true });
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "ops", INFINITY_HOME: home };
    const file = join(home, "threads", `${SESSION}.json`);
    const thread = JSON.parse(readFileSync(file, "utf8")) as { messages: unknown[] };
    thread.messages.push([msg.user("Fix the header. I prefer the Quokkatheme colour scheme."), "u-prefers"], [msg.text("Done, the header is fixed."), "a-fixed"]);
    writeFileSync(file, JSON.stringify(thread));
    writeFileSync(join(dir, "config.json"), JSON.stringify({ learning: { worker: { intervalMs: 50 } } }));
    const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--log", join(dir, "serve.log"), "--infinity-home", home], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "ignore"],
    });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    let candidate = "";
    try {
      await new Promise<void>((ok) => createInterface({ input: child.stdout }).on("line", (l) => /listening on/.test(l) && ok()));
      const db = openDatabase(join(dir, "memory.db"), { readonly: true });
      try {
        const end = Date.now() + 20_000;
        const pending = () => db.prepare(`SELECT id FROM memories WHERE status = 'pending'`).pluck().get() as string | undefined;
        while (!pending()) {
          if (Date.now() > end) throw new Error("the server's worker proposed no candidate");
          await new Promise((r) => setTimeout(r, 50));
        }
        candidate = pending()!;
      } finally {
        db.close();
      }
    } finally {
      child.kill("SIGINT");
      expect(await exited).toBe(0);
    }
    expect(runCli(["memory", "review"], env).stdout).toContain("User prefers the Quokkatheme colour scheme.");
    expect(runCli(["memory", "review", "--reject", candidate], env).stdout).toBe(`rejected ${candidate}\n`);
    expect(runCli(["sessions", "search", "Quokkatheme", "--infinity-home", home], env).stdout).toBe("no matches\n");
    // the rest of that conversation is still found
    expect(runCli(["sessions", "search", "staging", "logs", "--infinity-home", home], env).stdout).toContain("Tail the staging logs");
    const db = openDatabase(join(dir, "memory.db"), { readonly: true });
    try {
      expect(holding(db, "Quokkatheme")).toEqual([]);
    } finally {
      db.close();
    }
  });
});

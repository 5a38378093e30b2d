// A `memory forget` from the command line left no mark, so a restore could replace the database
// in the middle of the forget's cascade, which then went on writing to the restored file by row
// id. A CLI forget (and `memory review --reject`) now leaves `.NAME.PID.forgetting` while it runs:
// restore refuses while it lives (naming its pid; --force restores anyway) and looks again just
// before its final copy, and a forget started while a restore runs refuses before it forgets.
import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";
import { appears, fatten, seen, startCli, type Started } from "./held-child.js";

/** Conversations the forget indexes after its claim (the daemon home): they keep its cascade busy for a while. */
function addThreads(home: string, n: number): void {
  mkdirSync(join(home, "threads"), { recursive: true });
  for (let i = 0; i < n; i++) {
    const id = randomUUID();
    const messages = Array.from({ length: 20 }, (_, j) => [{ kind: j % 2 ? "assistant" : "user", content: { type: "text", text: `Thread ${i} message ${j}: the nightly build on server ${i} ran fine` } }, `${id}-m${j}`]);
    writeFileSync(join(home, "threads", `${id}.json`), JSON.stringify({ messages, compaction_summaries: [] }));
    writeFileSync(join(home, "threads", `${id}.meta.json`), JSON.stringify({ parent_thread_id: null, root_thread_id: id, children: [], title: `t${i}`, last_updated: "2026-08-20T17:02:11+00:00" }));
  }
}

/** Start `memory forget id` and stop it once it has claimed the memory (deleted, its text kept for the cascade). */
async function forgetHeldInCascade(db: string, id: string, env: Record<string, string>): Promise<Started> {
  const run = startCli(["memory", "forget", id, "--db", db], env);
  const reader = new Database(db, { readonly: true });
  try {
    const claimed = reader.prepare(`SELECT 1 FROM memories WHERE id = ? AND status = 'deleted' AND content <> ''`);
    await seen(run, "its claim", () => claimed.get(id) !== undefined, { signal: "SIGSTOP" });
  } finally {
    reader.close();
  }
  return run;
}

function idOf(db: string, query: string, env: Record<string, string>): string {
  return (JSON.parse(runCli(["memory", "search", query, "--json", "--db", db], env).stdout.split("\n")[0]!) as { id: string }).id;
}

describe("a CLI forget under way and restore", () => {
  it("restore refuses while a forget is in its cascade and catches one started during its staging; a forget refuses while a restore runs", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const backup = join(dir, "b.db");
    const home = join(dir, "home");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice", INFINITY_HOME: home };
    for (const text of ["The standup moved to 9:30", "Alice's alarm code is 7741", "The retro is on Fridays"]) {
      expect(runCli(["memory", "add", text, "--db", db], env).status).toBe(0);
    }
    expect(runCli(["backup", "--out", backup, "--db", db], env).status).toBe(0);
    // a large backup, so the restore is caught while it stages its copy
    fatten(backup);

    // 1. a forget held in its cascade: restore refuses, naming it, and changes nothing
    const alarm = idOf(db, "alarm", env);
    addThreads(home, 300);
    const forget = await forgetHeldInCascade(db, alarm, env);
    try {
      const r = runCli(["restore", backup, "--db", db], env);
      expect(r.stderr).toContain(`cannot restore into ${db} while a forget runs in it: pid ${forget.child.pid} (memory forget); wait for it to finish, then restore again; --force restores anyway`);
      expect(r.status).toBe(1);
      expect(readdirSync(dir)).toContain(`.memory.db.${forget.child.pid}.forgetting`);
    } finally {
      forget.child.kill("SIGCONT");
    }
    expect((await forget.exited).code).toBe(0);
    expect(forget.stdout()).toContain("forgot 1 memory");
    expect(readdirSync(dir).filter((f) => f.endsWith(".forgetting"))).toEqual([]);
    const live = new Database(db, { readonly: true });
    expect(live.prepare(`SELECT status, content FROM memories WHERE id = ?`).get(alarm)).toEqual({ status: "deleted", content: "" });
    live.close();

    // 2. a restore frozen mid-staging: a forget refuses, naming it, and forgets nothing
    const standup = idOf(db, "standup", env);
    const restore = startCli(["restore", backup, "--db", db], env);
    await appears(dir, /^\.memory\.db\.\d+\.restoring$/, restore, "SIGSTOP");
    const refused = runCli(["memory", "forget", standup, "--db", db], env);
    expect(refused.stderr).toContain(`cannot forget in ${db}: a restore is replacing it (pid ${restore.child.pid}, since `);
    expect(refused.stderr).toContain("nothing was forgotten; wait for the restore to finish, then run the forget again");
    expect(refused.status).toBe(1);
    expect(readdirSync(dir).filter((f) => f.endsWith(".forgetting"))).toEqual([]);
    expect(runCli(["memory", "search", "standup", "--db", db], env).stdout).toContain("9:30");

    // 3. a forget that started without seeing the restore's mark (here: it is taken away) is caught before the final copy
    rmSync(join(dir, `.memory.db.${restore.child.pid}.restoring-mark`));
    addThreads(home, 300);
    const late = await forgetHeldInCascade(db, standup, env);
    try {
      restore.child.kill("SIGCONT");
      expect((await restore.exited).code).toBe(1);
      expect(restore.stderr()).toContain(`cannot restore into ${db} while a forget runs in it: pid ${late.child.pid} (memory forget)`);
      expect(restore.stdout()).toBe("");
    } finally {
      late.child.kill("SIGCONT");
    }
    expect((await late.exited).code).toBe(0);
    // nothing was swapped: both forgets hold, the memory kept is there, and no mark is left
    expect(runCli(["memory", "search", "standup", "--db", db], env).stdout).not.toContain("9:30");
    expect(runCli(["memory", "search", "retro", "--db", db], env).stdout).toContain("Fridays");
    expect(readdirSync(dir).filter((f) => f.endsWith(".forgetting") || f.includes("restoring"))).toEqual([]);

    // 4. with no forget running, the restore goes ahead and forgets both again
    const done = runCli(["restore", backup, "--db", db], env);
    expect(done.stderr).toBe("");
    expect(done.stdout).toContain("2 of them had been forgotten after this backup was made and were forgotten again");
  }, 180_000);

  it("memory review --reject refuses while a restore runs, as memory forget does", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    expect(runCli(["memory", "add", "The retro is on Fridays", "--db", db], env).status).toBe(0);
    expect(runCli(["backup", "--out", join(dir, "b.db"), "--db", db], env).status).toBe(0);
    // a restore's mark of a live process (this test's): the reject refuses, naming it
    writeFileSync(join(dir, `.memory.db.${process.pid}.restoring-mark`), `${JSON.stringify({ pid: process.pid, what: "restore", since: "2026-12-07T20:00:00.000Z" })}\n`);
    const r = runCli(["memory", "review", "--reject", "mem_none", "--db", db], env);
    expect(r.stderr).toContain(`cannot forget in ${db}: a restore is replacing it (pid ${process.pid}, since 2026-12-07T20:00:00.000Z)`);
    expect(r.status).toBe(1);
    expect(readdirSync(dir).filter((f) => f.endsWith(".forgetting"))).toEqual([]);
  }, 60_000);
});

// backup / verify / restore with a server running, and forgotten text absent from later copies.
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { postJson, startCallbackSink } from "../helpers/callback-sink.js";
import { CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

describe("backup, verify, restore", () => {
  it("copies online, leaves forgotten text out of a later copy, and restores identical results", async () => {
    const dir = tempDir();
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
    const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--db", db, "--log", join(dir, "s.log")], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "ignore"],
    });
    const exited = new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
    const url = await new Promise<string>((resolve) => {
      createInterface({ input: child.stdout }).on("line", (l) => {
        const m = /listening on (http:\/\/\S+)/.exec(l);
        if (m) resolve(m[1]!);
      });
    });
    const sink = await startCallbackSink();
    const call = async (id: string, operation: string, args: unknown) => {
      await postJson(`${url}/invoke`, { operation, arguments: args, id, call_id: null, callback_url: sink.url, group_id: "root-1", thread_ancestors: null });
      return (await sink.next((b) => b.id === id)).text as string;
    };
    try {
      await call("a", "memory_remember", { content: "The quarterly report template lives in the finance drive" });
      const secret = await call("b", "memory_remember", { content: "Alice's childhood nickname was Zorblattine" });
      const first = join(dir, "backup-1.db");
      expect(runCli(["backup", "--out", first, "--db", db], env).stdout).toMatch(/backed up 2 memories/);

      const id = /mem_\w+/.exec(secret)![0];
      expect(await call("c", "memory_forget", { id })).toMatch(/^Forgot/);
      await call("d", "memory_remember", { content: "Standup moved to 9:45" });
      const second = join(dir, "backup-2.db");
      expect(runCli(["backup", "--out", second, "--db", db], env).status).toBe(0);
      expect(readFileSync(second).includes("Zorblattine")).toBe(false);
      expect(readFileSync(first).includes("Zorblattine")).toBe(true);

      const v = JSON.parse(runCli(["verify", second], env).stdout) as { integrity: string; memories: number; forgotten: number };
      expect(v).toMatchObject({ integrity: "ok", memories: 2, forgotten: 1 });
      expect(runCli(["backup", "--out", second, "--db", db], env).stderr).toMatch(/exists/);
    } finally {
      await sink.close();
      child.kill("SIGINT");
    }
    expect(await exited).toBe(0);

    // restore the second copy into a fresh file: the same answers as the live database
    const restored = join(dir, "restored.db");
    expect(runCli(["restore", join(dir, "backup-2.db"), "--db", restored], env).stdout).toMatch(/restored 2 memories/);
    const live = runCli(["memory", "search", "--json", "standup", "report", "--db", db], env).stdout;
    const back = runCli(["memory", "search", "--json", "standup", "report", "--db", restored], env).stdout;
    expect(back).toBe(live);
    expect(back.split("\n").filter(Boolean)).toHaveLength(2);
  });
});

// A standing memory server (`serve`, as `npm start` runs it) warms its store up when it starts, as the
// prefix builders do: the semantic index of the scope written last is built before any search asks.
// A command server the daemon starts for one session (RAP_EMBEDDED=1) does not.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { postJson, startCallbackSink } from "../helpers/callback-sink.js";
import { CLI, spawnCommandServer } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

const WARMED = "semantic indexes built";

async function startServe(dir: string, db: string, log: string) {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--db", db, "--log", log], {
    env: { ...process.env, INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice", RAP_EMBEDDED: "" },
    stdio: ["ignore", "pipe", "ignore"],
  });
  const exited = new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
  const rl = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve) => rl.on("line", (l) => /listening on (http:\/\/\S+)/.test(l) && resolve(/listening on (http:\/\/\S+)/.exec(l)![1]!)));
  return { child, exited, url };
}

function warmedLine(log: string): { scopes: number } | null {
  let text = "";
  try {
    text = readFileSync(log, "utf8");
  } catch {
    return null;
  }
  const line = text.split("\n").find((l) => l.includes(WARMED));
  return line ? (JSON.parse(line) as { scopes: number }) : null;
}

async function waitFor<T>(f: () => T | null, ms: number): Promise<T | null> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    const v = f();
    if (v) return v;
  }
  return f();
}

describe("serve warms its store up", () => {
  it("a standing server builds the scope written last at start; a per-session command server does not", async () => {
    const dir = tempDir();
    const db = join(dir, "m.db");
    const sink = await startCallbackSink();
    try {
      const first = await startServe(dir, db, join(dir, "first.log"));
      await postJson(`${first.url}/invoke`, {
        operation: "memory_remember",
        arguments: { content: "Deploys go out through the blue-green pipeline on Tuesdays", kind: "project" },
        id: "tu-1",
        call_id: null,
        callback_url: sink.url,
        group_id: "root-1",
        thread_ancestors: null,
      });
      expect((await sink.next((b) => b.id === "tu-1")).text).toMatch(/^Remembered as mem_/);
      first.child.kill("SIGINT");
      expect(await first.exited).toBe(0);

      // Restarted: the warm-up builds Alice's scope before anything asks.
      const again = await startServe(dir, db, join(dir, "again.log"));
      try {
        expect((await waitFor(() => warmedLine(join(dir, "again.log")), 10_000))?.scopes).toBe(1);
      } finally {
        again.child.kill("SIGINT");
      }
      expect(await again.exited).toBe(0);

      // The daemon's per-session command server on the same file: no warm-up, however long it waits.
      const cwd = join(dir, "proj", ".infinity");
      mkdirSync(cwd, { recursive: true });
      const session = await spawnCommandServer(`exec ${process.execPath} ${CLI} serve --toolset memory --db ${db}`, cwd, { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" });
      try {
        await new Promise((r) => setTimeout(r, 1500));
        const log = join(cwd, "infinity-memory.log");
        expect(readFileSync(log, "utf8")).toContain("command server ready");
        expect(warmedLine(log)).toBeNull();
      } finally {
        process.kill(-session.child.pid!, "SIGINT");
      }
      expect(await session.exited).toBe(0);
    } finally {
      await sink.close();
    }
  });
});

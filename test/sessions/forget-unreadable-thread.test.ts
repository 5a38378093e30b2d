// A forget while the daemon is rewriting a conversation file in place: the server reads the
// thread again before it purges, so the message that said the forgotten thing is not indexed
// (and found) after the forget. Real server process, the daemon's file layout, RAP over HTTP.
import { spawn } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { postJson, startCallbackSink } from "../helpers/callback-sink.js";
import { CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

const SESSION = "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35";
const SAID = "The ops lead's nickname at the office is Zorblattine";

/** A copy of the fixture daemon home, and its thread file's text with one more turn that says SAID. */
function homeThatSaysIt() {
  const dir = tempDir();
  const home = join(dir, "infinity");
  cpSync(resolve("test/fixtures/infinity-home"), home, { recursive: true });
  const threadFile = join(home, "threads", `${SESSION}.json`);
  const thread = JSON.parse(readFileSync(threadFile, "utf8")) as { messages: unknown[] };
  thread.messages.push([{ kind: "user", content: { type: "text", text: `Remember this: ${SAID}` } }, "6a1f0c52-3d4e-4b8a-9c7d-2e1f0a9b8c7d"]);
  return { dir, home, threadFile, said: JSON.stringify(thread, null, 2) };
}

describe("forget and a conversation file caught mid-write", () => {
  it("the thread is read again before the purge, so the forgotten text is not found afterwards", { timeout: 30_000 }, async () => {
    const { dir, home, threadFile, said } = homeThatSaysIt();

    const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--db", join(dir, "m.db"), "--log", join(dir, "s.log"), "--sessions-from", `infinity-home:${home}`], {
      env: { ...process.env, INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "ops" },
      stdio: ["ignore", "pipe", "ignore"],
    });
    const exited = new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
    const url = await new Promise<string>((done) => {
      createInterface({ input: child.stdout }).on("line", (l) => {
        const m = /listening on (http:\/\/\S+)/.exec(l);
        if (m) done(m[1]!);
      });
    });
    const sink = await startCallbackSink();
    const call = async (id: string, operation: string, args: unknown, group = SESSION) => {
      await postJson(`${url}/invoke`, { operation, arguments: args, id, call_id: null, callback_url: sink.url, group_id: group, thread_ancestors: null });
      return (await sink.next((b) => b.id === id)).text as string;
    };
    try {
      const saved = await call("a", "memory_remember", { content: SAID, kind: "fact" });
      const id = /mem_\w+/.exec(saved)![0];
      // The daemon writes the turn that said it: the server first sees the file half-written,
      // and the write completes a moment later.
      writeFileSync(threadFile, said.slice(0, Math.floor(said.length * 0.6)));
      const forgotten = call("b", "memory_forget", { id });
      setTimeout(() => writeFileSync(threadFile, said), 40);
      expect(await forgotten).toMatch(/^Forgot/);
      // past the server's 2 s between index refreshes, so the searches below read the files again
      await new Promise((r) => setTimeout(r, 2100));
      const other = "c41f7b2e-0000-4000-8000-000000000001";
      expect(await call("c", "session_search", { query: "Zorblattine nickname" }, other)).toMatch(/^No past conversation matches/);
      // the rest of that conversation is indexed and found
      expect(await call("d", "session_search", { query: "staging logs deploy" }, other)).toContain("Tail the staging logs");
    } finally {
      await sink.close();
      child.kill("SIGINT");
    }
    expect(await exited).toBe(0);
  });

  it("a forget from the command line indexes the daemon's conversations first, so what they said is not found later", { timeout: 30_000 }, () => {
    const { dir, home, threadFile, said } = homeThatSaysIt();
    writeFileSync(threadFile, said);
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "ops", INFINITY_HOME: home };
    const id = /remembered as (mem_\w+)/.exec(runCli(["memory", "add", SAID], env).stdout)![1]!;
    // nothing has indexed the conversations yet: the forget does, before it purges
    expect(runCli(["memory", "forget", id], env).status).toBe(0);
    expect(runCli(["sessions", "search", "Zorblattine", "nickname", "--infinity-home", home], env).stdout).toBe("no matches\n");
    expect(runCli(["sessions", "search", "staging", "logs", "deploy", "--infinity-home", home], env).stdout).toContain("Tail the staging logs");
  });
});

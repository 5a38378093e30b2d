// A newer daemon may write a message kind this version does not know. Session search indexes the
// rest of that thread at the messages' own positions, leaves out only the unknown ones and says so
// once per thread in its log file (stdout stays the port line). Real server process in command
// mode, the daemon's file layout on disk, RAP over HTTP.
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { postJson, startCallbackSink } from "../helpers/callback-sink.js";
import { CLI, runCli } from "../helpers/cli.js";
import { makeSessionSearch, openSources } from "../../cli/sessions.js";
import { openTestMemory } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const SESSION = "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35";
const OTHER = "c41f7b2e-0000-4000-8000-000000000001";

const newer = (n: number) => [{ kind: "model_switch", from: "a", to: `b${n}`, at: "2026-12-01T10:00:00Z" }, `switch-${n}`];
const said = (text: string, id: string) => [{ kind: "user", content: { type: "text", text } }, id];

/** the fixture home with the session's history: [user, unknown kind, user] */
function homeWithNewerKind() {
  const dir = tempDir();
  const home = join(dir, "infinity");
  cpSync(resolve("test/fixtures/infinity-home"), home, { recursive: true });
  const threadFile = join(home, "threads", `${SESSION}.json`);
  const messages: unknown[] = [said("Tail the staging logs and tell me when the deploy finishes.", "u-0"), newer(1), said("Book the Marrowvale conference room for Friday", "u-2")];
  writeFileSync(threadFile, JSON.stringify({ messages, compaction_summaries: [] }, null, 2));
  return { dir, home, threadFile, messages };
}

describe("a thread holding a message kind from a newer daemon", () => {
  it("is indexed around the unknown message, at the right message numbers, and logged once per thread", { timeout: 30_000 }, async () => {
    const { dir, home, threadFile, messages } = homeWithNewerKind();
    const project = join(dir, "project", ".infinity");
    mkdirSync(project, { recursive: true });
    const child = spawn(process.execPath, [CLI, "serve", "--sessions-from", `infinity-home:${home}`], {
      cwd: project,
      env: { ...process.env, RAP_EMBEDDED: "1", INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "local" },
      stdio: ["ignore", "pipe", "ignore"],
    });
    const exited = new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
    const stdout: string[] = [];
    const port = await new Promise<number>((done) => {
      createInterface({ input: child.stdout }).on("line", (l) => {
        stdout.push(l);
        if (stdout.length === 1) done((JSON.parse(l) as { port: number }).port);
      });
    });
    const sink = await startCallbackSink();
    const call = async (id: string, args: unknown) => {
      await postJson(`http://127.0.0.1:${port}/invoke`, { operation: "session_search", arguments: args, id, call_id: null, callback_url: sink.url, group_id: OTHER, thread_ancestors: null });
      return (await sink.next((b) => b.id === id)).text as string;
    };
    try {
      const first = await call("a", { query: "Marrowvale conference room", window: 0 });
      expect(first).toContain(`thread ${SESSION} · message #2 (id u-2)`);
      expect(await call("b", { query: "staging logs deploy", window: 0 })).toContain("message #0 (id u-0)");

      // the daemon goes on: another newer message and one we know
      writeFileSync(threadFile, JSON.stringify({ messages: [...messages, newer(3), said("Order the Quillfeather lamps", "u-4")], compaction_summaries: [] }, null, 2));
      await new Promise((r) => setTimeout(r, 2100)); // past the 2 s between index refreshes
      expect(await call("c", { query: "Quillfeather lamps", window: 0 })).toContain("message #4 (id u-4)");
    } finally {
      await sink.close();
      child.kill("SIGINT");
    }
    expect(await exited).toBe(0);
    expect(stdout).toHaveLength(1);
    const warned = readFileSync(join(project, "infinity-memory.log"), "utf8")
      .split("\n")
      .filter((l) => l.includes("model_switch") && l.includes("session index"));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain(SESSION);
  });

  it("the command line indexes it too and names the kind on stderr", () => {
    const { dir, home } = homeWithNewerKind();
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "local" };
    const r = runCli(["sessions", "index", "--infinity-home", home, "--json"], env);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain(`of thread ${SESSION} of kind "model_switch"`);
    const report = JSON.parse(r.stdout.split("\n")[0]!) as { skipped: unknown[]; unknownKinds: unknown[] };
    expect(report.skipped).toEqual([]);
    expect(report.unknownKinds).toEqual([{ threadId: SESSION, kinds: ["model_switch"], messages: 1 }]);
    const found = runCli(["sessions", "search", "Marrowvale", "--infinity-home", home, "--json", "--window", "0"], env);
    expect(JSON.parse(found.stdout.split("\n")[0]!)).toMatchObject({ thread_id: SESSION, message_index: 2, message_id: "u-2" });
  });

  it("a known kind holding content of a newer form is left out the same way", async () => {
    const { dir, home, threadFile } = homeWithNewerKind();
    const messages = [
      said("Tail the staging logs and tell me when the deploy finishes.", "u-0"),
      [{ kind: "user", content: { type: "hologram", frames: 3 } }, "u-1"],
      [{ kind: "assistant", content: { sticker: { pack: "x" } } }, "a-2"],
      said("Book the Marrowvale conference room for Friday", "u-3"),
    ];
    writeFileSync(threadFile, JSON.stringify({ messages, compaction_summaries: [] }, null, 2));
    const m = openTestMemory(dir);
    const src = openSources([`infinity-home:${home}`], m.db, m.dbPath);
    const s = makeSessionSearch(m.db, src.sources, m.clock, "local");
    const report = (await s.refresh(true))[0]!;
    expect(report.skipped).toEqual([]);
    expect(report.unknownKinds).toEqual([{ threadId: SESSION, kinds: ["user (in a form this version does not read)", "assistant (in a form this version does not read)"], messages: 2 }]);
    expect((await s.search("local", { query: "Marrowvale conference", limit: 1, window: 0 }))[0]?.hit).toMatchObject({ threadId: SESSION, ord: 3, messageId: "u-3" });
    src.close();
    m.close();
  });
});

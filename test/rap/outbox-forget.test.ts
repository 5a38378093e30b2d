// A result waiting in the outbox (the runtime's callback server failing) when the memory it quoted
// is forgotten from the command line: the body on disk loses the quote at once, and the runtime
// then gets an error result for the call instead of the forgotten text. Real server, RAP over HTTP.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { CLI } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { WITHHELD, withheld } from "../../toolsets/rap/outbox-forget.js";
import { startListener, waitFor } from "./helpers.js";

const GROUP = "6f1c2c7e-5b7e-4d0b-9a57-2b0c1d7f9e11";

/** the CLI's stdout, the event loop free while it runs */
function cli(args: string[], env: Record<string, string>): Promise<string> {
  const p = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "ignore"] });
  let out = "";
  p.stdout.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise((ok) => p.once("close", () => ok(out)));
}

/** `serve` on a free port for `env`, delivering to `callbackUrl`: invoke a tool, stop it (SIGINT, exit 0) */
async function serve(dir: string, env: Record<string, string>, callbackUrl: string) {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--log", join(dir, "serve.log")], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const base = await new Promise<string>((ok) =>
    createInterface({ input: child.stdout }).on("line", (l) => {
      const m = /listening on (http:\/\/\S+)/.exec(l);
      if (m) ok(m[1]!);
    }),
  );
  const invoke = async (id: string, operation: string, args: unknown) => {
    const body = { operation, arguments: args, id, call_id: null, callback_url: callbackUrl, group_id: GROUP, thread_ancestors: null };
    expect((await fetch(`${base}/invoke`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).status).toBe(200);
  };
  const stop = async () => {
    child.kill("SIGINT");
    expect(await exited).toBe(0);
  };
  return { invoke, stop };
}

describe("forget and the outbox", () => {
  it("a search result still waiting to be delivered goes out without the forgotten memory", { timeout: 60_000 }, async () => {
    const dir = tempDir("outbox-forget-");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice", INFINITY_HOME: join(dir, "no-daemon-home") };
    let down = false;
    const runtime = await startListener({ status: () => (down ? 503 : 200) });
    const server = await serve(dir, env, runtime.url);
    const results = () => runtime.accepted().filter((b) => b.type === "tool_result");
    try {
      const { invoke } = server;
      await invoke("remember", "memory_remember", { content: "The vault combination is quokkavault 5521" });
      const saved = await waitFor(() => results().find((b) => b.id === "remember"), "the remember result");
      const id = /mem_\w+/.exec(saved.text as string)![0];

      // the runtime's callback server fails: the search result waits in the outbox
      down = true;
      await invoke("search", "memory_search", { query: "vault combination" });
      await waitFor(() => runtime.bodies.some((b) => b.includes('"id":"search"')), "a first delivery attempt");
      // (not spawnSync: the runtime's listener must go on failing the attempts meanwhile)
      expect(await cli(["memory", "forget", id], env)).toMatch(/^forgot 1 memory/);
      const db = openDatabase(join(dir, "memory.db"), { readonly: true });
      try {
        expect(db.prepare(`SELECT count(*) FROM rap_outbox WHERE body LIKE '%quokkavault%'`).pluck().get()).toBe(0);
      } finally {
        db.close();
      }

      down = false;
      const delivered = await waitFor(() => results().find((b) => b.id === "search"), "the search result", 20_000);
      expect(delivered.text).toMatch(/^Error: this result quoted a memory that was forgotten before the result could be delivered/);
      expect(JSON.stringify(runtime.accepted())).not.toContain("quokkavault");
    } finally {
      await server.stop();
      await runtime.close();
    }
  });

  it("a waiting question or subscription event loses its text too; a body that is no callback is left", () => {
    const question = withheld(
      JSON.stringify({ type: "user_choice", group_id: "g", id: "c", prompt: "Forget 1 memory?\n• The vault combination is quokkavault 5521", choices: ["Forget it", "Cancel"], default: 1, response_url: "http://127.0.0.1:1/user_choice_response?thread=g" }),
    );
    expect(JSON.parse(question!)).toEqual({
      type: "user_choice",
      group_id: "g",
      id: "c",
      prompt: expect.stringMatching(/^\(This question quoted a memory that has since been forgotten/),
      choices: ["Forget it", "Cancel"],
      default: 1,
      response_url: "http://127.0.0.1:1/user_choice_response?thread=g",
    });
    const event = withheld(JSON.stringify({ type: "subscription_event", group_id: "g", tool_call_id: "c", text: "quokkavault 5521", associative: false }));
    expect(JSON.parse(event!)).toMatchObject({ type: "subscription_event", tool_call_id: "c", text: WITHHELD });
    expect(withheld('{"call":"x"}')).toBeNull();
    expect(withheld("not json")).toBeNull();
  });

  it("a question still waiting when its server stopped loses the quote at a forget; the next server answers the call without it", { timeout: 60_000 }, async () => {
    const dir = tempDir("outbox-forget-");
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice", INFINITY_HOME: join(dir, "no-daemon-home") };
    const runtime = await startListener();
    const promptRows = () => {
      const db = openDatabase(join(dir, "memory.db"), { readonly: true });
      try {
        return db.prepare(`SELECT prompt FROM rap_user_choices`).pluck().all() as string[];
      } finally {
        db.close();
      }
    };
    try {
      const first = await serve(dir, env, runtime.url);
      await first.invoke("remember", "memory_remember", { content: "The vault combination is quokkavault 5521" });
      const saved = await waitFor(() => runtime.accepted().find((b) => b.id === "remember"), "the remember result");
      const id = /mem_\w+/.exec(saved.text as string)![0];
      // a forget by query asks the person; the session idles and its server stops before the answer
      await first.invoke("by-query", "memory_forget", { query: "vault combination" });
      await waitFor(() => runtime.accepted().find((b) => b.type === "user_choice"), "the question");
      await first.stop();
      expect(promptRows()).toEqual([expect.stringContaining("quokkavault 5521")]);

      // the person forgets it from the command line meanwhile
      expect(await cli(["memory", "forget", id], env)).toMatch(/^forgot 1 memory/);
      expect(promptRows()).toEqual([expect.stringMatching(/^\(This question quoted a memory that has since been forgotten/)]);

      // the next server runs the call again: nothing matches any more, and the row goes
      const second = await serve(dir, env, runtime.url);
      const result = await waitFor(() => runtime.accepted().find((b) => b.type === "tool_result" && b.id === "by-query"), "the re-run's result", 20_000);
      expect(result.text).toBe('No memories match "vault combination"; nothing was forgotten.');
      await second.stop();
      expect(promptRows()).toEqual([]);
    } finally {
      await runtime.close();
    }
  });
});

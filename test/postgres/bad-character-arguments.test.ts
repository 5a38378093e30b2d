// A NUL character (U+0000) or an unpaired UTF-16 surrogate in any string a model passes to a tool
// gets an `Error: …` naming the field, on SQLite and PostgreSQL alike, and changes nothing stored.
// PostgreSQL text cannot hold a NUL, so before this check a NUL in a query, id or name reached the
// engine and came back as "invalid byte sequence" (or, in a write, as a failed tool); SQLite
// accepted some of them. An unpaired surrogate (a "\ud83d" escape without its other half) was
// stored: SQLite kept invalid UTF-8 that read back as three U+FFFD, PostgreSQL one U+FFFD.
// Driven as the daemon does: real `serve` processes, the exact invocation JSON, a callback sink.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post, startServe, startSink, type ServeProcess, type Sink } from "../../bench/serve-fleet.js";
import { skillMd } from "../skills/helpers.js";
import { createTestDatabase, pgUrl } from "../helpers/postgres.js";

/** what is put into a field, and the words its refusal names it by */
const BAD: [string, string, string][] = [
  ["a NUL", "\u0000", "NUL character (U+0000)"],
  ["an unpaired surrogate", "\ud83d", "unpaired surrogate (U+D83D"],
];

/** tool → valid arguments, and the string fields to poison one at a time (path into the args) */
const MEMORY_CASES: [string, Record<string, unknown>, (string | number)[][]][] = [
  ["memory_remember", { content: "Alice waters the ferns on Sundays", tags: ["plants"], expires_at: "30d" }, [["content"], ["tags", 0], ["expires_at"]]],
  ["memory_search", { query: "ferns" }, [["query"]]],
  ["memory_update", { id: "@ID", content: "Alice waters the ferns on Saturdays", tags: ["plants"], expires_at: "60d" }, [["id"], ["content"], ["tags", 0], ["expires_at"]]],
  ["memory_history", { id: "@ID" }, [["id"]]],
  ["memory_forget", { id: "@ID" }, [["id"]]],
  ["memory_forget", { ids: ["@ID"] }, [["ids", 0]]],
  ["memory_forget", { query: "ferns" }, [["query"]]],
  ["memory_list", { cursor: "abc" }, [["cursor"]]],
  ["memory_review", { action: "confirm", ids: ["@ID"] }, [["ids", 0]]],
  ["session_search", { query: "ferns" }, [["query"]]],
  ["session_search", { thread_id: "thread-alice", message_id: "m1" }, [["thread_id"], ["message_id"]]],
  ["task_feedback", { rating: 1, note: "good", episode_id: "ep_1" }, [["note"], ["episode_id"]]],
];

const SKILL_CASES: [string, Record<string, unknown>, (string | number)[][]][] = [
  ["skill_search", { query: "rotate keys" }, [["query"]]],
  ["skill_view", { name: "rotate-keys", version: "v1", file: "references/a.md" }, [["name"], ["version"], ["file"]]],
  ["skill_history", { name: "rotate-keys", diff_from: "v1" }, [["name"], ["diff_from"]]],
  ["skill_propose", { skill_md: "@MD", files: [{ path: "references/a.md", content: "text" }], base_version: "v1" }, [["skill_md"], ["files", 0, "path"], ["files", 0, "content"], ["base_version"]]],
  ["skill_publish", { name: "rotate-keys", version: "v1" }, [["name"], ["version"]]],
  ["skill_feedback", { name: "rotate-keys", outcome: "pass", note: "ok", version: "v1" }, [["name"], ["note"], ["version"]]],
  ["skill_enable", { name: "rotate-keys" }, [["name"]]],
  ["skill_disable", { name: "rotate-keys" }, [["name"]]],
  ["skill_rollback", { name: "rotate-keys", to_version: "v1" }, [["name"], ["to_version"]]],
];

function poisoned(args: Record<string, unknown>, path: (string | number)[], bad: string): Record<string, unknown> {
  const copy = structuredClone(args);
  let at: Record<string | number, unknown> = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  const v = String(at[last]);
  at[last] = `${v.slice(0, 2)}${bad}${v.slice(2)}`;
  return copy;
}

function label(path: (string | number)[]): string {
  return path.map((k, i) => (typeof k === "number" ? `[${k}]` : i === 0 ? k : `.${k}`)).join("");
}

type MakeDb = () => Promise<{ db: string; drop: () => Promise<void> }>;
const engines: [string, MakeDb][] = [["sqlite", async () => ({ db: "", drop: async () => {} })]];
if (pgUrl()) engines.push(["postgres", async () => {
  const t = await createTestDatabase(pgUrl()!, "nul");
  return { db: t.url, drop: t.drop };
}]);
const runs = engines.flatMap(([engine, makeDb]) => BAD.map(([what, bad, named]) => [what, engine, makeDb, bad, named] as const));

describe.each(runs)("%s in a tool argument (%s)", (_what, _engine, makeDb, bad, named) => {
  let dir: string;
  let sink: Sink;
  let drop: () => Promise<void>;
  const servers: Record<string, ServeProcess> = {};
  let seq = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "imem-nul-"));
    const made = await makeDb();
    drop = made.drop;
    const db = made.db || join(dir, "memory.db");
    sink = await startSink();
    servers.memory = await startServe({ db, dir, name: "memory" });
    servers.skills = await startServe({ db, dir, name: "skills", toolset: "skills" });
  }, 60_000);
  afterAll(async () => {
    for (const s of Object.values(servers)) await s.stop();
    await sink?.close();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const call = async (server: ServeProcess, op: string, args: unknown): Promise<string> => {
    const id = `nul-${++seq}`;
    const body = JSON.stringify({ operation: op, arguments: args, id, call_id: null, callback_url: sink.url, group_id: "thread-alice", user_id: "alice", thread_ancestors: null });
    expect(await post(server.endpoint, body)).toBe(200);
    await sink.waitFor([id], 20_000);
    return sink.results.get(id)!.text;
  };

  /** Each case with each listed field poisoned: an `Error:` naming the field, no engine text. */
  const expectRefused = async (server: ServeProcess, cases: typeof MEMORY_CASES, fill: (json: string) => string) => {
    for (const [tool, args, paths] of cases) {
      const real = JSON.parse(fill(JSON.stringify(args))) as Record<string, unknown>;
      for (const path of paths) {
        const text = await call(server, tool, poisoned(real, path, bad));
        const what = `${tool} ${label(path)}`;
        expect(text, what).toMatch(/^Error: /);
        expect(text, what).toContain(`"${label(path)}"`);
        expect(text, what).toContain(named);
        expect(text, what).not.toMatch(/invalid byte sequence|PostgreSQL|failed:/);
      }
    }
  };

  it("every memory tool names the field and stores nothing", { timeout: 120_000 }, async () => {
    const m = servers.memory!;
    const made = await call(m, "memory_remember", { content: "Alice keeps the spare key under the green planter" });
    const id = /mem_[0-9a-z]+/.exec(made)![0];
    const before = await call(m, "memory_list", {});
    await expectRefused(m, MEMORY_CASES, (json) => json.replaceAll("@ID", id));
    expect(await call(m, "memory_list", {})).toBe(before);
    expect(await call(m, "memory_search", { query: "spare key planter" })).toContain(id);
  });

  it("every skills tool names the field and stores nothing", { timeout: 120_000 }, async () => {
    const s = servers.skills!;
    const md = skillMd("rotate-keys", "Rotate the service's API keys without downtime.", "# Rotate keys\n\n1. Issue the new key.\n2. Revoke the old key.");
    expect(await call(s, "skill_propose", { skill_md: md })).toMatch(/^Proposed rotate-keys v1/);
    const before = await call(s, "skill_history", { name: "rotate-keys" });
    await expectRefused(s, SKILL_CASES, (json) => json.replaceAll('"@MD"', JSON.stringify(md)));
    expect(await call(s, "skill_history", { name: "rotate-keys" })).toBe(before);
  });
});

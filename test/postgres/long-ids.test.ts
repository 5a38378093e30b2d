// Identifiers the runtime hands a toolset (call, group, user and thread ids) are bounded at
// MAX_EXTERNAL_ID_BYTES. At the bound every engine takes them, PostgreSQL included, whose index
// keys (the call journal's, a memory's scope) hold at most about 2.7 KB; past it the invocation
// is answered 400 naming the field on every engine alike, where SQLite used to take what
// PostgreSQL failed to journal. Driven as the daemon does: a real `serve`, the exact JSON, a sink.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post, startServe, startSink, type ServeProcess, type Sink } from "../../bench/serve-fleet.js";
import { MAX_EXTERNAL_ID_BYTES } from "../../core/ids.js";
import { createTestDatabase, pgUrl } from "../helpers/postgres.js";

/** random (so PostgreSQL cannot compress it into an index key), exactly `bytes` long */
const longId = (tag: string, bytes = MAX_EXTERNAL_ID_BYTES) => `${tag}-${randomBytes(bytes).toString("hex")}`.slice(0, bytes);

const engines: [string, () => Promise<{ db: string; drop: () => Promise<void> }>][] = [["sqlite", async () => ({ db: "", drop: async () => {} })]];
if (pgUrl()) engines.push(["postgres", async () => {
  const t = await createTestDatabase(pgUrl()!, "longids");
  return { db: t.url, drop: t.drop };
}]);

describe.each(engines)("identifiers at and past the bound (%s)", (_engine, makeDb) => {
  let dir: string;
  let sink: Sink;
  let drop: () => Promise<void>;
  let server: ServeProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "imem-longids-"));
    const made = await makeDb();
    drop = made.drop;
    sink = await startSink();
    server = await startServe({ db: made.db || join(dir, "memory.db"), dir, name: "memory" });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await sink?.close();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const user = longId("user");
  const root = longId("root");
  const group = longId("thread");
  const invoke = (operation: string, args: unknown, over: Record<string, unknown> = {}) => {
    const id = longId("call");
    const body = { operation, arguments: args, id, call_id: longId("tc"), callback_url: sink.url, group_id: group, user_id: user, thread_ancestors: [root], ...over };
    return { id, body: JSON.stringify(body) };
  };
  const call = async (operation: string, args: unknown): Promise<string> => {
    const { id, body } = invoke(operation, args);
    expect(await post(server.endpoint, body)).toBe(200);
    await sink.waitFor([id], 20_000);
    return sink.results.get(id)!.text;
  };

  it("takes ids of the full length: remembered, found and forgotten under them", { timeout: 60_000 }, async () => {
    const made = await call("memory_remember", { content: "The build cache lives on the second NVMe disk", scope: "thread" });
    const id = /mem_[0-9a-z]+/.exec(made)?.[0];
    expect(made, made).toMatch(/^Remembered/);
    expect(await call("memory_search", { query: "build cache disk" })).toContain(id);
    expect(await call("memory_forget", { id: id! })).toMatch(/^Forgot/);
    expect(await call("memory_search", { query: "build cache disk" })).not.toContain(id);
  });

  it.each(["id", "call_id", "group_id", "user_id"])("answers 400 naming %s one byte past the bound, and runs nothing", async (field) => {
    const { id, body } = invoke("memory_remember", { content: "Never stored: the id was too long" }, { [field]: longId(field, MAX_EXTERNAL_ID_BYTES + 1) });
    const res = await fetch(server.endpoint, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(`"${field}": is ${MAX_EXTERNAL_ID_BYTES + 1} bytes long`);
    expect(sink.results.has(id)).toBe(false);
    expect(await call("memory_search", { query: "never stored id too long" })).toMatch(/^No memories match/);
  });
});

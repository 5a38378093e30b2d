// A forget is two writes: the memory store's purge and the session index's (the conversation
// messages that said the text). A process that dies between them (SIGKILL, a daemon restart, a
// failed step) must leave a forget that finishes when it is run again, as the journal re-runs an
// acknowledged call: the forgotten text may never stay searchable in past conversations. The crash
// is simulated at the one point between the two commits, on a real SQLite file, and the forget
// runs again on a fresh open of the file.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openMemory, type MemoryContext } from "../../cli/context.js";
import type { RequestScope } from "../../core/memory/scope.js";
import { analyzeQuery } from "../../core/retrieval/analyze.js";
import { tempDir } from "../helpers/tmp.js";

const SECRET = "Alice's locker code at the gym is orange falcon";
const req: RequestScope = { user: "alice", project: null, session: "t1", thread: "t1", ancestors: [] };
const origin = { actor: "model" as const, threadId: "t1", toolCallId: "call-forget" };

async function sessionHits(ctx: MemoryContext): Promise<number> {
  return (await ctx.backend.sessionIndex.search({ user: "alice", query: analyzeQuery("orange falcon"), limit: 5 })).length;
}

/** The process "dies" right after the first of the forget's two writes has committed. */
function dieAfterFirstWrite(ctx: MemoryContext): void {
  let died = false;
  const wrap = <T extends object>(obj: T, name: keyof T & string) => {
    const real = (obj[name] as (...a: unknown[]) => Promise<unknown>).bind(obj);
    (obj as Record<string, unknown>)[name] = async (...a: unknown[]) => {
      const r = await real(...a);
      if (!died) {
        died = true;
        throw new Error(`the process died after ${name}`);
      }
      return r;
    };
  };
  wrap(ctx.backend.memory, "forget");
  wrap(ctx.backend.sessionIndex, "purgeContaining");
}

describe("a forget interrupted between its two writes", () => {
  it("finishes when run again: the memory and what the conversations said of it are both gone", async () => {
    const dir = tempDir("imem-forget-crash-");
    const dbPath = join(dir, "memory.db");
    const env = { ...process.env, INFINITY_MEMORY_HOME: dir };
    let ctx = openMemory({ dbPath, env });
    const id = await (async () => {
      const source = await ctx.backend.sessionIndex.sourceId("sqlite", dbPath);
      await ctx.backend.sessionIndex.append(
        source,
        { threadId: "t1", rootThreadId: "t1", user: "alice", cwd: null },
        [{ ord: 0, messageId: "m0", role: "user", text: `Please remember this: ${SECRET}` }],
        1,
        null,
        Date.now(),
      );
      return (await ctx.service.remember(req, { content: SECRET, kind: "fact" }, { ...origin, toolCallId: "call-remember" })).record.id;
    })();
    expect(await sessionHits(ctx)).toBe(1);

    dieAfterFirstWrite(ctx);
    await expect(ctx.service.forget({ owner: "alice", project: null }, [id], origin)).rejects.toThrow(/the process died/);
    ctx.close();

    // the next process runs the unfinished call again
    ctx = openMemory({ dbPath, env });
    try {
      await ctx.service.forget({ owner: "alice", project: null }, [id], origin);
      expect((await ctx.backend.memory.get(id))?.status ?? "deleted").toBe("deleted");
      expect(await sessionHits(ctx)).toBe(0);
    } finally {
      ctx.close();
    }
  });
});

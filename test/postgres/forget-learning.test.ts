// `memory forget` on PostgreSQL reaches the learning loop's copies of the text: the episodes that
// quote it are blanked and the trace events that hold it are deleted, another user's left alone.
import { afterAll, beforeAll, expect, it } from "vitest";
import pg from "pg";
import { openAnyMemory } from "../../cli/context.js";
import { defaultConfig } from "../../core/config.js";
import type { EpisodeDraft } from "../../core/learning/types.js";
import { runCli } from "../helpers/cli.js";
import { describePg } from "../helpers/postgres.js";
import { migratedTemplate } from "./pg-databases.js";

const draft = (threadId: string, task: string): EpisodeDraft => ({
  source: "conversation",
  threadId,
  rootThreadId: threadId,
  startOrd: 0,
  endOrd: 3,
  state: "done",
  task,
  finalExcerpt: "Saved.",
  steps: [],
  messages: [],
  userTexts: [],
  nextUserText: null,
  feedbackCalls: [],
  contentHash: `h-${threadId}`,
});

describePg("forget and the learning loop on PostgreSQL", (base) => {
  const dbs = migratedTemplate(base);
  let url = "";
  let drop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ url, drop } = await dbs.fresh());
  });
  afterAll(async () => drop());

  /** every text column of every table holding `needle` */
  async function tablesHolding(needle: string): Promise<string[]> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const cols = (await c.query<{ table_name: string; column_name: string }>(
        `SELECT table_name, column_name FROM information_schema.columns
         WHERE table_schema = current_schema() AND data_type IN ('text', 'tsvector', 'character varying')`,
      )).rows;
      const hits: string[] = [];
      for (const col of cols) {
        const r = await c.query(`SELECT 1 FROM ${col.table_name} WHERE ${col.column_name}::text ILIKE $1 LIMIT 1`, [`%${needle}%`]);
        if (r.rowCount) hits.push(`${col.table_name}.${col.column_name}`);
      }
      return hits.sort();
    } finally {
      await c.end();
    }
  }

  it("memory forget blanks alice's episodes and drops her trace events; bob's session keeps its own", async () => {
    const content = "Alice's locker code is quokkalocker 4471";
    const ctx = await openAnyMemory({ location: url, config: defaultConfig({ localUser: "alice" }), env: {} });
    let id = "";
    try {
      const b = ctx.backend;
      id = (await ctx.service.remember({ user: "alice", project: null, session: "s-a", thread: "s-a", ancestors: [] }, { content }, { actor: "model", threadId: "s-a", toolCallId: "c1" })).record.id;
      await b.roots.upsert("s-a", "alice", null, 1);
      await b.roots.upsert("s-b", "bob", null, 1);
      await b.learning.upsertEpisode(draft("s-a", `Remember this: ${content}`), [], [], "ep-a", 1);
      await b.learning.upsertEpisode(draft("s-b", `Bob says: ${content}`), [], [], "ep-b", 1);
      await b.traces.record({ source: "provider_proxy", dedupKey: "k-a", threadId: "s-a", rootThreadId: "s-a", kind: "model_call", body: { final_text: `Noted: ${content}` }, at: 1 });
      await b.traces.record({ source: "grpc", dedupKey: "k-x", threadId: "s-x", rootThreadId: null, kind: "model_call", body: { tool_results: [{ text: `${id}: ${content}` }] }, at: 2 });
    } finally {
      await ctx.close();
    }
    expect(await tablesHolding("quokkalocker")).toEqual(["learning_episodes.task", "memories.content", "trace_events.body"]);

    const r = runCli(["memory", "forget", id], { INFINITY_MEMORY_DB: url, INFINITY_MEMORY_USER: "alice", INFINITY_MEMORY_HOME: "/nonexistent-imem-home", INFINITY_HOME: "/nonexistent-imem-home" });
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/forgot 1 memory/);

    // bob's session keeps its own copy: a forget acts for the user who asked
    expect(await tablesHolding("quokkalocker")).toEqual(["learning_episodes.task"]);
    const check = await openAnyMemory({ location: url, config: defaultConfig({ localUser: "alice" }), env: {} });
    try {
      expect(await check.backend.learning.episode("ep-a")).toMatchObject({ task: "", suppressed: true });
      expect(await check.backend.learning.episode("ep-b")).toMatchObject({ task: "Bob says: Alice's locker code is quokkalocker 4471", suppressed: false });
      expect(await check.backend.traces.listByThread("s-a")).toEqual([]);
      expect(await check.backend.traces.listByThread("s-x")).toEqual([]);
    } finally {
      await check.close();
    }
  });
});

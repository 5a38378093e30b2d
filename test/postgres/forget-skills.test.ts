// `memory forget` on PostgreSQL reaches the skills the learning loop built from the text: the
// published version the agent wrote is withdrawn (the skill retired, its search document
// blanked), a candidate and its request, the policy's task, a report, a golden task and a trial
// note lose it; a version a person wrote keeps it, and the trigger that keeps versions immutable
// lets nothing else through.
import { afterAll, beforeAll, expect, it } from "vitest";
import pg from "pg";
import { openAnyMemory } from "../../cli/context.js";
import { defaultConfig } from "../../core/config.js";
import { WITHHELD_SKILL_TEXT } from "../../core/learning/skill-forget.js";
import type { EpisodeDraft } from "../../core/learning/types.js";
import { runCli } from "../helpers/cli.js";
import { describePg } from "../helpers/postgres.js";
import { audit, newVersion } from "../stores/skills-conformance.js";
import { migratedTemplate } from "./pg-databases.js";

const draft = (threadId: string, task: string): EpisodeDraft => ({
  source: "conversation",
  threadId,
  rootThreadId: threadId,
  startOrd: 0,
  endOrd: 3,
  state: "done",
  task,
  finalExcerpt: "Done.",
  steps: [],
  messages: [],
  userTexts: [],
  nextUserText: null,
  feedbackCalls: [],
  contentHash: `h-${threadId}`,
});

describePg("forget and the learned skills on PostgreSQL", (base) => {
  const dbs = migratedTemplate(base);
  let url = "";
  let drop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ url, drop } = await dbs.fresh());
  });
  afterAll(async () => drop());

  async function withClient<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  }

  /** every text column of every table holding `needle` (a search document holds its words stemmed) */
  const tablesHolding = (needle: string) =>
    withClient(async (c) => {
      const cols = (
        await c.query<{ table_name: string; column_name: string }>(
          `SELECT table_name, column_name FROM information_schema.columns
           WHERE table_schema = current_schema() AND data_type IN ('text', 'tsvector', 'character varying')`,
        )
      ).rows;
      const hits: string[] = [];
      for (const col of cols) {
        const r = await c.query(`SELECT 1 FROM ${col.table_name} WHERE ${col.column_name}::text ILIKE $1 LIMIT 1`, [`%${needle}%`]);
        if (r.rowCount) hits.push(`${col.table_name}.${col.column_name}`);
      }
      return hits.sort();
    });

  it("memory forget withdraws the agent's versions and what quoted the text; the person's version keeps it", async () => {
    const content = "The garage opens with quokkagarage 9912";
    const ctx = await openAnyMemory({ location: url, config: defaultConfig({ localUser: "alice" }), env: {} });
    let id = "";
    let reportId = 0;
    try {
      const b = ctx.backend;
      id = (await ctx.service.remember({ user: "alice", project: null, session: "s-a", thread: "s-a", ancestors: [] }, { content }, { actor: "user", threadId: null, toolCallId: null })).record.id;
      await b.roots.upsert("s-a", "alice", null, 1);
      await b.learning.upsertEpisode(draft("s-a", `Open the garage. ${content}`), [], [], "ep-a", 1);
      await b.evolution.savePolicy(
        {
          signature: "sig-a",
          tools: ["shell"],
          keyTerms: ["garage", "open"],
          steps: [{ tool: "shell", argsShape: "{}", verdict: null }],
          support: 1,
          meanValue: 1,
          gain: 0.5,
          rawGain: 0.5,
          eligible: true,
          episodeIds: ["ep-a"],
          counterIds: [],
          pitfalls: [],
          tasks: [`Open the garage. ${content}`],
          contentHash: "c-a",
        },
        "pol-a",
        2,
      );
      await b.evolution.markBuilt("pol-a", "garage-door", "c-a", 0.5, 3);
      const agent = { author: "agent" as const, trust: "agent_proposed" as const, authorRef: "policy:pol-a" };
      await b.skills.insertVersion(
        newVersion("garage-door", `Open the garage (${content})`, "g1", { ...agent, files: [{ path: "notes.md", content }] }),
        { skillId: "sk-g", versionId: "g1" },
        audit("propose", "garage-door"),
      );
      await b.skills.movePointer("sk-g", { expectedFrom: null, to: "g1", toStatus: "probationary", fromStatus: "retired", kind: "publish" }, audit("publish", "garage-door"));
      await b.skills.insertVersion(newVersion("garage-door", "Open the garage", "g2", { ...agent, body: `Tasks like: "Open the garage. ${content}"\n` }), { skillId: "sk-g", versionId: "g2" }, audit("propose", "garage-door"));
      reportId = (await b.evolution.addReport({ skillName: "garage-door", versionId: null, baselineVersionId: null, policyId: "pol-a", passed: true, report: { reasons: [content] } as never, createdAt: 4 })).id;
      await b.evolution.addRequest({ id: "rq-1", kind: "publish", skillName: "garage-door", versionId: "g2", otherSkill: null, policyId: "pol-a", reportId, detail: { diff: `+Tasks like: "Open the garage. ${content}"` }, createdAt: 5 });
      await b.evolution.addGoldenTask("garage-door", `Open it: ${content}`, ["shell"], 6);
      await b.skills.recordTrial("g1", { passed: true, note: `used ${content}`, threadId: "s-a", at: 7 }, () => 0.6, audit("feedback", "garage-door"));
      // a person's own note of it
      await b.skills.insertVersion(newVersion("garage-notes", `Notes: ${content}`, "n1"), { skillId: "sk-n", versionId: "n1" }, audit("propose", "garage-notes"));
    } finally {
      await ctx.close();
    }
    expect(await tablesHolding("quokkagarag")).toEqual([
      "learning_episodes.task",
      "learning_policies.pattern",
      "memories.content",
      "memory_words.tsv",
      "skill_eval_reports.report",
      "skill_files.content",
      "skill_golden_tasks.task",
      "skill_requests.detail",
      "skill_search.doc",
      "skill_trials.note",
      "skill_versions.body",
      "skill_versions.description",
      "skill_versions.frontmatter",
    ]);

    const r = runCli(["memory", "forget", id], { INFINITY_MEMORY_DB: url, INFINITY_MEMORY_USER: "alice", INFINITY_MEMORY_HOME: "/nonexistent-imem-home", INFINITY_HOME: "/nonexistent-imem-home" });
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/forgot 1 memory/);
    // the person's version, unpublished, is all that holds it
    expect(await tablesHolding("quokkagarag")).toEqual(["skill_versions.body", "skill_versions.description", "skill_versions.frontmatter"]);

    const check = await openAnyMemory({ location: url, config: defaultConfig({ localUser: "alice" }), env: {} });
    try {
      const b = check.backend;
      expect(await b.skills.skillById("sk-g")).toMatchObject({ publishedVersionId: "g1" });
      expect(await b.skills.version("g1")).toMatchObject({ status: "rejected", description: WITHHELD_SKILL_TEXT, contentHash: "withheld:g1", liveOrder: null });
      expect(await b.skills.version("g2")).toMatchObject({ status: "rejected", body: `${WITHHELD_SKILL_TEXT}\n` });
      expect(await b.skills.version("n1")).toMatchObject({ status: "candidate", description: `Notes: ${content}` });
      expect(await b.evolution.request("rq-1")).toMatchObject({ status: "rejected", decidedBy: "forget", detail: { diff: WITHHELD_SKILL_TEXT } });
      expect((await b.evolution.report(reportId))!.report).toEqual({ reasons: [WITHHELD_SKILL_TEXT] });
      expect(await b.evolution.policy("pol-a")).toMatchObject({ eligible: false, tasks: [], episodeIds: [] });
      expect((await b.skills.auditOf("garage-door", 10)).map((a) => [a.action, a.actor]).slice(0, 4)).toEqual([
        ["withdraw", "forget"],
        ["withdraw", "forget"],
        ["withdraw", "forget"],
        ["retire", "forget"],
      ]);
    } finally {
      await check.close();
    }

    // the trigger still refuses any other change of a version's text
    await withClient(async (c) => {
      await expect(c.query(`UPDATE skill_versions SET body = 'x', content_hash = 'withheld:n1', status = 'rejected' WHERE id = 'n1'`)).rejects.toThrow(/immutable/);
      await expect(c.query(`UPDATE skill_versions SET body = 'y' WHERE id = 'g1'`)).rejects.toThrow(/immutable/);
    });
  });
});

// End to end through the mock Infinity runtime: a real `serve --toolset skills` command server per
// session, a scripted model calling the tools, and the person answering user_choice questions.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";
import type { ModelRound } from "../harness/model.js";
import { lastText, startHarness, writeRapJson } from "../harness-tests/setup.js";
import { skillMd } from "./helpers.js";

type Inf = Awaited<ReturnType<typeof startHarness>>["inf"];

async function callTool(inf: Inf, thread: string, id: string, name: string, args: unknown, round?: ModelRound): Promise<ModelRound> {
  const r = round ?? (await inf.model.nextRequest({ threadId: thread, timeoutMs: 20_000 }));
  r.sendToolCall(id, name, args).finish();
  return inf.model.nextRequest({ threadId: thread, timeoutMs: 20_000 });
}

/** Send a tool call that asks the person; answer each question in turn; return the next round. */
async function callAsking(inf: Inf, thread: string, id: string, name: string, args: unknown, round: ModelRound, answers: number[]) {
  round.sendToolCall(id, name, args).finish();
  const prompts: string[] = [];
  for (const a of answers) {
    const n = prompts.length + 1;
    await inf.waitForEvent(
      () => inf.agentEvents(thread).filter((e) => e.type === "UserChoiceRequired" && e.choice.id === id).length >= n,
      { timeoutMs: 20_000 },
    );
    const [choice] = (await inf.pendingUserChoices(thread)).filter((c) => c.id === id);
    prompts.push(choice!.prompt);
    expect(await inf.answerUserChoice(thread, id, a)).toBe(200);
  }
  return { next: await inf.model.nextRequest({ threadId: thread, timeoutMs: 20_000 }), prompts };
}

const V1 = skillMd("db-migration", "Run a database schema migration safely with a backup and a dry run.", "1. Back up the database.\n2. Dry-run the migration.\n3. Apply it.");
const V2 = skillMd("db-migration", "Run a database schema migration safely with a backup and a dry run.", "1. Back up the database.\n2. Dry-run the migration.\n3. Apply it in a transaction.\n4. Verify row counts.");

describe("skills end to end through the mock runtime", () => {
  it("propose → invisible → approved via user_choice → found → used → revised → rolled back", async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run the build first`);
    const data = tempDir("e2e-skills-");
    const h = await startHarness({ serverEnv: { ...process.env, INFINITY_MEMORY_HOME: data, INFINITY_MEMORY_USER: "local-user" } });
    writeRapJson(h.cwd, [{ type: "toolset_command", id: "skills", command: `"${process.execPath}" "${CLI}" serve --toolset skills --db "${join(data, "memory.db")}"` }]);
    const inf = h.inf;
    const s = await inf.createSession({ cwd: h.cwd, userId: "u1" });
    await inf.sendUserText(s, "That migration went well; save the procedure as a skill.");

    const first = await inf.model.nextRequest({ threadId: s, timeoutMs: 20_000 });
    expect(first.request.tools.map((t: { name: string }) => t.name)).toContain("skill_publish");
    let r = await callTool(inf, s, "p1", "skill_propose", { skill_md: V1 }, first);
    expect(lastText(r)).toMatch(/^Proposed db-migration v1 as a candidate \(not live/);
    r = await callTool(inf, s, "q1", "skill_search", { query: "database migration" }, r);
    expect(lastText(r)).toMatch(/^No enabled skill matches/);

    const pub = await callAsking(inf, s, "pub1", "skill_publish", { name: "db-migration" }, r, [2, 0]);
    expect(pub.prompts[0]).toMatch(/^Publish skill db-migration v1 \(now: nothing published\)\?/);
    expect(pub.prompts[1]).toContain("+3. Apply it.");
    expect(lastText(pub.next)).toMatch(/^The person approved: db-migration v1 is published/);

    r = await callTool(inf, s, "q2", "skill_search", { query: "schema migration with backup" }, pub.next);
    expect(lastText(r)).toContain("- db-migration (v1, score 1.00, η 0.50)");
    r = await callTool(inf, s, "v1", "skill_view", { name: "db-migration" }, r);
    expect(lastText(r)).toContain("2. Dry-run the migration.");
    r = await callTool(inf, s, "f1", "skill_feedback", { name: "db-migration", outcome: "pass", note: "worked on staging" }, r);
    expect(lastText(r)).toBe("Recorded a pass for db-migration v1: η is now 0.67 (1/1 passed).");

    r = await callTool(inf, s, "p2", "skill_propose", { skill_md: V2 }, r);
    expect(lastText(r)).toMatch(/^Proposed db-migration v2/);
    const pub2 = await callAsking(inf, s, "pub2", "skill_publish", { name: "db-migration" }, r, [2, 0]);
    expect(pub2.prompts[1]).toContain("-3. Apply it.");
    expect(pub2.prompts[1]).toContain("+3. Apply it in a transaction.");
    r = await callTool(inf, s, "q3", "skill_search", { query: "schema migration" }, pub2.next);
    expect(lastText(r)).toContain("db-migration (v2,");

    const rb = await callAsking(inf, s, "rb1", "skill_rollback", { name: "db-migration" }, r, [0]);
    expect(lastText(rb.next)).toBe("The person approved: db-migration is back to v1 (v2 retired).");
    r = await callTool(inf, s, "h1", "skill_history", { name: "db-migration" }, rb.next);
    expect(lastText(r)).toMatch(/v1 active ← published · η 0\.67 \(1\/1 passed\)/);
    expect(lastText(r)).toMatch(/v2 retired/);
    r.sendText("Saved and rolled back.").finish();
    await inf.waitIdle(s);
  }, 90_000);
});

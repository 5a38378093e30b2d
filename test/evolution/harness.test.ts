// End to end in the mock Infinity runtime, no LLM: a scripted model does release chores through a
// RAP tool server of ours; the runtime's conversation store feeds the learning worker; the
// evolution loop turns the episodes into a policy, a gated candidate and an approval request; the
// person approves through skill_review (RAP user_choice); a later task finds the skill in the
// context prefix, loads it with skill_view, follows it, and reports skill_feedback.
import pino from "pino";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { ChoreServer, naivePlan, openChoreWorld, rng, task, TOOLS } from "../../bench/evolution/chore.js";
import { procedureOf } from "../../core/learning/skill-draft.js";
import { MemoryPrefixBuilder, SKILLS_TITLE } from "../../core/retrieval/prefix.js";
import { loadTokenCounter } from "../../core/retrieval/tokens.js";
import { SqliteConversationStore } from "../../stores/sqlite/conversation-store.js";
import { SqliteStateStore } from "../../stores/sqlite/state-store.js";
import type { InfinityMessage } from "../../stores/traits.js";
import { defineTool, type Tool, type Toolset } from "../../toolsets/rap/registry.js";
import { startRapServer } from "../../toolsets/rap/server.js";
import { skillsToolset } from "../../toolsets/skills/tools.js";
import { lastText, startHarness, writeRapJson } from "../harness-tests/setup.js";
import { tempDir } from "../helpers/tmp.js";

function choresToolset(state: Map<string, ChoreServer>): Toolset {
  const input = z.looseObject({});
  const tools: Tool[] = TOOLS.map((name) =>
    defineTool({
      name,
      description: `release chore step: ${name}`,
      input,
      handler: async (a, ctx) => {
        const s = state.get(ctx.invocation.group_id) ?? new ChoreServer();
        state.set(ctx.invocation.group_id, s);
        return { text: s.call(name, a as Record<string, unknown>).text };
      },
    }),
  );
  return { name: "chores", description: "a package repository", tools };
}

const userText = (h: readonly InfinityMessage[]) => {
  const u = [...h].reverse().find((m) => m.kind === "user") as { content?: { text?: string } } | undefined;
  return u?.content?.text ?? "";
};

describe("skills that evolve in the mock runtime", () => {
  it("chores → policy → gated candidate → skill_review approval → found in the prefix and followed", async () => {
    const w = openChoreWorld(tempDir("evo-harness-"));
    const tokens = await loadTokenCounter("o200k_base");
    const builder = new MemoryPrefixBuilder({ service: w.ctx.service, toggles: w.ctx.toggles, edgesOf: (id) => w.ctx.store.edgesOf(id), tokens, config: w.config, skills: w.offers });
    const state = new Map<string, ChoreServer>();
    const log = pino({ level: "silent" });
    const chores = await startRapServer({ toolset: choresToolset(state), db: w.ctx.db, host: "127.0.0.1", port: 0, logger: log });
    const skillsServer = await startRapServer({
      toolset: skillsToolset({ service: w.skills, toggles: w.ctx.toggles, localUser: "alice", projectOf: () => "/work/app", evolution: w.evolution }),
      db: w.ctx.db,
      host: "127.0.0.1",
      port: 0,
      logger: log,
    });
    const { inf, cwd } = await startHarness({
      conversationStore: new SqliteConversationStore(w.ctx.db),
      stateStore: new SqliteStateStore(w.ctx.db),
      promptPrefix: async (_t, history) => (await builder.build({ scope: w.scope, task: userText(history) })).text || null,
    });
    writeRapJson(cwd, [
      { type: "toolset_server", server_url: chores.url },
      { type: "toolset_server", server_url: skillsServer.url },
    ]);
    const r = rng(7);

    /** one chore, driven by the scripted model; it follows an offered skill, else improvises */
    async function chore(i: number): Promise<{ s: string; usedSkill: string | null; done: boolean }> {
      const t = task(i);
      const s = await inf.createSession({ cwd, userId: "alice" });
      await inf.sendUserText(s, t.text);
      let round = await inf.model.nextRequest({ threadId: s, timeoutMs: 10_000 });
      const offered = round.request.preamble.includes(SKILLS_TITLE) ? /\n- ([a-z0-9-]+) \(v\d+\)/.exec(round.request.preamble.slice(round.request.preamble.indexOf(SKILLS_TITLE)))?.[1] ?? null : null;
      let plan: string[];
      let n = 0;
      if (offered) {
        round.sendToolCall(`${s}-v`, "skill_view", { name: offered }).finish();
        round = await inf.model.nextRequest({ threadId: s, timeoutMs: 10_000 });
        const body = lastText(round);
        plan = procedureOf({ body, allowedTools: [...TOOLS] });
      } else plan = naivePlan(r)[0]!;
      for (const tool of plan) {
        round.sendToolCall(`${s}-${++n}`, tool, { package: t.pkg, level: t.level, message: `release ${t.pkg}`, tag: `${t.pkg}-next` }).finish();
        round = await inf.model.nextRequest({ threadId: s, timeoutMs: 10_000 });
        if (/^Error/.test(lastText(round)) && (tool === "git_commit" || tool === "git_tag")) break;
      }
      const done = state.get(s)?.done ?? false;
      if (offered) {
        round.sendToolCall(`${s}-f`, "skill_feedback", { name: offered, outcome: done ? "pass" : "fail" }).finish();
        round = await inf.model.nextRequest({ threadId: s, timeoutMs: 10_000 });
      }
      round.sendText(done ? `Released ${t.pkg}.` : `Could not release ${t.pkg}.`).finish();
      await inf.waitIdle(s);
      return { s, usedSkill: offered, done };
    }

    try {
      const before = [];
      for (let i = 0; i < 12; i++) before.push(await chore(i));
      expect(before.every((x) => x.usedSkill === null)).toBe(true);
      await w.worker.drain();
      const made = (await w.evolution.run(true)).find((o) => o.requestId);
      expect(made, "a gated candidate with an approval request").toBeTruthy();
      expect((await w.evolution.report(made!.reportId!))!.passed).toBe(true);

      // the person approves through skill_review (RAP user_choice in the runtime)
      const s = await inf.createSession({ cwd, userId: "alice" });
      await inf.sendUserText(s, "Any learned skills to review?");
      let round = await inf.model.nextRequest({ threadId: s, timeoutMs: 10_000 });
      round.sendToolCall(`${s}-r`, "skill_review", {}).finish();
      const choice = await (async () => {
        for (let k = 0; k < 100; k++) {
          const [c] = await inf.pendingUserChoices(s);
          if (c) return c;
          await new Promise((res) => setTimeout(res, 20));
        }
        throw new Error("no user_choice");
      })();
      expect(choice.prompt).toMatch(/Publish the learned skill .* Evaluation \(replay:skill-following\)/);
      await inf.answerUserChoice(s, choice.id, 0);
      round = await inf.model.nextRequest({ threadId: s, timeoutMs: 10_000 });
      expect(lastText(round)).toMatch(/: approved/);
      round.sendText("Published.").finish();
      await inf.waitIdle(s);

      const after = [];
      for (let i = 20; i < 23; i++) after.push(await chore(i));
      expect(after.map((x) => [x.usedSkill, x.done])).toEqual(after.map(() => [made!.skillName, true]));
      const v = await w.skills.version(await w.skills.skill(made!.skillName));
      expect(v).toMatchObject({ status: "active", trials: 3, passes: 3 });
    } finally {
      await inf.shutdown();
      await chores.close({ graceMs: 500 });
      await skillsServer.close({ graceMs: 500 });
      w.close();
    }
  });
});

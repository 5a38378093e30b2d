// Rewards and value backup: verifiable outcomes, user reactions, explicit task_feedback (in the
// thread and late), and the LLM rubric at its low weight only when an LLM is configured.
import { describe, expect, it } from "vitest";
import { createFakeLlm } from "../../core/llm/fake.js";
import { noneLlm } from "../../core/llm/none.js";
import { backup, combine } from "../../core/learning/reward.js";
import { defaultConfig } from "../../core/config.js";
import { memoryToolset } from "../../toolsets/memory/tools.js";
import { tempDir } from "../helpers/tmp.js";
import { msg, openWorld, type World } from "./world.js";

const T = "thread-r";
const cfg = defaultConfig().learning;

async function failThenFix(w: World) {
  await w.append(T, [
    msg.user("Run the tests"),
    msg.call("c1", "shell", { cmd: "npx vitest run" }),
    msg.result("c1", " Test Files  1 failed (1)\n      Tests  2 failed | 5 passed (7)\nexit code: 1"),
    msg.text("Two tests fail in parser.test.ts."),
    msg.user("Fix them"),
    msg.call("c2", "edit_file", { path: "/work/proj-a/src/parser.ts", find: "<=", replace: "<" }),
    msg.result("c2", "edited 1 line"),
    msg.call("c3", "shell", { cmd: "npx vitest run" }),
    msg.result("c3", "      Tests  7 passed (7)\nexit code: 0"),
    msg.text("Fixed: all 7 tests pass."),
  ]);
  await w.worker.drain();
  return w.store.episodesOfThread("conversation", T);
}

describe("rewards and value backup", () => {
  it("a failing then passing test run: R > 0 for the fix episode, negative V on the failing steps", async () => {
    const w = openWorld(tempDir("learn-"));
    const [failing, fix] = await failThenFix(w);
    expect(failing!.reward).toBe(-1);
    const failSteps = await w.store.stepsOf(failing!.id);
    expect(failSteps.map((s) => [s.verdict, s.value])).toEqual([["fail", -1]]);

    expect(fix!.reward).toBe(1);
    expect(fix!.grounded).toBe(true);
    const fixSteps = await w.store.stepsOf(fix!.id);
    // V_T = R; V_t = α_t·R + (1 − α_t)·γ·V_{t+1} with α(ok) = 0.6, γ = 0.9
    expect(fixSteps.map((s) => s.value)).toEqual([0.6 * 1 + 0.4 * 0.9 * 1, 1]);
    const sig = await w.store.signalsOf(fix!.id);
    expect(sig.map((s) => [s.kind, s.source, s.value, s.weight])).toEqual([["outcome", "tool:shell", 1, cfg.weights.outcome]]);
  });

  it("a failure fixed inside one episode scores by the last verdict; tool errors weigh in", () => {
    const r = combine([
      { kind: "outcome", value: 1, weight: 0.8 },
      { kind: "tool_error", value: -0.5, weight: 0.3 },
    ]);
    expect(r.reward).toBeCloseTo((0.8 - 0.15) / 1.1, 10);
    const v = backup(
      [
        { idx: 0, outcome: "error" },
        { idx: 1, outcome: "ok" },
      ],
      -1,
      cfg,
    );
    // an erroring step takes a small share of R (α = 0.1), the rest from what followed
    expect(v.map((x) => x.alpha)).toEqual([0.1, 0.6]);
    expect(v[0]!.value).toBeCloseTo(0.1 * -1 + 0.9 * 0.9 * -1, 10);
    expect(combine([]).reward).toBeNull();
    expect(backup([{ idx: 0, outcome: "ok" }], null, cfg)[0]!.value).toBeNull();
  });

  it("a correction in the next user turn lowers R; an approval raises it", async () => {
    const w = openWorld(tempDir("learn-"));
    await w.append(T, [
      msg.user("Which port does the API use?"),
      msg.text("Port 8080."),
      msg.user("No, that's wrong, it is 9090 in staging."),
      msg.text("Noted, 9090."),
      msg.user("Perfect, thanks"),
    ]);
    await w.worker.drain();
    const [first, second] = await w.store.episodesOfThread("conversation", T);
    expect(first!.reward).toBe(-1);
    expect(second!.reward).toBe(1);
    expect((await w.store.signalsOf(first!.id)).map((s) => [s.kind, s.note])).toEqual([["user_reaction", "correction"]]);
  });

  it("skill_feedback inside an episode is an explicit signal at its own weight, not a step", async () => {
    const w = openWorld(tempDir("learn-"));
    await w.append(T, [
      msg.user("Deploy with the deploy skill"),
      msg.call("s1", "skill_get", { name: "deploy" }),
      msg.result("s1", "# deploy\n1. run make deploy"),
      msg.call("s2", "skill_feedback", { name: "deploy", outcome: "fail", note: "step 1 needs sudo" }),
      msg.result("s2", "Recorded a fail for deploy v1"),
      msg.text("The skill did not work as written."),
    ]);
    await w.worker.drain();
    const [ep] = await w.store.episodesOfThread("conversation", T);
    expect((await w.store.stepsOf(ep!.id)).map((s) => s.tool)).toEqual(["skill_get"]);
    expect((await w.store.signalsOf(ep!.id)).map((s) => [s.kind, s.source, s.value, s.weight, s.note])).toEqual([
      ["explicit", "skill_feedback:deploy", -1, cfg.weights.skillFeedback, "step 1 needs sudo"],
    ]);
    expect(ep!.reward).toBe(-1);
  });

  it("task_feedback changes R and the backed-up values, in the thread and late", async () => {
    const w = openWorld(tempDir("learn-"));
    const [, fix] = await failThenFix(w);
    const tools = memoryToolset({
      service: w.mem.service,
      toggles: w.mem.toggles,
      clock: w.mem.clock,
      localUser: "alice",
      projectOf: () => null,
      learning: w.service,
    });
    const feedbackTool = tools.tools.find((t) => t.name === "task_feedback")!;
    const ctx = (id: string) => ({ invocation: { id, group_id: T } }) as unknown as Parameters<typeof feedbackTool.handler>[1];

    // The user reacts in a new turn; the model rates the task before it.
    await w.append(T, [msg.user("Great, but it broke the linter"), msg.call("fb1", "task_feedback", { rating: -0.5, note: "linter broke" })]);
    const out = await feedbackTool.handler({ rating: -0.5, note: "linter broke" }, ctx("fb1"));
    expect(out.text).toMatch(/^Recorded rating -0\.50 for this task; it is applied/);
    await w.append(T, [msg.result("fb1", out.text), msg.text("Sorry, I will look at the linter.")]);
    await w.worker.drain();
    const rated = await w.service.view(fix!.id);
    const expected = (cfg.weights.outcome * 1 + cfg.weights.explicit * -0.5) / (cfg.weights.outcome + cfg.weights.explicit);
    expect(rated.episode.reward).toBeCloseTo(expected, 10);
    expect(rated.signals.map((s) => [s.kind, s.source])).toEqual([
      ["outcome", "tool:shell"],
      ["explicit", "task_feedback"],
    ]);
    expect(rated.steps.at(-1)!.value).toBeCloseTo(expected, 10);
    expect(rated.steps[0]!.value).toBeCloseTo(0.6 * expected + 0.4 * 0.9 * expected, 10);
    // the feedback turn itself did no work: it holds no steps and no feedback signal
    const last = (await w.store.episodesOfThread("conversation", T)).at(-1)!;
    expect(await w.store.stepsOf(last.id)).toEqual([]);
    expect((await w.store.signalsOf(last.id)).some((s) => s.kind === "explicit")).toBe(false);

    // Late feedback naming the episode re-scores it at once; a replayed call is counted once.
    const late = await feedbackTool.handler({ rating: 1, episode_id: fix!.id }, ctx("fb2"));
    const again = await feedbackTool.handler({ rating: 1, episode_id: fix!.id }, ctx("fb2"));
    expect(late.text).toMatch(new RegExp(`^Recorded rating 1\\.00 for episode ${fix!.id}: its reward is now`));
    expect(again.text).toMatch(/^Already recorded/);
    const after = await w.service.view(fix!.id);
    const expected2 = (0.8 * 1 + 1 * -0.5 + 1 * 1) / 2.8;
    expect(after.episode.reward).toBeCloseTo(expected2, 10);
    expect(after.steps.at(-1)!.value).toBeCloseTo(expected2, 10);
    expect(await feedbackTool.handler({ rating: 1, episode_id: "ep_nope" }, ctx("fb3")).catch((e: Error) => e.message)).toMatch(/no episode/);
  });

  it("with no LLM there is no rubric; with the fake LLM the rubric is added at its low weight and never grounds R alone", async () => {
    const none = openWorld(tempDir("learn-"), { llm: noneLlm });
    const [, fix0] = await failThenFix(none);
    expect((await none.store.signalsOf(fix0!.id)).some((s) => s.kind === "rubric")).toBe(false);
    expect(await none.store.events()).toEqual([]); // "none" is not a failure

    const fake = createFakeLlm({ learning_rubric: '{"score": -0.4, "reason": "the answer was terse"}', learning_candidates: '{"memories": []}' });
    const w = openWorld(tempDir("learn-"), { llm: fake });
    const [failing, fix] = await failThenFix(w);
    expect(fake.callsFor("learning_rubric")).toHaveLength(2);
    expect(fake.callsFor("learning_rubric")[1]!.prompt).toContain("Task: Fix them");
    const sig = await w.store.signalsOf(fix!.id);
    expect(sig.find((s) => s.kind === "rubric")).toMatchObject({ source: "llm:fake", value: -0.4, weight: cfg.weights.rubric });
    expect(fix!.reward).toBeCloseTo((0.8 * 1 + 0.15 * -0.4) / 0.95, 10);
    expect(failing!.grounded).toBe(true);

    // A chat with no verifiable outcome: the rubric alone sets R, but the episode is not grounded.
    await w.append("thread-chat", [msg.user("Tell me a joke"), msg.text("Why did the tree go to the dentist? Root canal.")]);
    await w.worker.drain();
    const [chat] = await w.store.episodesOfThread("conversation", "thread-chat");
    expect(chat!.reward).toBe(-0.4);
    expect(chat!.grounded).toBe(false);

    // A model that answers nonsense: the rubric is left out (an event says why), the rest stands.
    const bad = openWorld(tempDir("learn-"), { llm: createFakeLlm({ learning_rubric: "I think it went fine", learning_candidates: '{"memories": []}' }) });
    const [, fix2] = await failThenFix(bad);
    expect(fix2!.reward).toBe(1);
    expect((await bad.store.events({ kind: "rubric_failed" })).length).toBe(2);
  });
});

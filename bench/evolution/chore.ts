// A synthetic but realistic task family for the evolution loop: releasing a package. A small tool
// server of our own keeps per-task state and enforces what a real repository would:
//   bump_version → update_changelog → run_tests → git_commit → git_tag
// run_tests fails while the changelog lags the version, git_commit refuses untested changes,
// git_tag refuses an uncommitted tree. A scripted agent without a skill picks a plausible plan
// (sometimes wrong, sometimes fumbling and retrying); with a skill offered it follows the skill's
// numbered steps. Every task is written to the conversation store the way the runtime records it,
// so the learning loop sees exactly what it would see in production.
import { join } from "node:path";
import type { z } from "zod";
import { openMemory } from "../../cli/context.js";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig, type MemoryConfig } from "../../core/config.js";
import { EvolutionService } from "../../core/learning/evolution.js";
import { scopeResolver } from "../../core/learning/scope.js";
import { LearningService } from "../../core/learning/service.js";
import { procedureOf } from "../../core/learning/skill-draft.js";
import { LearningWorker } from "../../core/learning/worker.js";
import type { Llm } from "../../core/llm/types.js";
import type { RequestScope } from "../../core/memory/scope.js";
import { CatalogOffers } from "../../core/skills/offers.js";
import { SkillService } from "../../core/skills/service.js";
import { SqliteConversationStore } from "../../stores/sqlite/conversation-store.js";
import { SqliteEvolutionStore } from "../../stores/sqlite/evolution-store.js";
import { SqliteLearningStore } from "../../stores/sqlite/learning-store.js";
import { SqliteSkillStore } from "../../stores/sqlite/skill-store.js";
import type { InfinityMessage } from "../../stores/traits.js";

export const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);
export const TOOLS = ["bump_version", "update_changelog", "run_tests", "git_commit", "git_tag"] as const;
export const CORRECT: string[] = [...TOOLS];

export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** One task's repository state behind the tools. */
export class ChoreServer {
  private version = 0;
  private changelogAt = 0;
  private testedAt = -1;
  private committed = false;
  tagged = false;
  testsPassed = false;

  call(tool: string, args: Record<string, unknown>): { text: string; error: boolean } {
    switch (tool) {
      case "bump_version":
        this.version++;
        this.committed = false;
        return { text: `version of ${String(args.package)} bumped (${String(args.level)})`, error: false };
      case "update_changelog":
        this.changelogAt = this.version;
        this.committed = false;
        return { text: `CHANGELOG.md updated for ${String(args.package)}`, error: false };
      case "run_tests":
        if (this.changelogAt < this.version) {
          this.testsPassed = false;
          return { text: "Tests: 1 failed | 11 passed (12)\nchangelog check: missing entry for the new version\nexit code: 1", error: true };
        }
        this.testedAt = this.version;
        this.testsPassed = true;
        return { text: "Tests: 12 passed (12)\nexit code: 0", error: false };
      case "git_commit":
        if (this.testedAt < this.version) return { text: "Error: pre-commit hook: the tests have not passed on this change", error: true };
        this.committed = true;
        return { text: "committed 4f2a9c1", error: false };
      case "git_tag":
        if (!this.committed) return { text: "Error: refusing to tag: uncommitted changes\nexit code: 1", error: true };
        this.tagged = true;
        return { text: `tagged ${String(args.tag)}\nexit code: 0`, error: false };
      default:
        return { text: `Error: unknown tool ${tool}`, error: true };
    }
  }

  get done(): boolean {
    return this.tagged && this.testsPassed;
  }
}

const PACKAGES = ["alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "theta", "lambda", "zeta"];
const LEVELS = ["minor", "patch", "major"];

export interface ChoreTask {
  text: string;
  pkg: string;
  level: string;
}

export function task(i: number): ChoreTask {
  const pkg = PACKAGES[i % PACKAGES.length]!;
  const level = LEVELS[i % LEVELS.length]!;
  return { text: `Release the ${pkg} package with a ${level} version bump`, pkg, level };
}

function argsFor(tool: string, t: ChoreTask): Record<string, unknown> {
  switch (tool) {
    case "bump_version":
      return { package: t.pkg, level: t.level };
    case "update_changelog":
      return { package: t.pkg };
    case "run_tests":
      return { package: t.pkg };
    case "git_commit":
      return { message: `release ${t.pkg}` };
    case "git_tag":
      return { tag: `${t.pkg}-v${t.level}` };
    default:
      return {};
  }
}

/** The agent without a skill: plausible plans, some wrong (no changelog, no tests), one fumbling. */
export function naivePlan(r: () => number): string[][] {
  const x = r();
  if (x < 0.35) return [CORRECT];
  if (x < 0.55) return [["bump_version", "run_tests", "git_commit", "git_tag"]];
  if (x < 0.75) return [["bump_version", "update_changelog", "git_commit", "git_tag"]];
  // fumble: tests before the changelog, then recover
  return [["bump_version", "run_tests", "update_changelog", "run_tests", "git_commit", "git_tag"]];
}

export interface RunResult {
  success: boolean;
  steps: number;
  usedSkill: string | null;
}

export function openChoreWorld(dir: string, opts: { config?: z.input<typeof MemoryConfig>; llm?: Llm | null } = {}) {
  const clock = fixedClock(T0);
  const config = defaultConfig({ localUser: "alice", ...opts.config });
  const ctx = openMemory({ dbPath: join(dir, "memory.db"), config, clock, env: {} });
  const conv = new SqliteConversationStore(ctx.db);
  const learningStore = new SqliteLearningStore(ctx.db);
  const learning = new LearningService({
    store: learningStore,
    memory: ctx.store,
    config,
    clock,
    conversation: conv,
    traces: null,
    scopeOf: scopeResolver({ localUser: "alice", projectOf: () => "/work/app" }),
    llm: null,
  });
  const worker = new LearningWorker(learning, config.learning.worker, clock);
  const skillStore = new SqliteSkillStore(ctx.db);
  const skills = new SkillService(skillStore, clock, config);
  const evolutionStore = new SqliteEvolutionStore(ctx.db);
  const evolution = new EvolutionService({ store: evolutionStore, learning: learningStore, skills, config, clock, llm: opts.llm ?? null });
  const offers = new CatalogOffers(skills);
  const scope: RequestScope = { user: "alice", project: "/work/app", session: "root", thread: "root", ancestors: [] };
  let threads = 0;

  /** Run one task: the agent asks the prefix for skills, follows one when offered, else improvises. */
  async function runTask(t: ChoreTask, r: () => number, o: { skills?: boolean; feedback?: boolean } = {}): Promise<RunResult> {
    const offered = o.skills === false ? [] : await offers.offer(scope, t.text, config.skills.prefixOffers);
    const skill = offered[0] ?? null;
    let plan: string[];
    if (skill) {
      const v = await skills.view(scope, skill.name);
      plan = procedureOf({ body: v.version.body, allowedTools: v.version.allowedTools });
    } else plan = naivePlan(r)[0]!;
    const server = new ChoreServer();
    const thread = `chore-${++threads}`;
    const msgs: InfinityMessage[] = [{ kind: "user", content: { type: "text", text: t.text } }];
    let n = 0;
    for (const tool of plan) {
      const id = `${thread}-c${++n}`;
      const res = server.call(tool, argsFor(tool, t));
      msgs.push({ kind: "tool_call", call: { id, call_id: null, function: { name: tool, arguments: argsFor(tool, t) }, signature: null, additional_params: null } });
      msgs.push({ kind: "tool_result", result: { id, call_id: null, content: [{ type: "text", text: res.text }] } });
      // a commit or tag refused: the naive agent stops there
      if (res.error && (tool === "git_commit" || tool === "git_tag")) break;
    }
    msgs.push({ kind: "assistant", content: { text: server.done ? `Released ${t.pkg}.` : `Could not release ${t.pkg}.` } });
    await conv.ensureRootThread(thread);
    await conv.appendMessages(thread, msgs.map((m, i) => [m, `${thread}-m${i}`] as const));
    if (skill && o.feedback !== false) await skills.feedback(skill.name, undefined, { passed: server.done }, thread, "bench:agent");
    clock.advance(60_000);
    return { success: server.done, steps: n, usedSkill: skill?.name ?? null };
  }

  return { ctx, clock, config, conv, learning, learningStore, worker, skills, skillStore, evolution, evolutionStore, offers, scope, runTask, close: () => ctx.close() };
}

export type ChoreWorld = ReturnType<typeof openChoreWorld>;

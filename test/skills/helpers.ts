// A skills RAP server on a temp database with a real callback listener, and a caller that sends
// the daemon's exact invocation JSON and waits for the tool_result.
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { expect } from "vitest";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import { openMemory, type MemoryContext } from "../../cli/context.js";
import { openSkills, type SkillsContext } from "../../cli/skills-context.js";
import { startRapServer } from "../../toolsets/rap/server.js";
import { skillsToolset } from "../../toolsets/skills/tools.js";
import type { SkillStore } from "../../stores/traits.js";
import { postJson, startCallbackSink, type CallbackSink } from "../helpers/callback-sink.js";
import { runCli } from "../helpers/cli.js";
import { T0 } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

export interface SkillsServer {
  ctx: MemoryContext;
  skills: SkillsContext;
  sink: CallbackSink;
  base: string;
  endpoint: string;
  close(): Promise<void>;
}

export async function startSkillsServer(dir: string): Promise<SkillsServer> {
  const ctx = openMemory({ dbPath: join(dir, "memory.db"), config: defaultConfig({ localUser: "alice" }), clock: fixedClock(T0), env: {} });
  const skills = openSkills(ctx);
  const sink = await startCallbackSink();
  const toolset = skillsToolset({ service: skills.service, toggles: ctx.toggles, localUser: "alice", projectOf: () => "/work/app" });
  const server = await startRapServer({ toolset, db: ctx.db, host: "127.0.0.1", port: 0, logger: pino({ level: "silent" }) });
  const base = `http://127.0.0.1:${server.port}`;
  return {
    ctx,
    skills,
    sink,
    base,
    endpoint: `${base}/invoke`,
    close: async () => {
      await server.close({ graceMs: 1000 });
      await sink.close();
      ctx.close();
    },
  };
}

/** what a call needs: where to invoke and where its callbacks arrive */
export type RapCaller = Pick<SkillsServer, "sink" | "endpoint">;

let n = 0;
export const nextId = () => `tooluse_${++n}_${Math.random().toString(36).slice(2, 8)}`;

export interface CallOpts {
  group?: string;
  ancestors?: string[] | null;
  user?: string;
  id?: string;
}

export const ROOT = "6f1c2c7e-5b7e-4d0b-9a57-2b0c1d7f9e11";

/** Invoke a tool exactly as the daemon serializes it and wait for its tool_result. */
export async function call(r: RapCaller, operation: string, args: unknown, o: CallOpts = {}): Promise<string> {
  const id = o.id ?? nextId();
  const group = o.group ?? ROOT;
  const body =
    `{"operation":${JSON.stringify(operation)},"arguments":${JSON.stringify(args)},"id":${JSON.stringify(id)},"call_id":null,` +
    `"callback_url":${JSON.stringify(r.sink.url)},"group_id":${JSON.stringify(group)}` +
    (o.user !== undefined ? `,"user_id":${JSON.stringify(o.user)}` : "") +
    `,"thread_ancestors":${JSON.stringify(o.ancestors ?? null)}}`;
  const ack = await postJson(r.endpoint, body);
  expect(ack.status).toBe(200);
  const result = await r.sink.next((b) => b.type === "tool_result" && b.id === id);
  return result.text as string;
}

/** Start a call that will ask the person, answer its user_choice(s) in order, return the result and prompts. */
export async function callAnswering(r: RapCaller, operation: string, args: unknown, answers: number[], o: CallOpts = {}): Promise<{ text: string; prompts: string[]; choices: unknown[] }> {
  const id = nextId();
  const pending = call(r, operation, args, { ...o, id });
  const prompts: string[] = [];
  const choices: unknown[] = [];
  for (const a of answers) {
    const seen = prompts.length;
    const choice = await r.sink.next((b) => b.type === "user_choice" && b.id === id && r.sink.bodies.filter((x) => x.type === "user_choice" && x.id === id).indexOf(b) === seen);
    prompts.push(choice.prompt as string);
    choices.push(choice.choices);
    expect((await postJson(choice.response_url as string, { id, selected: a })).status).toBe(200);
  }
  return { text: await pending, prompts, choices };
}

export function skillMd(name: string, description: string, body: string, extra = ""): string {
  return `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n${extra}---\n\n${body}\n`;
}

const FIXTURES = resolve(fileURLToPath(import.meta.url), "../../fixtures/skills");

/**
 * k8s-rollout (the hermes fixture) with v1 published and v2 a candidate, made through the CLI, and
 * its database open in this process: the world of the tests that race a decision here against the
 * CLI (`skills(...args)`), another process on the same file.
 */
export function k8sRolloutWorld() {
  const dir = tempDir();
  const db = join(dir, "m.db");
  const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" };
  const skills = (...args: string[]) => runCli(["skills", ...args, "--db", db], env);
  cpSync(join(FIXTURES, "hermes"), join(dir, "src"), { recursive: true });
  expect(skills("import", join(dir, "src")).stdout).toContain("1 imported as candidates");
  expect(skills("approve", "k8s-rollout").stdout).toBe("Published k8s-rollout v1.\n");
  const file = join(dir, "src", "devops", "k8s-rollout", "SKILL.md");
  writeFileSync(file, readFileSync(file, "utf8").replace("--timeout=5m", "--timeout=10m"));
  expect(skills("import", join(dir, "src")).stdout).toContain("1 imported as candidates");
  const ctx = openMemory({ dbPath: db, config: defaultConfig({ localUser: "alice" }), clock: fixedClock(T0), env: {} });
  /** the skill service over this store (paused where the test says) */
  const serviceOver = (store: SkillStore, config = ctx.config) => openSkills({ backend: { skills: store, evolution: ctx.backend.evolution }, clock: ctx.clock, config }).service;
  const versions = async () => Object.fromEntries((await ctx.backend.skills.versionsOf((await ctx.backend.skills.skillByName("k8s-rollout"))!.id)).map((v) => [`v${v.seq}`, v]));
  return { dir, db, env, ctx, skills, serviceOver, versions, close: () => ctx.close() };
}

// Shared setup for the harness tests: temp project/home directories, rap.json writers, and a
// MockInfinity that is shut down (servers SIGINTed) after each test.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach } from "vitest";
import { tempDir } from "../helpers/tmp.js";
import type { ToolSetConfig } from "../harness/rap-config.js";
import { killAllCommandServers, MockInfinity, type MockInfinityOptions } from "../harness/runtime.js";
import type { ModelRound } from "../harness/model.js";

export interface Harness {
  inf: MockInfinity;
  /** the session's working directory (project) */
  cwd: string;
  /** the daemon's ~/.infinity */
  home: string;
}

const started: MockInfinity[] = [];
afterEach(async () => {
  for (const inf of started.splice(0)) await inf.shutdown();
  killAllCommandServers();
});

export function writeRapJson(dir: string, toolSets: Partial<ToolSetConfig>[], file = join(dir, ".infinity", "rap.json")): void {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, JSON.stringify({ tool_sets: toolSets }));
}

export async function startHarness(opts: MockInfinityOptions = {}): Promise<Harness> {
  const cwd = tempDir("harness-cwd-");
  const home = tempDir("harness-home-");
  const inf = await MockInfinity.start({ infinityHome: home, streamRetryDelayMs: 10, ...opts });
  started.push(inf);
  return { inf, cwd, home };
}

/** Track a MockInfinity created outside startHarness so it is shut down after the test. */
export function track(inf: MockInfinity): MockInfinity {
  started.push(inf);
  return inf;
}

/** Text of the last message of a request's chat history (a tool result's first text, or user text). */
export function lastText(round: ModelRound): string {
  const last = round.request.chat_history[round.request.chat_history.length - 1];
  if (!last) return "";
  const c = last.content[0] as { type?: string; text?: string; content?: { text?: string }[] } | undefined;
  if (c?.type === "toolresult") return c.content?.[0]?.text ?? "";
  return c?.text ?? "";
}

/** The child id out of spawn_thread's parent result text. */
export function spawnedChildId(text: string): string {
  const m = /has ID: ([0-9a-f-]{36})\./.exec(text);
  if (!m) throw new Error(`no child id in: ${text}`);
  return m[1]!;
}

// `npm run demo`: a scripted multi-session story through the mock Infinity runtime, with a real
// memory command server per session (as the daemon runs it) and the context hook in the
// runtime's prompt-prefix seam. Everything lives in a temporary directory that is removed after.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { openMemory } from "../../cli/context.js";
import { defaultConfig } from "../../core/config.js";
import { MemoryPrefixBuilder } from "../../core/retrieval/prefix.js";
import { loadTokenCounter } from "../../core/retrieval/tokens.js";
import { inProcessPromptPrefix } from "../../context-hook/in-process.js";
import { SessionsReader } from "../../stores/infinity-files/sessions.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteConversationStore } from "../../stores/sqlite/conversation-store.js";
import { SqliteStateStore } from "../../stores/sqlite/state-store.js";
import { writeFileSync, mkdirSync } from "node:fs";
import { MockInfinity, killAllCommandServers } from "./runtime.js";
import type { ModelRound } from "./model.js";

const CLI = resolve(fileURLToPath(import.meta.url), "../../../cli/main.js");
const out = (s = "") => process.stdout.write(`${s}\n`);
const indent = (s: string, pad = "      ") => s.replace(/\n/g, `\n${pad}`);

function lastToolText(r: ModelRound): string {
  const last = r.request.chat_history.at(-1);
  const c = last?.content[0] as { type?: string; content?: { text?: string }[] } | undefined;
  return c?.type === "toolresult" ? (c.content?.[0]?.text ?? "") : "";
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "infinity-memory-demo-"));
  const dataHome = join(root, "memory");
  const project = join(root, "shop-api");
  const home = join(root, "infinity-home");
  mkdirSync(join(project, ".infinity"), { recursive: true });
  const memDb = join(dataHome, "memory.db");
  const convPath = join(root, "conversations.db");
  writeFileSync(
    join(project, ".infinity", "rap.json"),
    JSON.stringify({
      tool_sets: [
        {
          type: "toolset_command",
          id: "infinity-memory",
          command: `exec "${process.execPath}" "${CLI}" serve --toolset memory --db "${memDb}" --sessions-from "sqlite:${convPath}"`,
        },
      ],
    }),
  );
  const mem = openMemory({ dbPath: memDb, config: defaultConfig({ localUser: "ana" }), env: {} });
  const builder = new MemoryPrefixBuilder({
    service: mem.service,
    toggles: mem.toggles,
    edgesOf: (id) => mem.store.edgesOf(id),
    tokens: await loadTokenCounter("o200k_base"),
    config: mem.config,
  });
  const convDb = openDatabase(convPath);
  const conversation = new SqliteConversationStore(convDb);
  const state = new SqliteStateStore(convDb);
  const sessions = new SessionsReader(home);
  let lastPrefix = "";
  const hook = inProcessPromptPrefix({ builder, conversation, state, cwdOf: (r) => sessions.cwdOf(r), localUser: "ana" });
  const inf = await MockInfinity.start({
    infinityHome: home,
    conversationStore: conversation,
    stateStore: state,
    serverEnv: { ...process.env, INFINITY_MEMORY_HOME: dataHome },
    streamRetryDelayMs: 10,
    promptPrefix: async (threadId, history) => {
      const p = await hook(threadId, history);
      lastPrefix = p ?? "";
      return p;
    },
  });

  let calls = 0;
  const say = async (session: string, who: string, text: string) => {
    out(`  ${who}: ${text}`);
    await inf.sendUserText(session, text);
  };
  const next = async (session: string): Promise<ModelRound> => {
    const r = await inf.model.nextRequest({ threadId: session, timeoutMs: 30_000 });
    if (lastPrefix) {
      out(`      [context hook put ${lastPrefix.split("\n").filter((l) => l.startsWith("- ")).length} recalled note(s) in front of the preamble]`);
      for (const l of lastPrefix.split("\n").filter((x) => x.startsWith("- "))) out(`        ${l}`);
      lastPrefix = "";
    }
    return r;
  };
  const tool = async (session: string, r: ModelRound, name: string, args: Record<string, unknown>): Promise<ModelRound> => {
    out(`  model → ${name} ${JSON.stringify(args)}`);
    r.sendToolCall(`tooluse_demo_${++calls}`, name, args).finish();
    const n = await next(session);
    out(`  tool  ← ${indent(lastToolText(n))}`);
    return n;
  };
  const reply = async (session: string, r: ModelRound, text: string) => {
    out(`  model: ${text}`);
    r.sendText(text).finish();
    await inf.waitIdle(session);
  };

  try {
    out("infinity-memory demo: three sessions of one user in one project, then another user\n");

    out("Session 1 (ana): she states preferences; the model stores them");
    const s1 = await inf.createSession({ cwd: project, userId: "ana" });
    await say(s1, "ana", "For this repo: we deploy with helm on Fridays, and I want TypeScript with tabs, never spaces.");
    let r = await next(s1);
    r = await tool(s1, r, "memory_remember", { content: "The shop-api project deploys with helm on Fridays", kind: "project", user_stated: true });
    r = await tool(s1, r, "memory_remember", { content: "Ana wants TypeScript indented with tabs, never spaces", kind: "preference", user_stated: true });
    await reply(s1, r, "Noted both.");

    out("\nSession 2 (ana): the context hook recalls what fits the task before any tool call");
    const s2 = await inf.createSession({ cwd: project, userId: "ana" });
    await say(s2, "ana", "Write the CI job that deploys shop-api with helm.");
    r = await next(s2);
    r = await tool(s2, r, "memory_search", { query: "deploy helm schedule" });
    await say(s2, "ana", "Actually we moved deploys to Thursdays.");
    r = await next(s2);
    const found = /mem_[0-9a-z]+/.exec(lastToolText(r) || "")?.[0];
    const search = await tool(s2, r, "memory_search", { query: "deploys helm Fridays" });
    const id = /mem_[0-9a-z]+/.exec(lastToolText(search))?.[0] ?? found!;
    r = await tool(s2, search, "memory_update", { id, content: "The shop-api project deploys with helm on Thursdays", user_stated: true });
    await reply(s2, r, "Updated: deploys are on Thursdays now; the old version stays in history.");

    out("\nSession 3 (ana): searching past conversations, then forgetting a preference everywhere");
    const s3 = await inf.createSession({ cwd: project, userId: "ana" });
    await say(s3, "ana", "What did I say about indentation before? And then forget it, I changed my mind.");
    r = await next(s3);
    r = await tool(s3, r, "session_search", { query: "TypeScript tabs spaces", window: 0 });
    r.sendToolCall("tooluse_demo_forget", "memory_forget", { query: "TypeScript tabs indentation" }).finish();
    out(`  model → memory_forget {"query":"TypeScript tabs indentation"}`);
    const [choice] = await waitForChoice(inf, s3);
    out(`  [the server asks the person through RAP user_choice]\n      ${indent(choice!.prompt)}\n      choices: ${choice!.choices.join(" / ")}`);
    out(`  ana picks: ${choice!.choices[0]}`);
    await inf.answerUserChoice(s3, choice!.id, 0);
    r = await next(s3);
    out(`  tool  ← ${indent(lastToolText(r))}`);
    r = await tool(s3, r, "memory_search", { query: "TypeScript tabs indentation" });
    // the forget cascades into the session index: the turn that stated it and the messages quoting it
    r = await tool(s3, r, "session_search", { query: "TypeScript tabs spaces", window: 0 });
    await reply(s3, r, "Forgotten, here and in past conversations.");

    out("\nSession 4 (ben, same project): another user sees none of ana's memories");
    const s4 = await inf.createSession({ cwd: project, userId: "ben" });
    await say(s4, "ben", "How do we deploy shop-api?");
    r = await next(s4);
    r = await tool(s4, r, "memory_search", { query: "deploy helm shop-api" });
    await reply(s4, r, "I have no notes on that yet.");

    out("\nWhat is stored now (ana):");
    for await (const rec of mem.service.exportAll({ owner: "ana" })) {
      out(`  ${rec.id} v${rec.version} [${rec.status}] ${rec.kind}/${rec.scope.level}: ${rec.content}`);
    }
  } finally {
    await inf.shutdown();
    killAllCommandServers();
    mem.close();
    convDb.close();
    rmSync(root, { recursive: true, force: true });
  }
}

async function waitForChoice(inf: MockInfinity, session: string) {
  for (let i = 0; i < 300; i++) {
    const pending = await inf.pendingUserChoices(session);
    if (pending.length > 0) return pending;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no user choice arrived");
}

main().catch((e: unknown) => {
  process.stderr.write(`demo failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = 1;
});

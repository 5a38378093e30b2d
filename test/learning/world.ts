// A learning test world: one SQLite file holding the memory store, an Infinity conversation
// store (what the harness and the daemon's SQLite store write) and the learning tables; and for
// the upgrade tests, a daemon home on disk with one thread, opened again as the next version.
import type { Llm } from "../../core/llm/types.js";
import { LearningService } from "../../core/learning/service.js";
import { LearningWorker } from "../../core/learning/worker.js";
import type { z } from "zod";
import { defaultConfig, type MemoryConfig } from "../../core/config.js";
import { scopeResolver } from "../../core/learning/scope.js";
import { SqliteConversationStore } from "../../stores/sqlite/conversation-store.js";
import { SqliteLearningStore } from "../../stores/sqlite/learning-store.js";
import { SqliteTraceFeed } from "../../stores/sqlite/learning-trace-feed.js";
import { SqliteTraceStore } from "../../stores/sqlite/trace-store.js";
import type { ConversationReader, InfinityMessage, MemoryStore } from "../../stores/traits.js";
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { openSources } from "../../cli/sessions.js";
import { CLI } from "../helpers/cli.js";
import { openTestMemory } from "../helpers/memory.js";
import { olderReader } from "../helpers/paused-reader.js";
import { copiedHome } from "../helpers/session-home.js";

export const msg = {
  user: (text: string): InfinityMessage => ({ kind: "user", content: { type: "text", text } }),
  text: (text: string): InfinityMessage => ({ kind: "assistant", content: { text } }),
  call: (id: string, name: string, args: unknown): InfinityMessage => ({
    kind: "tool_call",
    call: { id, call_id: null, function: { name, arguments: args }, signature: null, additional_params: null },
  }),
  result: (id: string, text: string): InfinityMessage => ({ kind: "tool_result", result: { id, call_id: null, content: [{ type: "text", text }] } }),
};

export function openWorld(dir: string, opts: { llm?: Llm | null; config?: z.input<typeof MemoryConfig>; conversation?: boolean } = {}) {
  const mem = openTestMemory(dir);
  const config = defaultConfig({ localUser: "alice", ...opts.config });
  const conv = new SqliteConversationStore(mem.db);
  const store = new SqliteLearningStore(mem.db);
  const service = new LearningService({
    store,
    memory: mem.store,
    config,
    clock: mem.clock,
    conversation: opts.conversation === false ? null : conv,
    traces: { feed: new SqliteTraceFeed(mem.db), store: new SqliteTraceStore(mem.db) },
    scopeOf: scopeResolver({ localUser: "alice", projectOf: () => "/work/proj-a" }),
    llm: opts.llm ?? null,
  });
  const worker = new LearningWorker(service, config.learning.worker, mem.clock);
  /** append messages to a thread; ids are `${thread}-m${ord}` */
  const append = async (thread: string, msgs: InfinityMessage[]) => {
    await conv.ensureRootThread(thread);
    const start = await conv.loadHistoryUpTo(thread).then((h) => h.length);
    await conv.appendMessages(thread, msgs.map((m, i) => [m, `${thread}-m${start + i}`] as const));
  };
  return { mem, conv, store, service, worker, config, append };
}

export type World = ReturnType<typeof openWorld>;

/**
 * A memory server as the daemon starts one, learning from the daemon home `home` every 50 ms; its
 * database and log in `dir`. Resolves once it listens.
 */
export async function serveLearningFrom(dir: string, home: string): Promise<{ child: ChildProcess; exited: Promise<number | null>; log: string }> {
  writeFileSync(join(dir, "config.json"), JSON.stringify({ learning: { worker: { intervalMs: 50 } } }));
  const log = join(dir, "serve.log");
  const child = spawn(
    process.execPath,
    [CLI, "serve", "--toolset", "memory", "--port", "0", "--db", join(dir, "memory.db"), "--sessions-from", `infinity-home:${home}`, "--log", log],
    { env: { ...process.env, INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" }, stdio: ["ignore", "pipe", "inherit"] },
  );
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  await new Promise<void>((res) => createInterface({ input: child.stdout! }).on("line", (l) => /listening on/.test(l) && res()));
  return { child, exited, log };
}

/** A learning worker over a test memory and a conversation reader (alice, project /work/proj-a). */
export function learnerOver(
  m: ReturnType<typeof openTestMemory>,
  reader: ConversationReader,
  opts: { config?: MemoryConfig; memory?: MemoryStore } = {},
) {
  const config = opts.config ?? defaultConfig({ localUser: "alice" });
  const store = new SqliteLearningStore(m.db);
  const service = new LearningService({ store, memory: opts.memory ?? m.store, config, clock: m.clock, conversation: reader, scopeOf: scopeResolver({ localUser: "alice", projectOf: () => "/work/proj-a" }) });
  return { store, service, worker: new LearningWorker(service, config.learning.worker, m.clock) };
}

/** the fixture home's local session: the thread `threadOnDisk` writes */
export const SESSION = "0f6b3c9a-1d7e-4f25-8b4a-6e9c2d1f7a35";

type LearnerOpts = Parameters<typeof learnerOver>[2];

/**
 * A thread whose m2 an older version may not read: "I prefer tabs." (m3) is then in the episode
 * m0 opens, and in the one m2 opens once it is read.
 */
export const TABS_AFTER_LAYOUT: [InfinityMessage, string][] = [
  [msg.user("Run the tests."), "m0"],
  [msg.text("All 4 pass."), "m1"],
  [msg.user("Here is the new layout."), "m2"],
  [msg.user("I prefer tabs."), "m3"],
  [msg.text("Noted."), "m4"],
];

/**
 * The daemon's files on disk and a SQLite file, as the upgrade tests run them: a copy of the
 * fixture home whose thread SESSION holds `messages` ([message, id] pairs), the memory database
 * beside it and the home's reader. `upgrade()` closes both and opens them again over the same
 * database and files, as the next version's process would.
 */
export function threadOnDisk(messages: [InfinityMessage, string][]) {
  const { dir, home, m, src } = copiedHome();
  writeFileSync(join(home, "threads", `${SESSION}.json`), JSON.stringify({ messages, compaction_summaries: [] }, null, 2));
  const reader = src.sources[0]!.reader;
  return {
    m,
    reader,
    /** a learner of an older version: the messages `hidden` are of a form it does not read */
    olderLearner: (hidden: string[], opts?: LearnerOpts) => learnerOver(m, olderReader(reader, new Set(hidden)), opts),
    upgrade: () => {
      src.close();
      m.close();
      const m2 = openTestMemory(dir);
      const src2 = openSources([`infinity-home:${home}`], m2.db, m2.dbPath);
      const reader2 = src2.sources[0]!.reader;
      return {
        m: m2,
        learner: (opts?: LearnerOpts) => learnerOver(m2, reader2, opts),
        close: () => {
          src2.close();
          m2.close();
        },
      };
    },
  };
}

/** the pending memories' texts, sorted */
export const pendingContents = (m: ReturnType<typeof openTestMemory>) =>
  (m.db.prepare(`SELECT content FROM memories WHERE status = 'pending' ORDER BY content`).all() as { content: string }[]).map((r) => r.content);

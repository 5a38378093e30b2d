// A learning worker in its own process, for the kill-and-resume test: processes the queue of
// the database named on the command line, printing one line per thread and pausing after each,
// so the parent can SIGKILL it mid-queue. argv: <db> <clockMs> <leaseMs> <pauseMs>
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import { LearningService } from "../../core/learning/service.js";
import { LearningWorker } from "../../core/learning/worker.js";
import { scopeResolver } from "../../core/learning/scope.js";
import { openMemory } from "../../cli/context.js";
import { SqliteConversationStore } from "../../stores/sqlite/conversation-store.js";
import { SqliteLearningStore } from "../../stores/sqlite/learning-store.js";

const [dbPath, clockMs, leaseMs, pauseMs] = process.argv.slice(2);
const clock = fixedClock(Number(clockMs));
const config = defaultConfig({ localUser: "alice", learning: { worker: { leaseMs: Number(leaseMs), batch: 100 } } });
const ctx = openMemory({ dbPath: dbPath!, config, clock, env: {} });
const service = new LearningService({
  store: new SqliteLearningStore(ctx.db),
  memory: ctx.store,
  config,
  clock,
  conversation: new SqliteConversationStore(ctx.db),
  scopeOf: scopeResolver({ localUser: "alice" }),
});
const worker = new LearningWorker(service, config.learning.worker, clock, null, {
  afterThread: async (item) => {
    process.stdout.write(`processed ${item.threadId}\n`);
    await new Promise((r) => setTimeout(r, Number(pauseMs)));
  },
});
await worker.drain();
process.stdout.write("done\n");
ctx.close();

// A process that approves one skill request and dies (SIGKILL) right after its claim, before the
// request's action (or, with "before-finish", after the action, before the decision is recorded):
// the crash the approval's "approving" status must survive. argv: <db> <request> [before-finish]
import { openMemory } from "../../cli/context.js";
import { thisProcess } from "../../cli/process-ids.js";
import { openSkills } from "../../cli/skills-context.js";
import { defaultConfig } from "../../core/config.js";
import { EvolutionService } from "../../core/learning/evolution.js";
import type { EvolutionStore } from "../../stores/traits.js";

const [db, request, when] = process.argv.slice(2);
const ctx = openMemory({ dbPath: db!, config: defaultConfig({ localUser: "alice" }), env: {} });
const store = new Proxy(ctx.backend.evolution, {
  get(t, prop, receiver) {
    const v = Reflect.get(t, prop, receiver) as unknown;
    if (typeof v !== "function") return v;
    if (when === "before-finish" && prop === "finishApproval") {
      return () => {
        process.stdout.write("dying before finishing\n");
        process.kill(process.pid, "SIGKILL");
      };
    }
    if (prop !== "claimApproval") return v.bind(t);
    return async (...args: Parameters<EvolutionStore["claimApproval"]>) => {
      const won = await t.claimApproval(...args);
      process.stdout.write(`${JSON.stringify({ claimed: won })}\n`);
      if (won && when !== "before-finish") process.kill(process.pid, "SIGKILL");
      return won;
    };
  },
});
const evo = new EvolutionService({ store, learning: ctx.backend.learning, skills: openSkills(ctx).service, config: ctx.config, clock: ctx.clock, llm: null, processes: thisProcess });
await evo.approve(request!, "cli:alice");
process.stdout.write("approved without dying\n");

// A process that runs one evolution pass over a chore world and dies (SIGKILL) just before one
// store call: the crash a candidate skill must survive. argv: <dir> <"skills"|"evolution"> <method>
import { openChoreWorld } from "../../bench/evolution/chore.js";
import { EvolutionService } from "../../core/learning/evolution.js";
import { SkillService } from "../../core/skills/service.js";

const [dir, storeName, method] = process.argv.slice(2);
const w = openChoreWorld(dir!);
/** the store, dying at the first call of `method` */
function dying<T extends object>(inner: T, name: string): T {
  if (name !== storeName) return inner;
  return new Proxy(inner, {
    get(t, prop, receiver) {
      const v = Reflect.get(t, prop, receiver) as unknown;
      if (typeof v !== "function") return v;
      if (prop !== method) return v.bind(t);
      return () => {
        process.stdout.write(`dying at ${storeName}.${method}\n`);
        process.kill(process.pid, "SIGKILL");
      };
    },
  });
}
const skills = new SkillService(dying(w.skillStore, "skills"), w.clock, w.config);
const evo = new EvolutionService({ store: dying(w.evolutionStore, "evolution"), learning: w.learningStore, skills, config: w.config, clock: w.clock, llm: null });
await evo.run(true);
process.stdout.write("ran without dying\n");

// The evolution loop on a schedule inside `serve`: the crystallizer every `evolution.intervalMs`
// (policy recomputation is debounced inside), the curator every `evolution.curator.intervalMs`.
// Passes never overlap; a failing pass is logged and the next one runs on time.
import { EvolutionService, type EvolutionDeps } from "./evolution.js";

export interface EvolutionLog {
  info(o: object, msg: string): void;
  warn(o: object, msg: string): void;
}

export function startEvolution(deps: EvolutionDeps, log: EvolutionLog | null = null): { service: EvolutionService; stop(): Promise<void> } {
  const service = new EvolutionService(deps);
  const cfg = deps.config.evolution;
  let running: Promise<void> | null = null;
  const guarded = (what: string, fn: () => Promise<unknown>) => () => {
    if (running) return;
    running = fn()
      .then((r) => {
        if (Array.isArray(r) && r.length > 0) log?.info({ [what]: r.length }, `evolution ${what}`);
      })
      .catch((e: unknown) => log?.warn({ err: e }, `evolution ${what} failed`))
      .finally(() => {
        running = null;
      });
  };
  const crystallizer = setInterval(guarded("candidates", () => service.run()), cfg.intervalMs);
  const curator = setInterval(guarded("curator proposals", () => service.curate()), cfg.curator.intervalMs);
  crystallizer.unref();
  curator.unref();
  return {
    service,
    async stop() {
      clearInterval(crystallizer);
      clearInterval(curator);
      await running;
    },
  };
}

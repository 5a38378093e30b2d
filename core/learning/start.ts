// One call to run the learning loop inside a server: the service over the given stores and its
// background worker, started.
import type { LearningDeps } from "./service.js";
import { LearningService } from "./service.js";
import { scopeResolver, type ScopeSources } from "./scope.js";
import { LearningWorker, type WorkerLog } from "./worker.js";

export interface StartLearningOptions extends Omit<LearningDeps, "scopeOf"> {
  scope: ScopeSources;
  log?: WorkerLog | null;
}

export function startLearning(o: StartLearningOptions): { service: LearningService; worker: LearningWorker } {
  const { scope, log, ...deps } = o;
  const service = new LearningService({ ...deps, scopeOf: scopeResolver(scope) });
  const worker = new LearningWorker(service, o.config.learning.worker, o.clock, log ?? null);
  worker.start();
  return { service, worker };
}

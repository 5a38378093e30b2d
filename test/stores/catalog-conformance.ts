// Every catalog-side conformance suite, for one engine.
import { evolutionConformance } from "./evolution-conformance.js";
import type { CatalogFactory } from "./catalog-harness.js";
import { learningConformance } from "./learning-conformance.js";
import { rapJournalConformance } from "./rap-journal-conformance.js";
import { rapOutboxConformance } from "./rap-outbox-conformance.js";
import { skillsConformance } from "./skills-conformance.js";
import { tracesConformance } from "./traces-conformance.js";
import { userChoicesConformance } from "./user-choices-conformance.js";

/** `commitOrderedTraceIds: false`: the engine's trace ids may commit out of order (DSQL profile) */
export function catalogConformance(name: string, factory: CatalogFactory, opts: { commitOrderedTraceIds?: boolean } = {}): void {
  rapJournalConformance(name, factory);
  rapOutboxConformance(name, factory);
  userChoicesConformance(name, factory);
  tracesConformance(name, factory, { commitOrderedIds: opts.commitOrderedTraceIds ?? true });
  learningConformance(name, factory);
  skillsConformance(name, factory);
  evolutionConformance(name, factory);
}

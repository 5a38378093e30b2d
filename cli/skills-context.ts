// The skill catalog on top of an opened backend (same database as memory): store + service.
import type { Clock } from "../core/clock.js";
import type { MemoryConfig } from "../core/config.js";
import { settleFiledRequests } from "../core/learning/evolution.js";
import { SkillService } from "../core/skills/service.js";
import type { Backend } from "../stores/backend.js";
import type { SkillStore } from "../stores/traits.js";

export interface SkillsContext {
  store: SkillStore;
  service: SkillService;
}

export function openSkills(ctx: { backend: Pick<Backend, "skills"> & Partial<Pick<Backend, "evolution">>; clock: Clock; config: MemoryConfig }): SkillsContext {
  const store = ctx.backend.skills;
  const service = new SkillService(store, ctx.clock, ctx.config);
  // a person approving or rejecting a version closes what the learning loop filed for it
  if (ctx.backend.evolution) service.onDecided(settleFiledRequests(ctx.backend.evolution, ctx.clock));
  return { store, service };
}

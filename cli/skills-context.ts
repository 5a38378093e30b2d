// The skill catalog on top of an opened database (same file as memory): store + service.
import { SkillService } from "../core/skills/service.js";
import { SqliteSkillStore } from "../stores/sqlite/skill-store.js";
import type { MemoryContext } from "./context.js";

export interface SkillsContext {
  store: SqliteSkillStore;
  service: SkillService;
}

export function openSkills(ctx: Pick<MemoryContext, "db" | "clock" | "config">): SkillsContext {
  const store = new SqliteSkillStore(ctx.db);
  return { store, service: new SkillService(store, ctx.clock, ctx.config) };
}

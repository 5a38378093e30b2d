// The manifests in rap-manifests/ are generated from the zod tool schemas, never written by hand.
import { defaultConfig } from "../core/config.js";
import { toolsetManifest } from "../toolsets/rap/registry.js";
import { memoryToolset } from "../toolsets/memory/tools.js";
import { openMemory } from "./context.js";
import { skillsToolset } from "../toolsets/skills/tools.js";
import { openSkills } from "./skills-context.js";
import { EvolutionService } from "../core/learning/evolution.js";

export const MANIFEST_ENDPOINT = "http://127.0.0.1:7411/invoke";

/** Manifest JSON text per toolset name, as `serve` would answer it on the default port. */
export function generatedManifests(): Record<string, string> {
  const ctx = openMemory({ dbPath: ":memory:", config: defaultConfig(), env: {} });
  try {
    const ts = memoryToolset({ service: ctx.service, toggles: ctx.toggles, clock: ctx.clock, localUser: "local", projectOf: () => null });
    const svc = openSkills(ctx).service;
    // serve's skills toolset carries the learning loop's skill_review (evolution.enabled, on by default)
    const evolution = new EvolutionService({ store: ctx.backend.evolution, learning: ctx.backend.learning, skills: svc, config: ctx.config, clock: ctx.clock, llm: null });
    const skills = skillsToolset({ service: svc, toggles: ctx.toggles, localUser: "local", projectOf: () => null, evolution });
    return {
      memory: `${JSON.stringify(toolsetManifest(ts, MANIFEST_ENDPOINT), null, 2)}\n`,
      skills: `${JSON.stringify(toolsetManifest(skills, MANIFEST_ENDPOINT), null, 2)}\n`,
    };
  } finally {
    ctx.close();
  }
}

// The manifests in rap-manifests/ are generated from the zod tool schemas, never written by hand.
import { defaultConfig } from "../core/config.js";
import { toolsetManifest } from "../toolsets/rap/registry.js";
import { memoryToolset } from "../toolsets/memory/tools.js";
import { openMemory } from "./context.js";
import { skillsToolset } from "../toolsets/skills/tools.js";
import { openSkills } from "./skills-context.js";

export const MANIFEST_ENDPOINT = "http://127.0.0.1:7411/invoke";

/** Manifest JSON text per toolset name, as `serve` would answer it on the default port. */
export function generatedManifests(): Record<string, string> {
  const ctx = openMemory({ dbPath: ":memory:", config: defaultConfig(), env: {} });
  try {
    const ts = memoryToolset({ service: ctx.service, toggles: ctx.toggles, clock: ctx.clock, localUser: "local", projectOf: () => null });
    const skills = skillsToolset({ service: openSkills(ctx).service, toggles: ctx.toggles, localUser: "local", projectOf: () => null });
    return {
      memory: `${JSON.stringify(toolsetManifest(ts, MANIFEST_ENDPOINT), null, 2)}\n`,
      skills: `${JSON.stringify(toolsetManifest(skills, MANIFEST_ENDPOINT), null, 2)}\n`,
    };
  } finally {
    ctx.close();
  }
}

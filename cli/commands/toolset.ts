// `infinity-memory toolset enable|disable|inherit --toolset memory|skills --thread T`: per-thread
// switches. Children inherit the nearest explicit setting; a running server sees changes at once.
import type { Command } from "commander";
import { MEMORY_TOOLSET } from "../../toolsets/memory/tools.js";
import { SKILLS_TOOLSET } from "../../toolsets/skills/tools.js";
import { openAnyMemory } from "../context.js";

// both servers check their switch before every call
const TOOLSETS = [MEMORY_TOOLSET, SKILLS_TOOLSET];

export function registerToolset(program: Command): void {
  const cmd = program.command("toolset").description("enable or disable a toolset for one thread (children inherit)");
  for (const [verb, value, help] of [
    ["enable", true, "enable the toolset for a thread and its children"],
    ["disable", false, "disable the toolset for a thread and its children"],
    ["inherit", null, "remove the thread's own setting so it inherits again"],
  ] as const) {
    cmd
      .command(verb)
      .description(help)
      .requiredOption("--toolset <name>", `toolset name (${TOOLSETS.join(" or ")})`)
      .requiredOption("--thread <id>", "thread id")
      .option("--db <path|url>", "SQLite file or postgres:// URL")
      .action(async (o: { toolset: string; thread: string; db?: string }) => {
        if (!TOOLSETS.includes(o.toolset)) throw new Error(`unknown toolset "${o.toolset}"; known: ${TOOLSETS.join(", ")}`);
        // An id pasted with a space or line break around it named no thread the daemon has: the
        // setting was stored under it and applied nowhere, while the command said it was done.
        const thread = o.thread.trim();
        // a blank id names no thread: the setting would be stored and apply nowhere
        if (thread === "") throw new Error("--thread needs a thread id (the session's root thread id for the whole session)");
        const ctx = await openAnyMemory({ location: o.db });
        try {
          await ctx.backend.toggles.set(o.toolset, thread, value, {
            at: ctx.clock.now(),
            actor: "user",
            action: "toggle",
            targetKind: "toolset",
            targetId: `${o.toolset}@${thread}`,
            detail: { enabled: value },
          });
          const done = verb === "inherit" ? "inherits its parent's setting" : `${verb}d`;
          process.stdout.write(`${o.toolset}: ${done} for thread ${thread}\n`);
        } finally {
          await ctx.close();
        }
      });
  }
}

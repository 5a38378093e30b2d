#!/usr/bin/env node
// infinity-memory: the command-line entry point.
import { Command } from "commander";
import { registerBench } from "./commands/bench.js";
import { registerConfig } from "./commands/config.js";
import { registerManifests } from "./commands/manifests.js";
import { registerMemory } from "./commands/memory.js";
import { registerServe } from "./commands/serve.js";
import { registerToolset } from "./commands/toolset.js";

const program = new Command();
program
  .name("infinity-memory")
  .description("Core memory for the Infinity agent runtime, served as RAP toolsets")
  .version("0.1.0")
  .showHelpAfterError();

registerServe(program);
registerMemory(program);
registerToolset(program);
registerConfig(program);
registerManifests(program);
registerBench(program);

program.parseAsync(process.argv).catch((e: unknown) => {
  process.stderr.write(`infinity-memory: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});

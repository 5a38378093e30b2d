#!/usr/bin/env node
// infinity-memory: the command-line entry point.
import { Command } from "commander";
import { registerBackup } from "./commands/backup.js";
import { registerBench } from "./commands/bench.js";
import { registerConfig } from "./commands/config.js";
import { registerDb } from "./commands/db.js";
import { registerManifests } from "./commands/manifests.js";
import { registerMigrate } from "./commands/migrate.js";
import { registerMemory } from "./commands/memory.js";
import { registerServe } from "./commands/serve.js";
import { registerSessions } from "./commands/sessions.js";
import { registerToolset } from "./commands/toolset.js";
import { registerProviderProxy } from "./commands/provider-proxy.js";
import { registerSkills } from "./commands/skills.js";
import { fileErrorText } from "./file-errors.js";
import { forCommandLine } from "./tool-hints.js";

const program = new Command();
program
  .name("infinity-memory")
  .description("Core memory for the Infinity agent runtime, served as RAP toolsets")
  .version("0.1.0")
  .showHelpAfterError();

registerServe(program);
registerMemory(program);
registerSessions(program);
registerToolset(program);
registerConfig(program);
registerManifests(program);
registerBench(program);
registerBackup(program);
registerProviderProxy(program);
registerSkills(program);
registerMigrate(program);
registerDb(program);

program.parseAsync(process.argv).catch((e: unknown) => {
  process.stderr.write(`infinity-memory: ${fileErrorText(e) ?? forCommandLine(e instanceof Error ? e.message : String(e))}\n`);
  // Exit now: a command server that failed to start must not linger with open handles (the
  // daemon waits on its stdout for the port line).
  process.exit(1);
});

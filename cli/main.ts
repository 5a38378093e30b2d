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
import { readOnlyProblem } from "../stores/sqlite/database.js";
import { fileErrorText } from "./file-errors.js";
import { forCommandLine } from "./tool-hints.js";

// `infinity-memory memory list | head`: once the reader has gone, output has nowhere to go. The
// command still finishes (what it wrote to the database is committed either way) and exits as it
// would have, instead of dying on an unhandled EPIPE with a stack trace.
// Any other failure (a full disk under `> file`) fails the command, unless a command server has
// already given its stdout up (it listens too).
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code !== "EPIPE" && process.stdout.listenerCount("error") === 1) {
    process.stderr.write(`infinity-memory: cannot write the output: ${e.message}\n`);
    process.exit(1);
  }
  process.stdout.write = (() => true) as typeof process.stdout.write;
});

const program = new Command();
program
  .name("infinity-memory")
  .description("Core memory for the Infinity agent runtime, served as RAP toolsets")
  .version("0.1.0")
  // the program's own options only before a command: otherwise its --version swallowed
  // `skills show NAME --version v3` and printed the build's version
  .enablePositionalOptions()
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
  // a write refused because the database is read-only for this user names the file and the fix
  const err = readOnlyProblem(e) ?? e;
  process.stderr.write(`infinity-memory: ${fileErrorText(err) ?? forCommandLine(err instanceof Error ? err.message : String(err))}\n`);
  // Exit now: a command server that failed to start must not linger with open handles (the
  // daemon waits on its stdout for the port line).
  process.exit(1);
});

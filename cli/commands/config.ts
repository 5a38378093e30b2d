// `infinity-memory config rap-json`: print the rap.json entry that adds a toolset to Infinity.
import type { Command } from "commander";
import { DEFAULT_PORT } from "./serve.js";
import { commandEntry, rapJson, serverEntry } from "../rap-json.js";
import { registerProvidersJson } from "./providers-json.js";

export function registerConfig(program: Command): void {
  const config = program.command("config").description("print configuration snippets for Infinity");
  registerProvidersJson(config);
  config
    .command("rap-json")
    .description("print a ~/.infinity/rap.json that adds the toolset")
    .option("--toolset <name>", "toolset", "memory")
    .option("--mode <mode>", "command (the daemon starts it per session) or server (a running `serve`)", "command")
    .option("--url <url>", "server URL for --mode server", `http://127.0.0.1:${DEFAULT_PORT}`)
    .option("--db <path>", "database file the command server should use")
    .action((o: { toolset: string; mode: string; url: string; db?: string }) => {
      if (o.mode !== "command" && o.mode !== "server") throw new Error(`--mode must be "command" or "server", got "${o.mode}"`);
      const entry = o.mode === "server" ? serverEntry(o.toolset, o.url) : commandEntry(o.toolset, o.db ? ["--db", o.db] : []);
      process.stdout.write(`${rapJson([entry])}\n`);
    });
}

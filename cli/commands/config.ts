// `infinity-memory config rap-json`: print the rap.json entry that adds a toolset to Infinity.
import type { Command } from "commander";
import { resolve } from "node:path";
import { backendKindOf } from "../../stores/backend.js";
import { checkToolset, DEFAULT_PORT } from "./serve.js";
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
    .option("--db <path|url>", "database the command server should use (a file path is made absolute)")
    .action((o: { toolset: string; mode: string; url: string; db?: string }) => {
      if (o.mode !== "command" && o.mode !== "server") throw new Error(`--mode must be "command" or "server", got "${o.mode}"`);
      checkToolset(o.toolset);
      if (o.mode === "server" && !/^https?:\/\/[^/\s]+/i.test(o.url)) throw new Error(`--url must be the server's http:// or https:// address (got "${o.url}")`);
      // The daemon appends /.well-known/rap-toolset, /close_thread and /cancel_tool_call to the
      // URL: with a path (the /invoke endpoint pasted) the manifest is not found, and the session
      // starts without the tools and with no error anywhere but the daemon's info line.
      if (o.mode === "server" && URL.canParse(o.url)) {
        const u = new URL(o.url);
        if (u.pathname !== "/" || u.search !== "" || u.hash !== "") {
          throw new Error(`--url is the server's base address, without a path: the daemon adds /.well-known/rap-toolset to it (got "${o.url}"; use "${u.origin}")`);
        }
      }
      // The daemon starts a command server in {session cwd}/.infinity: a relative path would be a
      // different database for every project.
      const db = o.db === undefined ? [] : ["--db", backendKindOf(o.db) === "sqlite" ? resolve(o.db) : o.db];
      const entry = o.mode === "server" ? serverEntry(o.toolset, o.url) : commandEntry(o.toolset, db);
      process.stdout.write(`${rapJson([entry])}\n`);
    });
}

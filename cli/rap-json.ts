// The rap.json entries that add our toolsets to Infinity (~/.infinity/rap.json or
// {project}/.infinity/rap.json), in both forms the daemon understands.
import { fileURLToPath } from "node:url";
import { resolve } from "node:path";
import { shellQuote } from "../core/shell.js";

export function mainScriptPath(): string {
  return resolve(fileURLToPath(import.meta.url), "..", "main.js");
}

/** `toolset_command`: the daemon starts one server per session with RAP_EMBEDDED=1. */
export function commandEntry(toolset: string, extraArgs: string[] = []): Record<string, string> {
  const argv = [process.execPath, mainScriptPath(), "serve", "--toolset", toolset, ...extraArgs];
  // `exec` makes node the process the daemon signals and waits for, not an intermediate shell.
  return { type: "toolset_command", id: `infinity-${toolset}`, command: `exec ${argv.map(shellQuote).join(" ")}` };
}

/** `toolset_server`: one long-running server shared by every session that lists it. */
export function serverEntry(toolset: string, url: string): Record<string, string> {
  return { type: "toolset_server", id: `infinity-${toolset}`, server_url: url };
}

export function rapJson(entries: Record<string, string>[]): string {
  return JSON.stringify({ tool_sets: entries }, null, 2);
}

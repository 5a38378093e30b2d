// `infinity-memory provider-proxy --upstream <command…>`: wrap a model provider so every model
// call gets the memory prefix (reference §4.3 item 2). Listed in ~/.infinity/providers.json in
// place of the provider it wraps; see `infinity-memory config providers-json`.
import type { Command } from "commander";
import { runProviderProxy } from "../../context-hook/provider-proxy/run.js";
import { MAX_TIMER_MS } from "../../core/config.js";
import { wholeNumber } from "../options.js";

interface ProxyCliOptions {
  upstream?: string[];
  infinityHome?: string;
  db?: string;
  deadlineMs?: number;
  budget?: number;
  log?: string;
  builderModule?: string;
  upstreamTimeoutMs?: number;
  endedStallMs?: number;
}

export function registerProviderProxy(program: Command): void {
  program
    .command("provider-proxy")
    .description("serve the model provider protocol in front of another provider, adding recalled memories to each model call")
    .option("--upstream <command...>", "the provider command to wrap (argv; put arguments starting with '-' after --)")
    .argument("[command...]", "more of the upstream command, after --")
    .option("--infinity-home <dir>", "the daemon's state directory (~/.infinity): thread ancestry, user ids, session directories")
    .option("--db <path|url>", "SQLite file or postgres:// URL (default $INFINITY_MEMORY_DB, else $INFINITY_MEMORY_HOME/memory.db or ~/.infinity/memory/memory.db)")
    .option("--deadline-ms <ms>", "how long a call waits for its prefix before going out unchanged (default 250)", wholeNumber(1, MAX_TIMER_MS))
    .option("--budget <tokens>", "token budget of the prefix (default 1200)", wholeNumber(1))
    .option("--log <file>", "log file (default $INFINITY_MEMORY_HOME/provider-proxy.log)")
    .option("--builder-module <file>", "ES module exporting createPrefixBuilder(ctx) to use instead of the memory prefix builder")
    .option("--upstream-timeout-ms <ms>", "how long the upstream may take to print its socket path (default 30000)", wholeNumber(1, MAX_TIMER_MS))
    .option("--ended-stall-ms <ms>", "how long a call whose client ended its side (the daemon dropped it) waits for the upstream's next bytes before it is closed (default 120000, the daemon's stall timeout)", wholeNumber(1, MAX_TIMER_MS))
    .action(async (rest: string[], o: ProxyCliOptions) => {
      const upstream = [...(o.upstream ?? []), ...rest];
      if (upstream.length === 0) throw new Error("give the provider command to wrap: --upstream <command…>");
      await runProviderProxy({
        upstream,
        infinityHome: o.infinityHome,
        dbPath: o.db,
        deadlineMs: o.deadlineMs,
        budgetTokens: o.budget,
        logFile: o.log,
        builderModule: o.builderModule,
        upstreamTimeoutMs: o.upstreamTimeoutMs,
        endedStallMs: o.endedStallMs,
      });
    });
}

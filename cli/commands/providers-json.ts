// `infinity-memory config providers-json --upstream <command…>`: print the providers.json entry
// that wraps a model provider with the memory proxy. Added to the `config` command by its owner.
import type { Command } from "commander";
import { resolve } from "node:path";
import { providersJson } from "../../context-hook/provider-proxy/providers-json.js";
import { backendKindOf } from "../../stores/backend.js";
import { mainScriptPath } from "../rap-json.js";
import { defaultInfinityHome } from "../sessions.js";
import { MAX_TIMER_MS } from "../../core/config.js";
import { wholeNumber } from "../options.js";

interface ProvidersJsonCliOptions {
  upstream?: string[];
  id: string;
  infinityHome?: string;
  db?: string;
  deadlineMs?: number;
  budget?: number;
}

export function registerProvidersJson(config: Command): void {
  config
    .command("providers-json")
    .description("print a ~/.infinity/providers.json entry that wraps a model provider with the memory proxy")
    .option("--upstream <command...>", "the provider command to wrap (argv; put arguments starting with '-' after --)")
    .argument("[command...]", "more of the upstream command, after --")
    .option("--id <provider_id>", "provider id in providers.json", "memory-proxy")
    .option("--infinity-home <dir>", "the daemon's state directory the proxy reads ($INFINITY_HOME or ~/.infinity)", defaultInfinityHome())
    .option("--db <path|url>", "database the proxy should use: SQLite file (made absolute) or postgres:// URL")
    .option("--deadline-ms <ms>", "prefix deadline per call", wholeNumber(1, MAX_TIMER_MS))
    .option("--budget <tokens>", "prefix token budget", wholeNumber(1))
    .action((rest: string[], o: ProvidersJsonCliOptions) => {
      const upstream = [...(o.upstream ?? []), ...rest];
      if (upstream.length === 0) throw new Error("give the provider command to wrap: --upstream <command…>");
      const proxyArgs: string[] = [];
      if (o.infinityHome) proxyArgs.push("--infinity-home", resolve(o.infinityHome));
      // a URL kept as given: resolve() turned it into "{cwd}/postgres:/…", an empty SQLite file
      if (o.db) proxyArgs.push("--db", backendKindOf(o.db) === "sqlite" ? resolve(o.db) : o.db);
      if (o.deadlineMs !== undefined) proxyArgs.push("--deadline-ms", String(o.deadlineMs));
      if (o.budget !== undefined) proxyArgs.push("--budget", String(o.budget));
      const entry = providersJson({ id: o.id, upstream, mainScript: mainScriptPath(), proxyArgs });
      process.stdout.write(`${JSON.stringify(entry, null, 2)}\n`);
    });
}

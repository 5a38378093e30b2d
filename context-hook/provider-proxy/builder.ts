// Which PrefixBuilder the proxy asks: the memory builder over the proxy's database, or one from a
// module named on the command line (another retrieval strategy, or a fixed one for tests and
// benchmarks). Such a module exports `createPrefixBuilder(ctx)`.
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import type { Logger } from "pino";
import type { AnyMemoryContext } from "../../cli/context.js";
import type { MemoryStore } from "../../stores/traits.js";
import { MemoryPrefixBuilder } from "../../core/retrieval/prefix.js";
import type { PrefixBuilder } from "../../core/retrieval/prefix-types.js";
import { loadTokenCounter } from "../../core/retrieval/tokens.js";
import { warmSafetyScan } from "../../core/safety/index.js";
import { CatalogOffers } from "../../core/skills/offers.js";
import { openSkills } from "../../cli/skills-context.js";

export interface PrefixBuilderContext {
  memory: AnyMemoryContext;
  logger: Logger;
}

export type PrefixBuilderFactory = (ctx: PrefixBuilderContext) => PrefixBuilder | Promise<PrefixBuilder>;

export async function memoryPrefixBuilder(ctx: PrefixBuilderContext): Promise<PrefixBuilder> {
  const m = ctx.memory;
  // Loading the vocabulary takes ~0.2 s: pay it at start, not inside the first call's deadline.
  const tokens = await loadTokenCounter(m.config.prefix.tokenizer);
  // Likewise the semantic indexes of the scopes written last, built in the background: a first
  // prefix would otherwise build its scope inside the deadline (~0.3 s for 20k memories); and the
  // commonest words' counts, each a doclist walk on its first search otherwise. (A standing
  // `serve` warms up too; a command server the daemon starts for one session does not: a tool
  // call has no such deadline, and a session that never searches should not hold the indexes.)
  warmStore(m.backend.memory, ctx.logger);
  // And the content scan a prefix runs on each memory it includes: its patterns compile on their
  // first runs (~0.17 s).
  warmSafetyScan();
  return new MemoryPrefixBuilder({
    service: m.service,
    toggles: m.backend.toggles,
    edgesOf: (id) => m.backend.memory.edgesOf(id),
    tokens,
    config: m.config,
    skills: new CatalogOffers(openSkills(m).service),
  });
}

/** Start the store's background warm-up (if it has one) and log what it built. */
export function warmStore(store: MemoryStore, logger: Logger): void {
  if (!store.warm) return;
  const t0 = performance.now();
  void store.warm().then((scopes) => {
    if (scopes.length > 0) logger.info({ scopes: scopes.length, ms: Math.round(performance.now() - t0) }, "semantic indexes built for the scopes written last");
  });
}

export async function loadBuilderModule(file: string): Promise<PrefixBuilderFactory> {
  const mod = (await import(pathToFileURL(resolve(file)).href)) as { createPrefixBuilder?: unknown };
  if (typeof mod.createPrefixBuilder !== "function") {
    throw new Error(`${file} does not export a function createPrefixBuilder(ctx)`);
  }
  return mod.createPrefixBuilder as PrefixBuilderFactory;
}

export async function createBuilder(ctx: PrefixBuilderContext, moduleFile: string | null): Promise<PrefixBuilder> {
  const factory = moduleFile ? await loadBuilderModule(moduleFile) : memoryPrefixBuilder;
  const builder = await factory(ctx);
  if (typeof builder?.build !== "function") throw new Error("the prefix builder factory returned no build(req) method");
  return builder;
}

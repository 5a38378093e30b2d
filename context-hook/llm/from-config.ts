// Builds the configured Llm from the `llm` config section, behind the daily call budget.
import { homedir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import type { Clock } from "../../core/clock.js";
import type { LlmConfig } from "../../core/config.js";
import { CallBudget, type LlmBudgetStore } from "../../core/llm/budget.js";
import { createLlm } from "../../core/llm/client.js";
import { noneLlm } from "../../core/llm/none.js";
import { LlmError, type Llm, type LlmBackend, type LlmCall, type LlmReply } from "../../core/llm/types.js";
import { OpenAiLlmBackend } from "./openai-llm.js";
import { ProviderLlmBackend, providerCommandFromFile } from "./provider-llm.js";

export interface LlmDeps {
  budgetStore: LlmBudgetStore;
  clock: Clock;
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
}

/** $INFINITY_HOME/providers.json, else ~/.infinity/providers.json */
export function defaultProvidersJson(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.INFINITY_HOME ?? join(homedir(), ".infinity"), "providers.json");
}

export function llmFromConfig(config: LlmConfig, deps: LlmDeps): Llm {
  const backend = backendFor(config, deps);
  if (!backend) return noneLlm;
  const budget = new CallBudget(deps.budgetStore, config.dailyCallBudget, deps.clock);
  return createLlm(backend, { timeoutMs: config.timeoutMs, budget });
}

function backendFor(config: LlmConfig, deps: LlmDeps): LlmBackend | null {
  const env = deps.env ?? process.env;
  switch (config.adapter) {
    case "none":
      return null;
    case "openai": {
      const o = config.openai;
      // the schema refuses this combination; kept for callers that build a config by hand
      if (!o) throw new LlmError("unavailable", 'llm.adapter "openai" needs llm.openai (baseUrl, model)');
      return new OpenAiLlmBackend({ baseUrl: o.baseUrl, model: o.model, apiKeyEnv: o.apiKeyEnv, env });
    }
    case "provider": {
      const p = config.provider;
      const common = { modelId: p.modelId, startTimeoutMs: p.startTimeoutMs, logger: deps.logger, env };
      if (p.socket) return new ProviderLlmBackend({ ...common, socket: p.socket });
      // providers.json is read at the first call: it may appear after startup, and a bad one
      // must fail that call (unavailable), not the process that merely loads the config.
      const file = p.providersJson ?? defaultProvidersJson(env);
      return new LazyBackend("provider", () => new ProviderLlmBackend({ ...common, command: providerCommandFromFile(file, p.id) }));
    }
  }
}

/** builds its backend on first use; a failed build is retried by the next call */
class LazyBackend implements LlmBackend {
  private inner: LlmBackend | null = null;
  private closed = false;

  constructor(
    readonly name: string,
    private readonly build: () => LlmBackend,
  ) {}

  generate(call: LlmCall): Promise<LlmReply> {
    if (this.closed) {
      return Promise.reject(new LlmError("unavailable", `${call.op}: the ${this.name} adapter is closed`, { op: call.op }));
    }
    try {
      this.inner ??= this.build();
    } catch (e) {
      return Promise.reject(e);
    }
    return this.inner.generate(call);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.inner?.close?.();
  }
}

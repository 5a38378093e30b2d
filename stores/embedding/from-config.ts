// Builds the configured embedder from the `embedder` config section: null for "none"; a promise
// for the others (a local model loads asynchronously), so opening a store never waits on it.
import type { Logger } from "pino";
import type { EmbedderConfig } from "../../core/config.js";
import { EmbedderError, type Embedder } from "../../core/embedding/embedder.js";
import { HashingEmbedder } from "../../core/embedding/hashing.js";
import { OnnxEmbedder } from "./onnx-embedder.js";
import { OpenAiEmbedder } from "./openai-embedder.js";
import type { Db } from "../sqlite/database.js";
import { VectorChannel } from "../sqlite/vector-channel.js";

export function embedderFromConfig(config: EmbedderConfig, env: NodeJS.ProcessEnv = process.env): Embedder | Promise<Embedder> | null {
  switch (config.kind) {
    case "none":
      return null;
    case "hashing":
      return new HashingEmbedder({ dimensions: config.hashing.dimensions });
    case "openai": {
      const o = config.openai;
      // the schema refuses this combination; kept for callers that build a config by hand
      if (!o) throw new EmbedderError("invalid", 'embedder.kind "openai" needs embedder.openai (baseUrl, model, dimensions)');
      return new OpenAiEmbedder({
        baseUrl: o.baseUrl,
        model: o.model,
        dimensions: o.dimensions,
        requestDimensions: o.requestDimensions,
        apiKeyEnv: o.apiKeyEnv,
        env,
        batchSize: config.batchSize,
        timeoutMs: config.timeoutMs,
      });
    }
    case "onnx": {
      const o = config.onnx;
      if (!o) throw new EmbedderError("invalid", 'embedder.kind "onnx" needs embedder.onnx (dir)');
      return OnnxEmbedder.load({ dir: o.dir, maxTokens: o.maxTokens, batchSize: config.batchSize, threads: o.threads });
    }
  }
}

/**
 * The store's vector channel for this config: null for kind "none" (the store then only keeps
 * vectors stored earlier in step with forgets and status changes).
 */
export function vectorChannelFromConfig(
  db: Db,
  config: EmbedderConfig,
  opts: { now?: () => number; logger?: Logger; env?: NodeJS.ProcessEnv } = {},
): VectorChannel | null {
  let embedder: Embedder | Promise<Embedder> | null;
  try {
    embedder = embedderFromConfig(config, opts.env);
  } catch (e) {
    // a bad embedder must not keep memory from opening: the channel reports it, words still work
    embedder = Promise.reject(e);
  }
  if (!embedder) return null;
  return VectorChannel.withEmbedder(db, {
    embedder,
    weight: config.weight,
    minSimilarity: config.minSimilarity,
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
}

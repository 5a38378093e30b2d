// The one configuration schema. Every tunable constant lives here with its default, and the
// README quotes this file; nothing else hard-codes a threshold.
import { z } from "zod";
import { CHANNEL_NAMES } from "./retrieval/channels.js";

/**
 * A default that must not pass its maximum: the maximum caps every request, so a default above
 * it was cut down without a word (search.defaultLimit 80 with maxLimit 50 answered 50). The issue
 * sits on the default, so the error names it and the setting it disagrees with.
 */
function defaultWithinMax<K extends string>(section: string, def: K, max: K) {
  return (v: Record<K, number>, ctx: z.RefinementCtx) => {
    if (v[def] <= v[max]) return;
    ctx.addIssue({
      code: "custom",
      path: [def],
      message:
        `is ${v[def]}, above "${section}.${max}" (${v[max]}), which caps every request at ${v[max]}; ` +
        `set "${section}.${def}" to at most ${v[max]} or raise "${section}.${max}" to at least ${v[def]}`,
    });
  };
}

/** The longest delay a Node timer holds (2^31 - 1 ms); setTimeout fires a longer one after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * A deadline in ms that a timer waits for. Above MAX_TIMER_MS the timer fired at once: an
 * llm.timeoutMs of 30 days timed every model call out ("no answer within 2592000000 ms").
 */
function timerMs() {
  return z.number().int().positive().max(MAX_TIMER_MS, { message: `must be at most ${MAX_TIMER_MS} ms (about 24.8 days), the longest a timer can wait` });
}

export const MemoryConfig = z.object({
  /** user id for invocations that carry none (the daemon sets user_id only from root metadata) */
  localUser: z.string().min(1).default("local"),
  write: z
    .object({
      maxContentChars: z.number().int().positive().default(4000),
      /** confidence given when the caller states none */
      defaultConfidence: z.number().min(0).max(1).default(0.7),
      userStatedConfidence: z.number().min(0).max(1).default(0.9),
      /** content-word Jaccard overlap above which two memories about one subject may conflict */
      conflictOverlap: z.number().min(0).max(1).default(0.5),
      conflictCandidates: z.number().int().positive().default(8),
    })
    .prefault({}),
  search: z
    .object({
      defaultLimit: z.number().int().positive().default(10),
      maxLimit: z.number().int().positive().default(50),
      /**
       * retrieval channels switched on or off over the measured defaults (core/retrieval/channels.ts),
       * e.g. {"semantic": true}; `lexical` stays on whatever this says
       */
      channels: z.partialRecord(z.enum(CHANNEL_NAMES), z.boolean()).default({}),
    })
    .superRefine(defaultWithinMax("search", "defaultLimit", "maxLimit"))
    .prefault({}),
  list: z
    .object({
      defaultLimit: z.number().int().positive().default(20),
      maxLimit: z.number().int().positive().default(100),
    })
    .superRefine(defaultWithinMax("list", "defaultLimit", "maxLimit"))
    .prefault({}),
  prefix: z
    .object({
      /** tokens the recalled-memory block may take in front of the preamble */
      budgetTokens: z.number().int().positive().max(100_000).default(1200),
      /** BPE vocabulary used to count tokens */
      tokenizer: z.enum(["o200k_base", "cl100k_base"]).default("o200k_base"),
      /** search depth before selection */
      candidates: z.number().int().positive().default(40),
      /** keep items scoring at least this share of the best item's score */
      relativeScore: z.number().min(0).max(1).default(0.3),
      /** content-word overlap at which two items count as near-duplicates */
      nearDuplicate: z.number().min(0).max(1).default(0.7),
      /** how long the provider proxy waits for a prefix before sending the call unchanged */
      deadlineMs: timerMs().default(250),
    })
    .prefault({}),
  forget: z
    .object({
      /** a forget by query matches at most this many memories (the person confirms all of them) */
      maxByQuery: z.number().int().positive().default(50),
    })
    .prefault({}),
  skills: z
    .object({
      /** η = (passes + 1) / (trials + 2): Beta(1,1) prior, so an untried version starts at 0.5 */
      priorPasses: z.number().min(0).default(1),
      priorFails: z.number().min(0).default(1),
      /** skill_search and the prefix offer only published versions with η strictly above this */
      retrievalMinEta: z.number().min(0).max(1).default(0.25),
      searchDefaultLimit: z.number().int().positive().default(5),
      searchMaxLimit: z.number().int().positive().default(20),
      maxBodyChars: z.number().int().positive().default(100_000),
      maxFileChars: z.number().int().positive().default(1_048_576),
      maxFiles: z.number().int().positive().default(60),
      /** skills offered in the context prefix, at most */
      prefixOffers: z.number().int().min(0).default(3),
      /** a skill's body is inlined when pinned or its score is at least this share of the best possible match */
      inlineMinMatch: z.number().min(0).max(1).default(0.8),
      /** tokens an inlined body may take */
      inlineMaxTokens: z.number().int().positive().default(500),
      /** a probationary version reaches search and the prefix only with η at least this (active ones need retrievalMinEta) */
      probationaryMinEta: z.number().min(0).max(1).default(0.5),
    })
    .superRefine(defaultWithinMax("skills", "searchDefaultLimit", "searchMaxLimit"))
    .prefault({}),
  /** the model used by the learning loop (core/llm, context-hook/llm); "none" = deterministic fallbacks only */
  llm: z
    .object({
      adapter: z.enum(["none", "provider", "openai"]).default("none"),
      /** deadline of one complete() call, repair retry included */
      timeoutMs: timerMs().default(60_000),
      /** model calls per UTC day, repair retries included; 0 blocks every call */
      dailyCallBudget: z.number().int().min(0).default(200),
      /** Infinity provider protocol: an existing socket, or a providers.json entry to spawn */
      provider: z
        .object({
          /** default: $INFINITY_HOME/providers.json, else ~/.infinity/providers.json */
          providersJson: z.string().min(1).optional(),
          /** the providers.json key; may be left out when the file has one entry */
          id: z.string().min(1).optional(),
          /** connect here instead of spawning a provider */
          socket: z.string().min(1).optional(),
          /** default: the first model the provider lists */
          modelId: z.string().min(1).optional(),
          /** how long a spawned provider may take to print its socket path */
          startTimeoutMs: timerMs().default(30_000),
        })
        .prefault({}),
      /** an OpenAI-compatible endpoint: POST {baseUrl}/chat/completions */
      openai: z
        .object({
          baseUrl: z.url(),
          model: z.string().min(1),
          /** environment variable holding the API key; no Authorization header when it is unset */
          apiKeyEnv: z.string().min(1).default("OPENAI_API_KEY"),
        })
        .optional(),
    })
    .refine((l) => l.adapter !== "openai" || l.openai !== undefined, {
      message: 'llm.adapter "openai" needs an llm.openai section (baseUrl, model)',
      path: ["openai"],
    })
    .prefault({}),
  learning: z
    .object({
      /** run the background learning worker inside `serve` */
      enabled: z.boolean().default(true),
      /** characters kept of a user task, a final answer and a tool result (raw payloads are never kept) */
      taskChars: z.number().int().positive().default(1000),
      excerptChars: z.number().int().positive().default(500),
      /** characters kept of a step's abstracted arguments */
      argsShapeChars: z.number().int().positive().default(300),
      /** steps recorded per episode, at most (later ones are counted in the outcome, not stored) */
      maxStepsPerEpisode: z.number().int().positive().default(200),
      /** value backup: V_T = R, V_t = α_t·R + (1 − α_t)·γ·V_{t+1} */
      gamma: z.number().min(0).max(1).default(0.9),
      /** α_t by step quality: an ok step takes a large share of R, an erroring one a small share */
      alpha: z
        .object({
          ok: z.number().min(0).max(1).default(0.6),
          pending: z.number().min(0).max(1).default(0.3),
          error: z.number().min(0).max(1).default(0.1),
        })
        .prefault({}),
      /** R = Σ wᵢ·vᵢ / Σ wᵢ over the signals present, clamped to [−1, 1]; no signal leaves R unset */
      weights: z
        .object({
          /** task_feedback rating (−1..1) */
          explicit: z.number().min(0).default(1),
          /** skill_feedback pass/fail reported inside the episode */
          skillFeedback: z.number().min(0).default(0.6),
          /** the last test/exit-code verdict in the episode's tool results */
          outcome: z.number().min(0).default(0.8),
          /** share of erroring steps (negative) */
          toolError: z.number().min(0).default(0.3),
          /** the next user turn corrects (−1) or approves (+1) the answer */
          userReaction: z.number().min(0).default(0.5),
          /** LLM rubric: low weight, and never the only signal for promotion (episode.grounded) */
          rubric: z.number().min(0).default(0.15),
        })
        .prefault({}),
      candidates: z
        .object({
          /** proposed memories per episode, at most */
          maxPerEpisode: z.number().int().min(0).default(5),
          /** confidence of an auto-extracted candidate */
          confidence: z.number().min(0).max(1).default(0.6),
          /** content-word overlap at which a candidate counts as a duplicate of an existing memory */
          mergeOverlap: z.number().min(0).max(1).default(0.8),
          maxChars: z.number().int().positive().default(400),
          /**
           * also ask the person about new candidates through RAP user_choice, on the next memory
           * tool call in the conversation they came from (off: memory_review and the CLI only)
           */
          askInConversation: z.boolean().default(false),
        })
        .prefault({}),
      worker: z
        .object({
          /** how often the worker looks for new experience */
          intervalMs: timerMs().default(2000),
          /** threads processed per pass */
          batch: z.number().int().positive().default(20),
          /** a claimed thread is free for another worker after this long (a killed worker's claim expires) */
          leaseMs: z.number().int().positive().default(60_000),
          /** a thread failing this many times in a row is dropped from the queue (the failure stays an event) */
          maxAttempts: z.number().int().positive().default(5),
          /** trace events read per pass */
          traceBatch: z.number().int().positive().default(500),
        })
        .prefault({}),
    })
    .prefault({}),
  /** the learning loop's second half: policies → candidate skills → evaluation gate → approval → lifecycle (core/learning/README.md "Skills that evolve") */
  evolution: z
    .object({
      /** run the crystallizer (and the curator) on a schedule inside `serve` */
      enabled: z.boolean().default(true),
      /** how often `serve` recomputes policies and crystallizes eligible ones */
      intervalMs: timerMs().default(300_000),
      /** policies are recomputed at most this often, and only when episode values changed since */
      debounceMs: z.number().int().min(0).default(30_000),
      policy: z
        .object({
          /** distinct episodes a pattern needs */
          minSupport: z.number().int().positive().default(3),
          /** mean episode reward R of the pattern's episodes */
          minValue: z.number().min(-1).max(1).default(0.5),
          /** gain over similar episodes without the pattern, shrunk: n·gain/(n + shrinkK) */
          minGain: z.number().min(-2).max(2).default(0.1),
          /** pseudo-count of the shrinkage (a single lucky episode does not count) */
          shrinkK: z.number().min(0).default(3),
          /** what the similar episodes' mean is pulled toward, with the same pseudo-count */
          baseline: z.number().min(-1).max(1).default(0),
          /** key terms of a task kept for its signature */
          keyTerms: z.number().int().positive().default(6),
          /** two tasks are similar when they share at least this many key terms */
          minSharedTerms: z.number().int().positive().default(1),
          /** newest finished episodes read per recomputation */
          maxEpisodes: z.number().int().positive().default(5000),
        })
        .prefault({}),
      evidence: z
        .object({
          /** episodes kept as evidence of a policy (top by value and similarity) */
          maxEpisodes: z.number().int().positive().default(8),
          /** pitfalls drawn from failed neighbours */
          maxPitfalls: z.number().int().min(0).default(3),
        })
        .prefault({}),
      draft: z
        .object({
          /** numbered steps a drafted skill may have */
          maxSteps: z.number().int().positive().default(12),
          /** body characters a drafted skill may have */
          maxBodyChars: z.number().int().positive().default(6000),
          /** with an LLM configured, also ask it for a draft from the same evidence (op skill_draft) */
          useLlm: z.boolean().default(true),
        })
        .prefault({}),
      eval: z
        .object({
          /** the candidate's mean task score must beat the baseline's by at least this */
          margin: z.number().min(0).default(0.05),
          /** score cost of one step (fewer steps for the same completion is better) */
          stepCost: z.number().min(0).default(0.02),
          /** tasks replayed per evaluation, at most */
          maxTasks: z.number().int().positive().default(30),
          /** with an LLM configured, the model itself runs this many tasks per arm (op skill_eval) instead of the built-in replay model; 0: never */
          llmTasks: z.number().int().min(0).default(8),
        })
        .prefault({}),
      approval: z
        .object({
          /** opt-in: publish low-risk candidates without asking (no new tools, eval margin ≥ autoApproveMargin) */
          autoApprove: z.boolean().default(false),
          autoApproveMargin: z.number().min(0).default(0.2),
          /** with autoApprove, also new skills (their tools are granted from the evidence) */
          autoApproveNewSkills: z.boolean().default(false),
          /**
           * an approval under way (status "approving") whose process cannot be checked (it ran on
           * another machine) counts as stopped after this long: approving it again, or a server's
           * start-up sweep, then finishes it. One on this machine counts as stopped when its process is gone.
           */
          leaseMs: timerMs().default(600_000),
        })
        .prefault({}),
      lifecycle: z
        .object({
          /** probationary → active after at least this many trials … */
          promoteMinTrials: z.number().int().positive().default(3),
          /** … with η at least this */
          promoteMinEta: z.number().min(0).max(1).default(0.6),
          /** any live version → retired when η falls below this */
          retireBelowEta: z.number().min(0).max(1).default(0.25),
          /** reward drift when the policy's gain changes: η ← keep·η + (1 − keep)·clamp01(gain) */
          driftKeep: z.number().min(0).max(1).default(0.7),
          /** an explicit thumbs up/down moves η by this */
          thumbDelta: z.number().min(0).max(1).default(0.1),
        })
        .prefault({}),
      curator: z
        .object({
          /** a live skill with no trial for this many days (counted from its publication at the latest) is proposed for retirement */
          staleDays: z.number().positive().default(30),
          /** description+body word overlap at which two skills are proposed for a merge */
          duplicateOverlap: z.number().min(0).max(1).default(0.7),
          /** how often `serve` runs the curator */
          intervalMs: timerMs().default(86_400_000),
        })
        .prefault({}),
    })
    .prefault({}),
  /** optional vector channel (issue 8 §2): an embedder fills sqlite-vec; "none" = no vectors, lexical channels only */
  embedder: z
    .object({
      kind: z.enum(["none", "hashing", "openai", "onnx"]).default("none"),
      /** RRF weight of the vector channel relative to the word channel */
      weight: z.number().min(0).default(1),
      /** neighbours less similar than this (cosine) are dropped: with few word hits, unrelated memories should not fill the list */
      minSimilarity: z.number().min(-1).max(1).default(0.05),
      /** texts per embedding request (endpoint) or inference batch (ONNX) */
      batchSize: z.number().int().positive().max(2048).default(32),
      /** deadline of one embedding request */
      timeoutMs: timerMs().default(30_000),
      /** deterministic feature hashing of words and character n-grams: no model, works offline */
      hashing: z.object({ dimensions: z.number().int().min(8).max(8192).default(384) }).prefault({}),
      /** an OpenAI-compatible endpoint: POST {baseUrl}/embeddings */
      openai: z
        .object({
          baseUrl: z.url(),
          model: z.string().min(1),
          /** the model's vector size (the vector table is created for it) */
          dimensions: z.number().int().positive().max(8192),
          /** also send `dimensions` in the request (models that can shorten their vectors) */
          requestDimensions: z.boolean().default(false),
          apiKeyEnv: z.string().min(1).default("OPENAI_API_KEY"),
        })
        .optional(),
      /** a local model folder (model.onnx + tokenizer.json or vocab.txt), run by the optional onnxruntime-node */
      onnx: z
        .object({
          dir: z.string().min(1),
          maxTokens: z.number().int().min(8).max(8192).default(256),
          /** CPU threads per inference; 0 = onnxruntime's default */
          threads: z.number().int().min(0).default(0),
        })
        .optional(),
    })
    .refine((e) => e.kind !== "openai" || e.openai !== undefined, {
      message: 'embedder.kind "openai" needs an embedder.openai section (baseUrl, model, dimensions)',
      path: ["openai"],
    })
    .refine((e) => e.kind !== "onnx" || e.onnx !== undefined, {
      message: 'embedder.kind "onnx" needs an embedder.onnx section (dir)',
      path: ["onnx"],
    })
    .prefault({}),
});
export type MemoryConfig = z.infer<typeof MemoryConfig>;

/** a setting's schema under its default/prefault/optional wrappers */
function unwrapped(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (;;) {
    const def = s._zod.def as { type: string; innerType?: z.ZodType };
    if (def.innerType === undefined || !["default", "prefault", "optional", "nullable", "readonly"].includes(def.type)) return s;
    s = def.innerType;
  }
}

export interface UnknownSetting {
  /** dotted path, e.g. "search.defaultLimt" */
  path: string;
  /** the settings its section does have */
  known: string[];
}

/**
 * Settings in a config object that the schema has no place for. Parsing drops them silently, so
 * a misspelt one ("serach") would leave the person believing a setting is in force that is not.
 */
export function unknownSettings(raw: unknown, schema: z.ZodType = MemoryConfig, path: string[] = []): UnknownSetting[] {
  const s = unwrapped(schema);
  if (!(s instanceof z.ZodObject) || s._zod.def.catchall !== undefined) return [];
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return [];
  const shape = s.shape as Record<string, z.ZodType>;
  return Object.entries(raw).flatMap(([key, value]) =>
    Object.hasOwn(shape, key) ? unknownSettings(value, shape[key]!, [...path, key]) : [{ path: [...path, key].join("."), known: Object.keys(shape) }],
  );
}

export function defaultConfig(overrides: z.input<typeof MemoryConfig> = {}): MemoryConfig {
  return MemoryConfig.parse(overrides);
}
export type LlmConfig = MemoryConfig["llm"];
export type EmbedderConfig = MemoryConfig["embedder"];

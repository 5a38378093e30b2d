// The one configuration schema. Every tunable constant lives here with its default, and the
// README quotes this file; nothing else hard-codes a threshold.
import { z } from "zod";

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
    })
    .prefault({}),
  list: z
    .object({
      defaultLimit: z.number().int().positive().default(20),
      maxLimit: z.number().int().positive().default(100),
    })
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
      deadlineMs: z.number().int().positive().default(250),
    })
    .prefault({}),
  forget: z
    .object({
      /** a forget by query matches at most this many memories (the person confirms all of them) */
      maxByQuery: z.number().int().positive().default(50),
    })
    .prefault({}),
});
export type MemoryConfig = z.infer<typeof MemoryConfig>;

export function defaultConfig(overrides: z.input<typeof MemoryConfig> = {}): MemoryConfig {
  return MemoryConfig.parse(overrides);
}

// The context hook's contract: what a prefix request carries and what comes back. One builder
// (core/retrieval/prefix.ts) serves the provider proxy, the gRPC service and the harness.
import type { RequestScope } from "../memory/scope.js";

export interface PrefixRequest {
  /** who is asking: user, project, session (root), thread and its ancestors (root → parent) */
  scope: RequestScope;
  /** the latest user message plus a short window of recent turns */
  task: string;
  /** texts already in the recent history; items found there are not repeated */
  recent?: string[] | undefined;
  /** token budget for the whole prefix; default from config (1,200) */
  budgetTokens?: number | undefined;
}

export type PrefixItemType = "memory" | "skill";

export interface PrefixItem {
  id: string;
  type: PrefixItemType;
  kind: string;
  score: number;
  tokens: number;
  /** why it was chosen, e.g. "matched: deploy, staging" */
  why: string;
}

export type OmitReason = "budget" | "near_duplicate" | "in_history" | "below_threshold" | "flagged" | "pending";

export interface PrefixResult {
  /** the text to put in front of the preamble; "" when nothing relevant was found */
  text: string;
  items: PrefixItem[];
  tokensUsed: number;
  budgetTokens: number;
  omitted: { id: string; reason: OmitReason }[];
  /** true when the memory toolset is disabled for this thread (no prefix at all) */
  disabled: boolean;
}

export interface PrefixBuilder {
  build(req: PrefixRequest): Promise<PrefixResult>;
}

// The learning loop's records (ARCHITECTURE.md "Trace / Episode"): episodes, steps, reward
// signals and explicit feedback. One definition, shared by core/learning and the stores.

/** where an episode's messages were read from */
export type EpisodeSource = "conversation" | "provider_proxy" | "grpc";

export type EpisodeState = "open" | "done" | "interrupted";

export type StepOutcome = "ok" | "error" | "pending";

/** a verifiable outcome read from a tool result (a test run, an exit code) */
export type Verdict = "pass" | "fail";

export interface Step {
  idx: number;
  /** runtime order of the tool call message */
  ord: number;
  tool: string;
  callId: string | null;
  /** sha-256 prefix of the tool name and the abstracted arguments: equal for the same action on other constants */
  argsDigest: string;
  /** the arguments with constants abstracted (paths, numbers, ids), cut to a few hundred characters */
  argsShape: string;
  outcome: StepOutcome;
  verdict: Verdict | null;
  /** head of the result text */
  excerpt: string;
  latencyMs: number | null;
}

export interface ScoredStep extends Step {
  alpha: number;
  value: number | null;
}

/** an edge from an episode to a message it was built from */
export interface EpisodeMessage {
  ord: number;
  messageId: string;
  role: "user" | "assistant" | "tool_call" | "tool_result";
}

/** An episode as the builder produces it (before scoring). */
export interface EpisodeDraft {
  source: EpisodeSource;
  threadId: string;
  rootThreadId: string;
  startOrd: number;
  endOrd: number;
  state: EpisodeState;
  task: string;
  finalExcerpt: string | null;
  steps: Step[];
  messages: EpisodeMessage[];
  /** user texts of the episode (for candidate extraction; not stored beyond `task`) */
  userTexts: { ord: number; messageId: string; text: string }[];
  /** the first user text after the episode, if any (corrections, approvals, "don't remember") */
  nextUserText: { ord: number; messageId: string; text: string } | null;
  /** explicit feedback tool calls seen inside the episode (skill_feedback / task_feedback) */
  feedbackCalls: { tool: string; callId: string | null; args: unknown }[];
  /** hash of what the episode holds, so an unchanged rebuild writes nothing */
  contentHash: string;
}

/**
 * The content hash of an episode a forget blanked: no draft has it, and the stores never rewrite
 * such an episode, so reading its thread again cannot bring the forgotten text back.
 */
export const FORGOTTEN_EPISODE_HASH = "forgotten";

export interface StoredEpisode {
  id: string;
  source: EpisodeSource;
  threadId: string;
  rootThreadId: string;
  startOrd: number;
  endOrd: number;
  state: EpisodeState;
  task: string;
  finalExcerpt: string | null;
  reward: number | null;
  grounded: boolean;
  suppressed: boolean;
  candidatesDone: boolean;
  contentHash: string;
  createdAt: number;
  updatedAt: number;
}

export type SignalKind = "explicit" | "outcome" | "tool_error" | "user_reaction" | "rubric";

export interface RewardSignal {
  kind: SignalKind;
  /** who or what produced it: task_feedback, skill_feedback, tool:<name>, next_user_turn, llm_rubric … */
  source: string;
  value: number;
  weight: number;
  note: string | null;
  /** the same signal observed twice is stored once */
  dedupKey: string;
  at: number;
}

export interface StoredSignal extends RewardSignal {
  id: number;
  episodeId: string;
}

export interface TaskFeedback {
  threadId: string;
  callId: string;
  /** set when the caller named the episode; otherwise resolved from the call's place in the thread */
  episodeId: string | null;
  rating: number;
  note: string | null;
  at: number;
}

export type CandidateDisposition = "created" | "merged" | "withdrawn";

export interface QueueItem {
  source: EpisodeSource;
  threadId: string;
  rootThreadId: string;
  attempts: number;
}

export interface LearningEvent {
  id: number;
  at: number;
  kind: string;
  threadId: string | null;
  episodeId: string | null;
  detail: Record<string, unknown>;
}

// A forget reaches the learning loop's experience. Episodes keep excerpts of the conversation
// (the task, tool results, argument shapes, the final answer) and trace events keep the provider
// proxy's and the gRPC hook's record of model calls, so both held a forgotten memory's text after
// the memory itself was gone. An episode holding it (or the memory's id, which results quoting
// the memory carry) is blanked and never rebuilt; an event holding it is deleted. So is an episode
// built from a message the memory was made from (a candidate's user turn). A learned candidate
// rejected or forgotten leaves its fingerprint, so the loop does not propose it again.
import type { Clock } from "../clock.js";
import type { ForgetHook } from "../memory/service.js";
import { visibilityKey } from "../memory/scope.js";
import { copyMatcher } from "../sessions/forget-needles.js";
import type { LearningStore, MessageRef, RootContextStore, TraceStore } from "../../stores/traits.js";
import { AUTO_EXTRACTED_TAG, candidateFingerprint } from "./candidates.js";

export interface ExperienceForgetDeps {
  learning: Pick<LearningStore, "episodesMentioning" | "forgetEpisodes" | "episodesOfMessages">;
  traces: Pick<TraceStore, "eventsMentioning" | "forgetEvents">;
  /** whose session a root thread is; null when no store says */
  userOfRoot(rootThreadId: string): Promise<string | null>;
  now(): number;
}

/**
 * Forget `user`'s copies of these texts (memory contents and ids) in episodes and trace events,
 * and the episodes built from the messages the memories were made from (`madeFrom`).
 */
export async function forgetExperience(
  d: ExperienceForgetDeps,
  user: string,
  texts: string[],
  madeFrom: MessageRef[] = [],
): Promise<{ episodes: number; events: number }> {
  const m = copyMatcher(texts);
  // Another user's session keeps its own; one nobody claims counts as this user's, so a copy
  // is never kept for want of knowing whose it is.
  const owners = new Map<string, string | null>();
  const theirs = async (root: string | null) => {
    if (root === null) return true;
    if (!owners.has(root)) owners.set(root, await d.userOfRoot(root));
    const owner = owners.get(root);
    return owner === null || owner === user;
  };
  const episodes = new Set<string>();
  for (const e of madeFrom.length > 0 ? await d.learning.episodesOfMessages(madeFrom) : []) {
    if (await theirs(e.rootThreadId)) episodes.add(e.id);
  }
  const events: number[] = [];
  if (m) {
    for (const e of await d.learning.episodesMentioning(m.probes)) {
      if (e.texts.some(m.holds) && (await theirs(e.rootThreadId))) episodes.add(e.id);
    }
    for (const e of await d.traces.eventsMentioning(m.probes)) {
      if (m.holds(e.text) && (await theirs(e.rootThreadId ?? e.threadId))) events.push(e.id);
    }
  }
  if (episodes.size > 0) await d.learning.forgetEpisodes([...episodes], d.now());
  if (events.length > 0) await d.traces.forgetEvents(events);
  return { episodes: episodes.size, events: events.length };
}

/** The forget cascade's step into the learning loop (MemoryService.onForget). */
export function experienceForgetHook(stores: { learning: LearningStore; traces: TraceStore; roots: RootContextStore }, clock: Clock): ForgetHook {
  const d: ExperienceForgetDeps = {
    learning: stores.learning,
    traces: stores.traces,
    userOfRoot: async (root) => (await stores.roots.get(root))?.userId ?? null,
    now: () => clock.now(),
  };
  return {
    beforeForget: async (user, contents, madeFrom, records) => {
      await forgetExperience(d, user, contents, madeFrom);
      // a learned candidate rejected or forgotten, or a memory a candidate was added to as evidence,
      // is not proposed again there (a re-learn after an upgrade reads its messages again): its
      // fingerprint stays, its text does not
      const withText = records.filter((r) => r.content !== "");
      const proposed = await stores.learning.proposedAmong(withText.filter((r) => !r.tags.includes(AUTO_EXTRACTED_TAG)).map((r) => r.id));
      const byKey = new Map<string, string[]>();
      for (const r of withText) {
        if (!r.tags.includes(AUTO_EXTRACTED_TAG) && !proposed.has(r.id)) continue;
        const key = visibilityKey(r.scope);
        byKey.set(key, [...(byKey.get(key) ?? []), candidateFingerprint(r.content)]);
      }
      for (const [key, fps] of byKey) await stores.learning.addRejected(key, fps, clock.now());
    },
  };
}

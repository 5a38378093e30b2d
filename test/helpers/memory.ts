import { join } from "node:path";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import type { RequestScope } from "../../core/memory/scope.js";
import type { Origin } from "../../core/memory/service.js";
import type { RetrievalChannels } from "../../core/retrieval/channels.js";
import { openMemory, type MemoryContext } from "../../cli/context.js";
import { trigramMatch as trigramQuery } from "../../stores/sqlite/trigram-query.js";

export const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);

/** A MATCH expression over the trigram index for rows holding every trigram of one of these words (it keeps no positions: no phrases). */
export function trigramMatch(...words: string[]): string {
  return trigramQuery(words.map((w) => w.toLowerCase()));
}

export function openTestMemory(dir: string, file = "memory.db", channels?: RetrievalChannels): MemoryContext & { clock: ReturnType<typeof fixedClock> } {
  const clock = fixedClock(T0);
  const ctx = openMemory({ dbPath: join(dir, file), config: defaultConfig({ localUser: "alice" }), clock, env: {}, ...(channels ? { channels } : {}) });
  return { ...ctx, clock };
}

export function req(over: Partial<RequestScope> = {}): RequestScope {
  return { user: "alice", project: "/work/proj-a", session: "root-1", thread: "root-1", ancestors: [], ...over };
}

export const modelOrigin = (thread = "root-1", call = "tc-" + Math.random().toString(36).slice(2)): Origin => ({
  actor: "model",
  threadId: thread,
  toolCallId: call,
});

// Live updates: the SSE stream names the topics that changed; each view re-fetches when one of
// its topics moves (useTick goes into its resource's inputs).
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Topic } from "../../api/contract.js";
import type { Api } from "./api.js";

export interface Live {
  api: Api;
  /** per-topic counters, bumped by each change event */
  ticks: Partial<Record<Topic, number>>;
}

export const LiveContext = createContext<Live | null>(null);

export function useLive(): Live {
  const l = useContext(LiveContext);
  if (!l) throw new Error("useLive outside the app");
  return l;
}

/** A number that changes whenever any of `topics` changed. */
export function useTick(...topics: Topic[]): number {
  const { ticks } = useLive();
  return topics.reduce((s, t) => s + (ticks[t] ?? 0), 0);
}

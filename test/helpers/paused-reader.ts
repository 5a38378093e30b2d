// A conversation reader whose first history read waits until the test releases it: an indexing
// run caught mid-way, as a run over many threads would be, while the test changes the world.
import type { ConversationReader } from "../../stores/infinity/traits.js";
import type { ToleratedEntry } from "../../stores/traits.js";

export function pauseFirstLoad(inner: ConversationReader): { reader: ConversationReader; loaded: Promise<void>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let read!: () => void;
  const loaded = new Promise<void>((r) => (read = r));
  let loads = 0;
  const reader = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      // either history read: the indexer reads the daemon's files tolerantly
      if ((prop !== "loadMessagesWithIds" && prop !== "loadMessagesTolerant") || typeof v !== "function") return typeof v === "function" ? v.bind(target) : v;
      return async (...args: unknown[]) => {
        const out = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        if (loads++ === 0) {
          read();
          await gate;
        }
        return out;
      };
    },
  });
  return { reader, loaded, release };
}

/** the reader as a version that did not know the messages `ids` are: it leaves them out */
export function olderReader(inner: ConversationReader, ids: Set<string>): ConversationReader {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "messageFormat") return () => "an-older-format";
      if (prop === "loadMessagesTolerant") {
        return async (...args: [string, number?, number?]) =>
          (await target.loadMessagesTolerant!(...args)).map((e): ToleratedEntry => (ids.has(e[1]) ? [null, e[1], "hologram"] : e));
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

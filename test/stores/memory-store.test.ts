import { describe, expect, it } from "vitest";
import { sequentialThreadIds } from "../../stores/infinity/ids.js";
import { MemoryConversationStore, MemoryStateStore } from "../../stores/infinity/memory-store.js";
import { conformance } from "./conformance.js";

conformance("in-memory", async () => ({
  conversation: new MemoryConversationStore(),
  state: new MemoryStateStore(),
}));

describe("in-memory thread ids", () => {
  it("takes ids from the injected source, like the daemon's SequentialIdSource", async () => {
    const c = new MemoryConversationStore({ newThreadId: sequentialThreadIds() });
    await c.ensureRootThread("r");
    expect(await c.spawnThread("r", "tc", false)).toBe("00000000-0000-4000-8000-000000000001");
    expect(await c.spawnThread("r", "tc", false)).toBe("00000000-0000-4000-8000-000000000002");
  });
});

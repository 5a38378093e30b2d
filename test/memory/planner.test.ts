// Search on a store past the planner's postings budget: common terms are pruned, rows are
// filtered after ranking, and scope stays exact.
import { describe, expect, it } from "vitest";
import { newId } from "../../core/ids.js";
import { recordScopeFor } from "../../core/memory/scope.js";
import { contentHash } from "../../core/memory/write-policy.js";
import { POSTINGS_BUDGET } from "../../stores/sqlite/fts-planner.js";
import { openTestMemory, req, T0 } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

describe("search on a large store", () => {
  it("stays scope-exact and finds rare terms when common terms are pruned", async () => {
    const m = openTestMemory(tempDir());
    const alice = req({ user: "alice" });
    const bob = req({ user: "bob", session: "b1", thread: "b1" });
    const n = POSTINGS_BUDGET + 2000;
    m.db.transaction(() => {
      for (let i = 0; i < n; i++) {
        // Bob owns most of the store, so for him the scope keys are not selective.
        const who = i % 4 === 0 ? alice : bob;
        const content = `${who.user} notes that the deploy pipeline runs step ${i}${i === 4321 ? " with the zebrafish canary" : ""}`;
        const id = newId("mem", T0 + i);
        void m.store.insert(
          {
            id,
            lineageId: id,
            scope: recordScopeFor(who, "user"),
            kind: "note",
            content,
            tags: [],
            trust: "model_inferred",
            confidence: 0.7,
            status: "active",
            flags: [],
            version: 1,
            supersedes: null,
            validFrom: null,
            validTo: null,
            createdAt: T0 + i,
            expiresAt: null,
            contentHash: contentHash(content),
            source: { threadId: who.thread, messageIds: [], toolCallId: `bulk-${i}`, actor: "model", at: T0 + i },
          },
          { at: T0, actor: "test", action: "create", targetKind: "memory", targetId: id, detail: {} },
        );
      }
    })();
    const bobHits = await m.service.search({ thread: bob }, { query: "deploy pipeline zebrafish canary", limit: 5 });
    expect(bobHits[0]?.record.content).toContain("zebrafish");
    expect(bobHits.every((h) => h.record.scope.user === "bob")).toBe(true);
    const common = await m.service.search({ thread: bob }, { query: "deploy pipeline", limit: 20 });
    expect(common).toHaveLength(20);
    expect(common.every((h) => h.record.scope.user === "bob")).toBe(true);
    const aliceHits = await m.service.search({ thread: alice }, { query: "deploy pipeline zebrafish", limit: 20 });
    expect(aliceHits).toHaveLength(20);
    expect(aliceHits.every((h) => h.record.scope.user === "alice")).toBe(true);
    expect(aliceHits.some((h) => h.record.content.includes("zebrafish"))).toBe(false);
    m.close();
  });
});

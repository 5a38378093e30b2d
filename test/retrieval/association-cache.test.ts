// The semantic channel's index cache: which scopes go when too many are held.
import { describe, expect, it } from "vitest";
import { AssociationCache, CHEAP_REBUILD, MAX_SCOPES } from "../../core/retrieval/association-cache.js";
import { AssociationIndex } from "../../core/retrieval/associations.js";

function index(memories: number): AssociationIndex {
  const ix = new AssociationIndex();
  for (let i = 0; i < memories; i++) ix.add(i + 1, `t${i % 7}`, `note ${i} about the deploy pipeline and topic ${i % 13}`);
  return ix;
}

describe("association index cache", () => {
  it("over the scope count, the least recently used small scope goes before a large one", () => {
    const cache = new AssociationCache();
    const big = index(CHEAP_REBUILD);
    cache.put("user", big, 1);
    for (let i = 0; i < MAX_SCOPES; i++) cache.put(`session-${i}`, index(3), 1);
    // one past the bound: the large scope is the least recently used, yet the oldest small one goes
    cache.evict(new Set([`session-${MAX_SCOPES - 1}`]));
    expect(cache.loaded).toBe(MAX_SCOPES);
    expect(cache.current("user", 1)).toBe(big);
    expect(cache.current("session-0", 1)).toBeUndefined();
    expect(cache.current("session-1", 1)).toBeDefined();
  });

  it("past the memory bound the least recently used goes, large or not; a scope being read stays", () => {
    const cache = new AssociationCache(CHEAP_REBUILD + 10);
    const big = index(CHEAP_REBUILD);
    cache.put("user", big, 1);
    cache.put("session-a", index(6), 1);
    cache.put("session-b", index(6), 1);
    cache.evict(new Set(["session-b"]));
    expect(cache.current("user", 1)).toBeUndefined();
    expect(cache.current("session-a", 1)).toBeDefined();
    expect(cache.current("session-b", 1)).toBeDefined();
    // the scopes a search reads stay even over the bound
    cache.put("user", big, 1);
    cache.evict(new Set(["user", "session-a", "session-b"]));
    expect(cache.loaded).toBe(3);
  });
});

// The semantic channel's index cache: which scopes go when too many are held.
import { describe, expect, it } from "vitest";
import { AssociationCache, CHEAP_REBUILD, FOLLOW_MAX_ADDS, MAX_SCOPES } from "../../core/retrieval/association-cache.js";
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

describe("a scope at its cap", () => {
  const windowOf = (ix: AssociationIndex, key: string) => {
    const { windows, touched, counts } = ix.cooccurrence(key, 2);
    const words = touched.map((id) => `${ix.wordOf(id)}:${counts[id]}`).sort();
    for (const id of touched) counts[id] = 0; // the scratch counts are the caller's to clear
    return { windows, words };
  };

  it("takes a new memory in place of its oldest instead of dropping the index (a rebuild after every write)", () => {
    const cache = new AssociationCache(1000, 4);
    const ix = new AssociationIndex();
    ix.add(1, "t1", "quinoa salad recipe");
    ix.add(2, "t1", "pottery class tuesday");
    ix.add(3, "t2", "kayak rental weekend");
    ix.add(4, "t1", "quinoa bowl lunch");
    cache.put("user", ix, 7);
    cache.updated("user", 7, 8, { remove: [], add: [{ rowid: 5, thread: "t2", content: "kayak paddle repair" }] });
    const after = cache.current("user", 8);
    expect(after).toBe(ix);
    expect(ix.size).toBe(4);
    expect(ix.keysOf(1)).toEqual([]);
    // the oldest memory's words count only where others still hold them
    expect(ix.df("salad")).toBe(0);
    expect(ix.df("quinoa")).toBe(1);
    expect(ix.df("kayak")).toBe(2);
    // conversation order holds without it: pottery's window is the two quinoa-free turns left in t1
    expect(windowOf(ix, "pottery")).toEqual({ windows: 2, words: ["bowl:1", "class:1", "lunch:1", "pottery:1", "quinoa:1", "tuesday:1"] });
    expect(windowOf(ix, "salad")).toEqual({ windows: 0, words: [] });
    // below the cap nothing is taken out
    const small = new AssociationCache(1000, 10);
    const ix2 = new AssociationIndex();
    ix2.add(1, "t1", "quinoa salad recipe");
    small.put("user", ix2, 1);
    small.updated("user", 1, 2, { remove: [], add: [{ rowid: 2, thread: "t1", content: "pottery class" }] });
    expect(small.current("user", 2)?.size).toBe(2);
  });

  it("still drops the index when another writer changed the scope in between", () => {
    const cache = new AssociationCache(1000, 2);
    const ix = new AssociationIndex();
    ix.add(1, "t1", "quinoa salad");
    ix.add(2, "t1", "pottery class");
    cache.put("user", ix, 3);
    cache.updated("user", 4, 5, { remove: [], add: [{ rowid: 9, thread: "t1", content: "kayak trip" }] });
    expect(cache.current("user", 5)).toBeUndefined();
  });

  it("a batch of more than FOLLOW_MAX_ADDS memories drops the index (a rebuild is cheaper); one of that many follows", () => {
    const batch = (n: number, from: number) => Array.from({ length: n }, (_, i) => ({ rowid: from + i, thread: "t1", content: `imported note ${i}` }));
    const cache = new AssociationCache();
    cache.put("user", index(10), 1);
    cache.updated("user", 1, 2, { remove: [], add: batch(FOLLOW_MAX_ADDS, 100) });
    expect(cache.current("user", 2)?.size).toBe(10 + FOLLOW_MAX_ADDS);
    cache.updated("user", 2, 3, { remove: [], add: batch(FOLLOW_MAX_ADDS + 1, 5_000) });
    expect(cache.current("user", 3)).toBeUndefined();
    expect(cache.loaded).toBe(0);
  });

  it("memories added in any order (a build reads the newest first) have the windows of turn order, also after removals", () => {
    const texts = ["alpha ant", "bravo bee", "charlie cat", "delta dog", "echo eel", "foxtrot fox", "golf gnu"];
    const build = (order: number[]) => {
      const ix = new AssociationIndex();
      for (const i of order) ix.add(i + 1, "t", texts[i]!);
      ix.add(100, "other", "delta elsewhere");
      return ix;
    };
    const inOrder = build([0, 1, 2, 3, 4, 5, 6]);
    const views = (ix: AssociationIndex) => texts.map((t) => windowOf(ix, t.split(" ")[0]!));
    for (const order of [[6, 5, 4, 3, 2, 1, 0], [3, 0, 6, 1, 5, 2, 4]]) {
      const ix = build(order);
      expect(views(ix)).toEqual(views(inOrder));
      // delta's windows: two turns on each side in its own conversation, and its other memory alone
      expect(windowOf(ix, "delta")).toEqual({ windows: 6, words: ["bee:1", "bravo:1", "cat:1", "charlie:1", "delta:2", "dog:1", "echo:1", "eel:1", "elsewhere:1", "fox:1", "foxtrot:1"] });
      for (const x of [inOrder, ix]) {
        x.remove(3);
        x.remove(6);
      }
      expect(views(ix)).toEqual(views(inOrder));
      // with turns 3 and 6 gone it reaches turns 1 and 7
      expect(windowOf(ix, "delta")).toEqual({ windows: 6, words: ["alpha:1", "ant:1", "bee:1", "bravo:1", "delta:2", "dog:1", "echo:1", "eel:1", "elsewhere:1", "gnu:1", "golf:1"] });
      inOrder.add(3, "t", texts[2]!);
      inOrder.add(6, "t", texts[5]!);
    }
  });

  it("removing memories leaves a conversation's other turns in order and empties nothing it should not", () => {
    const ix = new AssociationIndex();
    for (let i = 1; i <= 6; i++) ix.add(i, "t", `turn${i} common`);
    expect(ix.remove(3)).toBe(true);
    expect(ix.remove(3)).toBe(false);
    expect(ix.oldest()).toBe(1);
    ix.remove(1);
    expect(ix.oldest()).toBe(2);
    expect(ix.df("common")).toBe(4);
    // turn2's window (2 each side) now reaches turn4 and turn5 (turn1 and turn3 are gone)
    expect(windowOf(ix, "turn2").words).toEqual(["common:3", "turn2:1", "turn4:1", "turn5:1"]);
    for (const r of [2, 4, 5, 6]) ix.remove(r);
    expect(ix.size).toBe(0);
    expect(ix.oldest()).toBeUndefined();
    expect(ix.df("common")).toBe(0);
    // nothing of the removed memories' words is left, and new words take their ids
    expect(ix.vocabulary).toBe(0);
    expect(ix.idOf("turn2")).toBeUndefined();
    ix.add(10, "u", "kayak paddle");
    expect(ix.vocabulary).toBe(2);
    expect(ix.idOf("kayak")).toBeLessThan(7);
    expect(ix.wordOf(ix.idOf("paddle")!)).toBe("paddle");
    expect(windowOf(ix, "kayak")).toEqual({ windows: 1, words: ["kayak:1", "paddle:1"] });
  });
});

import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import { MemoryService } from "../../core/memory/service.js";
import { AssociationIndex, DEFAULT_ASSOCIATIONS, expandQuery, scoreExpanded, textKeys, wordKey, withinBudget } from "../../core/retrieval/associations.js";
import { parseChannels } from "../../core/retrieval/channels.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteMemoryStore } from "../../stores/sqlite/memory-store.js";
import { SemanticIndexes } from "../../stores/sqlite/semantic-index.js";
import { tempDir } from "../helpers/tmp.js";
import { ALICE, BOB, expectScopesApart, FILLER, followsBatchExpiryForget, followsCorrectionAndFlag, turnWriter, userKey, userReq } from "./semantic-fixtures.js";

async function setup(channels = parseChannels("lexical,context,trigram,semantic")) {
  const dir = tempDir();
  const db = openDatabase(join(dir, "memory.db"));
  const clock = fixedClock(Date.UTC(2024, 0, 1));
  const config = defaultConfig({ localUser: "alice" });
  const store = new SqliteMemoryStore(db, channels);
  const svc = new MemoryService(store, clock, config);
  return { db, store, svc, req: userReq, write: turnWriter(svc, clock), key: userKey, clock };
}

describe("association index (pure)", () => {
  it("stems plurals and -ing forms alike and drops stop words and numbers", () => {
    expect(wordKey("paintings")).toBe(wordKey("painting"));
    expect(wordKey("glass")).toBe("glass");
    expect(textKeys("What are the 3 paintings about?")).toEqual(["painting"].map(wordKey));
  });

  it("expands a query with words that share its windows, deterministically", () => {
    const ix = new AssociationIndex();
    [...ALICE].forEach((t, i) => ix.add(i + 1, "t", t));
    const a = expandQuery([ix], "pottery");
    expect([...a]).toEqual([...expandQuery([ix], "pottery")]);
    expect(a.get("pottery")).toBe(1);
    expect(a.has(wordKey("clay"))).toBe(true);
    expect(a.get(wordKey("clay"))!).toBeLessThan(1);
    expect(a.has(wordKey("football"))).toBe(false);
    // a clay memory without the word "pottery" scores through the expansion
    const top = scoreExpanded([ix], a, 5).map((h) => h.rowid);
    expect(top).toContain(3);
  });

  it("bounds its work: words are taken rarest first within the postings budget", () => {
    const df = (w: string) => ({ rare: 3, mid: 40, common: 900 })[w] ?? 0;
    expect(withinBudget(["common", "mid", "absent", "rare"], df, 500)).toEqual(["rare", "mid"]);
    expect(withinBudget(["common"], df, 100)).toEqual([]);
    const ix = new AssociationIndex();
    [...ALICE].forEach((t, i) => ix.add(i + 1, "t", t));
    expect([ix.df(wordKey("clay")), ix.df(wordKey("glaze"))]).toEqual([3, 3]);
    // with room for three postings only "clay" (first by name among equals) is scored
    const tight = { ...DEFAULT_ASSOCIATIONS, postingsBudget: 3 };
    const query = new Map([[wordKey("clay"), 1], [wordKey("glaze"), 1]]);
    const clayOnly = scoreExpanded([ix], new Map([[wordKey("clay"), 1]]), 20, tight);
    expect(scoreExpanded([ix], query, 20, tight)).toEqual(clayOnly);
    expect(scoreExpanded([ix], query, 20)).not.toEqual(clayOnly);
  });
  it("several scopes count together exactly as one index holding all their memories", () => {
    // A small vocabulary over four conversations in three scopes (plus an empty one), so pair
    // counts split across scopes and words that only the smaller scopes hold both occur.
    const vocab = ["kayak", "river", "rapids", "helmet", "paddle", "camping", "tent", "stove", "trail", "map", "compass", "boots"];
    let seed = 11;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const text = (extra: string) => [0, 1, 2, 3].map(() => vocab[Math.floor(rnd() * vocab.length)]).join(" ") + extra;
    const [a, b, c, empty, merged] = [0, 1, 2, 3, 4].map(() => new AssociationIndex());
    let rowid = 0;
    const add = (ix: AssociationIndex, thread: string, extra = "") => {
      const t = text(extra);
      rowid++;
      ix.add(rowid, thread, t);
      merged!.add(rowid, thread, t);
    };
    for (let i = 0; i < 60; i++) add(a!, "t1");
    for (let i = 0; i < 40; i++) add(b!, "t2", i % 5 === 0 ? " canoe" : "");
    for (let i = 0; i < 30; i++) add(a!, "t3");
    for (let i = 0; i < 8; i++) add(c!, "t4", " canoe portage");
    for (const q of ["kayak", "canoe", "tent stove", "portage river"]) {
      const several = expandQuery([a!, empty!, c!, b!], q);
      const one = expandQuery([merged!], q);
      expect([...several].sort()).toEqual([...one].sort());
      expect(scoreExpanded([c!, a!, empty!, b!], several, 15)).toEqual(scoreExpanded([merged!], one, 15));
    }
    expect(expandQuery([a!, b!, c!], "portage").size).toBeGreaterThan(1);
  });
});

describe("semantic channel in the store", () => {
  it("one user's text never shapes another user's expansions or results", async () => {
    const { db, store, svc, write } = await setup();
    const sem = new SemanticIndexes(db);
    await expectScopesApart(svc, write, (k) => sem.indexesFor([k]));
    store.close();
  });

  it("a new memory joins the loaded index; a forgotten one leaves nothing behind", async () => {
    const { db, store, svc, req, write, key } = await setup();
    for (const [i, t] of ALICE.entries()) await write("alice", t, i);
    // Load alice's index inside the store through a search, then add to it.
    await svc.search({ thread: req("alice") }, { query: "pottery", limit: 5 });
    const secret = await write("alice", "pottery night: zanzibar quokka clay figurines", 99);
    await write("alice", "more zanzibar quokka pottery tomorrow", 100);
    const before = await svc.search({ thread: req("alice") }, { query: "zanzibar", limit: 20 });
    expect(before.map((h) => h.record.id)).toContain(secret.id);
    const forgotten = await svc.forget({ thread: req("alice") }, [secret.id], { actor: "user", threadId: "alice-t", toolCallId: null });
    expect(forgotten).toEqual([secret.id]);
    // The store's own index (in its worker) let it go in place; a fresh build from the table agrees.
    const ix = new SemanticIndexes(db).indexesFor([key("alice")])[0]!;
    const keys = new Set<string>();
    for (let r = 1; r < 1000; r++) for (const k of ix.keysOf(r)) keys.add(k);
    expect(keys.has(wordKey("figurines"))).toBe(false);
    const after = await svc.search({ thread: req("alice") }, { query: "figurines zanzibar pottery", limit: 50 });
    expect(after.map((h) => h.record.id)).not.toContain(secret.id);
    for (const h of after) expect(h.record.content).not.toContain("figurines");
    store.close();
  });
});

describe("semantic index upkeep", () => {
  it("grows in place on insert, rebuilds after a change, and notices another connection's writes", async () => {
    const { db, store, write, key } = await setup();
    for (const [i, t] of ALICE.entries()) await write("alice", t, i);
    const token = () => (db.prepare(`SELECT token FROM scope_tokens WHERE vis_key = ?`).get(key("alice")) as { token: number }).token;
    const sem = new SemanticIndexes(db);
    const ix = sem.indexesFor([key("alice")])[0]!;
    expect(ix.size).toBe(ALICE.length);
    // as the store does: renew the scope's token in the write, then report the insert with both tokens
    const prev = token();
    db.prepare(`UPDATE scope_tokens SET token = ? WHERE vis_key = ?`).run(prev + 1, key("alice"));
    sem.updated(key("alice"), prev, prev + 1, { remove: [], add: [{ rowid: 10_000, thread: "alice-t", content: "a brand new kumquat memory" }] });
    expect(sem.indexesFor([key("alice")])[0]).toBe(ix);
    expect(ix.df(wordKey("kumquat"))).toBe(1);
    // an insert reported against a token the index never saw: the index is stale and goes
    sem.updated(key("alice"), prev, prev + 2, { remove: [], add: [{ rowid: 10_001, thread: "alice-t", content: "a stale report" }] });
    expect(sem.loaded).toBe(0);
    const rebuilt = sem.indexesFor([key("alice")])[0]!;
    expect(rebuilt).not.toBe(ix);
    expect(rebuilt.df(wordKey("kumquat"))).toBe(0);
    const current = sem.indexesFor([key("alice")])[0]!;
    expect(current).toBe(rebuilt);
    // a second connection to the same file writes: its new token makes the first one rebuild
    const other = new SqliteMemoryStore(openDatabase(db.name));
    const svc2 = new MemoryService(other, fixedClock(Date.UTC(2024, 1, 1)), defaultConfig({ localUser: "alice" }));
    await svc2.remember({ user: "alice", project: null, session: "alice-t", thread: "alice-t", ancestors: [] },
      { content: "persimmon pottery with clay", kind: "note", scope: "user", userStated: true },
      { actor: "user", threadId: "alice-t", toolCallId: null, messageIds: ["x"] });
    other.close();
    const fresh = sem.indexesFor([key("alice")])[0]!;
    expect(fresh).not.toBe(current);
    expect(fresh.df(wordKey("persimmon"))).toBe(1);
    store.close();
  });
});

describe("semantic index upkeep by the store's own writes", () => {
  it("follows a repeated fact, a correction and a flagged memory in place, and agrees with a fresh build", async () => {
    // an in-memory database: the channel runs on the store's thread, where its index can be seen
    const db = openDatabase(":memory:");
    const clock = fixedClock(Date.UTC(2024, 0, 1));
    const store = new SqliteMemoryStore(db, parseChannels("lexical,context,trigram,semantic"));
    const svc = new MemoryService(store, clock, defaultConfig({ localUser: "alice" }));
    const write = turnWriter(svc, clock);
    for (const [i, t] of ALICE.entries()) await write("alice", t, i);
    await svc.search({ thread: userReq("alice") }, { query: "pottery", limit: 5 });
    const sem = (store as unknown as { semantic: { indexes: SemanticIndexes } }).semantic.indexes;
    const ix = sem.indexesFor([userKey("alice")])[0]!;
    const loaded = () => sem.indexesFor([userKey("alice")])[0];
    const origin = (thread: string) => ({ actor: "user" as const, threadId: thread, toolCallId: null, messageIds: [`${thread}-m`] });

    const fact = await write("alice", "kumquat marmalade on rye is my favourite", 50);
    expect(loaded()).toBe(ix);
    expect(ix.df(wordKey("kumquat"))).toBe(1);
    // the same fact said again in another conversation: a new source, the same index entry
    const again = await svc.remember(userReq("alice"), { content: fact.content, kind: "note", scope: "user", userStated: true }, origin("alice-t2"));
    expect(again.status).toBe("duplicate");
    expect(loaded()).toBe(ix);
    expect(ix.df(wordKey("kumquat"))).toBe(1);
    // a correction, then a flagged memory and its confirmation
    await followsCorrectionAndFlag(svc, fact, ix, loaded);
    // a batch import joins in place; an expired memory and forgotten ones leave it
    await followsBatchExpiryForget(svc, clock, write, ix, loaded);
    // what the store kept in place is what a fresh build reads
    const fresh = new SemanticIndexes(db).indexesFor([userKey("alice")])[0]!;
    expect(ix.size).toBe(fresh.size);
    expect(ix.vocabulary).toBe(fresh.vocabulary);
    for (const w of ["kumquat", "persimmon", "marmalade", "quokka", "pottery", "tamarind", "yuzu", "zanzibar"]) expect(ix.df(wordKey(w)), w).toBe(fresh.df(wordKey(w)));
    store.close();
  });
});

describe("semantic index memory bound", () => {
  it("drops the least recently used scopes once the loaded indexes hold more memories than allowed, never the ones a search reads", async () => {
    const { db, store, write, key } = await setup();
    for (const [i, t] of ALICE.entries()) await write("alice", t, i);
    for (const [i, t] of BOB.entries()) await write("bob", t, i);
    for (const [i, t] of ALICE.slice(0, 4).entries()) await write("carol", t, i);
    const sizes = { alice: ALICE.length, bob: BOB.length, carol: 4 };
    // room for two of the three scopes
    const sem = new SemanticIndexes(db, sizes.alice + sizes.bob);
    sem.indexesFor([key("alice")]);
    sem.indexesFor([key("bob")]);
    expect(sem.held).toBe(sizes.alice + sizes.bob);
    // Carol's scope pushes out the least recently used one (Alice's)
    const bobIx = sem.indexesFor([key("bob")])[0];
    sem.indexesFor([key("carol")]);
    expect(sem.held).toBe(sizes.bob + sizes.carol);
    expect(sem.indexesFor([key("bob")])[0]).toBe(bobIx);
    // one search over all three keeps all three, over the bound for as long as it needs them
    const all = sem.indexesFor([key("alice"), key("bob"), key("carol")]);
    expect(all.map((ix) => ix.size)).toEqual([sizes.alice, sizes.bob, sizes.carol]);
    expect(sem.loaded).toBe(3);
    // the next search reads Carol's alone: the oldest go until the bound holds again
    sem.indexesFor([key("carol")]);
    expect(sem.held).toBeLessThanOrEqual(sizes.alice + sizes.bob);
    expect(sem.loaded).toBe(2);
    store.close();
  });
});

describe("neighbour spreading", () => {
  it("the answer after a matching question rises even when it shares no word with the query", async () => {
    const turns = [
      "Alice: what did you cook on sunday for the family dinner?",
      "Bob: lasagna with my grandmother, from her old recipe",
      ...FILLER.map((f) => `Bob: ${f}`),
    ];
    for (const [channels, expectAnswer] of [
      [parseChannels("neighbours"), true],
      [parseChannels(""), false],
    ] as const) {
      const { store, svc, req, write } = await setup(channels);
      const ids: string[] = [];
      for (const [i, t] of turns.entries()) ids.push((await write("alice", t, i)).id);
      const hits = await svc.search({ thread: req("alice") }, { query: "cook sunday family dinner", limit: 5 });
      expect(hits.map((h) => h.record.id).includes(ids[1]!)).toBe(expectAnswer);
      store.close();
    }
  });
});

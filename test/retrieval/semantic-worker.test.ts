import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import { visibilityKey, type RequestScope } from "../../core/memory/scope.js";
import { MemoryService } from "../../core/memory/service.js";
import { parseChannels } from "../../core/retrieval/channels.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteMemoryStore } from "../../stores/sqlite/memory-store.js";
import { InThreadSemantic, semanticChannel, WARM_UP, WorkerSemantic, type SemanticChannel } from "../../stores/sqlite/semantic-channel.js";
import { SemanticIndexes } from "../../stores/sqlite/semantic-index.js";
import { tempDir } from "../helpers/tmp.js";

// Two users talk about the same hobby in different words; filler gives the counts a background.
const FILLER = ["the weather was grey and windy", "my brother called about the match", "the train was late again", "we watched a movie about space"];
const ALICE = ["I signed up for a pottery course", "we shaped wet clay and painted a glaze", "the clay bowls need a second glaze", ...FILLER, "pottery again, more clay on my jeans"];
const BOB = ["my pottery teacher fired the kiln", "the kiln cracked two vases", ...FILLER, "pottery vases from the kiln look great"];

function setup() {
  const dir = tempDir();
  const db = openDatabase(join(dir, "memory.db"));
  const clock = fixedClock(Date.UTC(2024, 0, 1));
  const store = new SqliteMemoryStore(db, parseChannels("lexical,context,semantic"));
  const svc = new MemoryService(store, clock, defaultConfig({ localUser: "alice" }));
  const req = (user: string): RequestScope => ({ user, project: null, session: `${user}-t`, thread: `${user}-t`, ancestors: [] });
  const key = (user: string) => visibilityKey({ level: "user", user, project: null, session: null, thread: null });
  const write = async (user: string, content: string) => {
    clock.advance(1000);
    const { record } = await svc.remember(req(user), { content, kind: "note", scope: "user", userStated: true }, {
      actor: "user",
      threadId: `${user}-t`,
      toolCallId: null,
      messageIds: [`${user}-${clock.now()}`],
    });
    return record;
  };
  return { dir, db, store, svc, req, key, write };
}

const tokenOf = (db: ReturnType<typeof openDatabase>, key: string) =>
  (db.prepare(`SELECT token FROM scope_tokens WHERE vis_key = ?`).get(key) as { token: number } | undefined)?.token ?? null;
const rowidOf = (db: ReturnType<typeof openDatabase>, id: string) => (db.prepare(`SELECT rowid FROM memories WHERE id = ?`).get(id) as { rowid: number }).rowid;

describe("semantic channel in a worker thread", () => {
  it("runs in a worker on a database file and scores exactly as on the store's thread", async () => {
    const { db, store, write, key } = setup();
    for (const t of ALICE) await write("alice", t);
    for (const t of BOB) await write("bob", t);
    const worker = semanticChannel(db);
    expect(worker).toBeInstanceOf(WorkerSemantic);
    const local = new InThreadSemantic(db);
    for (const [keys, text] of [
      [[key("alice")], "pottery"],
      [[key("bob")], "pottery kiln"],
      [[key("alice"), key("bob")], "clay vases"],
      [[key("alice")], "nothing matches this"],
    ] as const) {
      const got = await worker.score([...keys], text, 10);
      expect(got).toEqual(local.scoreNow([...keys], text, 10));
    }
    expect((worker as WorkerSemantic).running).toBe(true);
    // Alice's expansion of "pottery" reaches her clay turns and never Bob's kiln turns.
    const bobRows = new Set((db.prepare(`SELECT rowid FROM memories WHERE user_id = 'bob'`).all() as { rowid: number }[]).map((r) => r.rowid));
    const alice = await worker.score([key("alice")], "pottery", 20);
    expect(alice.length).toBeGreaterThan(1);
    for (const h of alice) expect(bobRows.has(h.rowid)).toBe(false);
    worker.close();
    local.close();
    store.close();
  });

  it("an in-memory database keeps the channel on the store's thread", () => {
    const db = openDatabase(":memory:");
    expect(semanticChannel(db)).toBeInstanceOf(InThreadSemantic);
    db.close();
  });

  it("follows the store's writes in order: a new memory joins, a forgotten one is gone from the next search", async () => {
    const { db, store, svc, req, write, key } = setup();
    for (const t of ALICE) await write("alice", t);
    // load Alice's index in the store's worker, then change it through the store
    const first = await svc.search({ thread: req("alice") }, { query: "pottery", limit: 10 });
    expect(first.length).toBeGreaterThan(0);
    const secret = await write("alice", "pottery night: zanzibar quokka clay figurines");
    await write("alice", "more zanzibar quokka pottery tomorrow");
    const found = await svc.search({ thread: req("alice") }, { query: "quokka", limit: 20 });
    expect(found.map((h) => h.record.id)).toContain(secret.id);
    await svc.forget({ thread: req("alice") }, [secret.id], { actor: "user", threadId: "alice-t", toolCallId: null });
    const after = await svc.search({ thread: req("alice") }, { query: "figurines zanzibar quokka", limit: 50 });
    expect(after.map((h) => h.record.id)).not.toContain(secret.id);
    // the store's own channel (its worker) dropped the memory from every index it holds
    const own = (store as unknown as { semantic: SemanticChannel }).semantic;
    expect(own).toBeInstanceOf(WorkerSemantic);
    const hits = await own.score([key("alice")], "zanzibar quokka figurines", 50);
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.map((h) => h.rowid)).not.toContain(rowidOf(db, secret.id));
    store.close();
  });

  it("notices a write it was not told about through the scope's token, and leaves other scopes' indexes alone", async () => {
    const { db, store, svc, req, write, key } = setup();
    for (const t of ALICE) await write("alice", t);
    for (const t of BOB) await write("bob", t);
    const secret = await write("alice", "zanzibar quokka figurines");
    const rowid = rowidOf(db, secret.id);
    const ch = semanticChannel(db);
    expect((await ch.score([key("alice")], "quokka", 10)).map((h) => h.rowid)).toContain(rowid);
    // the store forgets through its own channel; this one hears nothing, the token tells it
    await svc.forget({ thread: req("alice") }, [secret.id], { actor: "user", threadId: "alice-t", toolCallId: null });
    expect((await ch.score([key("alice")], "quokka", 10)).map((h) => h.rowid)).not.toContain(rowid);
    // a scope nobody wrote keeps its index: the same tokens, the same scores, no rebuild
    const inThread = new InThreadSemantic(db);
    const bobBefore = inThread.scoreNow([key("bob")], "kiln", 10);
    const loadedBefore = (inThread as unknown as { indexes: { loaded: number } }).indexes.loaded;
    await write("alice", "another pottery evening");
    expect(inThread.scoreNow([key("bob")], "kiln", 10)).toEqual(bobBefore);
    expect((inThread as unknown as { indexes: { loaded: number } }).indexes.loaded).toBe(loadedBefore);
    ch.close();
    inThread.close();
    store.close();
  });

  it("writes committed while a search waits its turn in the worker rebuild nothing: the search takes their updates first", async () => {
    const { db, store, svc, req, write, key } = setup();
    for (const t of ALICE) await write("alice", t);
    // Carol's large scope keeps the worker busy building it while Alice's search waits its turn.
    const carol: RequestScope = { user: "carol", project: null, session: "carol-t", thread: "carol-t", ancestors: [] };
    const origin = { actor: "user" as const, threadId: "carol-t", toolCallId: null };
    for (let start = 0; start < 20_000; start += 5_000) {
      const items = Array.from({ length: 5_000 }, (_, i) => ({
        req: carol,
        input: { content: `carol note ${start + i}: the ${FILLER[i % FILLER.length]} near lake ${start + i}`, kind: "note" as const, scope: "user" as const },
        origin,
      }));
      await svc.rememberMany(items);
    }
    expect(await svc.search({ thread: req("alice") }, { query: "pottery", limit: 10 })).not.toHaveLength(0);
    const own = (store as unknown as { semantic: WorkerSemantic }).semantic;
    await own.score([key("alice")], "pottery", 10);
    const before = own.builds;
    // Queued behind Carol's build: a search of Alice's scope, then two writes to it that commit
    // (and tell the worker) before the worker reaches that search.
    const busy = own.score([key("carol")], "lake", 10);
    const waiting = own.score([key("alice")], "pottery clay", 10);
    const a = await write("alice", "pottery glaze recipe from the zanzibar workshop");
    const b = await write("alice", "the zanzibar workshop fires clay on fridays");
    await busy;
    const got = await waiting;
    // Carol's scope was built once; Alice's index followed both writes in place, so nothing else was read.
    expect(own.builds).toBe(before + 1);
    expect((await own.score([key("alice")], "zanzibar", 10)).map((h) => h.rowid)).toEqual(expect.arrayContaining([rowidOf(db, a.id), rowidOf(db, b.id)]));
    expect(own.builds).toBe(before + 1);
    // and the scores are the ones a fresh read of the scope gives
    const fresh = new InThreadSemantic(db);
    expect(got).toEqual(fresh.scoreNow([key("alice")], "pottery clay", 10));
    fresh.close();
    store.close();
  }, 60_000);

  it("another connection's commit reaches the worker's indexes (the scope token tells it)", async () => {
    const { db, store, write, key } = setup();
    for (const t of ALICE) await write("alice", t);
    const ch = semanticChannel(db);
    const before = await ch.score([key("alice")], "persimmon", 10);
    expect(before).toEqual([]);
    const other = new SqliteMemoryStore(openDatabase(db.name));
    const svc2 = new MemoryService(other, fixedClock(Date.UTC(2024, 1, 1)), defaultConfig({ localUser: "alice" }));
    const { record } = await svc2.remember(
      { user: "alice", project: null, session: "alice-t", thread: "alice-t", ancestors: [] },
      { content: "persimmon pottery with clay", kind: "note", scope: "user", userStated: true },
      { actor: "user", threadId: "alice-t", toolCallId: null, messageIds: ["x"] },
    );
    other.close();
    const after = await ch.score([key("alice")], "persimmon", 10);
    expect(after.map((h) => h.rowid)).toContain(rowidOf(db, record.id));
    ch.close();
    store.close();
  });

  it("a worker that cannot start or dies answers from the store's thread, with a warning", async () => {
    const { dir, db, store, write, key } = setup();
    for (const t of ALICE) await write("alice", t);
    const expected = new InThreadSemantic(db).scoreNow([key("alice")], "pottery", 10);
    expect(expected.length).toBeGreaterThan(0);
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    try {
      const broken = join(dir, "broken-worker.mjs");
      writeFileSync(broken, `throw new Error("cannot open the database");\n`);
      const ch = new WorkerSemantic(db, pathToFileURL(broken));
      expect(await ch.score([key("alice")], "pottery", 10)).toEqual(expected);
      // from then on it stays on this thread and still follows writes
      const before = tokenOf(db, key("alice"));
      const added = await write("alice", "pottery with a kumquat glaze");
      ch.updated(key("alice"), before, tokenOf(db, key("alice"))!, { remove: [], add: [{ rowid: rowidOf(db, added.id), thread: "alice-t", content: added.content }] });
      expect((await ch.score([key("alice")], "kumquat", 10)).map((h) => h.rowid)).toContain(rowidOf(db, added.id));
      expect(ch.running).toBe(false);
      ch.close();
      await new Promise((r) => setImmediate(r));
      expect(warnings.some((w) => w.includes("semantic channel") && w.includes("cannot open the database"))).toBe(true);
    } finally {
      process.off("warning", onWarning);
    }
    store.close();
  });

  it("names the scopes of whoever wrote last for a warm-up, newest first, a person's broad scopes before their sessions, within its budgets", async () => {
    const { db, store, svc, req, write, key } = setup();
    for (const t of ALICE) await write("alice", t);
    for (const t of BOB) await write("bob", t);
    await write("carol", "carol's only note about pottery");
    // Carol's last write is in her session; her user-level scope, read by every search of hers, still comes first.
    await svc.remember(req("carol"), { content: "this session: glaze the bowls", kind: "note", scope: "session", userStated: true }, {
      actor: "user",
      threadId: "carol-t",
      toolCallId: null,
    });
    const carolSession = visibilityKey({ level: "session", user: "carol", project: null, session: "carol-t", thread: null });
    const ix = new SemanticIndexes(db);
    expect(ix.recentScopes(8, 1_000)).toEqual([key("carol"), carolSession, key("bob"), key("alice")]);
    expect(ix.recentScopes(3, 1_000)).toEqual([key("carol"), carolSession, key("bob")]);
    // Bob's memories would pass the budget: the warm-up stops before his scope
    expect(ix.recentScopes(8, BOB.length)).toEqual([key("carol"), carolSession]);
    // naming them builds nothing
    expect(ix.loaded).toBe(0);
    store.close();
  });

  it("a warm-up builds the scopes written last in the worker, once, and searches score as before", async () => {
    const { dir, db, store, write, key } = setup();
    for (const t of ALICE) await write("alice", t);
    for (const t of BOB) await write("bob", t);
    store.close();
    // a fresh server over the same file
    const db2 = openDatabase(join(dir, "memory.db"));
    const fresh = new SqliteMemoryStore(db2, parseChannels("lexical,context,semantic"));
    const ch = (fresh as unknown as { semantic: SemanticChannel }).semantic as WorkerSemantic;
    expect(ch.running).toBe(false);
    expect(await fresh.warm()).toEqual([key("bob"), key("alice")]);
    expect(ch.running).toBe(true);
    // once per store: a second caller (the gRPC hook beside the tool server) builds nothing again
    expect(await fresh.warm()).toEqual([]);
    const local = new InThreadSemantic(db2);
    expect(await ch.score([key("alice")], "pottery", 10)).toEqual(local.scoreNow([key("alice")], "pottery", 10));
    local.close();
    fresh.close();
    void db;
    // with the channel off there is nothing to warm and no worker starts
    const db3 = openDatabase(join(dir, "memory.db"));
    const off = new SqliteMemoryStore(db3, parseChannels("lexical,context"));
    expect(await off.warm()).toEqual([]);
    expect(((off as unknown as { semantic: SemanticChannel }).semantic as WorkerSemantic).running).toBe(false);
    off.close();
    expect(WARM_UP.scopes).toBeGreaterThan(0);
  });

  it("a warm-up never keeps the process alive: a script that starts one and returns exits at once", () => {
    const { dir, store, write } = setup();
    return (async () => {
      for (const t of ALICE) await write("alice", t);
      store.close();
      const dist = (p: string) => pathToFileURL(join(process.cwd(), "dist", p)).href;
      const script = [
        `import { openDatabase } from ${JSON.stringify(dist("stores/sqlite/database.js"))};`,
        `import { SqliteMemoryStore } from ${JSON.stringify(dist("stores/sqlite/memory-store.js"))};`,
        `import { parseChannels } from ${JSON.stringify(dist("core/retrieval/channels.js"))};`,
        `const store = new SqliteMemoryStore(openDatabase(${JSON.stringify(join(dir, "memory.db"))}), parseChannels("lexical,semantic"));`,
        `process.on("warning", (w) => console.log("warning:", w.message));`,
        `void store.warm();`,
        `console.log("worker running:", store.semantic.running);`,
      ].join("\n");
      const file = join(dir, "warm.mjs");
      writeFileSync(file, script);
      const t0 = Date.now();
      const out = execFileSync(process.execPath, [file], { encoding: "utf8", timeout: 20_000 });
      // the warm-up was posted to a running worker (no fallback warning), and the script still ended
      expect(out.trim()).toBe("worker running: true");
      expect(Date.now() - t0).toBeLessThan(20_000);
    })();
  });

  it("a closed channel answers nothing and stops its worker", async () => {
    const { db, store, write, key } = setup();
    for (const t of ALICE) await write("alice", t);
    const ch = semanticChannel(db) as WorkerSemantic;
    expect((await ch.score([key("alice")], "pottery", 5)).length).toBeGreaterThan(0);
    ch.close();
    expect(ch.running).toBe(false);
    expect(await ch.score([key("alice")], "pottery", 5)).toEqual([]);
    store.close();
  });
});

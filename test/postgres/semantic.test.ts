// The semantic channel on PostgreSQL (stores/postgres/semantic-index.ts): association indexes
// held in the server process, kept current by the scope change tokens that triggers renew on every
// write from any connection. Real PostgreSQL cluster, real pools; one pool stands for another server.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import { MemoryService } from "../../core/memory/service.js";
import { wordKey } from "../../core/retrieval/associations.js";
import { parseChannels } from "../../core/retrieval/channels.js";
import { PgMemoryStore } from "../../stores/postgres/memory-store.js";
import { CONNECT_TIMEOUT_MS, type PgDb } from "../../stores/postgres/pool.js";
import { MEMORY_MIGRATIONS } from "../../stores/postgres/schema-memory.js";
import { PgSemanticIndexes } from "../../stores/postgres/semantic-index.js";
import { openPg } from "../../stores/postgres/setup.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";
import { ALICE, BOB, expectScopesApart, FILLER, followsBatchExpiryForget, followsCorrectionAndFlag, turnWriter, userKey, userReq } from "../retrieval/semantic-fixtures.js";

const key = userKey;
const req = userReq;

describePg("postgres semantic channel", (base) => {
  let url = "";
  let drop: () => Promise<void>;
  let db: PgDb;
  beforeAll(async () => {
    const t = await createTestDatabase(base(), "sem");
    url = t.url;
    drop = t.drop;
    db = await openPg(url, { max: 4, migrations: MEMORY_MIGRATIONS });
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  async function fresh(channels = parseChannels("lexical,context,trigram,semantic")) {
    await db.pool.query(`TRUNCATE memories, memory_tags, memory_sources, memory_source_messages, edges RESTART IDENTITY CASCADE`);
    const clock = fixedClock(Date.UTC(2024, 0, 1));
    const store = new PgMemoryStore(db, { channels });
    const svc = new MemoryService(store, clock, defaultConfig({ localUser: "alice" }));
    const write = turnWriter(svc, clock);
    const token = async (user: string) =>
      (await db.pool.query<{ token: number; prev: number | null }>(`SELECT token, prev FROM scope_tokens WHERE vis_key = $1`, [key(user)])).rows[0] ?? null;
    return { store, svc, write, token, clock };
  }

  it("as many searches at once as the pool has connections all answer (the semantic job no longer waits for a connection while its search holds one)", { timeout: 60_000 }, async () => {
    const small = await openPg(url, { max: 1, migrations: MEMORY_MIGRATIONS });
    try {
      await db.pool.query(`TRUNCATE memories, memory_tags, memory_sources, memory_source_messages, edges RESTART IDENTITY CASCADE`);
      const clock = fixedClock(Date.UTC(2024, 0, 1));
      const svc = new MemoryService(new PgMemoryStore(small, { channels: parseChannels("lexical,semantic") }), clock, defaultConfig({ localUser: "alice" }));
      const write = turnWriter(svc, clock);
      for (const [i, t] of ["pottery class tonight", "we talked about kiln temperatures", "the kiln glaze worked"].entries()) await write("alice", t, i);
      const t0 = Date.now();
      const hits = await svc.search({ thread: req("alice") }, { query: "pottery kiln" });
      // a deadlock ends only at the pool's connection timeout, with the semantic channel skipped
      expect(Date.now() - t0).toBeLessThan(CONNECT_TIMEOUT_MS);
      expect(hits.length).toBeGreaterThan(0);
    } finally {
      await small.close();
    }
  });

  it("one user's text never shapes another user's expansions or results", async () => {
    const { svc, write } = await fresh();
    const sem = new PgSemanticIndexes(db);
    await expectScopesApart(svc, write, (k) => sem.indexesFor([k]));
  });

  it("finds a memory that shares no word with the query through the scope's associations, as on SQLite", async () => {
    // "glaze" never meets "pottery" in one memory, only in the memories around it
    const turns = ["pottery class tonight", "we talked about kiln temperatures", ...FILLER, "pottery is my calm", "kiln day, the new glaze worked", ...FILLER.slice(0, 3), "a streaky glaze"];
    const found = new Map<boolean, boolean>();
    for (const semantic of [true, false]) {
      const { svc, write } = await fresh(parseChannels(semantic ? "lexical,semantic" : "lexical"));
      const ids: string[] = [];
      for (const [i, t] of turns.entries()) ids.push((await write("alice", t, i)).id);
      const hits = await svc.search({ thread: req("alice") }, { query: "pottery kiln", limit: 10 });
      found.set(semantic, hits.some((h) => h.record.id === ids.at(-1)));
    }
    expect(found.get(false)).toBe(false);
    expect(found.get(true)).toBe(true);
  });

  it("triggers renew a scope's token on every change the channel reads, from any statement, and keep the one replaced", async () => {
    const { svc, write, token } = await fresh();
    expect(await token("alice")).toBeNull();
    const m = await write("alice", "first memory about pottery", 0);
    const t1 = await token("alice");
    expect(t1).toMatchObject({ prev: null });
    await write("alice", "second memory about clay", 1);
    const t2 = await token("alice");
    expect(t2!.prev).toBe(t1!.token);
    expect(t2!.token).not.toBe(t1!.token);
    // one renewal per scope per transaction, at commit: a batch of two moves the token once
    const origin = { actor: "user" as const, threadId: "alice-t", toolCallId: null };
    const made = await svc.rememberMany([
      { req: req("alice"), input: { content: "batch memory one about glaze", kind: "note", scope: "user", userStated: true }, origin },
      { req: req("alice"), input: { content: "batch memory two about kilns", kind: "note", scope: "user", userStated: true }, origin },
    ]);
    expect(made.map((r) => r.status)).toEqual(["created", "created"]);
    const tb = await token("alice");
    expect(tb!.prev).toBe(t2!.token);
    // a bump of updated_at alone (a new source of the same memory) changes nothing the channel reads
    await db.pool.query(`UPDATE memories SET updated_at = updated_at + 1 WHERE id = $1`, [m.id]);
    expect(await token("alice")).toEqual(tb);
    // a status change does, even one written by hand with no store involved
    await db.pool.query(`UPDATE memories SET status = 'superseded' WHERE id = $1`, [m.id]);
    const t3 = await token("alice");
    expect(t3!.token).not.toBe(tb!.token);
    // a memory moved to another scope renews both
    const bobBefore = await token("bob");
    await db.pool.query(`UPDATE memories SET vis_key = $1, user_id = 'bob' WHERE id = $2`, [key("bob"), m.id]);
    expect((await token("alice"))!.token).not.toBe(t3!.token);
    expect(await token("bob")).not.toEqual(bobBefore);
    await db.pool.query(`DELETE FROM memories WHERE id = $1`, [m.id]);
    expect((await token("bob"))!.prev).not.toBeNull();
    await db.pool.query(`TRUNCATE memories RESTART IDENTITY CASCADE`);
    expect(await token("alice")).toBeNull();
  });

  it("a new memory joins the loaded index in place; a forgotten one leaves nothing behind", async () => {
    const { store, svc, write } = await fresh();
    for (const [i, t] of ALICE.entries()) await write("alice", t, i);
    await svc.search({ thread: req("alice") }, { query: "pottery", limit: 5 });
    // the store's own inserts patch its index: the next search reads no scope again
    const reads = vi.spyOn(db, "query");
    let secret;
    try {
      secret = await write("alice", "pottery night: zanzibar quokka clay figurines", 99);
      await write("alice", "more zanzibar quokka pottery tomorrow", 100);
      const before = await svc.search({ thread: req("alice") }, { query: "zanzibar quokka", limit: 20 });
      expect(before.map((h) => h.record.id)).toContain(secret.id);
      // one token check by the search, and no build
      expect(reads.mock.calls.filter(([sql]) => String(sql).includes("SELECT vis_key, token FROM scope_tokens"))).toHaveLength(1);
      expect(reads.mock.calls.filter(([sql]) => String(sql).includes("NULL::bigint AS rowid"))).toHaveLength(0);
    } finally {
      reads.mockRestore();
    }
    const forgotten = await svc.forget({ thread: req("alice") }, [secret.id], { actor: "user", threadId: "alice-t", toolCallId: null });
    expect(forgotten).toEqual([secret.id]);
    // a fresh process's index agrees: nothing of the forgotten memory
    const ix = (await new PgSemanticIndexes(db).indexesFor([key("alice")]))[0]!;
    expect(ix.df(wordKey("figurines"))).toBe(0);
    expect(ix.df(wordKey("zanzibar"))).toBe(1);
    const after = await svc.search({ thread: req("alice") }, { query: "figurines zanzibar pottery", limit: 50 });
    expect(after.map((h) => h.record.id)).not.toContain(secret.id);
    for (const h of after) expect(h.record.content).not.toContain("figurines");
    store.close();
  });

  it("follows its own correction, a flagged memory, its confirmation, a batch, an expiry and a forget in place, as a fresh build reads them", async () => {
    const { store, svc, write, clock } = await fresh();
    for (const [i, t] of ALICE.entries()) await write("alice", t, i);
    await svc.search({ thread: req("alice") }, { query: "pottery", limit: 5 });
    const sem = (store as unknown as { semantic: PgSemanticIndexes }).semantic;
    const ix = (await sem.indexesFor([key("alice")]))[0]!;
    const loaded = async () => (await sem.indexesFor([key("alice")]))[0];
    const fact = await write("alice", "kumquat marmalade on rye is my favourite", 50);
    const reads = vi.spyOn(db, "query");
    try {
      await followsCorrectionAndFlag(svc, fact, ix, loaded);
      await followsBatchExpiryForget(svc, clock, write, ix, loaded);
      // no scope was read again for all that
      expect(reads.mock.calls.filter(([sql]) => String(sql).includes("NULL::bigint AS rowid"))).toHaveLength(0);
    } finally {
      reads.mockRestore();
    }
    const built = (await new PgSemanticIndexes(db).indexesFor([key("alice")]))[0]!;
    expect(ix.size).toBe(built.size);
    expect(ix.vocabulary).toBe(built.vocabulary);
    for (const w of ["kumquat", "persimmon", "marmalade", "quokka", "pottery", "tamarind", "yuzu", "zanzibar"]) expect(ix.df(wordKey(w)), w).toBe(built.df(wordKey(w)));
  });

  it("several of its own writes to one scope at a time keep the loaded index: each follows in place, nothing is read again", async () => {
    const { store, svc, write, clock } = await fresh();
    for (const [i, t] of ALICE.entries()) await write("alice", t, i);
    await svc.search({ thread: req("alice") }, { query: "pottery", limit: 5 });
    const sem = (store as unknown as { semantic: PgSemanticIndexes }).semantic;
    const ix = (await sem.indexesFor([key("alice")]))[0]!;
    const reads = vi.spyOn(db, "query");
    try {
      // twelve remembers at once (as twelve threads of one server): they take turns on the scope
      // lock, and each commits while the next waits for it
      const made = await Promise.all(
        Array.from({ length: 12 }, (_, i) => {
          clock.advance(10);
          return svc.remember(req("alice"), { content: `lychee tasting number ${i} with quokka ${i}`, kind: "note", scope: "user", userStated: true }, {
            actor: "user",
            threadId: "alice-t",
            toolCallId: null,
            messageIds: [`alice-lychee-${i}`],
          });
        }),
      );
      expect(made.map((m) => m.status)).toEqual(Array(12).fill("created"));
      const hits = await svc.search({ thread: req("alice") }, { query: "lychee quokka", limit: 20 });
      expect(hits.length).toBeGreaterThan(0);
      expect((await sem.indexesFor([key("alice")]))[0]).toBe(ix);
      expect(reads.mock.calls.filter(([sql]) => String(sql).includes("NULL::bigint AS rowid"))).toHaveLength(0);
    } finally {
      reads.mockRestore();
    }
    expect(ix.df(wordKey("lychee"))).toBe(12);
    const built = (await new PgSemanticIndexes(db).indexesFor([key("alice")]))[0]!;
    expect(ix.size).toBe(built.size);
    expect(ix.vocabulary).toBe(built.vocabulary);
    store.close();
  });

  it("grows in place on its own insert, and rebuilds after another server's write or forget", async () => {
    const { write, token } = await fresh();
    for (const [i, t] of ALICE.entries()) await write("alice", t, i);
    const sem = new PgSemanticIndexes(db);
    const ix = (await sem.indexesFor([key("alice")]))[0]!;
    expect(ix.size).toBe(ALICE.length);
    expect((await sem.indexesFor([key("alice")]))[0]).toBe(ix);
    // as the store reports its own insert: the token it replaced is the one the index was read at
    const t1 = await token("alice");
    const kumquat = await write("alice", "a brand new kumquat memory", 50);
    const t2 = await token("alice");
    expect(t2!.prev).toBe(t1!.token);
    const rowid = (await db.pool.query<{ rowid: number }>(`SELECT rowid FROM memories WHERE id = $1`, [kumquat.id])).rows[0]!.rowid;
    sem.updated(key("alice"), t2!.prev, t2!.token, { remove: [], add: [{ rowid: rowid, thread: "alice-t", content: kumquat.content }] });
    expect((await sem.indexesFor([key("alice")]))[0]).toBe(ix);
    expect(ix.df(wordKey("kumquat"))).toBe(1);
    // another server (its own pool and store) writes to the scope: the token tells this one
    const other = await openPg(url, { max: 2, migrations: MEMORY_MIGRATIONS });
    try {
      const svc2 = new MemoryService(new PgMemoryStore(other), fixedClock(Date.UTC(2024, 1, 1)), defaultConfig({ localUser: "alice" }));
      await svc2.remember(req("alice"), { content: "persimmon pottery with clay", kind: "note", scope: "user", userStated: true }, {
        actor: "user",
        threadId: "alice-t",
        toolCallId: null,
        messageIds: ["x"],
      });
      const rebuilt = (await sem.indexesFor([key("alice")]))[0]!;
      expect(rebuilt).not.toBe(ix);
      expect(rebuilt.df(wordKey("persimmon"))).toBe(1);
      expect(rebuilt.df(wordKey("kumquat"))).toBe(1);
      // and when it forgets, the next search here reads the scope again without it
      await svc2.forget({ thread: req("alice") }, [kumquat.id], { actor: "user", threadId: "alice-t", toolCallId: null });
      const again = (await sem.indexesFor([key("alice")]))[0]!;
      expect(again).not.toBe(rebuilt);
      expect(again.df(wordKey("kumquat"))).toBe(0);
    } finally {
      await other.close();
    }
  });

  it("an insert reported against a token the index never saw drops the index instead of patching it", async () => {
    const { write, token } = await fresh();
    for (const [i, t] of ALICE.entries()) await write("alice", t, i);
    const sem = new PgSemanticIndexes(db);
    const ix = (await sem.indexesFor([key("alice")]))[0]!;
    // two writes, the first never reported: the second's `prev` is not the index's token
    await write("alice", "unreported quince memory", 60);
    const late = await write("alice", "reported medlar memory", 61);
    const t = await token("alice");
    sem.updated(key("alice"), t!.prev, t!.token, { remove: [], add: [{ rowid: 10_000, thread: "alice-t", content: late.content }] });
    expect(sem.loaded).toBe(0);
    const rebuilt = (await sem.indexesFor([key("alice")]))[0]!;
    expect(rebuilt).not.toBe(ix);
    expect(rebuilt.df(wordKey("quince"))).toBe(1);
    expect(rebuilt.df(wordKey("medlar"))).toBe(1);
  });

  it("searches of a scope being built share one build; one changed meanwhile is not kept", async () => {
    const { write } = await fresh();
    for (const [i, t] of ALICE.entries()) await write("alice", t, i);
    const sem = new PgSemanticIndexes(db);
    const [a, b] = await Promise.all([sem.indexesFor([key("alice")]), sem.indexesFor([key("alice")])]);
    expect(a[0]).toBe(b[0]);
    sem.clear();
    // the store changes the scope after the build read its rows and before it is done
    const query = db.query.bind(db);
    const spy = vi.spyOn(db, "query").mockImplementation(async (...args: Parameters<PgDb["query"]>) => {
      const rows = await query(...args);
      if (args[0].includes("NULL::bigint AS rowid")) sem.changed([key("alice")]);
      return rows;
    });
    const first = await sem.indexesFor([key("alice")]).finally(() => spy.mockRestore());
    expect(first).toHaveLength(1);
    expect(first[0]!.size).toBe(ALICE.length);
    expect(sem.loaded).toBe(0);
    expect((await sem.indexesFor([key("alice")]))[0]).not.toBe(first[0]);
    expect(sem.loaded).toBe(1);
  });

  it("warm-up builds the scopes of whoever wrote last, user scope first, before any search", async () => {
    const { store, write } = await fresh();
    for (const [i, t] of BOB.entries()) await write("bob", t, i);
    for (const [i, t] of ALICE.entries()) await write("alice", t, i);
    const warmed = await store.warm();
    expect(warmed.slice(0, 2)).toEqual([key("alice"), key("bob")]);
    store.close();
  });

});

describePg("postgres semantic channel under the DSQL profile", (base) => {
  let drop: () => Promise<void>;
  let db: PgDb;
  beforeAll(async () => {
    const t = await createTestDatabase(base(), "semdsql");
    drop = t.drop;
    db = await openPg(t.url, { profile: "dsql", max: 2, migrations: MEMORY_MIGRATIONS });
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it("warns when the channel is named, searches without it, and warms nothing", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    try {
      const store = new PgMemoryStore(db, { channels: { semantic: true } });
      const svc = new MemoryService(store, fixedClock(Date.UTC(2024, 0, 1)), defaultConfig({ localUser: "alice" }));
      const r = await svc.remember(req("alice"), { content: "the glaze on the clay bowls came out blue", kind: "note", scope: "user", userStated: true }, {
        actor: "user",
        threadId: "alice-t",
        toolCallId: null,
        messageIds: ["m"],
      });
      const hits = await svc.search({ thread: req("alice") }, { query: "glaze bowls", limit: 5 });
      expect(hits.map((h) => h.record.id)).toEqual([r.record.id]);
      expect(await store.warm()).toEqual([]);
      await new Promise((res) => setImmediate(res));
      expect(warnings.filter((w) => w.includes("semantic channel is not available under the DSQL profile"))).toHaveLength(1);
    } finally {
      process.off("warning", onWarning);
    }
  });
});

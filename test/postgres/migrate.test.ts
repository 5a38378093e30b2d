// Migration runner: versioned steps under an advisory lock (servers starting together migrate
// once), a clear refusal of a newer schema, the DSQL profile's DDL, and error mapping.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dsqlStatements, migratePg } from "../../stores/postgres/migrate.js";
import { PG_MIGRATIONS } from "../../stores/postgres/migrations.js";
import { PgDb, parsePgUrl, toStoreError } from "../../stores/postgres/pool.js";
import { MEMORY_MIGRATIONS } from "../../stores/postgres/schema-memory.js";
import { openPg } from "../../stores/postgres/setup.js";
import { StoreError } from "../../stores/traits.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";
import { mem, scopeOf } from "../stores/memory-conformance.js";
import { analyzeQuery } from "../../core/retrieval/analyze.js";
import { visibilityKey } from "../../core/memory/scope.js";
import { PgMemoryStore } from "../../stores/postgres/memory-store.js";
import { PgSessionIndex } from "../../stores/postgres/session-index.js";
import { PgSkillStore } from "../../stores/postgres/skill-store.js";
import { newVersion } from "../stores/skills-conformance.js";
import { grantServerRole } from "../../stores/postgres/grants.js";
import { OLD_ERROR } from "../../core/learning/failure.js";

describe("postgres migration units", () => {
  it("memory versions stay within 1–99 and every step has a DSQL variant", () => {
    for (const m of MEMORY_MIGRATIONS) {
      expect(m.version).toBeGreaterThanOrEqual(1);
      expect(m.version).toBeLessThanOrEqual(99);
      expect(m.dsql).toBeDefined();
    }
    expect(new Set(PG_MIGRATIONS.map((m) => m.version)).size).toBe(PG_MIGRATIONS.length);
  });

  it("the DSQL DDL uses only what Aurora DSQL supports", () => {
    const all = MEMORY_MIGRATIONS.flatMap((m) => dsqlStatements(m.dsql!));
    const text = all.join("\n");
    for (const banned of [/serial/i, /REFERENCES/i, /USING gin/i, /TRIGGER/i, /plpgsql/i, /tsvector/i, /CREATE EXTENSION/i, /\bjsonb?\b/i]) {
      expect(text).not.toMatch(banned);
    }
    for (const st of all) {
      // one statement per transaction, idempotent; indexes built asynchronously, no partial ones;
      // a column added bare (DSQL's ALTER TABLE takes ADD COLUMN IF NOT EXISTS name type, no constraint)
      expect(st).toMatch(/^(CREATE TABLE IF NOT EXISTS|CREATE (UNIQUE )?INDEX ASYNC IF NOT EXISTS|ALTER TABLE \w+ ADD COLUMN IF NOT EXISTS \w+ (text|integer|bigint)$)/);
      if (/INDEX/.test(st)) expect(st).not.toMatch(/\)\s*WHERE/);
    }
  });

  it("URL settings are read and stripped; bad ones are refused with the fix", () => {
    const p = parsePgUrl("postgres://u:pw@h:5432/db?rls=1&profile=dsql&pool_max=7&sslmode=require");
    expect(p).toEqual({ connectionString: "postgres://u:pw@h:5432/db?sslmode=require", rls: true, profile: "dsql", max: 7 });
    expect(parsePgUrl("postgres://h/db?jit=on")).toEqual({ connectionString: "postgres://h/db", jit: true });
    expect(() => parsePgUrl("postgres://h/db?profile=oracle")).toThrow(/profile=postgres or profile=dsql/);
    expect(() => parsePgUrl("postgres://h/db?pool_max=0")).toThrow(/pool_max/);
  });

  it("maps server errors onto StoreError codes", () => {
    expect(toStoreError(Object.assign(new Error("dup"), { code: "23505", constraint: "memories_id_key" }))).toMatchObject({ code: "constraint" });
    expect(toStoreError(Object.assign(new Error("no table"), { code: "42P01" }))).toMatchObject({ code: "schema" });
    expect(toStoreError(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }))).toMatchObject({
      code: "io",
      message: expect.stringMatching(/unreachable/),
    });
    const se = new StoreError("not_found", "x");
    expect(toStoreError(se)).toBe(se);
  });

  it("an unreachable server fails with an io StoreError, not a hang", async () => {
    const db = PgDb.open("postgres://nobody@127.0.0.1:1/none", { max: 1 });
    await expect(db.query("SELECT 1")).rejects.toMatchObject({ name: "StoreError", code: "io" });
    await db.close();
  });
});

describePg("postgres migrations on a cluster", (base) => {
  let url = "";
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const t = await createTestDatabase(base(), "mig");
    url = t.url;
    drop = t.drop;
  });
  afterAll(async () => drop?.());

  it("four servers starting at once migrate once (advisory lock), memory and catalog steps alike", async () => {
    const dbs = await Promise.all(Array.from({ length: 4 }, () => openPg(url, { max: 2 })));
    try {
      const rows = (await dbs[0]!.pool.query<{ version: number }>(`SELECT version FROM schema_migrations ORDER BY version`)).rows.map((r) => r.version);
      expect(rows).toEqual(PG_MIGRATIONS.map((m) => m.version).sort((a, b) => a - b));
      // a restart applies nothing
      expect(await migratePg(dbs[1]!, PG_MIGRATIONS)).toEqual([]);
      expect(dbs.every((d) => d.features.trigram)).toBe(true);
    } finally {
      for (const d of dbs) await d.close();
    }
  });

  it("runs its connections with JIT off (short statements: compiling cost more than running), unless the URL says jit=on", async () => {
    const jitOf = async (u: string) => {
      const db = await openPg(u, { max: 1 });
      try {
        // twice: the pool's first connection and the same one again from the pool
        const a = (await db.pool.query<{ jit: string }>(`SHOW jit`)).rows[0]!.jit;
        const b = (await db.read((c) => c.query<{ jit: string }>(`SHOW jit`))).rows[0]!.jit;
        return [a, b];
      } finally {
        await db.close();
      }
    };
    expect(await jitOf(url)).toEqual(["off", "off"]);
    // the server's own default (on in PostgreSQL 15) when the URL asks for it
    expect(await jitOf(`${url}${url.includes("?") ? "&" : "?"}jit=on`)).toEqual(["on", "on"]);
  });

  it("refuses a database migrated by a newer build", async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from the future', 0)`);
    await c.end();
    await expect(openPg(url, { max: 1 })).rejects.toMatchObject({ code: "schema", message: expect.stringMatching(/newer than this build/) });
    const c2 = new pg.Client({ connectionString: url });
    await c2.connect();
    await c2.query(`DELETE FROM schema_migrations WHERE version = 999`);
    await c2.end();
  });

  it("refuses a database a newer build gave a memory step this one lacks, though the catalog's versions are higher (both profiles)", async () => {
    // a newer build's next memory-side step sits below every catalog step (100+)
    const next = Math.max(...MEMORY_MIGRATIONS.map((m) => m.version)) + 1;
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'memory step from the future', 0)`, [next]);
      for (const profile of ["postgres", "dsql"] as const) {
        await expect(openPg(url, { max: 1, profile })).rejects.toMatchObject({
          code: "schema",
          message: expect.stringContaining(`database schema version ${next} is newer than this build understands (${next - 1}); upgrade infinity-memory`),
        });
      }
    } finally {
      await c.query(`DELETE FROM schema_migrations WHERE version = $1`, [next]);
      await c.end();
    }
    // without it the same database opens as before
    const db = await openPg(url, { max: 1 });
    await db.close();
  });

  it("step 7 gives the word rows of undated memories the day they were written", async () => {
    const t = await createTestDatabase(base(), "migdate");
    try {
      const old = await openPg(t.url, { max: 1, migrations: MEMORY_MIGRATIONS, targetVersion: 6 });
      const store = new PgMemoryStore(old);
      const undated = mem("Renewed the TLS certificate", { createdAt: Date.UTC(2026, 8, 10) });
      const dated = mem("Rotated the signing keys", { createdAt: Date.UTC(2026, 8, 10), validFrom: Date.UTC(2025, 1, 3) });
      for (const r of [undated, dated]) await store.insert(r, { at: 1, actor: "t", action: "create", targetKind: "memory", targetId: r.id, detail: {} });
      // the word rows as a build before step 7 wrote them: an undated memory's context had no date
      // (date words sit at weight D, which tsvector text shows with no letter)
      await old.pool.query(
        `UPDATE memory_words w SET tsv = setweight(to_tsvector('english', m.content), 'B') FROM memories m WHERE m.rowid = w.rowid AND m.valid_from IS NULL`,
      );
      const words = async (db: PgDb, id: string) =>
        (await db.pool.query<{ t: string }>(`SELECT w.tsv::text AS t FROM memory_words w JOIN memories m ON m.rowid = w.rowid WHERE m.id = $1`, [id])).rows[0]!.t;
      expect(await words(old, undated.id)).not.toMatch(/septemb/);
      await old.close();
      const db = await openPg(t.url, { max: 1, migrations: MEMORY_MIGRATIONS });
      try {
        expect(await words(db, undated.id)).toMatch(/'septemb':\d+( |$)/);
        expect(await words(db, undated.id)).toMatch(/'2026':\d+( |$)/);
        // a memory with its own date is left as it was
        expect(await words(db, dated.id)).toMatch(/'februari':\d+( |$)/);
        expect(await words(db, dated.id)).not.toMatch(/septemb/);
        const hits = await new PgMemoryStore(db).search({
          visibility: { keys: [visibilityKey(scopeOf("alice"))] },
          query: analyzeQuery("september"),
          statuses: ["active"],
          includeFlagged: false,
          now: Date.UTC(2026, 10, 1),
          limit: 5,
        });
        expect(hits[0]?.record.id).toBe(undated.id);
      } finally {
        await db.close();
      }
    } finally {
      await t.drop();
    }
  });

  it("step 9 tokenizes the session messages indexed before as new ones: words inside addresses and host names match, CJK bigrams stay", async () => {
    const t = await createTestDatabase(base(), "migsess");
    try {
      const old = await openPg(t.url, { max: 1, migrations: MEMORY_MIGRATIONS, targetVersion: 8 });
      // the columns steps 13 and 15 add (IF NOT EXISTS there), so this build's append can write the rows
      await old.pool.query(
        `ALTER TABLE session_threads ADD COLUMN parent_thread_id text, ADD COLUMN spawn_order integer, ADD COLUMN skipped_from integer, ADD COLUMN skipped_format text`,
      );
      const sessions = new PgSessionIndex(old);
      const src = await sessions.sourceId("infinity-files", "/home/a/.infinity");
      const texts = ["my email is alice.smith@corp.example.com", "the vpn host is vpn.acme-corp.io", "数据库备份在周五"];
      await sessions.append(src, { threadId: "t", rootThreadId: "t", user: "alice", cwd: null }, texts.map((text, i) => ({ ord: i, messageId: `m${i}`, role: "user", text })), 3, "m2", 1);
      // the rows as a build before step 9 wrote them: the parser saw the punctuation
      await old.pool.query(`UPDATE session_messages SET tsv = setweight(to_tsvector('english', text), 'A') || ts_filter(tsv, '{b}')`);
      const find = (s: PgSessionIndex, q: string) => s.search({ user: "alice", query: analyzeQuery(q), limit: 10 }).then((hs) => hs.map((h) => h.messageId));
      expect(await find(sessions, "acme")).toEqual([]);
      await old.close();
      const db = await openPg(t.url, { max: 1, migrations: MEMORY_MIGRATIONS });
      try {
        const now = new PgSessionIndex(db);
        expect(await find(now, "acme")).toEqual(["m1"]);
        expect(await find(now, "数据库")).toEqual(["m2"]);
        expect(await now.purgeContaining("alice", [texts[0]!])).toBe(1);
      } finally {
        await db.close();
      }
    } finally {
      await t.drop();
    }
  });

  it("step 11 tokenizes the word rows written before as new ones: words inside host names, emails and file names match, context and tags stay", async () => {
    const t = await createTestDatabase(base(), "migwords");
    try {
      const old = await openPg(t.url, { max: 1, migrations: MEMORY_MIGRATIONS, targetVersion: 10 });
      const store = new PgMemoryStore(old);
      const vpn = mem("The VPN certificate for vpn.acme-corp.io expires", { tags: ["ops/tls"], createdAt: Date.UTC(2026, 4, 2) });
      const plain = mem("Lunch is at noon on Fridays", { createdAt: Date.UTC(2026, 4, 2) });
      for (const r of [vpn, plain]) await store.insert(r, { at: 1, actor: "t", action: "create", targetKind: "memory", targetId: r.id, detail: {} });
      // the word rows as a build before step 11 wrote them: the parser saw the punctuation
      await old.pool.query(
        `UPDATE memory_words w SET tsv = setweight(to_tsvector('english', lower(m.content)), 'B')
           || setweight(to_tsvector('english', coalesce((SELECT string_agg(tag, ' ') FROM memory_tags WHERE memory_rowid = m.rowid), '')), 'A')
           || ts_filter(w.tsv, '{c,d}')
         FROM memories m WHERE m.rowid = w.rowid`,
      );
      const words = async (db: PgDb, id: string) =>
        (await db.pool.query<{ t: string }>(`SELECT w.tsv::text AS t FROM memory_words w JOIN memories m ON m.rowid = w.rowid WHERE m.id = $1`, [id])).rows[0]!.t;
      const find = async (db: PgDb, text: string) =>
        (
          await new PgMemoryStore(db).search({
            visibility: { keys: [visibilityKey(scopeOf("alice"))] },
            query: analyzeQuery(text),
            statuses: ["active"],
            includeFlagged: false,
            now: Date.UTC(2026, 10, 1),
            limit: 5,
            wordsOnly: true,
          })
        ).map((h) => h.record.id);
      expect(await find(old, "acme")).toEqual([]);
      const plainBefore = await words(old, plain.id);
      await old.close();
      const db = await openPg(t.url, { max: 1, migrations: MEMORY_MIGRATIONS });
      try {
        expect(await find(db, "acme")).toEqual([vpn.id]);
        expect(await find(db, "tls")).toEqual([vpn.id]);
        expect(await words(db, vpn.id)).toMatch(/'acm':\d+B/);
        expect(await words(db, vpn.id)).toMatch(/'tls':\d+A/);
        // the context (the day it was written, weight D) is kept
        expect(await words(db, vpn.id)).toMatch(/'2026':\d+( |,|$)/);
        // a memory without punctuation is left as it was
        expect(await words(db, plain.id)).toBe(plainBefore);
      } finally {
        await db.close();
      }
    } finally {
      await t.drop();
    }
  });

  it("steps 12 and 107 tokenize the word rows, session messages and skill documents written before at typographic punctuation and emoji (a C-locale cluster), Latin diacritics folded", async () => {
    const t = await createTestDatabase(base(), "migsep");
    try {
      const old = await openPg(t.url, { max: 1, migrations: PG_MIGRATIONS.filter((m) => m.version !== 12 && m.version !== 107) });
      // this suite's cluster runs the C locale, whose parser reads '—' as a letter
      expect((await old.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ts_parse('default', 'a—b')`)).rows[0]!.n).toBe(1);
      const store = new PgMemoryStore(old);
      const room = mem("The meeting room is “Atlas” in Zürich now", { tags: ["🏢office"] });
      const plain = mem("Lunch is at noon on Fridays");
      for (const r of [room, plain]) await store.insert(r, { at: 1, actor: "t", action: "create", targetKind: "memory", targetId: r.id, detail: {} });
      const sessions = new PgSessionIndex(old);
      const src = await sessions.sourceId("infinity-files", "/home/a/.infinity");
      await sessions.append(src, { threadId: "t", rootThreadId: "t", user: "alice", cwd: null }, [{ ord: 0, messageId: "m0", role: "user", text: "Deploy—tomorrow at nine… 数据库" }], 1, "m0", 1);
      const skills = new PgSkillStore(old.pool);
      const audit = { at: 1, actor: "alice", targetKind: "skill" as const, targetId: "room-booking", detail: {} };
      await skills.insertVersion(newVersion("room-booking", "Book the “Atlas” room—weekly", "h1"), { skillId: "s1", versionId: "v1" }, { ...audit, action: "propose" });
      await skills.movePointer("s1", { expectedFrom: null, to: "v1", toStatus: "active", fromStatus: "retired", kind: "publish" }, { ...audit, action: "publish" });
      // the rows as a build before steps 12 and 107 wrote them: only ASCII punctuation was a space
      const asBefore = (s: string) => s.toLowerCase().replace(/[!-/:-@[-`{-~]/g, " ");
      await old.pool.query(
        `UPDATE memory_words w SET tsv = setweight(to_tsvector('english', $1), 'B') || setweight(to_tsvector('english', $2), 'A') || ts_filter(w.tsv, '{c,d}')
         FROM memories m WHERE m.rowid = w.rowid AND m.id = $3`,
        [asBefore(room.content), asBefore("🏢office"), room.id],
      );
      await old.pool.query(`UPDATE session_messages SET tsv = setweight(to_tsvector('english', $1), 'A') || ts_filter(tsv, '{b}')`, [asBefore("Deploy—tomorrow at nine… 数据库")]);
      await old.pool.query(`UPDATE skill_search SET doc = setweight(to_tsvector('english', 'room booking'), 'A') || setweight(to_tsvector('english', $1), 'B')`, [asBefore("Book the “Atlas” room—weekly")]);
      const words = async (db: PgDb, id: string) =>
        (await db.pool.query<{ t: string }>(`SELECT w.tsv::text AS t FROM memory_words w JOIN memories m ON m.rowid = w.rowid WHERE m.id = $1`, [id])).rows[0]!.t;
      const find = async (db: PgDb, text: string) =>
        (
          await new PgMemoryStore(db).search({
            visibility: { keys: [visibilityKey(scopeOf("alice"))] },
            query: analyzeQuery(text),
            statuses: ["active"],
            includeFlagged: false,
            now: Date.now(),
            limit: 5,
            wordsOnly: true,
          })
        ).map((h) => h.record.id);
      const said = async (db: PgDb, text: string) => (await new PgSessionIndex(db).search({ user: "alice", query: analyzeQuery(text), limit: 5 })).map((h) => h.messageId);
      const skill = async (db: PgDb, word: string) => (await new PgSkillStore(db.pool).search({ match: `"${word}"`, minEta: 0.1, excludeSkillIds: [], limit: 5 })).map((h) => h.skill.name);
      expect([await find(old, "atlas"), await find(old, "office"), await find(old, "zurich"), await said(old, "tomorrow"), await skill(old, "atlas")]).toEqual([[], [], [], [], []]);
      const plainBefore = await words(old, plain.id);
      await old.close();
      const db = await openPg(t.url, { max: 1 });
      try {
        expect(await find(db, "atlas")).toEqual([room.id]);
        expect(await find(db, "office")).toEqual([room.id]);
        expect(await find(db, "zurich")).toEqual([room.id]);
        expect(await said(db, "tomorrow")).toEqual(["m0"]);
        expect(await said(db, "nine")).toEqual(["m0"]);
        // the CJK bigrams of the message are kept
        expect(await said(db, "数据")).toEqual(["m0"]);
        expect(await skill(db, "atlas")).toEqual(["room-booking"]);
        expect(await skill(db, "weekly")).toEqual(["room-booking"]);
        // the context (the day it was written, weight D) is kept, and a plain memory left as it was
        expect(await words(db, room.id)).toMatch(/'\d{4}':\d+( |,|$)/);
        expect(await words(db, plain.id)).toBe(plainBefore);
      } finally {
        await db.close();
      }
    } finally {
      await t.drop();
    }
  });

  it("step 104 rebuilds the skill search documents written before: words inside a file name of a description match", async () => {
    const t = await createTestDatabase(base(), "migskill");
    try {
      const old = await openPg(t.url, { max: 1, targetVersion: 103 });
      const skills = new PgSkillStore(old.pool);
      const audit = { at: 1, actor: "alice", targetKind: "skill" as const, targetId: "sync-scripts", detail: {} };
      await skills.insertVersion(newVersion("sync-scripts", "keep package.json scripts in step", "h1"), { skillId: "s1", versionId: "v1" }, { ...audit, action: "propose" });
      await skills.movePointer("s1", { expectedFrom: null, to: "v1", toStatus: "active", fromStatus: "retired", kind: "publish" }, { ...audit, action: "publish" });
      // the document as a build before step 104 wrote it: the parser saw the punctuation
      await old.pool.query(
        `UPDATE skill_search SET doc = setweight(to_tsvector('english', 'sync scripts'), 'A') || setweight(to_tsvector('english', 'keep package.json scripts in step'), 'B')`,
      );
      const find = (s: PgSkillStore) => s.search({ match: `"package"`, minEta: 0.1, excludeSkillIds: [], limit: 5 }).then((hs) => hs.map((h) => h.skill.name));
      expect(await find(skills)).toEqual([]);
      await old.close();
      const db = await openPg(t.url, { max: 1 });
      try {
        expect(await find(new PgSkillStore(db.pool))).toEqual(["sync-scripts"]);
      } finally {
        await db.close();
      }
    } finally {
      await t.drop();
    }
  });

  it("step 112 clears the error texts older versions kept in the learning queue, dropped threads and events (a parser's message quotes the file)", async () => {
    const t = await createTestDatabase(base(), "migerr");
    try {
      const old = await openPg(t.url, { max: 1, targetVersion: 110 });
      const quoted = `/h/threads/t1.json: Unexpected token 's', ..."text": sk-9f8e7d}"... is not valid JSON`;
      await old.pool.query(`INSERT INTO learning_queue (source, thread_id, root_thread_id, enqueued_at, attempts, last_error) VALUES ('conversation', 't1', 't1', 1, 1, $1)`, [quoted]);
      await old.pool.query(`INSERT INTO learning_dropped (source, thread_id, root_thread_id, format, drops, retry_at, reason) VALUES ('conversation', 't2', 't2', 'v1', 0, 5, $1)`, [quoted]);
      const details = [
        { source: "conversation", attempts: 1, error: quoted },
        { start_ord: 4, error: 'say "sk-9f8e7d"\\ twice', after: "kept" },
        {},
      ];
      for (const d of details) await old.pool.query(`INSERT INTO learning_events (at, kind, thread_id, episode_id, detail) VALUES (1, 'thread_failed', 't1', NULL, $1)`, [JSON.stringify(d)]);
      await old.close();
      const db = await openPg(t.url, { max: 1 });
      try {
        expect((await db.pool.query(`SELECT attempts, last_error FROM learning_queue`)).rows).toEqual([{ attempts: 1, last_error: null }]);
        expect((await db.pool.query(`SELECT reason FROM learning_dropped`)).rows).toEqual([{ reason: OLD_ERROR }]);
        const after = (await db.pool.query<{ detail: string }>(`SELECT detail FROM learning_events ORDER BY id`)).rows.map((r) => JSON.parse(r.detail) as unknown);
        expect(after).toEqual([{ source: "conversation", attempts: 1, error: OLD_ERROR }, { start_ord: 4, error: OLD_ERROR, after: "kept" }, {}]);
      } finally {
        await db.close();
      }
    } finally {
      await t.drop();
    }
  });

  it("steps 10 and 105 fold the capitals outside ASCII of word rows, session messages and skill documents written before (a C-locale cluster)", async () => {
    const t = await createTestDatabase(base(), "migfold");
    try {
      // a build before these steps (so before 12 and 107 too, which run after them)
      const old = await openPg(t.url, { max: 1, migrations: PG_MIGRATIONS.filter((m) => ![10, 12, 105, 107].includes(m.version)) });
      // this suite's cluster runs the C locale, which folds ASCII only
      expect((await old.pool.query<{ l: string }>(`SELECT lower('Ü') AS l`)).rows[0]!.l).toBe("Ü");
      const store = new PgMemoryStore(old);
      const r = mem("Der Übungsraum ist im Keller");
      await store.insert(r, { at: 1, actor: "t", action: "create", targetKind: "memory", targetId: r.id, detail: {} });
      const sessions = new PgSessionIndex(old);
      const src = await sessions.sourceId("infinity-files", "/home/a/.infinity");
      await sessions.append(src, { threadId: "t", rootThreadId: "t", user: "alice", cwd: null }, [{ ord: 0, messageId: "m0", role: "user", text: "ПАРОЛЬ лежит в сейфе" }], 1, "m0", 1);
      const skills = new PgSkillStore(old.pool);
      const audit = { at: 1, actor: "alice", targetKind: "skill" as const, targetId: "oil-change", detail: {} };
      await skills.insertVersion(newVersion("oil-change", "Ölwechsel am Dienstwagen planen", "h1"), { skillId: "s1", versionId: "v1" }, { ...audit, action: "propose" });
      await skills.movePointer("s1", { expectedFrom: null, to: "v1", toStatus: "active", fromStatus: "retired", kind: "publish" }, { ...audit, action: "publish" });
      // the rows as a build before these steps wrote them: the text as written reached the parser
      await old.pool.query(`UPDATE memory_words w SET tsv = setweight(to_tsvector('english', m.content), 'B') || ts_filter(w.tsv, '{a,c,d}') FROM memories m WHERE m.rowid = w.rowid`);
      await old.pool.query(`UPDATE session_messages SET tsv = setweight(to_tsvector('english', text), 'A') || ts_filter(tsv, '{b}')`);
      await old.pool.query(`UPDATE skill_search SET doc = setweight(to_tsvector('english', 'oil change'), 'A') || setweight(to_tsvector('english', 'Ölwechsel am Dienstwagen planen'), 'B')`);
      const found = async (db: PgDb) => [
        (await new PgMemoryStore(db).search({ visibility: { keys: [visibilityKey(r.scope)] }, query: analyzeQuery("übungsraum"), statuses: ["active"], includeFlagged: false, now: 2, limit: 5, wordsOnly: true })).length,
        (await new PgSessionIndex(db).search({ user: "alice", query: analyzeQuery("пароль"), limit: 5 })).length,
        (await new PgSkillStore(db.pool).search({ match: `"ölwechsel"`, minEta: 0.1, excludeSkillIds: [], limit: 5 })).length,
      ];
      expect(await found(old)).toEqual([0, 0, 0]);
      await old.close();
      const db = await openPg(t.url, { max: 1 });
      try {
        expect(await found(db)).toEqual([1, 1, 1]);
      } finally {
        await db.close();
      }
    } finally {
      await t.drop();
    }
  });

  it("the DSQL profile migrates step by step and converges after a partial run", async () => {
    const t = await createTestDatabase(base(), "migdsql");
    try {
      const first = await openPg(t.url, { profile: "dsql", max: 1, migrations: MEMORY_MIGRATIONS, targetVersion: 2 });
      expect(first.features).toMatchObject({ trigram: false, vector: false });
      expect(first.features.reasons.join(" ")).toMatch(/dsql profile has no extensions/);
      await first.close();
      // a crash after some statements of step 3: rerunning the step must not fail on what exists
      const c = new pg.Client({ connectionString: t.url });
      await c.connect();
      await c.query(`CREATE TABLE session_sources (id bigint PRIMARY KEY, kind text NOT NULL, location text NOT NULL, UNIQUE (kind, location))`);
      await c.end();
      const again = await openPg(t.url, { profile: "dsql", max: 1, migrations: MEMORY_MIGRATIONS });
      const v = (await again.pool.query<{ version: number }>(`SELECT version FROM schema_migrations ORDER BY version`)).rows.map((r) => r.version);
      expect(v).toEqual(MEMORY_MIGRATIONS.map((m) => m.version));
      const idx = (await again.pool.query(`SELECT indexdef FROM pg_indexes WHERE tablename = 'memories'`)).rows.map((r) => r.indexdef).join("\n");
      expect(idx).not.toMatch(/ WHERE |gin/);
      await again.close();
    } finally {
      await t.drop();
    }
  });

  it("the DSQL profile opens a current schema without DDL, so a role with row grants only can serve it", async () => {
    const t = await createTestDatabase(base(), "migdsqlro");
    const role = `imem_dsqlro_${process.pid}`;
    const admin = new pg.Client({ connectionString: t.url });
    await admin.connect();
    try {
      await (await openPg(t.url, { profile: "dsql", max: 1, migrations: MEMORY_MIGRATIONS })).close();
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'pw' NOSUPERUSER`);
      await grantServerRole(admin, role);
      const u = new URL(t.url);
      u.username = role;
      u.password = "pw";
      const before = (await admin.query(`SELECT count(*)::int AS n FROM schema_migrations`)).rows[0].n;
      const db = await openPg(u.toString(), { profile: "dsql", max: 1, migrations: MEMORY_MIGRATIONS });
      try {
        const store = new PgMemoryStore(db);
        const r = mem("the dsql role keeps the release checklist");
        await store.insert(r, { at: 1, actor: "u", action: "create", targetKind: "memory", targetId: r.id, detail: {} });
        const hits = await store.search({ visibility: { keys: [visibilityKey(r.scope)] }, query: analyzeQuery("release checklist"), statuses: ["active"], includeFlagged: false, now: 2, limit: 5 });
        expect(hits.map((h) => h.record.id)).toEqual([r.id]);
      } finally {
        await db.close();
      }
      expect((await admin.query(`SELECT count(*)::int AS n FROM schema_migrations`)).rows[0].n).toBe(before);
      // one step with DDL behind: the role cannot apply it and says so, leaving the table as it was
      const withDdl = MEMORY_MIGRATIONS.filter((m) => dsqlStatements(m.dsql!).length > 0).at(-1)!;
      await admin.query(`DELETE FROM schema_migrations WHERE version = $1`, [withDdl.version]);
      await expect(openPg(u.toString(), { profile: "dsql", max: 1, migrations: MEMORY_MIGRATIONS })).rejects.toThrow(
        new RegExp(`needs 1 migration\\(s\\) .* role ${role} may not change it .*infinity-memory db upgrade --db <owner's URL> --grant ${role}`),
      );
      expect((await admin.query(`SELECT count(*)::int AS n FROM schema_migrations`)).rows[0].n).toBe(before - 1);
    } finally {
      await admin.end();
      await t.drop();
      const c = new pg.Client({ connectionString: base() });
      await c.connect();
      await c.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
      await c.end();
    }
  });
});

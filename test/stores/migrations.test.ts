// Databases created at every earlier schema version upgrade cleanly with their data intact.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { openDatabase, schemaVersion, type MigrationEvent } from "../../stores/sqlite/database.js";
import { MIGRATIONS } from "../../stores/sqlite/migrations.js";
import { visibilityKey } from "../../core/memory/scope.js";
import { projectKey } from "../../core/skills/scope.js";
import { openTestMemory, req, trigramMatch } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";
import { holding } from "../helpers/holding.js";
import { OLD_ERROR } from "../../core/learning/failure.js";

const LATEST = Math.max(...MIGRATIONS.map((m) => m.version));

describe("schema migrations", () => {
  it("versions are unique and the list is complete from 1", () => {
    const versions = MIGRATIONS.map((m) => m.version).sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: versions.length }, (_, i) => i + 1));
  });

  it("tells a listener about each step of an upgrade, and nothing for a new file", () => {
    const dir = tempDir();
    const path = join(dir, "memory.db");
    const fresh: MigrationEvent[] = [];
    openDatabase(path, { targetVersion: LATEST - 1, onMigration: (e) => fresh.push(e) }).close();
    expect(fresh).toEqual([]);
    const seen: MigrationEvent[] = [];
    const db = openDatabase(path, { onMigration: (e) => seen.push(e) });
    const step = MIGRATIONS.find((m) => m.version === LATEST)!;
    expect(seen.map((e) => [e.version, e.name, e.phase])).toEqual([
      [LATEST, step.name, "start"],
      [LATEST, step.name, "done"],
    ]);
    expect(seen[1]!.ms).toBeGreaterThanOrEqual(0);
    db.close();
    // an up-to-date file runs no step
    const again: MigrationEvent[] = [];
    openDatabase(path, { onMigration: (e) => again.push(e) }).close();
    expect(again).toEqual([]);
  });

  for (let v = 1; v < LATEST; v++) {
    it(`upgrades a version-${v} database with a memory in it`, async () => {
      const dir = tempDir();
      const path = join(dir, "memory.db");
      const old = openDatabase(path, { targetVersion: v });
      expect(schemaVersion(old)).toBe(v);
      // Written with that version's own tables, the way a build of that version would have.
      const scope = { level: "user" as const, user: "alice", project: null, session: null, thread: null };
      const info = old
        .prepare(
          `INSERT INTO memories (id, lineage_id, vis_key, level, user_id, kind, content, trust, confidence, status, version, created_at, updated_at, content_hash)
           VALUES ('mem_old1', 'mem_old1', ?, 'user', 'alice', 'fact', 'The legacy billing cron runs at 3am UTC', 'user_stated', 0.9, 'active', 1, 1, 1, 'h')`,
        )
        .run(visibilityKey(scope));
      old.prepare(`INSERT INTO memory_sources (memory_rowid, thread_id, tool_call_id, actor, at) VALUES (?, 'root-1', 'tc-old', 'model', 1)`).run(info.lastInsertRowid);
      // the scope's change token from version 12 (its person from version 16), as the store writes it
      if (v >= 16) old.prepare(`INSERT INTO scope_tokens (vis_key, token, user_id) VALUES (?, 7, 'alice')`).run(visibilityKey(scope));
      else if (v >= 12) old.prepare(`INSERT INTO scope_tokens (vis_key, token) VALUES (?, 7)`).run(visibilityKey(scope));
      const cols = (old.prepare(`SELECT count(*) AS n FROM pragma_table_info('memory_fts')`).get() as { n: number }).n;
      if (cols === 4) old.prepare(`INSERT INTO memory_fts (rowid, content, tags, cjk, vis_key) VALUES (?, ?, '', '', ?)`).run(info.lastInsertRowid, "The legacy billing cron runs at 3am UTC", visibilityKey(scope));
      // from version 9 the word index has a context column
      if (cols === 5) old.prepare(`INSERT INTO memory_fts (rowid, content, tags, cjk, context, vis_key) VALUES (?, ?, '', '', '', ?)`).run(info.lastInsertRowid, "The legacy billing cron runs at 3am UTC", visibilityKey(scope));
      // from version 19 nothing rebuilds the trigram index: its row as the store writes it
      if (v >= 19) old.prepare(`INSERT INTO memory_tri (rowid, content) VALUES (?, ?)`).run(info.lastInsertRowid, "The legacy billing cron runs at 3am UTC");
      old.close();

      const m = openTestMemory(dir);
      expect(schemaVersion(m.db)).toBe(LATEST);
      expect((m.db.prepare(`PRAGMA integrity_check`).get() as { integrity_check: string }).integrity_check).toBe("ok");
      const hits = await m.service.search({ thread: req() }, { query: "billing cron" });
      expect(hits.map((h) => h.record.id)).toEqual(["mem_old1"]);
      expect(hits[0]!.record.sources[0]).toMatchObject({ threadId: "root-1", toolCallId: "tc-old" });
      // a partial word, through the trigram index (version 19 rebuilt it from the memories)
      expect((await m.service.search({ thread: req() }, { query: "legac" })).map((h) => h.record.id)).toEqual(["mem_old1"]);
      // the word index rewritten by version 14 knows the memory's kind: a kind filter finds it (the
      // row written by hand above into a version-14 file has no kind token: nothing rewrote it)
      if (v < 14) {
        expect((await m.service.search({ thread: req() }, { query: "billing cron", kinds: ["fact"] })).map((h) => h.record.id)).toEqual(["mem_old1"]);
        expect(await m.service.search({ thread: req() }, { query: "billing cron", kinds: ["lesson"] })).toEqual([]);
      }
      // a person's view finds their scopes, the one written before the upgrade included (version
      // 16 names each scope's person in scope_tokens, for the scopes written before it too)
      for (const viewer of [{ owner: "alice" }, { owner: "alice", project: "/elsewhere" }]) {
        expect((await m.service.search(viewer, { query: "billing cron" })).map((h) => h.record.id)).toEqual(["mem_old1"]);
        expect((await m.service.list(viewer, {})).items.map((x) => x.id)).toEqual(["mem_old1"]);
      }
      // and the upgraded file takes new writes
      const r = await m.service.remember(req(), { content: "The new billing cron runs at 4am UTC" }, { actor: "model", threadId: "root-2", toolCallId: "tc-new" });
      expect(r.conflicts.map((c) => c.id)).toEqual(["mem_old1"]);
      m.close();
    });
  }

  it("27 clears the error texts older versions kept in the learning queue, dropped threads and events (a parser's message quotes the file)", () => {
    const dir = tempDir();
    const path = join(dir, "memory.db");
    const old = openDatabase(path, { targetVersion: 25 });
    const quoted = `/h/threads/t1.json: Unexpected token 's', ..."text": sk-9f8e7d}"... is not valid JSON`;
    old.prepare(`INSERT INTO learning_queue (source, thread_id, root_thread_id, enqueued_at, attempts, last_error) VALUES ('conversation', 't1', 't1', 1, 1, ?)`).run(quoted);
    old.prepare(`INSERT INTO learning_dropped (source, thread_id, root_thread_id, format, drops, retry_at, reason) VALUES ('conversation', 't2', 't2', 'v1', 0, 5, ?)`).run(quoted);
    const ev = old.prepare(`INSERT INTO learning_events (at, kind, thread_id, episode_id, detail) VALUES (1, ?, 't1', NULL, ?)`);
    ev.run("thread_failed", JSON.stringify({ source: "conversation", attempts: 1, error: quoted }));
    ev.run("episode_failed", JSON.stringify({ start_ord: 4, error: 'say "sk-9f8e7d"\\ twice' }));
    ev.run("candidates_suppressed", JSON.stringify({}));
    old.close();

    const m = openTestMemory(dir);
    try {
      expect(holding(m.db, "sk-9f8e7d")).toEqual([]);
      expect(m.db.prepare(`SELECT attempts, last_error FROM learning_queue`).all()).toEqual([{ attempts: 1, last_error: null }]);
      expect(m.db.prepare(`SELECT drops, reason FROM learning_dropped`).all()).toEqual([{ drops: 0, reason: OLD_ERROR }]);
      expect((m.db.prepare(`SELECT detail FROM learning_events ORDER BY id`).pluck().all() as string[]).map((d) => JSON.parse(d) as unknown)).toEqual([
        { source: "conversation", attempts: 1, error: OLD_ERROR },
        { start_ord: 4, error: OLD_ERROR },
        {},
      ]);
    } finally {
      m.close();
    }
  });

  it("19 rebuilds the trigram index without positions from every memory not forgotten, and drops its pending purge mark", async () => {
    const dir = tempDir();
    const path = join(dir, "memory.db");
    const old = openDatabase(path, { targetVersion: 18 });
    const key = visibilityKey({ level: "user", user: "alice", project: null, session: null, thread: null });
    const add = old.prepare(`INSERT INTO memories (id, lineage_id, vis_key, level, user_id, kind, content, trust, confidence, status, version, created_at, updated_at, content_hash)
      VALUES (?, 'lin', ?, 'user', 'alice', 'fact', ?, 'user_stated', 0.9, ?, ?, 1, 1, ?)`);
    const tri = old.prepare(`INSERT INTO memory_tri (rowid, content, vis_key) VALUES (?, ?, ?)`);
    const rows: [string, string, string, number][] = [
      ["mem_v1", "The cluster runs kubernetes 1.28", "superseded", 1],
      ["mem_v2", "The cluster runs kubernetes 1.29", "active", 2],
    ];
    for (const [id, content, status, version] of rows) tri.run(add.run(id, key, content, status, version, `h-${id}`).lastInsertRowid, content, key);
    // a forgotten memory: content gone, its trigram row deleted (a tombstone waiting for a merge)
    const gone = add.run("mem_gone", key, "", "deleted", 1, null).lastInsertRowid;
    old.prepare(`INSERT INTO fts_purge (tbl, gen) VALUES ('memory_tri', 3), ('memory_fts', 3)`).run();
    old.close();

    const m = openTestMemory(dir);
    expect((m.db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'memory_tri'`).get() as { sql: string }).sql).toMatch(/detail = none/);
    const rowids = (m.db.prepare(`SELECT rowid FROM memory_tri WHERE memory_tri MATCH ? ORDER BY rowid`).all(trigramMatch("ubernet")) as { rowid: number }[]).map((r) => r.rowid);
    const byId = (id: string) => (m.db.prepare(`SELECT rowid FROM memories WHERE id = ?`).get(id) as { rowid: number }).rowid;
    expect(rowids).toEqual([byId("mem_v1"), byId("mem_v2")]);
    expect(rowids).not.toContain(Number(gone));
    // (version 20 then rebuilt the word index too, which drops its mark)
    expect((m.db.prepare(`SELECT tbl FROM fts_purge ORDER BY tbl`).all() as { tbl: string }[]).map((r) => r.tbl)).toEqual([]);
    expect((await m.service.search({ thread: req() }, { query: "ubernet" })).map((h) => h.record.id)).toEqual(["mem_v2"]);
    m.close();
  });

  it("20 rebuilds the three word indexes with combining marks inside words, from memories, indexed messages and the skill index", async () => {
    const dir = tempDir();
    const path = join(dir, "memory.db");
    const old = openDatabase(path, { targetVersion: 19 });
    const key = visibilityKey({ level: "user", user: "alice", project: null, session: null, thread: null });
    const said = "नमस्ते दुनिया, मेरा नाम राहुल है";
    const info = old
      .prepare(`INSERT INTO memories (id, lineage_id, vis_key, level, user_id, kind, content, trust, confidence, status, version, created_at, updated_at, content_hash)
        VALUES ('mem_hi', 'mem_hi', ?, 'user', 'alice', 'fact', ?, 'user_stated', 0.9, 'active', 1, 1, 1, 'h')`)
      .run(key, said);
    old.prepare(`INSERT INTO memory_fts (rowid, content, tags, cjk, context, vis_key) VALUES (?, ?, '', '', '', ?)`).run(info.lastInsertRowid, said, key);
    const src = old.prepare(`INSERT INTO session_sources (kind, location) VALUES ('sqlite', '/x.db')`).run().lastInsertRowid;
    const msg = old
      .prepare(`INSERT INTO session_messages (source_id, thread_id, root_thread_id, ord, message_id, role, text, vis_key, at) VALUES (?, 't1', 't1', 0, 'm1', 'user', ?, 'u:alice', 1)`)
      .run(src, `याद रखो: ${said}`).lastInsertRowid;
    old.prepare(`INSERT INTO session_fts (rowid, text, cjk, vis_key) VALUES (?, ?, '', 'u:alice')`).run(msg, `याद रखो: ${said}`);
    old.prepare(`INSERT INTO skill_fts (rowid, name, description) VALUES (7, 'greet-hindi', 'नमस्ते से अभिवादन करें')`).run();
    old.prepare(`INSERT INTO fts_purge (tbl, gen) VALUES ('session_fts', 2)`).run();
    old.close();

    const m = openTestMemory(dir);
    const terms = (table: string) => {
      m.db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_${table} USING fts5vocab(main, ${table}, 'row')`);
      return (m.db.prepare(`SELECT term FROM temp.v_${table}`).all() as { term: string }[]).map((r) => r.term);
    };
    // whole words, where version 19's tables held "नमस" and "त"
    for (const table of ["memory_fts", "session_fts", "skill_fts"]) {
      expect(terms(table), table).toContain("नमस्ते");
      expect(terms(table), table).not.toContain("नमस");
    }
    expect(m.db.prepare(`SELECT rowid FROM skill_fts WHERE skill_fts MATCH 'अभिवादन'`).all()).toEqual([{ rowid: 7 }]);
    expect((m.db.prepare(`SELECT tbl FROM fts_purge`).all() as { tbl: string }[]).map((r) => r.tbl)).toEqual([]);
    expect((await m.service.search({ thread: req() }, { query: "नमस्ते" })).map((h) => h.record.id)).toEqual(["mem_hi"]);
    m.close();
  });

  it("18 rekeys project-level skill settings from a NUL-joined pair to the JSON pair the service now writes, and leaves the others", () => {
    const path = join(tempDir(), "memory.db");
    const old = openDatabase(path, { targetVersion: 17 });
    old.prepare(`INSERT INTO skills (id, name, created_at, updated_at) VALUES ('s1', 'deploy-check', 1, 1)`).run();
    const toggle = old.prepare(`INSERT INTO skill_toggles (skill_id, scope_key, level, enabled, updated_at) VALUES ('s1', ?, ?, 0, 1)`);
    toggle.run("project:alice\u0000/work/o'neil \"apps\"", "project");
    toggle.run("project:bob\u0000/srv", "project");
    toggle.run("user:alice", "user");
    toggle.run("thread:t-1", "thread");
    old.close();
    const db = openDatabase(path);
    const keys = (db.prepare(`SELECT scope_key FROM skill_toggles ORDER BY scope_key`).all() as { scope_key: string }[]).map((r) => r.scope_key);
    expect(keys).toEqual([`project:${projectKey("alice", "/work/o'neil \"apps\"")}`, `project:${projectKey("bob", "/srv")}`, "thread:t-1", "user:alice"].sort());
    expect(keys.some((k) => k.includes("\u0000"))).toBe(false);
    db.close();
  });
});

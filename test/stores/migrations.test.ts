// Databases created at every earlier schema version upgrade cleanly with their data intact.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { openDatabase, schemaVersion, type MigrationEvent } from "../../stores/sqlite/database.js";
import { MIGRATIONS } from "../../stores/sqlite/migrations.js";
import { visibilityKey } from "../../core/memory/scope.js";
import { projectKey } from "../../core/skills/scope.js";
import { openTestMemory, req } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

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
      old.close();

      const m = openTestMemory(dir);
      expect(schemaVersion(m.db)).toBe(LATEST);
      expect((m.db.prepare(`PRAGMA integrity_check`).get() as { integrity_check: string }).integrity_check).toBe("ok");
      const hits = await m.service.search({ thread: req() }, { query: "billing cron" });
      expect(hits.map((h) => h.record.id)).toEqual(["mem_old1"]);
      expect(hits[0]!.record.sources[0]).toMatchObject({ threadId: "root-1", toolCallId: "tc-old" });
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

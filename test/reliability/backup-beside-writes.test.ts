// `backup` is online: servers keep committing while it copies. SQLite's backup in steps starts
// over whenever another connection commits between two steps, so beside a server that commits
// every few milliseconds a copy of a large file never finished (a 150 MB database: still copying
// after 90 s with two servers remembering). Here a second connection commits between every two
// turns of the event loop, which is where the steps are, so the interleaving is the same each run.
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { copyDatabase, openDatabase } from "../../stores/sqlite/database.js";
import { tempDir } from "../helpers/tmp.js";

const ROWS = 1000;

describe("an online backup beside a writer", () => {
  it("finishes while another connection commits between every two of its steps", async () => {
    const dir = tempDir("imem-backup-writes-");
    const path = join(dir, "memory.db");
    const db = openDatabase(path);
    const insert = `INSERT INTO audit_log (at, actor, action, target_kind, target_id, detail) VALUES (?, 'user', 'create', 'memory', ?, ?)`;
    // ~2.5 MB: several hundred pages, so a copy in 100-page steps takes several turns
    const fill = db.prepare(insert);
    db.transaction(() => {
      for (let i = 0; i < ROWS; i++) fill.run(i, `mem_${i}`, JSON.stringify({ note: "x".repeat(2000) }));
    })();
    const writer = openDatabase(path);
    const row = writer.prepare(insert);
    let commits = 0;
    let writing = true;
    const tick = (): void => {
      if (!writing) return;
      row.run(Date.now(), `live_${commits++}`, "{}");
      setImmediate(tick);
    };
    setImmediate(tick);
    const out = join(dir, "copy.db");
    const copied = copyDatabase(db, out).then(() => "copied" as const);
    const outcome = await Promise.race([copied, new Promise<"still copying">((r) => setTimeout(() => r("still copying"), 8000))]);
    writing = false;
    // (without the writer a copy in steps finishes too: nothing is left running after the test)
    await copied;
    writer.close();
    db.close();
    expect(outcome).toBe("copied");
    expect(commits).toBeGreaterThan(0);
    const copy = new Database(out, { readonly: true });
    try {
      expect(copy.pragma("integrity_check", { simple: true })).toBe("ok");
      expect((copy.prepare(`SELECT count(*) AS n FROM audit_log`).get() as { n: number }).n).toBeGreaterThanOrEqual(ROWS);
    } finally {
      copy.close();
    }
  });
});

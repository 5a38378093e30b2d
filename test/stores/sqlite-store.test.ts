import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase, schemaVersion, type Db } from "../../stores/sqlite/database.js";
import { SqliteConversationStore } from "../../stores/sqlite/conversation-store.js";
import { SqliteStateStore } from "../../stores/sqlite/state-store.js";
import { tempDir } from "../helpers/tmp.js";
import { conformance, type StoresUnderTest } from "./conformance.js";
import { numbered } from "./builders.js";

function storesAt(path: string): StoresUnderTest {
  const db: Db = openDatabase(path);
  return {
    conversation: new SqliteConversationStore(db),
    state: new SqliteStateStore(db),
    reopen: async () => storesAt(path),
    close: async () => {
      if (db.open) db.close();
    },
  };
}

// one directory for the conformance run; each test's stores get their own file in it
const dir = mkdtempSync(join(tmpdir(), "imem-conv-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
conformance("sqlite", async () => storesAt(join(dir, `db-${n++}.sqlite`)), { durable: true });

describe("sqlite conversation schema", () => {
  it("migration 3 upgrades a version-2 file and keeps what was there", () => {
    const path = join(tempDir("imem-mig-"), "old.sqlite");
    const old = openDatabase(path, { targetVersion: 2 });
    expect(schemaVersion(old)).toBe(2);
    old.prepare(`INSERT INTO toolset_toggles (toolset, thread_id, enabled, updated_at) VALUES ('memory', 't', 1, 0)`).run();
    old.close();
    const db = openDatabase(path);
    try {
      expect(schemaVersion(db)).toBeGreaterThanOrEqual(3);
      const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE 'conv_%' OR name LIKE 'state_%') ORDER BY name`).pluck().all();
      // containment, so later migrations may add tables of their own
      expect(tables).toEqual(
        expect.arrayContaining([
          "conv_compactions",
          "conv_messages",
          "conv_threads",
          "state_metadata",
          "state_processed_ids",
          "state_subscriptions",
          "state_user_choices",
        ]),
      );
      expect(db.prepare(`SELECT count(*) FROM toolset_toggles`).pluck().get()).toBe(1);
    } finally {
      db.close();
    }
  });

  it("stores each message body as the daemon's JSON with its kind", async () => {
    const db = openDatabase(":memory:");
    try {
      const c = new SqliteConversationStore(db);
      await c.appendMessages("r", numbered("m", 2));
      const rows = db.prepare(`SELECT ord, message_id, kind, body FROM conv_messages ORDER BY ord`).all();
      expect(rows).toEqual([
        { ord: 0, message_id: "m0", kind: "user", body: '{"kind":"user","content":{"type":"text","text":"m0"}}' },
        { ord: 1, message_id: "m1", kind: "user", body: '{"kind":"user","content":{"type":"text","text":"m1"}}' },
      ]);
    } finally {
      db.close();
    }
  });

  it("two stores on one file see each other's writes", async () => {
    const path = join(tempDir("imem-share-"), "shared.sqlite");
    const a = storesAt(path);
    const b = storesAt(path);
    try {
      await a.conversation.ensureRootThread("r");
      await a.conversation.appendMessages("r", numbered("m", 2));
      await b.conversation.appendMessages("r", numbered("m", 1, 2));
      expect((await a.conversation.loadMessagesWithIds("r")).map(([, id]) => id)).toEqual(["m0", "m1", "m2"]);
      await b.state.setMetadata("r", { user_id: "z" });
      expect(await a.state.getMetadata("r")).toEqual({ user_id: "z" });
    } finally {
      await a.close!();
      await b.close!();
    }
  });
});

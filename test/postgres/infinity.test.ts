// The Infinity ConversationStore + StateStore conformance suite on PostgreSQL (both profiles),
// durable: a reopened pool sees what the first one wrote.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sequentialThreadIds } from "../../stores/infinity/ids.js";
import { PgConversationStore, PgStateStore } from "../../stores/postgres/infinity-stores.js";
import { PgDb } from "../../stores/postgres/pool.js";
import { MEMORY_MIGRATIONS } from "../../stores/postgres/schema-memory.js";
import { openPg } from "../../stores/postgres/setup.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";
import { numbered } from "../stores/builders.js";
import { conformance, type StoresUnderTest } from "../stores/conformance.js";

const TABLES = "conv_threads, conv_messages, conv_compactions, state_processed_ids, state_metadata, state_subscriptions, state_user_choices";

for (const profile of ["postgres", "dsql"] as const) {
  describePg(`postgres infinity stores (${profile} profile)`, (base) => {
    let url = "";
    let drop: () => Promise<void>;
    let admin: PgDb;
    beforeAll(async () => {
      const t = await createTestDatabase(base(), `inf_${profile}`);
      url = t.url;
      drop = t.drop;
      admin = await openPg(url, { profile, max: 2, migrations: MEMORY_MIGRATIONS });
    });
    afterAll(async () => {
      await admin?.close();
      await drop?.();
    });

    function storesOn(db: PgDb): StoresUnderTest {
      return {
        conversation: new PgConversationStore(db),
        state: new PgStateStore(db),
        reopen: async () => storesOn(PgDb.open(url, { profile, max: 2 })),
        close: () => db.close(),
      };
    }

    conformance(
      `postgres/${profile}`,
      async () => {
        await admin.pool.query(`TRUNCATE ${TABLES}`);
        return storesOn(PgDb.open(url, { profile, max: 2 }));
      },
      { durable: true },
    );

    describe("postgres specifics", () => {
      it("concurrent appends to one thread from two pools keep dense, unique orders", async () => {
        await admin.pool.query(`TRUNCATE ${TABLES}`);
        const pa = PgDb.open(url, { profile, max: 4 });
        const pb = PgDb.open(url, { profile, max: 4 });
        const a = new PgConversationStore(pa);
        const b = new PgConversationStore(pb);
        await Promise.all([
          ...Array.from({ length: 10 }, (_, i) => a.appendMessages("r", numbered(`a${i}-`, 2))),
          ...Array.from({ length: 10 }, (_, i) => b.appendMessages("r", numbered(`b${i}-`, 2))),
        ]);
        const got = await a.loadMessagesWithIds("r");
        expect(got).toHaveLength(40);
        expect(new Set(got.map(([, id]) => id)).size).toBe(40);
        const ords = (await admin.pool.query<{ ord: number }>(`SELECT ord FROM conv_messages WHERE thread_id = 'r' ORDER BY ord`)).rows.map((r) => r.ord);
        expect(ords).toEqual(Array.from({ length: 40 }, (_, i) => i));
        await pa.close();
        await pb.close();
      });

      it("takes thread ids from the injected source", async () => {
        const c = new PgConversationStore(admin, { newThreadId: sequentialThreadIds() });
        await c.ensureRootThread("root-x");
        expect(await c.spawnThread("root-x", "tc", false)).toBe("00000000-0000-4000-8000-000000000001");
      });
    });
  });
}

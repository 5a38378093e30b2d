// Numbers that grow with use, or arrive from the runtime as a Rust usize or from a gRPC client as
// a uint32, are 64-bit on PostgreSQL as on SQLite: past 2^31 - 1 a write used to fail with
// "integer out of range". Migrations 14 and 108 widen them in place on a database made before,
// keeping its rows, and the stores read the values back as numbers (int8 arrives as a string
// without pool.ts's type parser).
import { afterAll, beforeAll, expect, it } from "vitest";
import { PgLearningStore } from "../../stores/postgres/learning-store.js";
import { PgConversationStore } from "../../stores/postgres/infinity-stores.js";
import { PG_MIGRATIONS } from "../../stores/postgres/migrations.js";
import type { PgDb } from "../../stores/postgres/pool.js";
import { PgRapOutbox } from "../../stores/postgres/rap-outbox.js";
import { POSTGRES_FLAVOR } from "../../stores/postgres/rows.js";
import { openPg } from "../../stores/postgres/setup.js";
import { PgSkillStore } from "../../stores/postgres/skill-store.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";
import { draft } from "../stores/learning-conformance.js";
import { audit, newVersion } from "../stores/skills-conformance.js";

const INT_MAX = 2 ** 31 - 1;
const PAST = 2 ** 31 + 5;

/** Columns left 32-bit on purpose: 0/1 flags, a chosen option's index, numbers bounded by the rows they number. */
const BOUNDED = new Set([
  "conv_messages.ord",
  "conv_threads.closed",
  "conv_threads.is_compaction",
  "conv_threads.is_subscription_event",
  "learning_episodes.candidates_done",
  "learning_episodes.grounded",
  "learning_episodes.suppressed",
  "learning_policies.eligible",
  "learning_steps.idx",
  "memories.version",
  "memory_source_messages.ord",
  "rap_user_choices.selected",
  "schema_migrations.version",
  "session_messages.ord",
  "session_threads.skipped_from",
  "skill_eval_reports.passed",
  "skill_toggles.enabled",
  "skill_trials.passed",
  "skill_versions.live_order",
  "skill_versions.pinned",
  "skill_versions.seq",
  "skills.pinned",
  "toolset_toggles.enabled",
]);

describePg("postgres: counters and positions past 2^31", (base) => {
  let db: PgDb;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const t = await createTestDatabase(base(), "wide");
    drop = t.drop;
    // a database as the build before migrations 14 and 108 left it, with rows in it
    const old = await openPg(t.url, { max: 2, migrations: PG_MIGRATIONS.filter((m) => m.version !== 14 && m.version !== 108) });
    const skills = new PgSkillStore(old.pool, POSTGRES_FLAVOR);
    await skills.insertVersion(newVersion("deploy", "Deploy the web service", "h1"), { skillId: "s1", versionId: "v1" }, audit("propose", "deploy"));
    await old.pool.query(`UPDATE skill_versions SET views = $1, trials = $1, uses = $1 WHERE id = 'v1'`, [INT_MAX]);
    await expect(skills.recordView("v1")).rejects.toThrow(/out of range/);
    await new PgLearningStore(old.pool, POSTGRES_FLAVOR).upsertEpisode(draft("before", 7, "h0"), [], [], "ep-before", 100);
    await old.close();
    db = await openPg(t.url, { max: 4 });
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it("the upgrade keeps the rows and leaves no growing column 32-bit", async () => {
    const ints = (
      await db.pool.query<{ c: string }>(
        `SELECT table_name || '.' || column_name AS c FROM information_schema.columns
          WHERE table_schema = current_schema() AND data_type IN ('integer', 'smallint') ORDER BY 1`,
      )
    ).rows.map((r) => r.c);
    expect(ints.filter((c) => !BOUNDED.has(c))).toEqual([]);
    // ids (audit seq, outbox, traces…) come from 64-bit sequences
    const seqs = (await db.pool.query<{ s: string; t: string }>(`SELECT sequencename AS s, data_type::text AS t FROM pg_sequences WHERE schemaname = current_schema()`)).rows;
    expect(seqs.length).toBeGreaterThan(5);
    expect(seqs.filter((r) => r.t !== "bigint")).toEqual([]);
    const before = await new PgLearningStore(db.pool, POSTGRES_FLAVOR).episode("ep-before");
    expect(before).toMatchObject({ startOrd: 7, endOrd: 12 });
  });

  it("a skill version's view, use and trial counters pass 2^31 and read back as numbers", async () => {
    const skills = new PgSkillStore(db.pool, POSTGRES_FLAVOR);
    await skills.recordView("v1");
    const v = await skills.recordTrial("v1", { passed: true, note: null, threadId: null, at: 2000 }, () => 0.6, audit("feedback", "deploy", 2000));
    expect(v.usage.views).toBe(INT_MAX + 1);
    expect(v.usage.uses).toBe(INT_MAX + 1);
    expect(v.trials).toBe(INT_MAX + 1);
    expect((await skills.version("v1"))!.usage.views).toBe(INT_MAX + 1);
  });

  it("an episode whose positions come from a history longer than 2^31 and a step answered 25 days later are stored", async () => {
    const learning = new PgLearningStore(db.pool, POSTGRES_FLAVOR);
    const d = draft("long", PAST, "h1");
    d.steps = d.steps.map((s, i) => ({ ...s, ord: PAST + 1 + i, latencyMs: 25 * 86_400_000 }));
    const { episode } = await learning.upsertEpisode(d, [], [], "ep-long", 100);
    expect(episode).toMatchObject({ startOrd: PAST, endOrd: PAST + 5 });
    const steps = await learning.stepsOf("ep-long");
    expect(steps.map((s) => [s.ord, s.latencyMs])).toEqual([
      [PAST + 1, 25 * 86_400_000],
      [PAST + 2, 25 * 86_400_000],
    ]);
    expect(await learning.resumeOrd("conversation", "long")).toBe(PAST);
  });

  it("a spawn point and a compaction point past 2^31 (a usize from the runtime) are kept", async () => {
    const c = new PgConversationStore(db);
    await c.ensureRootThread("root-big");
    const child = await c.spawnThread("root-big", "tc-1", false, PAST);
    expect(await c.getThreadSpawnOrder(child)).toBe(PAST);
    await c.saveCompactionSummary("root-big", "summary", PAST);
    expect(await c.loadLatestCompactionSummaryUpTo("root-big", null)).toEqual(["summary", PAST]);
  });

  it("a callback retried past 2^31 attempts still counts", async () => {
    const outbox = new PgRapOutbox(db.pool, POSTGRES_FLAVOR);
    await db.pool.query(`SELECT setval(pg_get_serial_sequence('rap_outbox', 'id'), $1)`, [PAST]);
    const id = await outbox.enqueue({ toolset: "memory", groupId: "g", callId: "c", callbackUrl: "http://127.0.0.1:1/cb", body: "{}" }, 1);
    await db.pool.query(`UPDATE rap_outbox SET attempts = $1 WHERE id = $2`, [INT_MAX, id]);
    expect(id).toBe(PAST + 1);
    await outbox.retryAt(id, 2, "refused");
    expect((await outbox.stats()).pendingAttempts).toBe(INT_MAX + 1);
  });
});

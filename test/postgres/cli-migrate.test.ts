// `infinity-memory migrate --from sqlite:PATH --to postgres://…` as a real CLI child process:
// every table copied and verified (counts and checksums), the copy readable and searchable
// through the PostgreSQL stores, a non-empty target refused without touching it, bad arguments
// named.
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { analyzeQuery } from "../../core/retrieval/analyze.js";
import { openPostgresBackend } from "../../stores/postgres/backend.js";
import { runCli } from "../helpers/cli.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";
import { populateSqlite, type Populated } from "./populate.js";

interface Summary {
  tables: { table: string; rows: number; target_rows: number; checksum: string; target_checksum: string; ok: boolean }[];
  skipped: { table: string; reason: string }[];
  rebuilt: { memoryWords: number; sessionMessages: number };
  analyzed: string;
  total_rows: number;
  ok: boolean;
  to: string;
}

const NON_EMPTY = [
  "memories", "memory_tags", "memory_sources", "edges", "audit_log", "toolset_toggles",
  "skills", "skill_versions", "skill_files", "skill_grants", "skill_toggles", "skill_trials",
  "learning_episodes", "learning_steps", "learning_episode_messages", "learning_signals", "learning_feedback", "learning_candidates",
  "learning_queue", "learning_cursors", "learning_events", "learning_policies", "learning_policy_episodes",
  "skill_eval_reports", "skill_requests", "skill_golden_tasks", "trace_events", "rap_invocations", "rap_outbox", "rap_user_choices",
  "root_contexts", "llm_budget", "conv_threads", "conv_messages", "state_metadata", "state_processed_ids", "state_subscriptions",
  "session_sources", "session_threads", "session_messages",
];

describePg("infinity-memory migrate (sqlite → postgres)", (url) => {
  let dir: string;
  let src: Populated;
  const drops: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "imem-migrate-"));
    src = await populateSqlite(dir);
  });
  afterAll(async () => {
    for (const d of drops) await d();
    rmSync(dir, { recursive: true, force: true });
  });
  const target = async () => {
    const t = await createTestDatabase(url(), "mig");
    drops.push(t.drop);
    return t.url;
  };
  const pgRows = async <R,>(u: string, sql: string): Promise<R[]> => {
    const c = new pg.Client({ connectionString: u });
    await c.connect();
    try {
      return (await c.query(sql)).rows as R[];
    } finally {
      await c.end();
    }
  };
  const count = async (u: string, table: string) => {
    const c = new pg.Client({ connectionString: u });
    await c.connect();
    try {
      return Number((await c.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    } finally {
      await c.end();
    }
  };

  it("copies every table, verifies counts and checksums, and the copy works through the stores", async () => {
    const to = await target();
    // a process stopped while it merged a forget's full-text rows away: the mark is no data to copy
    const mark = new Database(src.path);
    mark.prepare(`INSERT OR IGNORE INTO fts_purge (tbl, gen) VALUES ('memory_fts', 1)`).run();
    mark.close();
    const r = runCli(["migrate", "--from", `sqlite:${src.path}`, "--to", to], {});
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const s = JSON.parse(r.stdout) as Summary;
    expect(s.ok).toBe(true);
    expect(s.tables.filter((t) => !t.ok)).toEqual([]);
    const byName = new Map(s.tables.map((t) => [t.table, t]));
    for (const t of NON_EMPTY) {
      expect(byName.get(t), t).toBeDefined();
      expect(byName.get(t)!.rows, t).toBeGreaterThan(0);
      expect(byName.get(t)!.target_rows, t).toBe(byName.get(t)!.rows);
      expect(byName.get(t)!.target_checksum, t).toBe(byName.get(t)!.checksum);
    }
    expect(byName.get("memories")!.rows).toBeGreaterThanOrEqual(64);
    expect(s.total_rows).toBe(s.tables.reduce((n, t) => n + t.rows, 0));
    expect(s.skipped.map((x) => x.table)).toEqual(expect.arrayContaining(["memory_fts", "memory_tri", "skill_fts", "session_fts", "fts_purge"]));
    expect(s.rebuilt.memoryWords).toBeGreaterThan(0);
    expect(s.rebuilt.sessionMessages).toBe(2);
    expect(s.to).toMatch(/^postgres:\/\//);
    // the copy was vacuumed and analysed: the first searches plan from statistics
    expect(s.analyzed).toBe("vacuum analyze");
    const stats = await pgRows<{ relname: string; analyzed: boolean; vacuumed: boolean }>(
      to,
      `SELECT relname, last_analyze IS NOT NULL AS analyzed, last_vacuum IS NOT NULL AS vacuumed FROM pg_stat_user_tables WHERE relname IN ('memories', 'memory_words', 'memory_sources') ORDER BY relname`,
    );
    expect(stats).toEqual(["memories", "memory_sources", "memory_words"].map((relname) => ({ relname, analyzed: true, vacuumed: true })));

    // the copy behaves: memory search (word index rebuilt), RAP state, skills (search index
    // rebuilt), learning, traces (ids continue after the copied ones), evolution
    const b = await openPostgresBackend(to);
    try {
      const hits = await b.memory.search({ visibility: { owner: "alice" }, query: analyzeQuery(src.searchable.word), statuses: ["active"], includeFlagged: false, now: Date.now(), limit: 5 });
      expect(hits.length).toBeGreaterThan(0);
      expect(hits[0]!.record.content).toContain("ArgoCD and Helm");
      expect((await b.memory.lineage(hits[0]!.record.lineageId)).map((m) => m.status)).toEqual(["superseded", "active"]);
      expect(await b.journal.open("memory")).toHaveLength(1);
      expect((await b.outbox.claimDue(Date.now(), 1000, 10)).map((x) => x.body)).toEqual(['{"ok":true}']);
      const skillHits = await b.skills.search({ match: `"rollout"`, minEta: 0, excludeSkillIds: [], limit: 5 });
      expect(skillHits.map((h) => h.version.id)).toEqual(["v2"]);
      expect((await b.skills.version("v2"))!.parentId).toBe("v1");
      expect(await b.learning.episode("e1")).toMatchObject({ reward: 0.7, grounded: true });
      expect((await b.traces.listByThread("t1")).map((e) => e.body)).toContainEqual({ i: 0, text: 'é ✓ "quoted"' });
      const before = (await b.traces.listByThread("t1")).at(-1)!.id;
      await b.traces.record({ source: "grpc", dedupKey: "new", threadId: "t1", rootThreadId: "t1", kind: "x", body: {}, at: 1 });
      expect((await b.traces.listByThread("t1")).at(-1)!.id).toBeGreaterThan(before);
      expect(await b.evolution.request("q1")).toMatchObject({ status: "pending", detail: { x: 1 } });
      expect((await b.sessionIndex.search({ user: "alice", query: analyzeQuery("staging cluster"), limit: 5 })).map((h) => h.messageId)).toEqual(["m1"]);
      expect(await b.state.getMetadata("root-1")).toEqual({ user_id: "alice", n: 1 });
    } finally {
      await b.close();
    }
  });

  it("refuses a target that already holds rows, and leaves it as it was", async () => {
    const to = await target();
    expect(runCli(["migrate", "--from", `sqlite:${src.path}`, "--to", to], {}).status).toBe(0);
    const memories = await count(to, "memories");
    const r = runCli(["migrate", "--from", `sqlite:${src.path}`, "--to", to], {});
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/target database is not empty: .*memories \(\d+\).*empty database only/);
    expect(await count(to, "memories")).toBe(memories);
  });

  it("reads --from sqlite:~/… (the form its own error message shows) from the home folder", async () => {
    const to = await target();
    // no shell expands this ~: the CLI does
    const r = runCli(["migrate", "--from", `sqlite:~/${basename(src.path)}`, "--to", to], { HOME: dirname(src.path) });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const summary = JSON.parse(r.stdout) as Summary & { from: string };
    expect(summary.ok).toBe(true);
    expect(summary.from).toBe(`sqlite:${src.path}`);
    expect(await count(to, "memories")).toBeGreaterThan(0);
  });

  it("names the bad argument", async () => {
    const to = await target();
    const missing = runCli(["migrate", "--from", `sqlite:${join(dir, "nope.db")}`, "--to", to], {});
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/--from: no SQLite database at .*nope\.db/);
    const wrongFrom = runCli(["migrate", "--from", src.path, "--to", to], {});
    expect(wrongFrom.stderr).toMatch(/--from must be sqlite:PATH/);
    const wrongTo = runCli(["migrate", "--from", `sqlite:${src.path}`, "--to", "mysql://x"], {});
    expect(wrongTo.stderr).toMatch(/--to must be a postgres:\/\/ or postgresql:\/\/ URL/);
  });
});

// The admin API on PostgreSQL: the same calls over real loopback HTTP against a PostgreSQL
// backend (stores/postgres), each effect checked in the store, and live updates polled from
// the PostgreSQL tables. Skipped with the reason when no cluster runs (test/helpers/postgres.ts).
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetSkillResponse, LearningStatsResponse, ListPendingResponse } from "../../admin/api/contract.js";
import { startAdmin, type AdminServers } from "../../admin/api/start.js";
import { fixedClock } from "../../core/clock.js";
import { defaultConfig } from "../../core/config.js";
import { MemoryService } from "../../core/memory/service.js";
import type { Backend } from "../../stores/backend.js";
import { openPostgresBackend } from "../../stores/postgres/backend.js";
import { createTestDatabase, describePg } from "../helpers/postgres.js";
import { T0 } from "../helpers/memory.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fakeUi, PENDING_TEXT, SOURCE_MESSAGE, seedOver } from "./seed.js";

describePg("admin API on PostgreSQL", (base) => {
  let backend: Backend;
  let drop: () => Promise<void>;
  let admin: AdminServers;
  let ids: Awaited<ReturnType<typeof seedOver>>["ids"];
  let url: string;
  let dir = "";

  beforeAll(async () => {
    const t = await createTestDatabase(base(), "admin");
    drop = t.drop;
    backend = await openPostgresBackend(t.url);
    dir = mkdtempSync(join(tmpdir(), "imem-admin-pg-"));
    const config = defaultConfig({ localUser: "alice" });
    const clock = fixedClock(T0);
    const service = new MemoryService(backend.memory, clock, config);
    service.onForget({ beforeForget: async (user, contents) => void (await backend.sessionIndex.purgeContaining(user, contents)) });
    const seeded = await seedOver({ backend, service, config, clock }, dir);
    ids = seeded.ids;
    admin = await startAdmin({ backend, config, clock, memory: service, home: dir, logger: pino({ level: "silent" }), http: { port: 0, uiDir: fakeUi(dir) }, pollMs: 100 });
    url = admin.http!.url.replace(/\/$/, "");
  }, 60_000);

  afterAll(async () => {
    await admin?.close();
    await backend?.close();
    await drop?.();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function post<T>(path: string, body: unknown, status = 200): Promise<T> {
    const res = await fetch(`${url}/api/v1/${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${admin.token}` },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as T;
    expect(res.status, JSON.stringify(json)).toBe(status);
    return json;
  }

  describe("calls", () => {
    it("lists pending with its source message and confirms it", async () => {
      const pending = ListPendingResponse.parse(await post("MemoryAdmin/ListPending", {}));
      expect(pending.items[0]?.memory.content).toBe(PENDING_TEXT);
      expect(pending.items[0]?.messages[0]?.text).toBe(SOURCE_MESSAGE);
      await post("MemoryAdmin/ConfirmPending", { ids: [ids.pending] });
      expect(await backend.memory.get(ids.pending)).toMatchObject({ status: "active", trust: "user_confirmed" });
    });

    it("forgets: gone from search", async () => {
      await post("MemoryAdmin/ForgetMemory", { ids: [ids.ci] });
      expect((await backend.memory.get(ids.ci))?.status).toBe("deleted");
      expect((await post<{ hits: unknown[] }>("MemoryAdmin/SearchMemories", { query: "Buildkite deploy pipeline", includeHistory: true })).hits).toEqual([]);
    });

    it("approves the filed request, rolls back, and shows trials, η and audit", async () => {
      await post("SkillAdmin/ApproveCandidate", { requestId: ids.request });
      expect((await backend.skills.skillByName("log-triage"))?.publishedVersionId).toBe(ids.v3);
      await post("SkillAdmin/RollbackSkill", { name: "log-triage" });
      const pub = (await backend.skills.skillByName("log-triage"))!.publishedVersionId!;
      expect((await backend.skills.version(pub))?.seq).toBe(2);
      const got = GetSkillResponse.parse(await post("SkillAdmin/GetSkill", { name: "log-triage" }));
      expect(got.trials.map((t) => t.passed)).toEqual([true, false]);
      const actions = (await post<{ entries: { action: string }[] }>("SkillAdmin/QuerySkillAudit", { name: "log-triage" })).entries.map((e) => e.action);
      expect(actions).toEqual(expect.arrayContaining(["publish", "rollback", "feedback"]));
      await post("SkillAdmin/DisableSkill", { name: "log-triage", level: "user" });
      const toggles = GetSkillResponse.parse(await post("SkillAdmin/GetSkill", { name: "log-triage" })).toggles;
      expect(toggles).toEqual([expect.objectContaining({ level: "user", key: "alice", enabled: false })]);
    });

    it("answers learning statistics", async () => {
      const st = LearningStatsResponse.parse(await post("MemoryAdmin/LearningStats", {}));
      expect(st.funnel.evaluated).toBe(1);
      expect(st.rewards.bins).toHaveLength(10);
    });

    it("streams a change event after a write", async () => {
      const res = await fetch(`${url}/api/v1/events`, { headers: { Authorization: `Bearer ${admin.token}` } });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      const deadline = Date.now() + 8000;
      let wrote = false;
      while (!/event: change/.test(text) && Date.now() < deadline) {
        const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), 300))]);
        if (chunk && !chunk.done) text += decoder.decode(chunk.value, { stream: true });
        if (!wrote && /event: hello/.test(text)) {
          wrote = true;
          await post("SkillAdmin/PinSkill", { name: "deploy-check" });
        }
      }
      await reader.cancel();
      expect(text).toMatch(/event: change\nid: \d+\ndata: \{"topics":\[[^\]]*"skills"/);
    });
  });
});

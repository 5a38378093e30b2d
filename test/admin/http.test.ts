// The admin HTTP API over real loopback HTTP against a real SQLite file: the token on every
// call, each call's effect in the store, 4xx answers naming the field, and the static page.
import { request as httpRequest } from "node:http";
import { statSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ListMemoriesResponse, ListPendingResponse, GetSkillResponse, ListCandidatesResponse, LearningStatsResponse, GetMemoryResponse } from "../../admin/api/contract.js";
import { startAdmin } from "../../admin/api/start.js";
import pino from "pino";
import { trigramMatch } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";
import { PENDING_TEXT, SOURCE_MESSAGE, startSeeded } from "./seed.js";
import { parseSkillMd } from "../../core/skills/skill-md.js";
import { skillMd } from "../skills/helpers.js";

type Started = Awaited<ReturnType<typeof startSeeded>>;
let open: Started | null = null;
afterEach(async () => {
  await open?.close();
  open = null;
});

async function start(): Promise<Started> {
  open = await startSeeded(tempDir("imem-admin-"));
  return open;
}

async function post(s: Started, path: string, body: unknown, token: string | null = s.admin.token, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.base}/api/v1/${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { error?: string; field?: string; code?: string } };
}

async function ok<T>(s: Started, path: string, body: unknown): Promise<T> {
  const r = await post(s, path, body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as T;
}

describe("admin HTTP API: access token", () => {
  it("writes a 64-hex token with mode 0600 once, reuses it, and refuses calls without it", async () => {
    const s = await start();
    const file = join(s.ctx.dbPath, "..", "admin.token");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8").trim()).toBe(s.admin.token);
    expect(s.admin.token).toMatch(/^[0-9a-f]{64}$/);
    expect(s.admin.http!.pageUrl).toBe(`${s.admin.http!.url}#token=${s.admin.token}`);

    const none = await post(s, "MemoryAdmin/ListMemories", {}, null);
    expect(none.status).toBe(401);
    expect(none.body.code).toBe("unauthenticated");
    const wrong = await post(s, "MemoryAdmin/ListMemories", {}, "0".repeat(64));
    expect(wrong.status).toBe(401);
    const near = await post(s, "MemoryAdmin/ListMemories", {}, `${s.admin.token.slice(0, 63)}x`);
    expect(near.status).toBe(401);
    const basic = await post(s, "MemoryAdmin/ListMemories", {}, null, { Authorization: `Basic ${s.admin.token}` });
    expect(basic.status).toBe(401);
    // unknown API paths do not reveal themselves without the token either
    expect((await post(s, "Nope/Nothing", {}, null)).status).toBe(401);
    // the events stream needs it too
    expect((await fetch(`${s.base}/api/v1/events`)).status).toBe(401);
    expect((await fetch(`${s.base}/api/v1/events?access_token=${"1".repeat(64)}`)).status).toBe(401);

    // a second server on the same home reuses the token
    const again = await startAdmin({ backend: s.ctx.backend, config: s.ctx.config, home: join(s.ctx.dbPath, ".."), logger: pino({ level: "silent" }), http: { port: 0, uiDir: "/nonexistent" } });
    try {
      expect(again.token).toBe(s.admin.token);
    } finally {
      await again.close();
    }
  });

  it("refuses a Host that is not loopback (DNS rebinding) and a non-loopback bind", async () => {
    const s = await start();
    const status = await new Promise<number>((done, fail) => {
      const r = httpRequest(`${s.base}/api/v1/MemoryAdmin/ListMemories`, { method: "POST", headers: { Host: "evil.example:80", Authorization: `Bearer ${s.admin.token}`, "Content-Type": "application/json" } }, (res) => {
        res.resume();
        done(res.statusCode ?? 0);
      });
      r.on("error", fail);
      r.end("{}");
    });
    expect(status).toBe(403);
    // a tunnel or port mapping (ssh -L 9000:127.0.0.1:PORT) has the browser send its own port
    for (const host of ["localhost:9000", "127.0.0.1:9000", "[::1]:9000"]) {
      const viaTunnel = await new Promise<number>((done, fail) => {
        const r = httpRequest(`${s.base}/api/v1/MemoryAdmin/ListMemories`, { method: "POST", headers: { Host: host, Authorization: `Bearer ${s.admin.token}`, "Content-Type": "application/json" } }, (res) => {
          res.resume();
          done(res.statusCode ?? 0);
        });
        r.on("error", fail);
        r.end("{}");
      });
      expect(viaTunnel, host).toBe(200);
    }
    await expect(startAdmin({ backend: s.ctx.backend, config: s.ctx.config, home: join(s.ctx.dbPath, ".."), logger: pino({ level: "silent" }), http: { host: "0.0.0.0", port: 0 } })).rejects.toThrow(/loopback/);
  });
});

describe("admin HTTP API: memories", () => {
  it("lists with filters and paging, searches, and shows one memory with history", async () => {
    const s = await start();
    const all = ListMemoriesResponse.parse(await ok(s, "MemoryAdmin/ListMemories", {}));
    expect(all.memories.map((m) => m.id).sort()).toEqual([s.ids.tabs, s.ids.ci, s.ids.pending].sort());
    expect(all.total).toBe(3);
    const prefs = ListMemoriesResponse.parse(await ok(s, "MemoryAdmin/ListMemories", { kinds: ["preference"] }));
    expect(prefs.memories.map((m) => m.id)).toEqual([s.ids.tabs]);
    const stated = ListMemoriesResponse.parse(await ok(s, "MemoryAdmin/ListMemories", { trusts: ["user_stated"] }));
    expect(stated.memories.map((m) => m.id)).toEqual([s.ids.tabs]);
    const pendingOnly = ListMemoriesResponse.parse(await ok(s, "MemoryAdmin/ListMemories", { statuses: ["pending"], scopes: ["project"] }));
    expect(pendingOnly.memories.map((m) => m.id)).toEqual([s.ids.pending]);
    const page1 = ListMemoriesResponse.parse(await ok(s, "MemoryAdmin/ListMemories", { pageSize: 2 }));
    expect(page1.memories).toHaveLength(2);
    const page2 = ListMemoriesResponse.parse(await ok(s, "MemoryAdmin/ListMemories", { pageSize: 2, cursor: page1.nextCursor }));
    expect([...page1.memories, ...page2.memories].map((m) => m.id).sort()).toEqual(all.memories.map((m) => m.id).sort());

    const hits = (await ok<{ hits: { memory: { id: string } }[] }>(s, "MemoryAdmin/SearchMemories", { query: "tabs spaces" })).hits;
    expect(hits[0]?.memory.id).toBe(s.ids.tabs);

    await ok(s, "MemoryAdmin/UpdateMemory", { id: s.ids.tabs, content: "Alice prefers tabs in Go and spaces in Python", tags: ["style"] });
    const got = GetMemoryResponse.parse(await ok(s, "MemoryAdmin/GetMemory", { id: s.ids.tabs }));
    expect(got.memory.status).toBe("superseded");
    expect(got.versions.map((v) => v.version)).toEqual([1, 2]);
    expect(got.versions[1]!.trust).toBe("user_stated");
    expect(got.audit.map((a) => a.action)).toEqual(expect.arrayContaining(["create", "supersede"]));
    // every field the proto declares is present (implicit defaults included)
    expect(got.memory).toHaveProperty("flags", []);
    expect(got.memory.createdAt).toMatch(/^2026-11-01T12:00:00(\.0+)?Z$/);
  });

  it("searches pending candidates when asked to (the page's default view is active + pending)", async () => {
    const s = await start();
    const search = async (body: object) => (await ok<{ hits: { memory: { id: string; status: string } }[] }>(s, "MemoryAdmin/SearchMemories", { query: "staging database orca", ...body })).hits;
    // the agent's view: what a person stands behind
    expect(await search({})).toEqual([]);
    const hits = await search({ includePending: true });
    expect(hits.map((h) => [h.memory.id, h.memory.status])).toEqual([[s.ids.pending, "pending"]]);
    expect(await search({ includePending: true, kinds: ["preference"] })).toEqual([]);
  });

  it("forget removes every version from search and from the full-text index", async () => {
    const s = await start();
    const r = await ok<{ purgedIds: string[] }>(s, "MemoryAdmin/ForgetMemory", { ids: [s.ids.ci], reason: "outdated" });
    expect(r.purgedIds).toEqual([s.ids.ci]);
    const stored = await s.ctx.store.get(s.ids.ci);
    expect(stored?.status).toBe("deleted");
    expect(stored?.content).not.toContain("Buildkite");
    const hits = (await ok<{ hits: unknown[] }>(s, "MemoryAdmin/SearchMemories", { query: "Buildkite deploy pipeline", includeHistory: true })).hits;
    expect(hits).toEqual([]);
    const fts = s.ctx.db.prepare(`SELECT count(*) AS n FROM memory_fts WHERE memory_fts MATCH 'buildkite'`).get() as { n: number };
    const tri = s.ctx.db.prepare(`SELECT count(*) AS n FROM memory_tri WHERE memory_tri MATCH ?`).get(trigramMatch("buildkite")) as { n: number };
    expect(fts.n + tri.n).toBe(0);
    const audit = await ok<{ entries: { action: string; targetId: string }[] }>(s, "MemoryAdmin/QueryAudit", { actions: ["forget"] });
    expect(audit.entries).toEqual([expect.objectContaining({ action: "forget", targetId: s.ids.ci })]);
  });

  it("lists pending candidates with their source message; confirm makes one active, reject forgets it", async () => {
    const s = await start();
    const pending = ListPendingResponse.parse(await ok(s, "MemoryAdmin/ListPending", {}));
    expect(pending.total).toBe(1);
    expect(pending.items[0]!.memory.content).toBe(PENDING_TEXT);
    expect(pending.items[0]!.messages).toEqual([expect.objectContaining({ threadId: "root-1", messageId: "msg-1", role: "user", text: SOURCE_MESSAGE })]);

    const confirmed = await ok<{ memories: { status: string; trust: string }[] }>(s, "MemoryAdmin/ConfirmPending", { ids: [s.ids.pending] });
    expect(confirmed.memories[0]).toMatchObject({ status: "active", trust: "user_confirmed" });
    const stored = await s.ctx.store.get(s.ids.pending);
    expect(stored).toMatchObject({ status: "active", trust: "user_confirmed" });
    // confirming twice is a conflict, not a silent success
    const again = await post(s, "MemoryAdmin/ConfirmPending", { ids: [s.ids.pending] });
    expect(again.status).toBe(409);
    // rejecting something not pending is refused and changes nothing
    expect((await post(s, "MemoryAdmin/RejectPending", { ids: [s.ids.tabs] })).status).toBe(409);
    expect((await s.ctx.store.get(s.ids.tabs))?.status).toBe("active");
  });

  it("reject forgets a pending candidate", async () => {
    const s = await start();
    await ok(s, "MemoryAdmin/RejectPending", { ids: [s.ids.pending] });
    expect((await s.ctx.store.get(s.ids.pending))?.status).toBe("deleted");
    expect(ListPendingResponse.parse(await ok(s, "MemoryAdmin/ListPending", {})).total).toBe(0);
  });

  it("reads `project` as the project's directory however it is written, and refuses a relative one", async () => {
    const s = await start();
    // the pending candidate is a memory of /work/proj-a
    for (const project of ["/work/proj-a", "/work/proj-a/", "/work/./proj-a", "/work/other/../proj-a"]) {
      const page = ListMemoriesResponse.parse(await ok(s, "MemoryAdmin/ListMemories", { project }));
      expect(page.memories.map((m) => m.id), project).toContain(s.ids.pending);
    }
    await ok(s, "MemoryAdmin/GetMemory", { id: s.ids.pending, project: "/work/proj-a/" });
    const relative = await post(s, "MemoryAdmin/ListMemories", { project: "proj-a" });
    expect(relative.status).toBe(400);
    expect(relative.body).toMatchObject({ code: "invalid_argument", field: "project" });
    expect(relative.body.error).toMatch(/absolute directory path \(got "proj-a"\)/);
    const confirm = await post(s, "MemoryAdmin/ConfirmPending", { ids: [s.ids.pending], project: "proj-a" });
    expect(confirm.status).toBe(400);
    expect((await s.ctx.store.get(s.ids.pending))?.status).toBe("pending");
  });

  it("two tabs deciding one pending memory at once: one decision wins, the other is a 409", async () => {
    const s = await start();
    const decide = async (first: string, second: string) => {
      const a = post(s, first, { ids: [s.ids.pending] });
      // the second tab's click lands while the first call runs (a reject's cascade lets other work in)
      await new Promise((r) => setTimeout(r, 0));
      const b = post(s, second, { ids: [s.ids.pending] });
      return [await a, await b] as const;
    };
    const [reject, confirm] = await decide("MemoryAdmin/RejectPending", "MemoryAdmin/ConfirmPending");
    expect([reject.status, confirm.status].sort()).toEqual([200, 409]);
    // what stands is what the 200 said
    expect((await s.ctx.store.get(s.ids.pending))?.status).toBe(reject.status === 200 ? "deleted" : "active");
    expect((reject.status === 409 ? reject : confirm).body.code).toBe("conflict");
  });

  it("two tabs rejecting one pending memory at once: the second is told it is no longer pending", async () => {
    const s = await start();
    const a = post(s, "MemoryAdmin/RejectPending", { ids: [s.ids.pending] });
    await new Promise((r) => setTimeout(r, 0));
    const b = post(s, "MemoryAdmin/RejectPending", { ids: [s.ids.pending] });
    expect([(await a).status, (await b).status].sort()).toEqual([200, 409]);
  });

  it("answers learning statistics with the skill funnel", async () => {
    const s = await start();
    const st = LearningStatsResponse.parse(await ok(s, "MemoryAdmin/LearningStats", {}));
    expect(st.rewards.bins).toHaveLength(10);
    expect(st.funnel).toMatchObject({ evaluated: 1, passedGate: 1, pendingRequests: 1, probationary: 1 });
    expect(st.episodes.total).toBe(0);
  });
});

describe("admin HTTP API: skills", () => {
  it("shows candidates with eval report and diff; approving the request publishes it", async () => {
    const s = await start();
    const list = ListCandidatesResponse.parse(await ok(s, "SkillAdmin/ListCandidates", {}));
    const filed = list.items.find((i) => i.request?.id === s.ids.request)!;
    expect(filed.report).toMatchObject({ passed: true, margin: 0.5, reasons: ["beats the baseline by 0.5"] });
    expect(filed.diff).toContain("+4. link the dashboard");
    expect(list.items.find((i) => i.skillName === "deploy-check" && !i.request)?.version?.status).toBe("candidate");

    const r = await ok<{ published: { id: string; status: string }; request: { status: string } }>(s, "SkillAdmin/ApproveCandidate", { requestId: s.ids.request });
    expect(r.published).toMatchObject({ id: s.ids.v3, status: "probationary" });
    expect(r.request.status).toBe("approved");
    const skill = await s.ctx.backend.skills.skillByName("log-triage");
    expect(skill?.publishedVersionId).toBe(s.ids.v3);
    expect((await s.ctx.backend.evolution.request(s.ids.request))?.status).toBe("approved");
    // approving again is a conflict
    expect((await post(s, "SkillAdmin/ApproveCandidate", { requestId: s.ids.request })).status).toBe(409);
  });

  it("approving by name a new learned skill the loop filed a request for grants its verified tools, as approving the request does", async () => {
    const s = await start();
    const md = skillMd("bump-release", "Bump the version and tag a release.", "1. Call `bump_version`.\n2. Call `git_tag`.", "allowed-tools: [bump_version, git_tag]\n");
    const v = (await s.skills.propose(parseSkillMd(md), { actor: "learning:policy:p1", author: "agent", ref: "policy:p1" })).version;
    await s.ctx.backend.evolution.addRequest({ id: "srq_new", kind: "publish", skillName: "bump-release", versionId: v.id, otherSkill: null, policyId: null, reportId: null, detail: { seq: 1, newSkill: true, newTools: ["bump_version", "git_tag"] }, createdAt: 1 });
    const r = await ok<{ published: { id: string }; request: { id: string; status: string } }>(s, "SkillAdmin/ApproveCandidate", { name: "bump-release" });
    expect(r.published.id).toBe(v.id);
    expect(r.request).toMatchObject({ id: "srq_new", status: "approved" });
    expect(await s.skills.grants("bump-release")).toEqual(["bump_version", "git_tag"]);
  });

  it("approves and rejects bare candidates by name", async () => {
    const s = await start();
    await ok(s, "SkillAdmin/ApproveCandidate", { name: "deploy-check" });
    const dc = await s.ctx.backend.skills.skillByName("deploy-check");
    expect(dc?.publishedVersionId).not.toBeNull();
    // rejecting log-triage's candidate by name also declines the request filed for it
    const rj = await ok<{ rejected: { status: string }; request: { status: string } }>(s, "SkillAdmin/RejectCandidate", { name: "log-triage", reason: "too long" });
    expect(rj.rejected.status).toBe("rejected");
    expect(rj.request.status).toBe("rejected");
    expect((await s.ctx.backend.skills.version(s.ids.v3))?.status).toBe("rejected");
  });

  it("rolls back, pins, enables per scope, diffs and shows η, trials and audit", async () => {
    const s = await start();
    const before = await s.ctx.backend.skills.skillByName("log-triage");
    const rb = await ok<{ published: { seq: number; status: string }; previous: { seq: number; status: string } }>(s, "SkillAdmin/RollbackSkill", { name: "log-triage" });
    expect(rb.published).toMatchObject({ seq: 1, status: "active" });
    expect(rb.previous).toMatchObject({ seq: 2, status: "retired" });
    const after = await s.ctx.backend.skills.skillByName("log-triage");
    expect(after?.publishedVersionId).not.toBe(before?.publishedVersionId);
    expect((await s.ctx.backend.skills.version(after!.publishedVersionId!))?.seq).toBe(1);

    const pinned = await ok<{ skill: { pinned: boolean } }>(s, "SkillAdmin/PinSkill", { name: "log-triage" });
    expect(pinned.skill.pinned).toBe(true);
    expect((await s.ctx.backend.skills.skillByName("log-triage"))?.pinned).toBe(true);
    await ok(s, "SkillAdmin/UnpinSkill", { name: "log-triage" });
    expect((await s.ctx.backend.skills.skillByName("log-triage"))?.pinned).toBe(false);

    const off = await ok<{ toggles: { level: string; key: string; enabled: boolean }[] }>(s, "SkillAdmin/DisableSkill", { name: "log-triage", level: "project", key: "/work/proj-a" });
    expect(off.toggles).toEqual([expect.objectContaining({ level: "project", key: "/work/proj-a", enabled: false })]);
    const on = await ok<{ toggles: unknown[] }>(s, "SkillAdmin/EnableSkill", { name: "log-triage", level: "project", key: "/work/proj-a", clear: true });
    expect(on.toggles).toEqual([]);
    const noKey = await post(s, "SkillAdmin/DisableSkill", { name: "log-triage", level: "session" });
    expect(noKey.status).toBe(400);
    expect(noKey.body.field).toBe("key");
    // a relative project path would key a setting no session matches
    const relative = await post(s, "SkillAdmin/DisableSkill", { name: "log-triage", level: "project", key: "rel/dir" });
    expect(relative.status).toBe(400);
    expect(relative.body).toMatchObject({ field: "key" });
    expect(String(relative.body.error)).toMatch(/must be the project's absolute directory path \(got "rel\/dir"\)/);

    const diff = await ok<{ diff: string; fromSeq: number; toSeq: number }>(s, "SkillAdmin/DiffVersions", { name: "log-triage", from: "v1", to: "v2" });
    expect(diff).toMatchObject({ fromSeq: 1, toSeq: 2 });
    expect(diff.diff).toContain("+3. open an issue");

    const got = GetSkillResponse.parse(await ok(s, "SkillAdmin/GetSkill", { name: "log-triage" }));
    expect(got.versions.map((v) => v.seq)).toEqual([1, 2, 3]);
    expect(got.selected.seq).toBe(1);
    expect(got.selected.body).toContain("grep the logs");
    expect(got.trials.map((t) => t.passed)).toEqual([true, false]);
    expect(got.etaHistory).toHaveLength(2);
    expect(got.reports).toHaveLength(1);
    expect(got.requests.map((r) => r.id)).toEqual([s.ids.request]);
    const actions = (await ok<{ entries: { action: string }[] }>(s, "SkillAdmin/QuerySkillAudit", { name: "log-triage" })).entries.map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(["publish", "rollback", "pin", "unpin", "disable", "feedback"]));
    const skills = await ok<{ skills: { skill: { name: string }; pendingRequests: number }[] }>(s, "SkillAdmin/ListSkills", {});
    expect(skills.skills.find((x) => x.skill.name === "log-triage")?.pendingRequests).toBe(1);
  });
});

describe("admin HTTP API: malformed requests", () => {
  it("answers 4xx naming the field, and changes nothing", async () => {
    const s = await start();
    const bad = async (path: string, body: unknown, status: number, field?: string, headers: Record<string, string> = {}) => {
      const r = await post(s, path, body, s.admin.token, headers);
      expect(r.status, `${path} ${JSON.stringify(body)}`).toBe(status);
      expect(typeof r.body.error).toBe("string");
      if (field !== undefined) expect(r.body.field).toBe(field);
      return r;
    };
    const notJson = await bad("MemoryAdmin/ForgetMemory", "{ids: [", 400);
    expect(notJson.body.error).toMatch(/not valid JSON/);
    await bad("MemoryAdmin/ForgetMemory", "[]", 400);
    await bad("MemoryAdmin/ForgetMemory", { ids: "all" }, 400, "ids");
    await bad("MemoryAdmin/ForgetMemory", { ids: [] }, 400, "ids");
    await bad("MemoryAdmin/ForgetMemory", { ids: [42] }, 400, "ids.0");
    // zod's length check compared this object and threw: a 500 before
    await bad("MemoryAdmin/ForgetMemory", { ids: { length: { valueOf: 1, toString: 1 } } }, 400, "ids");
    const unknown = await bad("MemoryAdmin/ForgetMemory", { ids: [s.ids.tabs], everything: true }, 400, "everything");
    expect(unknown.body.error).toMatch(/unknown field "everything"/);
    await bad("MemoryAdmin/ListMemories", { kinds: ["secret"] }, 400, "kinds.0");
    await bad("MemoryAdmin/ListMemories", { pageSize: 5000 }, 400, "pageSize");
    await bad("MemoryAdmin/ListMemories", { cursor: "DROP TABLE" }, 400, "cursor");
    await bad("MemoryAdmin/ListPending", { cursor: "x1" }, 400, "cursor");
    await bad("MemoryAdmin/QueryAudit", { since: "yesterday" }, 400, "since");
    // a day its month does not have (Date.parse alone reads it as 1 May)
    await bad("MemoryAdmin/QueryAudit", { until: "2026-04-31T00:00:00Z" }, 400, "until");
    await bad("MemoryAdmin/QueryAudit", { cursor: "abc" }, 400, "cursor");
    await bad("MemoryAdmin/SearchMemories", { query: "" }, 400, "query");
    await bad("MemoryAdmin/SearchMemories", { query: "?? !!" }, 400);
    await bad("MemoryAdmin/UpdateMemory", { id: s.ids.tabs, content: "x".repeat(5000) }, 400, "content");
    await bad("MemoryAdmin/UpdateMemory", { id: s.ids.tabs, content: "the api key is sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c" }, 400);
    // the expiry is this API's "expiresAt", not the memory tool's "expires_at"
    for (const expiresAt of ["2020-01-01", "next tuesday", "2027-02-30", "0d"]) {
      const r = await bad("MemoryAdmin/UpdateMemory", { id: s.ids.tabs, content: "Alice prefers tabs in Go", expiresAt }, 400, "expiresAt");
      expect(r.body.error).toMatch(/^"expiresAt"/);
    }
    await bad("MemoryAdmin/GetMemory", { id: "mem_nope" }, 404);
    await bad("SkillAdmin/GetSkill", { name: "Bad Name!" }, 400, "name");
    await bad("SkillAdmin/GetSkill", { name: "no-such-skill" }, 404);
    await bad("SkillAdmin/ApproveCandidate", {}, 400, "requestId");
    await bad("SkillAdmin/ApproveCandidate", { requestId: "srq_1", name: "log-triage" }, 400, "requestId");
    await bad("SkillAdmin/RollbackSkill", { name: "deploy-check" }, 409);
    await bad("MemoryAdmin/ListMemories", "{}", 415, undefined, { "Content-Type": "text/plain" });
    const nul = await bad("MemoryAdmin/UpdateMemory", { id: s.ids.tabs, content: "Alice prefers tabs\u0000" }, 400, "content");
    expect(nul.body.error).toMatch(/NUL character/);
    await bad("MemoryAdmin/ForgetMemory", { ids: [s.ids.tabs, "mem_\u0000"] }, 400, "ids.1");
    await bad("MemoryAdmin/SearchMemories", { query: "tabs\u0000" }, 400, "query");
    // half of a character: SQLite and PostgreSQL each stored a different replacement of it
    const lone = await bad("MemoryAdmin/UpdateMemory", { id: s.ids.tabs, content: "Alice prefers tabs \ud83d" }, 400, "content");
    expect(lone.body.error).toMatch(/^"content" holds an unpaired surrogate \(U\+D83D, half of a character\); remove it$/);

    const get = await fetch(`${s.base}/api/v1/MemoryAdmin/ListMemories`, { headers: { Authorization: `Bearer ${s.admin.token}` } });
    expect(get.status).toBe(405);
    const missing = await post(s, "MemoryAdmin/DropEverything", {});
    expect(missing.status).toBe(404);
    const huge = await fetch(`${s.base}/api/v1/MemoryAdmin/ForgetMemory`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${s.admin.token}` },
      body: JSON.stringify({ ids: [s.ids.tabs], reason: "x".repeat(2 << 20) }),
    }).catch(() => null);
    if (huge) expect(huge.status).toBe(413);
    // the same sent in chunks, with no Content-Length: a 413 too, not a reset connection
    const chunked = await new Promise<[number, string]>((done, fail) => {
      const r = httpRequest(
        `${s.base}/api/v1/MemoryAdmin/ForgetMemory`,
        { method: "POST", headers: { Authorization: `Bearer ${s.admin.token}`, "Content-Type": "application/json", "Transfer-Encoding": "chunked" } },
        (res) => {
          let text = "";
          res.on("data", (c: Buffer) => (text += c.toString()));
          res.on("end", () => done([res.statusCode ?? 0, text]));
        },
      );
      r.on("error", fail);
      r.write(`{"ids":["${s.ids.tabs}"],"reason":"`);
      for (let i = 0; i < 24; i++) r.write("x".repeat(64 * 1024));
      r.end(`"}`);
    });
    expect(chunked[0]).toBe(413);
    expect(JSON.parse(chunked[1])).toMatchObject({ code: "too_large" });

    // nothing above touched the data
    expect((await s.ctx.store.get(s.ids.tabs))).toMatchObject({ status: "active", content: "Alice prefers tabs over spaces in Go code" });
    expect((await s.ctx.store.get(s.ids.pending))?.status).toBe("pending");
    expect((await s.ctx.backend.skills.skillByName("deploy-check"))?.publishedVersionId).toBeNull();
  });
});

describe("admin HTTP: the page", () => {
  it("serves dist/admin-ui with a strict CSP, 404 for unknown paths and nothing outside the directory", async () => {
    const s = await start();
    const index = await fetch(`${s.base}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toMatch(/text\/html/);
    const csp = index.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(index.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await index.text()).toContain("review");
    const asset = await fetch(`${s.base}/assets/app-1a2b.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toMatch(/javascript/);
    expect((await fetch(`${s.base}/nope.html`)).status).toBe(404);
    expect((await fetch(`${s.base}/%2e%2e/secret.txt`)).status).toBe(404);
    expect((await fetch(`${s.base}/assets/..%2f..%2fsecret.txt`)).status).toBe(404);
    expect((await fetch(`${s.base}/`, { method: "DELETE" })).status).toBe(405);
  });
});

describe("admin HTTP API: source messages", () => {
  it("brings the session index up to date before showing a candidate's messages", async () => {
    const dir = tempDir("imem-admin-msg-");
    const { seed } = await import("./seed.js");
    const s = await seed(dir);
    // the message of the pending candidate arrives in the index only when the refresh runs
    await s.ctx.db.prepare(`DELETE FROM session_messages`).run();
    let refreshed = 0;
    const src = await s.ctx.backend.sessionIndex.sourceId("sqlite", join(dir, "other.db"));
    const admin = await startAdmin({
      backend: s.ctx.backend,
      config: s.ctx.config,
      clock: s.ctx.clock,
      memory: s.ctx.service,
      home: dir,
      logger: pino({ level: "silent" }),
      http: { port: 0, uiDir: dir },
      refreshMessages: async () => {
        refreshed++;
        await s.ctx.backend.sessionIndex.append(src, { threadId: "root-1", rootThreadId: "root-1", user: "alice", cwd: null }, [{ ord: 0, messageId: "msg-1", role: "user", text: SOURCE_MESSAGE }], 1, null, 0);
      },
    });
    try {
      const res = await fetch(`${admin.http!.url}api/v1/MemoryAdmin/ListPending`, { method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${admin.token}` }, body: "{}" });
      const body = ListPendingResponse.parse(await res.json());
      expect(refreshed).toBe(1);
      expect(body.items[0]?.messages[0]?.text).toBe(SOURCE_MESSAGE);
    } finally {
      await admin.close();
      s.ctx.close();
    }
  });
});

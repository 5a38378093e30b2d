// Property-based fuzzing of the admin HTTP API over real loopback HTTP: random routes, random
// JSON (and non-JSON) bodies, with and without the token. Every answer is a 2xx or a 4xx with an
// `error` message (never a 5xx), and the memories and skills are unchanged afterwards, since no
// random id names a real record. ADMIN_FUZZ_RUNS (default 300) sets the count.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTES } from "../../admin/api/contract.js";
import { tempDir } from "../helpers/tmp.js";
import { startSeeded } from "./seed.js";

const RUNS = Number(process.env.ADMIN_FUZZ_RUNS ?? 300);
const routes = Object.entries(ROUTES).flatMap(([svc, methods]) => Object.keys(methods).map((m) => `${svc}/${m}`));
const FIELDS = ["ids", "id", "name", "version", "requestId", "query", "content", "kinds", "scopes", "trusts", "statuses", "pageSize", "cursor", "level", "key", "clear", "since", "until", "from", "to", "status", "limit", "days", "user", "project", "reason", "expiresAt", "tags"];

describe("admin HTTP API fuzz", () => {
  let s: Awaited<ReturnType<typeof startSeeded>>;
  beforeAll(async () => {
    s = await startSeeded(tempDir("imem-admin-fuzz-"));
  });
  afterAll(async () => {
    await s?.close();
  });

  async function snapshot(): Promise<string> {
    const mem = s.ctx.db.prepare(`SELECT id, status, content, trust FROM memories ORDER BY id`).all();
    const skills = s.ctx.db.prepare(`SELECT s.name, s.published_version_id, s.pinned, v.id, v.status FROM skills s JOIN skill_versions v ON v.skill_id = s.id ORDER BY v.id`).all();
    const toggles = s.ctx.db.prepare(`SELECT * FROM skill_toggles`).all();
    return JSON.stringify({ mem, skills, toggles });
  }

  it("never answers 5xx and changes nothing", async () => {
    const before = await snapshot();
    const value = fc.oneof(fc.string({ maxLength: 40 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.oneof(fc.string({ maxLength: 12 }), fc.integer()), { maxLength: 4 }));
    const body = fc.oneof(
      fc.dictionary(fc.constantFrom(...FIELDS), value, { maxKeys: 4 }).map((o) => JSON.stringify(o)),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 60 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes, "MemoryAdmin/Nope", "x/y/z"), body, fc.boolean(), fc.constantFrom("application/json", "text/plain"), async (route, text, auth, type) => {
        const res = await fetch(`${s.base}/api/v1/${route}`, {
          method: "POST",
          headers: { "Content-Type": type, ...(auth ? { Authorization: `Bearer ${s.admin.token}` } : {}) },
          body: text,
        });
        const json = (await res.json()) as { error?: unknown };
        expect(res.status, `${route} ${text} → ${JSON.stringify(json)}`).toBeLessThan(500);
        if (res.status >= 400) expect(typeof json.error).toBe("string");
        if (!auth) expect(res.status).toBe(401);
      }),
      { numRuns: RUNS },
    );
    expect(await snapshot()).toBe(before);
  }, 120_000);
});

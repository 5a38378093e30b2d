// The admin gRPC services with a real grpc-js client over loopback: the token in metadata, the
// same validation and implementation as HTTP, and each call's effect in the store.
import { create, toJson, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, Metadata, status, type Client, type ServiceError } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { adminServiceDefinitions } from "../../admin/api/grpc.js";
import {
  ApproveCandidateRequestSchema,
  ConfirmPendingRequestSchema,
  ForgetMemoryRequestSchema,
  GetSkillRequestSchema,
  GetSkillResponseSchema,
  ListPendingResponseSchema,
  ListMemoriesRequestSchema,
  ListMemoriesResponseSchema,
  ListPendingRequestSchema,
  QueryAuditRequestSchema,
  RollbackSkillRequestSchema,
  type ApproveCandidateResponse,
  type ConfirmPendingResponse,
  type GetSkillResponse,
  type ListMemoriesResponse,
  type ListPendingResponse,
  type QueryAuditResponse,
  type RollbackSkillResponse,
} from "../../proto/gen/infinity/memory/v1/admin_pb.js";
import { tempDir } from "../helpers/tmp.js";
import { req } from "../helpers/memory.js";
import { startSeeded } from "./seed.js";

type Started = Awaited<ReturnType<typeof startSeeded>>;
let open: Started | null = null;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await open?.close();
  open = null;
});

function clientsFor(address: string) {
  const defs = adminServiceDefinitions();
  const Memory = makeGenericClientConstructor(defs.MemoryAdmin, "MemoryAdmin");
  const Skill = makeGenericClientConstructor(defs.SkillAdmin, "SkillAdmin");
  const memory = new Memory(address, credentials.createInsecure());
  const skill = new Skill(address, credentials.createInsecure());
  clients.push(memory, skill);
  return { memory, skill };
}

function meta(token: string | null): Metadata {
  const m = new Metadata();
  if (token !== null) m.set("authorization", `Bearer ${token}`);
  return m;
}

/** One unary call: resolves the response or rejects with the ServiceError. */
function unary<I extends DescMessage, O>(client: Client, method: string, schema: I, init: Parameters<typeof create<I>>[1], md: Metadata): Promise<O> {
  const fn = (client as unknown as Record<string, (req: MessageShape<I>, md: Metadata, cb: (e: ServiceError | null, r: O) => void) => void>)[method]!;
  return new Promise((done, fail) => fn.call(client, create(schema, init), md, (e, r) => (e ? fail(e) : done(r))));
}

describe("admin gRPC services", () => {
  it("answer exactly what the HTTP mapping answers (one implementation behind both)", async () => {
    open = await startSeeded(tempDir("imem-admin-grpc-"), { grpc: true });
    const s = open;
    const { memory, skill } = clientsFor(s.admin.grpc!.address);
    const md = meta(s.admin.token);
    const viaHttp = async (path: string, body: unknown) =>
      (await fetch(`${s.base}/api/v1/${path}`, { method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${s.admin.token}` }, body: JSON.stringify(body) })).json();
    const skillGrpc = await unary<typeof GetSkillRequestSchema, GetSkillResponse>(skill, "getSkill", GetSkillRequestSchema, { name: "log-triage" }, md);
    expect(toJson(GetSkillResponseSchema, skillGrpc, { alwaysEmitImplicit: true })).toEqual(await viaHttp("SkillAdmin/GetSkill", { name: "log-triage" }));
    const pendingGrpc = await unary<typeof ListPendingRequestSchema, ListPendingResponse>(memory, "listPending", ListPendingRequestSchema, {}, md);
    expect(toJson(ListPendingResponseSchema, pendingGrpc, { alwaysEmitImplicit: true })).toEqual(await viaHttp("MemoryAdmin/ListPending", {}));
  });

  it("say when a memory list's total stopped at its cap, in both transports alike", async () => {
    open = await startSeeded(tempDir("imem-admin-grpc-"), { grpc: true });
    const s = open;
    const made = await s.ctx.service.rememberMany(
      Array.from({ length: 10_001 }, (_, i) => ({ req: req(), input: { content: `Bulk note ${i} on shelf ${i * 7}`, kind: "fact" as const }, origin: { actor: "user" as const, threadId: null, toolCallId: null } })),
    );
    expect(made.filter((m) => m.status === "created")).toHaveLength(10_001);
    const { memory } = clientsFor(s.admin.grpc!.address);
    const viaGrpc = await unary<typeof ListMemoriesRequestSchema, ListMemoriesResponse>(memory, "listMemories", ListMemoriesRequestSchema, { pageSize: 5 }, meta(s.admin.token));
    const viaHttp = (await (
      await fetch(`${s.base}/api/v1/MemoryAdmin/ListMemories`, { method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${s.admin.token}` }, body: JSON.stringify({ pageSize: 5 }) })
    ).json()) as { total: number; totalCapped?: boolean; memories: unknown[] };
    expect(viaHttp).toMatchObject({ total: 10_000, totalCapped: true });
    expect(viaHttp.memories).toHaveLength(5);
    expect(toJson(ListMemoriesResponseSchema, viaGrpc, { alwaysEmitImplicit: true })).toEqual(viaHttp);
  });

  it("require the token in metadata", async () => {
    open = await startSeeded(tempDir("imem-admin-grpc-"), { grpc: true });
    const { memory } = clientsFor(open.admin.grpc!.address);
    for (const token of [null, "f".repeat(64), open.admin.token.toUpperCase()]) {
      const err = await unary(memory, "listMemories", ListMemoriesRequestSchema, {}, meta(token)).catch((e: ServiceError) => e);
      expect((err as ServiceError).code).toBe(status.UNAUTHENTICATED);
    }
    const ok = await unary<typeof ListMemoriesRequestSchema, ListMemoriesResponse>(memory, "listMemories", ListMemoriesRequestSchema, { kinds: ["preference"] }, meta(open.admin.token));
    expect(ok.memories.map((m) => m.id)).toEqual([open.ids.tabs]);
    expect(ok.memories[0]!.createdAt?.seconds).toBeGreaterThan(0n);
  });

  it("answers INVALID_ARGUMENT naming the field, NOT_FOUND and FAILED_PRECONDITION", async () => {
    open = await startSeeded(tempDir("imem-admin-grpc-"), { grpc: true });
    const { memory, skill } = clientsFor(open.admin.grpc!.address);
    const md = meta(open.admin.token);
    const empty = (await unary(memory, "forgetMemory", ForgetMemoryRequestSchema, { ids: [] }, md).catch((e: ServiceError) => e)) as ServiceError;
    expect(empty.code).toBe(status.INVALID_ARGUMENT);
    expect(empty.details).toMatch(/"ids"/);
    const kind = (await unary(memory, "listMemories", ListMemoriesRequestSchema, { kinds: ["nope"] }, md).catch((e: ServiceError) => e)) as ServiceError;
    expect(kind.code).toBe(status.INVALID_ARGUMENT);
    expect(kind.details).toMatch(/kinds\.0/);
    const missing = (await unary(skill, "getSkill", GetSkillRequestSchema, { name: "no-such-skill" }, md).catch((e: ServiceError) => e)) as ServiceError;
    expect(missing.code).toBe(status.NOT_FOUND);
    const noRollback = (await unary(skill, "rollbackSkill", RollbackSkillRequestSchema, { name: "deploy-check" }, md).catch((e: ServiceError) => e)) as ServiceError;
    expect(noRollback.code).toBe(status.FAILED_PRECONDITION);
    expect((await open.ctx.store.get(open.ids.tabs))?.status).toBe("active");
  });

  it("changes the store: confirm, forget, approve, rollback; audit shows them", async () => {
    open = await startSeeded(tempDir("imem-admin-grpc-"), { grpc: true });
    const s = open;
    const { memory, skill } = clientsFor(s.admin.grpc!.address);
    const md = meta(s.admin.token);

    const pending = await unary<typeof ListPendingRequestSchema, ListPendingResponse>(memory, "listPending", ListPendingRequestSchema, {}, md);
    expect(pending.items[0]?.messages[0]?.text).toMatch(/orca-staging/);
    const confirmed = await unary<typeof ConfirmPendingRequestSchema, ConfirmPendingResponse>(memory, "confirmPending", ConfirmPendingRequestSchema, { ids: [s.ids.pending] }, md);
    expect(confirmed.memories[0]?.status).toBe("active");
    expect((await s.ctx.store.get(s.ids.pending))?.trust).toBe("user_confirmed");

    await unary(memory, "forgetMemory", ForgetMemoryRequestSchema, { ids: [s.ids.ci] }, md);
    expect((await s.ctx.store.get(s.ids.ci))?.status).toBe("deleted");

    const approved = await unary<typeof ApproveCandidateRequestSchema, ApproveCandidateResponse>(skill, "approveCandidate", ApproveCandidateRequestSchema, { requestId: s.ids.request }, md);
    expect(approved.published?.id).toBe(s.ids.v3);
    expect((await s.ctx.backend.skills.skillByName("log-triage"))?.publishedVersionId).toBe(s.ids.v3);

    const rolled = await unary<typeof RollbackSkillRequestSchema, RollbackSkillResponse>(skill, "rollbackSkill", RollbackSkillRequestSchema, { name: "log-triage" }, md);
    expect(rolled.published?.seq).toBe(2);
    expect((await s.ctx.backend.skills.skillByName("log-triage"))?.publishedVersionId).toBe(rolled.published?.id);

    const got = await unary<typeof GetSkillRequestSchema, GetSkillResponse>(skill, "getSkill", GetSkillRequestSchema, { name: "log-triage" }, md);
    expect(got.selected?.seq).toBe(2);
    expect(got.reports[0]?.candidate?.successRate).toBe(1);

    const audit = await unary<typeof QueryAuditRequestSchema, QueryAuditResponse>(memory, "queryAudit", QueryAuditRequestSchema, { pageSize: 3 }, md);
    expect(audit.entries).toHaveLength(3);
    expect(audit.entries.map((e) => e.action)).toContain("rollback");
    expect(audit.nextCursor).toBeDefined();
    const older = await unary<typeof QueryAuditRequestSchema, QueryAuditResponse>(memory, "queryAudit", QueryAuditRequestSchema, { pageSize: 100, cursor: audit.nextCursor }, md);
    expect(Number(older.entries[0]!.seq)).toBeLessThan(Number(audit.entries.at(-1)!.seq));
  });
});

// Live updates: a page listening on GET /api/v1/events hears about a change another process
// made to the same database (the CLI here, as the agent's command servers would).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ChangeEvent } from "../../admin/api/contract.js";
import { CLI } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";
import { startSeeded } from "./seed.js";

type Started = Awaited<ReturnType<typeof startSeeded>>;
let open: Started | null = null;
afterEach(async () => {
  await open?.close();
  open = null;
});

interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/** Reads an SSE response body into events as they arrive. */
function sseReader(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  const queue: SseEvent[] = [];
  async function next(timeoutMs: number, want: (e: SseEvent) => boolean): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = queue.findIndex(want);
      if (i >= 0) return queue.splice(i, 1)[0]!;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(queue)}`);
      const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), left))]);
      if (!chunk) continue;
      if (chunk.done) throw new Error("stream ended");
      buf += decoder.decode(chunk.value, { stream: true });
      let cut: number;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const e: SseEvent = { event: "message", data: "" };
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const [k, ...rest] = line.split(":");
          const v = rest.join(":").replace(/^ /, "");
          if (k === "event") e.event = v;
          else if (k === "data") e.data += v;
          else if (k === "id") e.id = v;
        }
        if (e.data) queue.push(e);
      }
    }
  }
  return { next, cancel: () => reader.cancel() };
}

function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("exit", (code) => done({ code, out }));
  });
}

describe("admin live updates (SSE)", () => {
  it("sends hello, then a change event when another process confirms a pending memory", async () => {
    const dir = tempDir("imem-admin-sse-");
    open = await startSeeded(dir);
    const s = open;
    const res = await fetch(`${s.base}/api/v1/events`, { headers: { Authorization: `Bearer ${s.admin.token}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const sse = sseReader(res.body!);
    const hello = ChangeEvent.parse(JSON.parse((await sse.next(5000, (e) => e.event === "hello")).data));
    expect(Number(hello.auditSeq)).toBeGreaterThan(0);

    const r = await runCli(["memory", "review", "--confirm", s.ids.pending, "--db", s.ctx.dbPath], { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" });
    expect(r.code, r.out).toBe(0);
    const change = ChangeEvent.parse(JSON.parse((await sse.next(10_000, (e) => e.event === "change")).data));
    expect(change.topics).toEqual(expect.arrayContaining(["memories", "pending", "audit"]));
    expect(Number(change.auditSeq)).toBeGreaterThan(Number(hello.auditSeq));
    expect((await s.ctx.store.get(s.ids.pending))?.status).toBe("active");
    await sse.cancel();
  });

  it("tells skill views about a change through the API itself, and accepts ?access_token for EventSource", async () => {
    open = await startSeeded(tempDir("imem-admin-sse-"));
    const s = open;
    const res = await fetch(`${s.base}/api/v1/events?access_token=${s.admin.token}`);
    expect(res.status).toBe(200);
    const sse = sseReader(res.body!);
    await sse.next(5000, (e) => e.event === "hello");
    const pin = await fetch(`${s.base}/api/v1/SkillAdmin/PinSkill`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${s.admin.token}` },
      body: JSON.stringify({ name: "log-triage" }),
    });
    expect(pin.status).toBe(200);
    const change = ChangeEvent.parse(JSON.parse((await sse.next(5000, (e) => e.event === "change")).data));
    expect(change.topics).toEqual(expect.arrayContaining(["skills", "audit"]));
    await sse.cancel();
  });
});

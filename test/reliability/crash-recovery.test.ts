// Crash recovery under load: real `serve` child processes (memory and skills toolsets) on one
// database file, several clients writing through RAP with a real callback listener, SIGKILL at a
// random moment, restart, and the invariants checked after every restart:
//   - PRAGMA integrity_check is "ok" (and foreign_key_check is empty);
//   - every write whose result was delivered is in the database (forgets: gone);
//   - every acknowledged invocation gets its tool_result, if not before the kill then after a
//     restart (journal replay + durable outbox);
//   - background learning: the memory server reads conversations (--sessions-from sqlite) that the
//     test appends between rounds, and its learning worker is killed mid-queue like everything
//     else; a killed worker's claims expire (leaseMs 1.5 s here) and after the last boot every
//     conversation is learned from exactly once (one episode per thread, no duplicates), and the
//     queue is empty;
//   - skill pointers are consistent (published_version_id names a live version of that skill).
// Rounds: CRASH_ROUNDS (default 20). Counts are printed as one JSON line.
import { describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteConversationStore } from "../../stores/sqlite/conversation-store.js";
import { CLI } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 20);
const CLIENTS = 4;
/** conversations appended (while the servers are down) before each round, for the learning worker */
const LEARN_THREADS_PER_ROUND = 3;

interface Server {
  child: ChildProcess;
  port: number;
  endpoint: string;
  exited: Promise<void>;
}

function startServer(toolset: string, db: string, cwd: string, home: string): Promise<Server> {
  // the memory server also learns from the conversations in the same file
  const extra = toolset === "memory" ? ["--sessions-from", `sqlite:${db}`] : [];
  const child = spawn(process.execPath, [CLI, "serve", "--toolset", toolset, "--db", db, ...extra], {
    cwd,
    env: { ...process.env, RAP_EMBEDDED: "1", INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice", INFINITY_HOME: join(home, "no-daemon") },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${toolset} server printed no port within 15 s`)), 15_000);
    const rl = createInterface({ input: child.stdout! });
    rl.once("line", (l) => {
      clearTimeout(t);
      rl.close();
      const port = (JSON.parse(l) as { port: number }).port;
      resolve({ child, port, endpoint: `http://127.0.0.1:${port}/invoke`, exited });
    });
    child.once("exit", (c) => {
      let log = "";
      try {
        log = readFileSync(join(cwd, `infinity-${toolset}.log`), "utf8").split("\n").filter((l) => /"level":(50|60)/.test(l)).slice(-3).join("\n");
      } catch {
        /* no log */
      }
      reject(new Error(`${toolset} server exited with ${c} before its port line\n${log}\n${stderr}`));
    });
  });
}

async function kill9(s: Server): Promise<void> {
  try {
    process.kill(-s.child.pid!, "SIGKILL");
  } catch {
    /* already gone */
  }
  await s.exited;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

function post(url: string, body: string, timeoutMs = 5000): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", () => resolve(0));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => resolve(0));
    req.end(body);
  });
}

type Body = Record<string, unknown>;

/** A callback listener that records results and answers every user_choice with "Approve" (0). */
async function startSink() {
  const results = new Map<string, { text: string; at: number; n: number }>();
  let choices = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let b: Body;
      try {
        b = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Body;
      } catch {
        res.writeHead(400).end("bad json");
        return;
      }
      res.writeHead(200).end("OK");
      if (b.type === "tool_result") {
        const id = String(b.id);
        const prev = results.get(id);
        results.set(id, { text: String(b.text), at: prev?.at ?? Date.now(), n: (prev?.n ?? 0) + 1 });
      } else if (b.type === "user_choice") {
        choices++;
        void post(String(b.response_url), JSON.stringify({ id: b.id, selected: 0 }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/cb`;
  return { url, results, choiceCount: () => choices, close: () => new Promise<void>((r) => server.close(() => r())) };
}

function invocation(op: string, args: unknown, id: string, cb: string, group: string): string {
  return `{"operation":${JSON.stringify(op)},"arguments":${JSON.stringify(args)},"id":${JSON.stringify(id)},"call_id":null,"callback_url":${JSON.stringify(cb)},"group_id":${JSON.stringify(group)},"thread_ancestors":null}`;
}

function skillMd(name: string, body: string): string {
  return `---\nname: ${name}\ndescription: "Crash-test skill ${name}: how to run the nightly check."\n---\n\n# ${name}\n\n${body}\n`;
}

interface Sent {
  id: string;
  op: string;
  round: number;
  acked: boolean;
  /** the result had arrived before this round's kill */
  deliveredBeforeKill: boolean;
  meta: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("crash recovery: SIGKILL while several clients write", () => {
  it(`keeps every delivered write, redelivers every acknowledged result, and stays consistent over ${ROUNDS} rounds`, async () => {
    const dir = tempDir("imem-crash-");
    const cwd = join(dir, "proj", ".infinity");
    mkdirSync(cwd, { recursive: true });
    const db = join(dir, "memory.db");
    // A short lease and poll, so a killed worker's claims expire within the test.
    writeFileSync(join(dir, "config.json"), JSON.stringify({ learning: { worker: { intervalMs: 150, leaseMs: 1500 } } }));
    const learnThreads: string[] = [];
    /** append finished tasks to new conversations (one episode each), with no server running */
    const appendConversations = async (round: number) => {
      const conn = openDatabase(db);
      try {
        const conv = new SqliteConversationStore(conn);
        for (let k = 0; k < LEARN_THREADS_PER_ROUND; k++) {
          const t = `learn-${round}-${k}`;
          await conv.ensureRootThread(t);
          await conv.appendMessages(t, [
            [{ kind: "user", content: { type: "text", text: `Run nightly check ${round}.${k}` } }, `${t}-m0`],
            [{ kind: "tool_call", call: { id: `${t}-c`, call_id: null, function: { name: "shell", arguments: { cmd: `make check-${round}-${k}` } }, signature: null, additional_params: null } }, `${t}-m1`],
            [{ kind: "tool_result", result: { id: `${t}-c`, call_id: null, content: [{ type: "text", text: "ok" }] } }, `${t}-m2`],
            [{ kind: "assistant", content: { text: `Check ${round}.${k} passed.` } }, `${t}-m3`],
          ]);
          learnThreads.push(t);
        }
      } finally {
        conn.close();
      }
    };
    const sink = await startSink();
    const sent = new Map<string, Sent>();
    const rememberedIds = new Map<string, string>(); // memory id -> invocation id
    const forgotten = new Set<string>();
    /** memories some sent forget names (its result may still be on its way) */
    const forgetTargets = new Set<string>();
    const skillNames: string[] = [];
    let seq = 0;
    const counts = { rounds: 0, integrityOk: 0, sent: 0, acked: 0, refused: 0, deliveredBeforeKill: 0, redeliveredAfterRestart: 0, duplicateDeliveries: 0, userChoicesAnswered: 0, memoriesChecked: 0, forgetsChecked: 0, skillVersionsChecked: 0, publishedSkills: 0, learnThreads: 0, episodes: 0, episodesBeforeFinalBoot: 0, killDelaysMs: [] as number[] };
    const started = Date.now();
    const refusedByStatus: Record<number, number> = {};

    const checkDb = (final: boolean) => {
      const d = new Database(db, { readonly: true, fileMustExist: true });
      try {
        expect(d.pragma("integrity_check", { simple: true })).toBe("ok");
        expect(d.pragma("foreign_key_check")).toEqual([]);
        counts.integrityOk++;
        // Delivered remembers are present (unless a delivered forget removed them).
        const present = d.prepare("SELECT status FROM memories WHERE id = ?");
        for (const [memId] of rememberedIds) {
          const row = present.get(memId) as { status: string } | undefined;
          if (forgotten.has(memId)) {
            expect(row === undefined || row.status === "deleted", `forgotten ${memId} still present`).toBe(true);
            if (final) counts.forgetsChecked++;
          } else if (!forgetTargets.has(memId) || row?.status === "active") {
            expect(row?.status, `delivered memory ${memId} missing`).toBe("active");
            if (final) counts.memoriesChecked++;
          }
        }
        // Skill pointers: a published pointer names a version of the same skill that is live.
        const bad = d
          .prepare(
            `SELECT s.name FROM skills s LEFT JOIN skill_versions v ON v.id = s.published_version_id
             WHERE s.published_version_id IS NOT NULL AND (v.id IS NULL OR v.skill_id <> s.id OR v.status NOT IN ('probationary','active'))`,
          )
          .all();
        expect(bad).toEqual([]);
        // Background learning killed mid-episode never stores an episode twice.
        expect(d.prepare(`SELECT thread_id, start_ord, COUNT(*) n FROM learning_episodes GROUP BY source, thread_id, start_ord HAVING n > 1`).all()).toEqual([]);
        // At most one version of a skill on top of its publication stack.
        const stacks = d.prepare(`SELECT skill_id, live_order, COUNT(*) n FROM skill_versions WHERE live_order IS NOT NULL GROUP BY skill_id, live_order HAVING n > 1`).all();
        expect(stacks).toEqual([]);
        if (final) {
          counts.publishedSkills = (d.prepare("SELECT COUNT(*) n FROM skills WHERE published_version_id IS NOT NULL").get() as { n: number }).n;
          counts.skillVersionsChecked = (d.prepare("SELECT COUNT(*) n FROM skill_versions").get() as { n: number }).n;
        }
      } finally {
        d.close();
      }
    };

    const client = async (c: number, round: number, mem: Server, skills: Server, stop: { v: boolean }) => {
      const group = `root-${c}`;
      while (!stop.v) {
        const id = `tu_${++seq}_${c}`;
        const r = Math.random();
        let op: string;
        let args: unknown;
        let endpoint = mem.endpoint;
        let meta = "";
        const deliveredMem = [...rememberedIds.keys()].filter((m) => !forgotten.has(m));
        if (r < 0.55 || deliveredMem.length < 3) {
          op = "memory_remember";
          meta = `crash fact ${id} ${Math.random().toString(36).slice(2, 10)}`;
          args = { content: `The nightly build ${meta} finished green`, kind: "fact", tags: ["crash"] };
        } else if (r < 0.65) {
          op = "memory_forget";
          meta = deliveredMem[Math.floor(Math.random() * deliveredMem.length)]!;
          args = { id: meta };
          forgetTargets.add(meta);
        } else if (r < 0.72) {
          op = "task_feedback";
          args = { rating: Math.random() > 0.5 ? 1 : -0.5, note: `round ${round} client ${c}` };
        } else if (r < 0.88 || skillNames.length === 0) {
          op = "skill_propose";
          endpoint = skills.endpoint;
          meta = `crash-skill-${c}-${seq}`;
          args = { skill_md: skillMd(meta, `1. Run the check ${id}.\n2. Report the result.`) };
        } else {
          op = "skill_publish";
          endpoint = skills.endpoint;
          meta = skillNames[Math.floor(Math.random() * skillNames.length)]!;
          args = { name: meta };
        }
        const s: Sent = { id, op, round, acked: false, deliveredBeforeKill: false, meta };
        sent.set(id, s);
        counts.sent++;
        const status = await post(endpoint, invocation(op, args, id, sink.url, group));
        if (status === 200) {
          s.acked = true;
          counts.acked++;
        } else if (status !== 0) {
          counts.refused++;
          refusedByStatus[status] = (refusedByStatus[status] ?? 0) + 1;
        }
        await sleep(Math.random() * 5);
      }
    };

    /** Fold delivered results into what the oracle knows. */
    const absorb = () => {
      for (const [id, res] of sink.results) {
        const s = sent.get(id);
        if (!s) continue;
        if (s.op === "memory_remember") {
          const m = /Remembered as (mem_[0-9a-z]+)/.exec(res.text) ?? /Already remembered as (mem_[0-9a-z]+)/.exec(res.text);
          if (m) rememberedIds.set(m[1]!, id);
        } else if (s.op === "memory_forget" && res.text.startsWith("Forgot ")) {
          forgotten.add(s.meta);
        } else if (s.op === "skill_propose" && res.text.startsWith("Proposed ") && !skillNames.includes(s.meta)) {
          skillNames.push(s.meta);
        }
      }
    };

    for (let round = 1; round <= ROUNDS; round++) {
      await appendConversations(round);
      const [mem, skills] = await Promise.all([startServer("memory", db, cwd, dir), startServer("skills", db, cwd, dir)]);
      // After a restart: the state the previous processes left is consistent.
      absorb();
      checkDb(false);
      const stop = { v: false };
      const clients = Array.from({ length: CLIENTS }, (_, c) => client(c, round, mem, skills, stop));
      const delay = 150 + Math.floor(Math.random() * 650);
      counts.killDelaysMs.push(delay);
      await sleep(delay);
      await Promise.all([kill9(mem), kill9(skills)]);
      stop.v = true;
      await Promise.all(clients);
      for (const s of sent.values()) if (s.round === round && sink.results.has(s.id)) s.deliveredBeforeKill = true;
      absorb();
      counts.rounds++;
    }

    // Final boot: replay and outbox drain; every acknowledged call must get its result.
    {
      const d = new Database(db, { readonly: true });
      counts.episodesBeforeFinalBoot = (d.prepare("SELECT COUNT(*) n FROM learning_episodes").get() as { n: number }).n;
      d.close();
    }
    const [mem, skills] = await Promise.all([startServer("memory", db, cwd, dir), startServer("skills", db, cwd, dir)]);
    try {
      const acked = [...sent.values()].filter((s) => s.acked);
      // A callback leased by a killed process waits for its lease (30 s) before another process
      // sends it, so the drain may take that long.
      const deadline = Date.now() + 45_000;
      while (Date.now() < deadline && acked.some((s) => !sink.results.has(s.id))) await sleep(100);
      const missing = acked.filter((s) => !sink.results.has(s.id)).map((s) => `${s.op}:${s.id}`);
      if (missing.length > 0) {
        const d = new Database(db, { readonly: true });
        for (const m of missing) {
          const id = m.split(":")[1]!;
          const s = sent.get(id)!;
          console.log("missing", JSON.stringify(s), JSON.stringify(d.prepare("SELECT toolset, status, owner, received_at, finished_at FROM rap_invocations WHERE call_id = ?").all(id)), JSON.stringify(d.prepare("SELECT status, attempts, last_error, callback_url FROM rap_outbox WHERE call_id = ?").all(id)));
        }
        d.close();
      }
      expect(missing, "acknowledged invocations without a tool_result").toEqual([]);
      absorb();
      for (const s of acked) {
        if (!s.deliveredBeforeKill) counts.redeliveredAfterRestart++;
        else counts.deliveredBeforeKill++;
        const r = sink.results.get(s.id)!;
        if (r.n > 1) counts.duplicateDeliveries++;
      }
      // Learning resumes: the dead workers' claims expire and every conversation is learned once.
      const learnDeadline = Date.now() + 30_000;
      const learned = () => {
        const d = new Database(db, { readonly: true });
        try {
          const queue = (d.prepare("SELECT COUNT(*) n FROM learning_queue").get() as { n: number }).n;
          const threads = (d.prepare(`SELECT COUNT(DISTINCT thread_id) n FROM learning_episodes WHERE thread_id LIKE 'learn-%'`).get() as { n: number }).n;
          return { queue, threads };
        } finally {
          d.close();
        }
      };
      while (Date.now() < learnDeadline) {
        const l = learned();
        if (l.queue === 0 && l.threads === learnThreads.length) break;
        await sleep(200);
      }
      expect(learned(), "learning did not resume and finish after the last restart").toEqual({ queue: 0, threads: learnThreads.length });
      // Outbox: nothing left pending for long, nothing dead.
      await sleep(300);
      checkDb(true);
      const d = new Database(db, { readonly: true });
      try {
        const outbox = d.prepare("SELECT status, COUNT(*) n FROM rap_outbox GROUP BY status").all() as { status: string; n: number }[];
        expect(outbox.filter((o) => o.status === "dead" || o.status === "rejected")).toEqual([]);
        const open = (d.prepare("SELECT COUNT(*) n FROM rap_invocations WHERE status = 'received'").get() as { n: number }).n;
        expect(open, "journal entries still open after the final boot").toBe(0);
        // Learning queue: nothing leased far beyond its lease by a process that is gone.
        const stale = (d.prepare("SELECT COUNT(*) n FROM learning_queue WHERE lease_until IS NOT NULL AND lease_until < ?").get(Date.now() - 10 * 60_000) as { n: number }).n;
        expect(stale).toBe(0);
        const feedbackDelivered = acked.filter((s) => s.op === "task_feedback" && /Recorded|Already recorded/.test(sink.results.get(s.id)!.text)).length;
        const feedbackRows = (d.prepare("SELECT COUNT(*) n FROM learning_feedback").get() as { n: number }).n;
        expect(feedbackRows).toBeGreaterThanOrEqual(feedbackDelivered > 0 ? 1 : 0);
        counts.userChoicesAnswered = sink.choiceCount();
        counts.learnThreads = learnThreads.length;
        counts.episodes = (d.prepare(`SELECT COUNT(*) n FROM learning_episodes WHERE thread_id LIKE 'learn-%'`).get() as { n: number }).n;
        expect(counts.episodes, "one episode per learned conversation").toBe(learnThreads.length);
        console.log(
          "crash-recovery " +
            JSON.stringify({
              ...counts,
              killDelaysMs: undefined,
              killDelayRangeMs: [Math.min(...counts.killDelaysMs), Math.max(...counts.killDelaysMs)],
              byOp: Object.fromEntries(["memory_remember", "memory_forget", "task_feedback", "skill_propose", "skill_publish"].map((op) => [op, acked.filter((s) => s.op === op).length])),
              refusedByStatus,
              feedbackDelivered,
              feedbackRows,
              outbox,
              seconds: Math.round((Date.now() - started) / 100) / 10,
            }),
        );
      } finally {
        d.close();
      }
      expect(counts.rounds).toBe(ROUNDS);
      expect(counts.acked).toBeGreaterThan(ROUNDS);
    } finally {
      await Promise.all([kill9(mem), kill9(skills)]);
      await sink.close();
      agent.destroy();
    }
  }, 240_000);
});

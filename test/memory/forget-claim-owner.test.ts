// A sweep for unfinished forgets (serve's, at start-up) that started while another process's
// forget was in its cascade took that claim for a stopped one and ran the cascade a second time.
// A claim now names its process (host, pid, the pid's start time): the sweep leaves a claim whose
// process runs to it, finishes one whose process is gone (or whose pid another program has taken
// since), and one held past its lease (a process it cannot check: another machine). Two processes
// on one SQLite file: the forget runs in a real child process.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { FORGET_CLAIM_LEASE_MS } from "../../core/memory/service.js";
import { thisProcess } from "../../cli/process-ids.js";
import { processStart } from "../../cli/serving-marks.js";
import { CLI } from "../helpers/cli.js";
import { openTestMemory, req } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const DIST = dirname(dirname(CLI));
const origin = { actor: "user" as const, threadId: null, toolCallId: null };

/** A process that forgets `id` in `db` and stops in the cascade (it never ends on its own); resolves once it is there. */
async function forgetStuckInCascade(dir: string, db: string, id: string) {
  const script = join(dir, "forgetting.mjs");
  writeFileSync(
    script,
    `import { openMemory } from ${JSON.stringify(join(DIST, "cli/context.js"))};
import { defaultConfig } from ${JSON.stringify(join(DIST, "core/config.js"))};
const ctx = openMemory({ dbPath: ${JSON.stringify(db)}, config: defaultConfig({ localUser: "alice" }), env: {} });
setInterval(() => {}, 60_000);
ctx.service.onForget({ beforeForget: () => { process.stdout.write("cascading\\n"); return new Promise(() => {}); } });
await ctx.service.forget({ owner: "alice", project: null }, [${JSON.stringify(id)}], { actor: "user", threadId: null, toolCallId: null });
`,
  );
  const child = spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((r) => child.on("exit", () => r()));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (l) => l === "cascading" && resolve());
    void exited.then(() => reject(new Error(`the forgetting process ended before its cascade: ${err}`)));
  });
  return { child, exited };
}

describe("the sweep for unfinished forgets and the process that claimed them", () => {
  it("leaves a claim to its running process, finishes it once that process is gone, cascade run once", async () => {
    const dir = tempDir();
    const ctx = openTestMemory(dir);
    const cascades: string[][] = [];
    ctx.service.onForget({ beforeForget: async (_user, contents) => void cascades.push(contents) });
    let stuck: Awaited<ReturnType<typeof forgetStuckInCascade>> | null = null;
    try {
      const { record } = await ctx.service.remember(req(), { content: "Alice's garage code is 4471", scope: "user" }, origin);
      stuck = await forgetStuckInCascade(dir, ctx.dbPath, record.id);
      const claimed = await ctx.store.get(record.id);
      expect(claimed).toMatchObject({ status: "deleted", content: "Alice's garage code is 4471" });
      // the other process is in its cascade: this process's sweep leaves the claim to it
      expect(await ctx.service.finishForgets()).toEqual([]);
      expect(cascades).toEqual([]);
      expect(await ctx.store.get(record.id)).toMatchObject({ status: "deleted", content: "Alice's garage code is 4471" });
      // that process dies in its cascade: the sweep finishes the forget, cascade and all
      stuck.child.kill("SIGKILL");
      await stuck.exited;
      expect(await ctx.service.finishForgets()).toEqual([record.id]);
      expect(cascades).toEqual([["Alice's garage code is 4471", record.id]]);
      expect(await ctx.store.get(record.id)).toMatchObject({ status: "deleted", content: "" });
      expect(await ctx.service.finishForgets()).toEqual([]);
    } finally {
      if (stuck && stuck.child.exitCode === null && stuck.child.signalCode === null) {
        stuck.child.kill("SIGKILL");
        await stuck.exited;
      }
      ctx.close();
    }
  });

  it("serve leaves a claim whose process runs at its start, and finishes it within its next sweep once that process is gone", async () => {
    const dir = tempDir();
    const ctx = openTestMemory(dir);
    let stuck: Awaited<ReturnType<typeof forgetStuckInCascade>> | null = null;
    let server: ChildProcess | null = null;
    try {
      const { record } = await ctx.service.remember(req(), { content: "Alice's shed code is 6610", scope: "user" }, origin);
      stuck = await forgetStuckInCascade(dir, ctx.dbPath, record.id);
      const log = join(dir, "serve.log");
      server = spawn(process.execPath, [CLI, "serve", "--port", "0", "--db", ctx.dbPath, "--log", log], {
        env: { ...process.env, INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" },
        stdio: ["ignore", "pipe", "ignore"],
      });
      await new Promise<void>((resolve) => createInterface({ input: server!.stdout! }).on("line", (l) => l.includes("listening on") && resolve()));
      // its start-up sweep has run (and finished nothing): the claim is still the other process's
      const seen = Date.now();
      while (!readFileSync(log, "utf8").includes("standalone server ready") && Date.now() - seen < 10_000) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 1000));
      expect(await ctx.store.get(record.id)).toMatchObject({ status: "deleted", content: "Alice's shed code is 6610" });
      stuck.child.kill("SIGKILL");
      await stuck.exited;
      const deadline = Date.now() + 90_000;
      while ((await ctx.store.get(record.id))?.content !== "" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
      expect(await ctx.store.get(record.id)).toMatchObject({ status: "deleted", content: "" });
      expect(readFileSync(log, "utf8")).toContain("finished forgets that a stopped process left part way");
    } finally {
      if (stuck && stuck.child.exitCode === null && stuck.child.signalCode === null) {
        stuck.child.kill("SIGKILL");
        await stuck.exited;
      }
      if (server && server.exitCode === null) {
        const gone = new Promise((r) => server!.once("exit", r));
        server.kill("SIGINT");
        await gone;
      }
      ctx.close();
    }
  }, 150_000);

  it.runIf(process.platform === "linux")("finishes a claim whose pid another program has taken since, and one of another machine once its lease is out", async () => {
    const dir = tempDir();
    const ctx = openTestMemory(dir);
    try {
      const reused = (await ctx.service.remember(req(), { content: "Alice's bike lock is 2290", scope: "user" }, origin)).record;
      const remote = (await ctx.service.remember(req(), { content: "Alice's gym locker is 118", scope: "user" }, origin)).record;
      // this process's pid, as a claim of a process that started at another time leaves it
      await ctx.store.claimForget([reused.id], ctx.clock.now(), { owner: `${hostname()}/${process.pid}/${processStart(process.pid)!}1` });
      // a server on another machine (a shared PostgreSQL): nothing here can tell whether it runs
      await ctx.store.claimForget([remote.id], ctx.clock.now(), { owner: "elsewhere.example/4242/99" });
      expect(await ctx.service.finishForgets()).toEqual([reused.id]);
      ctx.clock.advance(FORGET_CLAIM_LEASE_MS - 1);
      expect(await ctx.service.finishForgets()).toEqual([]);
      ctx.clock.advance(1);
      expect(await ctx.service.finishForgets()).toEqual([remote.id]);
      expect((await ctx.store.get(remote.id))?.content).toBe("");
    } finally {
      ctx.close();
    }
  });

  // Two containers given one host name, each with its own pid namespace: the other's pid is "not
  // running" here though its process runs. Its claim was taken at once, cascade run twice.
  it.runIf(process.platform === "linux")("leaves a claim of this host name made in another pid namespace to its lease, as another machine's", async () => {
    const dir = tempDir();
    const ctx = openTestMemory(dir);
    try {
      const space = thisProcess.id.split("/").at(-1)!;
      expect(space).toMatch(/^pidns:\d+(,boot:[0-9a-f-]+)?$/);
      // a pid no process here has (a child that has ended)
      const dead = spawnSync(process.execPath, ["-e", ""]).pid;
      const remember = async (content: string) => (await ctx.service.remember(req(), { content, scope: "user" }, origin)).record;
      const elsewhere = await remember("Alice's safe code is 7702");
      const here = await remember("Alice's alarm code is 5533");
      const old = await remember("Alice's door code is 1906");
      const otherSpace = space.replace(/^pidns:\d+/, "pidns:1");
      await ctx.store.claimForget([elsewhere.id], ctx.clock.now(), { owner: `${hostname()}/${dead}/12345/${otherSpace}` });
      // the same pid space (this one's): its pid is checked here, as is an identity recorded with none
      await ctx.store.claimForget([here.id], ctx.clock.now(), { owner: `${hostname()}/${dead}/12345/${space}` });
      await ctx.store.claimForget([old.id], ctx.clock.now(), { owner: `${hostname()}/${dead}/12345` });
      expect((await ctx.service.finishForgets()).sort()).toEqual([here.id, old.id].sort());
      ctx.clock.advance(FORGET_CLAIM_LEASE_MS - 1);
      expect(await ctx.service.finishForgets()).toEqual([]);
      expect(await ctx.store.get(elsewhere.id)).toMatchObject({ status: "deleted", content: "Alice's safe code is 7702" });
      ctx.clock.advance(1);
      expect(await ctx.service.finishForgets()).toEqual([elsewhere.id]);
      expect((await ctx.store.get(elsewhere.id))?.content).toBe("");
    } finally {
      ctx.close();
    }
  });

  // The sweep read one page (forget.maxByQuery claims, oldest first) and took the stopped ones in
  // it: a claim whose process stopped, behind a page of claims whose processes run, waited for ever.
  it("finishes a stopped process's claim behind more than a page of claims whose processes run", async () => {
    const dir = tempDir();
    const ctx = openTestMemory(dir);
    try {
      const remember = async (content: string) => (await ctx.service.remember(req(), { content, scope: "user" }, origin)).record;
      const live: string[] = [];
      for (let i = 0; i < 60; i++) live.push((await remember(`Alice keeps umbrella number ${i} in cupboard ${i}`)).id);
      const stopped = await remember("Alice.s old bike was painted teal");
      // claimed by this process (it runs), the oldest claims
      await ctx.store.claimForget(live, ctx.clock.now(), { owner: thisProcess.id });
      ctx.clock.advance(1000);
      // then one by a process that has ended (a pid no process here has)
      const dead = spawnSync(process.execPath, ["-e", ""]).pid;
      await ctx.store.claimForget([stopped.id], ctx.clock.now(), { owner: `${hostname()}/${dead}/12345` });
      expect(await ctx.service.finishForgets()).toEqual([stopped.id]);
      expect((await ctx.store.get(stopped.id))?.content).toBe("");
      expect((await ctx.store.unfinishedForgets(100)).map((u) => u.record.id).sort()).toEqual([...live].sort());
    } finally {
      ctx.close();
    }
  });
});

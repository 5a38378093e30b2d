// The memory server as the daemon runs it: a real child process per session, `sh -c`,
// RAP_EMBEDDED=1, cwd {project}/.infinity, stdout closed after the port line, SIGINT on idle.
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, runCli, spawnCommandServer } from "../helpers/cli.js";
import { postJson, startCallbackSink } from "../helpers/callback-sink.js";
import { tempDir } from "../helpers/tmp.js";

function invocation(op: string, args: unknown, id: string, cb: string, group = "root-A") {
  return `{"operation":"${op}","arguments":${JSON.stringify(args)},"id":"${id}","call_id":null,"callback_url":"${cb}","group_id":"${group}","thread_ancestors":null}`;
}

/** callbacks from servers starting up under a loaded test run */
const SLOW = 30_000;

describe("command-server mode", () => {
  it("prints only the port line, survives a closed stdout, exits 0 on SIGINT, and keeps data across restarts", async () => {
    const dir = tempDir();
    const project = join(dir, "proj");
    const cwd = join(project, ".infinity");
    mkdirSync(cwd, { recursive: true });
    const db = join(dir, "data", "memory.db");
    const sink = await startCallbackSink();
    const command = `exec ${process.execPath} ${CLI} serve --toolset memory --db ${db}`;
    try {
      const s1 = await spawnCommandServer(command, cwd, { INFINITY_MEMORY_USER: "dana" });
      expect(s1.firstLine).toMatch(/^\{"port":\d+\}$/);
      let extra = "";
      s1.child.stdout.on("data", (d: Buffer) => (extra += d.toString()));
      // The daemon drops the read end after one line: later writes must not kill the server.
      s1.child.stdout.destroy();
      const base = `http://127.0.0.1:${s1.port}`;
      const manifest = (await (await fetch(`${base}/.well-known/rap-toolset`)).json()) as { endpoint: string };
      expect(manifest.endpoint).toBe(`${base}/invoke`);
      expect((await postJson(manifest.endpoint, invocation("memory_remember", { content: "Builds use cargo nextest", kind: "project" }, "tu-1", sink.url))).status).toBe(200);
      const r1 = await sink.next((b) => b.id === "tu-1");
      expect(r1.text).toMatch(/Remembered as mem_\w+ \(project, project scope/);
      expect((await postJson(manifest.endpoint, "{not json")).status).toBe(400);

      process.kill(-s1.child.pid!, "SIGINT");
      expect(await s1.exited).toBe(0);
      expect(extra).toBe("");
      expect(existsSync(join(cwd, "infinity-memory.log"))).toBe(true);
      expect(readFileSync(join(cwd, "infinity-memory.log"), "utf8")).toContain("command server ready");

      // Rebooted on a new port for a new session of the same project: the memory is there.
      const s2 = await spawnCommandServer(command, cwd, { INFINITY_MEMORY_USER: "dana" });
      await postJson(`http://127.0.0.1:${s2.port}/invoke`, invocation("memory_search", { query: "nextest builds" }, "tu-2", sink.url, "root-B"));
      const r2 = await sink.next((b) => b.id === "tu-2");
      expect(r2.text).toContain("Builds use cargo nextest");
      process.kill(-s2.child.pid!, "SIGTERM");
      expect(await s2.exited).toBe(0);

      // Another user of the same project sees nothing.
      const s3 = await spawnCommandServer(command, cwd, { INFINITY_MEMORY_USER: "erik" });
      await postJson(`http://127.0.0.1:${s3.port}/invoke`, invocation("memory_search", { query: "nextest builds" }, "tu-3", sink.url, "root-C"));
      expect((await sink.next((b) => b.id === "tu-3")).text).toMatch(/^No memories match/);
      process.kill(-s3.child.pid!, "SIGINT");
      expect(await s3.exited).toBe(0);
    } finally {
      await sink.close();
    }
  });

  it("a project named through a symbolic link on the command line is the project its command server serves", async () => {
    const dir = tempDir();
    const project = join(dir, "work", "proj");
    mkdirSync(join(project, ".infinity"), { recursive: true });
    const link = join(dir, "proj-link");
    symlinkSync(project, link);
    const db = join(dir, "memory.db");
    const env = { INFINITY_MEMORY_USER: "dana", INFINITY_MEMORY_DB: db };
    // the person adds a lesson from a shell whose path goes through the link (as `--project .` does there)
    const added = runCli(["memory", "add", "Run the migrations before the seed script", "--kind", "lesson", "--project", `${link}/`], env);
    expect(added.status, added.stderr).toBe(0);
    const sink = await startCallbackSink();
    // the daemon starts the server in {cwd}/.infinity; its cwd is the real directory
    const s = await spawnCommandServer(`exec ${process.execPath} ${CLI} serve --toolset memory --db ${db}`, join(link, ".infinity"), { INFINITY_MEMORY_USER: "dana" });
    try {
      await postJson(`http://127.0.0.1:${s.port}/invoke`, invocation("memory_list", { kinds: ["lesson"] }, "tu-l", sink.url));
      expect((await sink.next((b) => b.id === "tu-l")).text).toContain("Run the migrations before the seed script");
      await postJson(`http://127.0.0.1:${s.port}/invoke`, invocation("memory_remember", { content: "Staging deploys need the VPN", kind: "project" }, "tu-r", sink.url));
      expect((await sink.next((b) => b.id === "tu-r")).text).toMatch(/project scope/);
    } finally {
      process.kill(-s.child.pid!, "SIGINT");
      await s.exited;
      await sink.close();
    }
    // and what the server stored is found from the link, too
    const listed = runCli(["memory", "list", "--project", link, "--kind", "project", "--json"], env);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("Staging deploys need the VPN");
  });

  it("a call a crashed server left open is re-run only by a later server of the same project, never by one started in another project", async () => {
    // The daemon starts one server per session in {session cwd}/.infinity, and that cwd is the
    // only way a server learns its project (reference §2.2). All projects share one database.
    const dir = tempDir();
    const env = { INFINITY_MEMORY_USER: "dana", INFINITY_MEMORY_DB: join(dir, "memory.db") };
    for (const p of ["x", "y"]) {
      mkdirSync(join(dir, p, ".infinity"), { recursive: true });
      const added = runCli(["memory", "add", `Project ${p.toUpperCase()} builds use cargo nextest`, "--kind", "project", "--project", join(dir, p)], env);
      expect(added.status, added.stderr).toBe(0);
    }
    const sink = await startCallbackSink();
    const command = `exec ${process.execPath} ${CLI} serve --toolset memory`;
    const started: { child: { pid?: number }; exited: Promise<number | null> }[] = [];
    const boot = async (p: string) => {
      const s = await spawnCommandServer(command, join(dir, p, ".infinity"), env);
      s.child.stdout.destroy();
      started.push(s);
      return s;
    };
    try {
      // project X's server asks before forgetting, then dies with the call open (kill_on_drop, a crash)
      const x1 = await boot("x");
      await postJson(`http://127.0.0.1:${x1.port}/invoke`, invocation("memory_forget", { query: "nextest" }, "tu-f", sink.url, "root-X"));
      expect((await sink.next((b) => b.type === "user_choice", SLOW)).prompt).toContain("Project X builds");
      process.kill(-x1.child.pid!, "SIGKILL");
      await x1.exited;

      // a session of project Y starts its server on the same database: not its call to run
      await boot("y");
      // the next server of project X takes the call over and asks about X's memory again
      const x2 = await boot("x");
      const again = await sink.next((b) => b.type === "user_choice" && String(b.response_url).includes(`:${x2.port}/`), SLOW);
      expect(again).toMatchObject({ group_id: "root-X", id: "tu-f" });
      expect(again.prompt).toContain("Project X builds");
      expect(sink.bodies.filter((b) => b.type === "user_choice" && String(b.prompt).includes("Project Y"))).toEqual([]);
      expect((await postJson(String(again.response_url), '{"id":"tu-f","selected":0}')).status).toBe(200);
      expect((await sink.next((b) => b.type === "tool_result" && b.id === "tu-f", SLOW)).text).toMatch(/^Forgot 1 memory matching "nextest"/);
      expect(runCli(["memory", "list", "--project", join(dir, "y"), "--kind", "project"], env).stdout).toContain("Project Y builds use cargo nextest");
      expect(runCli(["memory", "list", "--project", join(dir, "x"), "--kind", "project"], env).stdout).not.toContain("Project X builds");
    } finally {
      for (const s of started) {
        try {
          process.kill(-s.child.pid!, "SIGINT");
        } catch {
          // already gone
        }
        await s.exited;
      }
      await sink.close();
    }
  }, 120_000);

  it("with the semantic channel switched on in config.json, searches through its worker thread and still exits 0 on SIGINT", async () => {
    const dir = tempDir();
    const cwd = join(dir, "proj", ".infinity");
    mkdirSync(cwd, { recursive: true });
    const home = join(dir, "home");
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, "config.json"), JSON.stringify({ search: { channels: { semantic: true } } }));
    const sink = await startCallbackSink();
    const command = `exec ${process.execPath} ${CLI} serve --toolset memory --db ${join(dir, "memory.db")}`;
    try {
      const s = await spawnCommandServer(command, cwd, { INFINITY_MEMORY_USER: "dana", INFINITY_MEMORY_HOME: home });
      s.child.stdout.destroy();
      const invoke = `http://127.0.0.1:${s.port}/invoke`;
      const notes = ["We shaped wet clay on the wheel", "The clay bowls got a blue glaze", "Pottery class is on fridays", "The kiln fires the clay overnight"];
      for (const [i, content] of notes.entries()) {
        await postJson(invoke, invocation("memory_remember", { content, kind: "project" }, `w-${i}`, sink.url));
        expect((await sink.next((b) => b.id === `w-${i}`)).text).toMatch(/Remembered as/);
      }
      await postJson(invoke, invocation("memory_search", { query: "clay glaze" }, "q-1", sink.url));
      const hits = (await sink.next((b) => b.id === "q-1")).text;
      expect(hits).toContain("blue glaze");
      expect(hits).toContain("wet clay");
      process.kill(-s.child.pid!, "SIGINT");
      expect(await s.exited).toBe(0);
      const log = readFileSync(join(cwd, "infinity-memory.log"), "utf8");
      expect(log).toContain("command server ready");
      // the worker started and answered: no fallback warning reached the log
      expect(log).not.toContain("semantic channel");
    } finally {
      await sink.close();
    }
  });

  it("the limits config.json raises hold for the tools' arguments and in the manifest, as they do in the CLI", async () => {
    const dir = tempDir();
    const cwd = join(dir, "proj", ".infinity");
    mkdirSync(cwd, { recursive: true });
    const home = join(dir, "home");
    mkdirSync(home, { recursive: true });
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ write: { maxContentChars: 8000 }, search: { maxLimit: 100 }, list: { maxLimit: 200 }, skills: { searchMaxLimit: 40, maxBodyChars: 150_000 } }),
    );
    const sink = await startCallbackSink();
    const command = `exec ${process.execPath} ${CLI} serve --toolset memory --db ${join(dir, "memory.db")}`;
    try {
      const s = await spawnCommandServer(command, cwd, { INFINITY_MEMORY_USER: "dana", INFINITY_MEMORY_HOME: home });
      s.child.stdout.destroy();
      const base = `http://127.0.0.1:${s.port}`;
      const manifest = (await (await fetch(`${base}/.well-known/rap-toolset`)).json()) as { tools: { name: string; inputSchema: { properties: Record<string, { maximum?: number; maxLength?: number }> } }[] };
      const prop = (tool: string, p: string) => manifest.tools.find((t) => t.name === tool)!.inputSchema.properties[p]!;
      expect(prop("memory_remember", "content").maxLength).toBe(8000);
      expect(prop("memory_search", "limit").maximum).toBe(100);
      expect(prop("memory_list", "limit").maximum).toBe(200);
      const long = `The release checklist, step by step: ${"run the suite, tag, build the image, push it. ".repeat(110)}`;
      expect(long.length).toBeGreaterThan(4000);
      await postJson(`${base}/invoke`, invocation("memory_remember", { content: long, kind: "project" }, "long-1", sink.url));
      expect((await sink.next((b) => b.id === "long-1")).text).toMatch(/^Remembered as mem_/);
      await postJson(`${base}/invoke`, invocation("memory_search", { query: "release checklist", limit: 80 }, "lim-1", sink.url));
      expect((await sink.next((b) => b.id === "lim-1")).text).toContain("release checklist");
      await postJson(`${base}/invoke`, invocation("memory_list", { limit: 150 }, "lim-2", sink.url));
      expect((await sink.next((b) => b.id === "lim-2")).text).toMatch(/^1 of 1 memories:/);
      process.kill(-s.child.pid!, "SIGINT");
      expect(await s.exited).toBe(0);
      // the skills server too
      const k = await spawnCommandServer(command.replace("--toolset memory", "--toolset skills"), cwd, { INFINITY_MEMORY_HOME: home });
      k.child.stdout.destroy();
      const kbase = `http://127.0.0.1:${k.port}`;
      const skills = (await (await fetch(`${kbase}/.well-known/rap-toolset`)).json()) as typeof manifest;
      const skillProp = (tool: string, p: string) => skills.tools.find((t) => t.name === tool)!.inputSchema.properties[p]!;
      expect(skillProp("skill_search", "limit").maximum).toBe(40);
      expect(skillProp("skill_propose", "skill_md").maxLength).toBe(150_000);
      await postJson(`${kbase}/invoke`, invocation("skill_search", { query: "release", limit: 30 }, "sk-1", sink.url));
      expect((await sink.next((b) => b.id === "sk-1")).text).not.toMatch(/^Error/);
      process.kill(-k.child.pid!, "SIGINT");
      expect(await k.exited).toBe(0);
    } finally {
      await sink.close();
    }
  });

  it("a config.json it cannot use stops it with the reason in its log (the daemon discards its stderr)", () => {
    const dir = tempDir();
    const cwd = join(dir, "proj", ".infinity");
    mkdirSync(cwd, { recursive: true });
    writeFileSync(join(dir, "config.json"), JSON.stringify({ search: { defaultLimt: 5 } }));
    // started as the daemon starts a command server: sh -c, RAP_EMBEDDED=1, stderr discarded
    const serveAsDaemon = (toolset: string) =>
      spawnSync("sh", ["-c", `exec "${process.execPath}" "${CLI}" serve --toolset ${toolset}`], {
        cwd,
        env: { ...process.env, INFINITY_MEMORY_HOME: dir, RAP_EMBEDDED: "1" },
        stdio: ["ignore", "pipe", "ignore"],
        encoding: "utf8",
        timeout: 20_000,
      });
    const r = serveAsDaemon("memory");
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    const log = readFileSync(join(cwd, "infinity-memory.log"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { level: number; msg: string; err?: { message: string } });
    expect(log.at(-1)).toMatchObject({ level: 60, msg: "config.json is not valid; not starting", err: { message: expect.stringContaining('"search.defaultLimt" is not a setting') } });
    // a misspelt toolset in rap.json, the same (its log is named after what was asked for)
    expect(serveAsDaemon("memroy").status).toBe(1);
    expect(readFileSync(join(cwd, "infinity-memroy.log"), "utf8")).toContain('unknown toolset \\"memroy\\"; this version serves: memory, skills');
    // the provider proxy, whose stderr the daemon keeps to itself, the same
    const proxy = spawnSync(process.execPath, [CLI, "provider-proxy", "--upstream", process.execPath], {
      env: { ...process.env, INFINITY_MEMORY_HOME: dir },
      stdio: ["ignore", "pipe", "pipe"],
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(proxy.status).toBe(1);
    const proxyLog = readFileSync(join(dir, "provider-proxy.log"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { msg: string });
    expect(proxyLog.at(-1)).toMatchObject({ msg: "config.json is not valid; not starting" });
  });

  it("a stray promise rejection is logged and survived, an uncaught exception logged before it exits 1 (the daemon discards stderr)", { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const cwd = join(dir, "proj", ".infinity");
    mkdirSync(cwd, { recursive: true });
    // a fault planted in the server's own process, set off on SIGUSR2 once it serves
    const fault = join(dir, "fault.mjs");
    writeFileSync(
      fault,
      `process.on("SIGUSR2", () => {
  if (process.env.FAULT === "reject") void Promise.reject(new Error("planted stray rejection"));
  else setImmediate(() => { throw new Error("planted uncaught exception"); });
});\n`,
    );
    const sink = await startCallbackSink();
    const command = `exec ${process.execPath} --import ${JSON.stringify(`file://${fault}`)} ${CLI} serve --toolset memory --db ${join(dir, "memory.db")}`;
    const log = () => readFileSync(join(cwd, "infinity-memory.log"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { msg: string; err?: { message?: string } });
    const settle = () => new Promise((r) => setTimeout(r, 500));
    try {
      const s1 = await spawnCommandServer(command, cwd, { FAULT: "reject" });
      process.kill(s1.child.pid!, "SIGUSR2");
      await settle();
      expect(log().find((l) => l.msg === "unhandled promise rejection")?.err?.message).toBe("planted stray rejection");
      // still serving
      await postJson(`http://127.0.0.1:${s1.port}/invoke`, invocation("memory_remember", { content: "Release notes go in CHANGES.md" }, "cg-1", sink.url));
      expect((await sink.next((b) => b.id === "cg-1", SLOW)).text).toMatch(/^Remembered as/);
      process.kill(s1.child.pid!, "SIGINT");
      expect(await s1.exited).toBe(0);

      const s2 = await spawnCommandServer(command, cwd, { FAULT: "throw" });
      process.kill(s2.child.pid!, "SIGUSR2");
      expect(await s2.exited).toBe(1);
      expect(log().at(-1)).toMatchObject({ msg: "uncaught exception; exiting", err: { message: "planted uncaught exception" } });
    } finally {
      await sink.close();
    }
  });
});

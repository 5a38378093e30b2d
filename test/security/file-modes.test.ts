// On a shared machine other users must not read what the agent learned about a person. Under the
// usual umask (022) SQLite and Node create files 0644 and folders 0755, and home directories are
// often world-readable: memory.db, its WAL, the logs, backups and exports were readable by every
// local user. Run the real commands under umask 022 and look at the modes of what they create.
import { create } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, type ServiceError } from "@grpc/grpc-js";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { contextHookService } from "../../context-hook/grpc/service.js";
import { BuildPrefixRequestSchema, type BuildPrefixResponse } from "../../proto/gen/infinity/memory/v1/context_hook_pb.js";
import { CLI, spawnCommandServer } from "../helpers/cli.js";
import { postJson, startCallbackSink } from "../helpers/callback-sink.js";
import { tempDir } from "../helpers/tmp.js";

const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);
const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** the CLI under umask 022, the common default */
function cli(args: string[], env: Record<string, string>) {
  const r = spawnSync("sh", ["-c", `umask 022; exec ${q(process.execPath)} ${q(CLI)} ${args.map(q).join(" ")}`], {
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

function remember(id: string, content: string, callback: string): string {
  return JSON.stringify({ operation: "memory_remember", arguments: { content, kind: "preference" }, id, call_id: null, callback_url: callback, group_id: "root-1", thread_ancestors: null });
}

/** `serve` under `umask`, until it printed the line `ready` matches; its toolset URL */
async function startServe(umask: string, args: string[], env: Record<string, string>, ready: RegExp) {
  const child = spawn("sh", ["-c", `umask ${umask}; exec ${q(process.execPath)} ${q(CLI)} serve ${args.map(q).join(" ")}`], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise((r) => child.once("exit", r));
  const url = await new Promise<string>((resolve, reject) => {
    let toolset = "";
    const rl = createInterface({ input: child.stdout });
    rl.on("line", (l) => {
      toolset ||= /listening on (http:\/\/\S+)/.exec(l)?.[1] ?? "";
      if (ready.test(l)) resolve(toolset);
    });
    child.once("exit", (c) => reject(new Error(`serve exited with ${c}`)));
  });
  return { url, stop: async () => void (child.kill("SIGINT"), await exited) };
}

describe("files holding memories are owner-only", () => {
  it("serve: the data folder, the database with its -wal and -shm, and the log", async () => {
    const home = join(tempDir("imem-modes-"), "memory");
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "dana" };
    const { url, stop } = await startServe("022", ["--port", "0"], env, /listening on/);
    const sink = await startCallbackSink();
    try {
      expect((await postJson(`${url}/invoke`, remember("tu-1", "Prefers tea over coffee in the afternoon", sink.url))).status).toBe(200);
      await sink.next((b) => b.id === "tu-1");
      expect(existsSync(join(home, "memory.db-wal"))).toBe(true);
      expect({
        folder: mode(home),
        db: mode(join(home, "memory.db")),
        wal: mode(join(home, "memory.db-wal")),
        shm: mode(join(home, "memory.db-shm")),
        log: mode(join(home, "memory-server.log")),
      }).toEqual({ folder: "700", db: "600", wal: "600", shm: "600", log: "600" });
    } finally {
      await stop();
      await sink.close();
    }
  });

  it("serve --grpc unix:PATH: the ContextHook socket (no authentication, any user's memories) whatever the umask", async () => {
    const dir = tempDir("imem-modes-");
    const sock = join(dir, "hook.sock");
    const env = { INFINITY_MEMORY_HOME: join(dir, "home"), INFINITY_MEMORY_USER: "dana" };
    // umask 002 (Ubuntu's for most users) made it 0775: the group could connect
    const { url, stop } = await startServe("002", ["--port", "0", "--grpc", `unix:${sock}`], env, /^ContextHook gRPC:/);
    const sink = await startCallbackSink();
    try {
      expect(mode(sock)).toBe("600");
      // its owner's daemon still connects and gets its prefix
      expect((await postJson(`${url}/invoke`, remember("tu-1", "Prefers tea over coffee in the afternoon", sink.url))).status).toBe(200);
      await sink.next((b) => b.id === "tu-1");
      const Client = makeGenericClientConstructor(contextHookService, "ContextHook");
      const client = new Client(`unix:${sock}`, credentials.createInsecure()) as unknown as {
        buildPrefix(r: unknown, o: object, cb: (e: ServiceError | null, v: BuildPrefixResponse) => void): void;
        close(): void;
      };
      const res = await new Promise<BuildPrefixResponse>((resolve, reject) =>
        client.buildPrefix(create(BuildPrefixRequestSchema, { threadId: "root-2", rootThreadId: "root-2", userId: "dana", task: "tea or coffee this afternoon" }), { deadline: Date.now() + 10_000 }, (e, v) => (e ? reject(e) : resolve(v))),
      );
      client.close();
      expect(res.text).toContain("Prefers tea over coffee");
    } finally {
      await stop();
      await sink.close();
    }
  });

  it("a command server's log and a --db in a new folder", async () => {
    const dir = tempDir("imem-modes-");
    const cwd = join(dir, "proj", ".infinity");
    mkdirSync(cwd, { recursive: true });
    const db = join(dir, "data", "team", "memory.db");
    const s = await spawnCommandServer(`umask 022; exec ${q(process.execPath)} ${q(CLI)} serve --toolset memory --db ${q(db)}`, cwd, { INFINITY_MEMORY_HOME: join(dir, "home"), INFINITY_MEMORY_USER: "dana" });
    try {
      expect({ log: mode(join(cwd, "infinity-memory.log")), folder: mode(join(dir, "data")), inner: mode(join(dir, "data", "team")), db: mode(db) }).toEqual({ log: "600", folder: "700", inner: "700", db: "600" });
    } finally {
      process.kill(-s.child.pid!, "SIGINT");
      await s.exited;
    }
  });

  it("memory add, backup, restore into a new file and memory export", () => {
    const dir = tempDir("imem-modes-");
    const home = join(dir, "memory");
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "dana" };
    cli(["memory", "add", "Keeps the spare key under the blue pot"], env);
    expect([mode(home), mode(join(home, "memory.db"))]).toEqual(["700", "600"]);
    cli(["backup", "--out", join(dir, "copy.db")], env);
    expect(mode(join(dir, "copy.db"))).toBe("600");
    cli(["restore", join(dir, "copy.db"), "--db", join(dir, "restored.db")], env);
    expect(mode(join(dir, "restored.db"))).toBe("600");
    cli(["memory", "export", "--out", join(dir, "all.jsonl")], env);
    expect(mode(join(dir, "all.jsonl"))).toBe("600");
  });

  it("leaves the mode of a database that exists alone", () => {
    const dir = tempDir("imem-modes-");
    const db = join(dir, "shared.db");
    const env = { INFINITY_MEMORY_HOME: join(dir, "home"), INFINITY_MEMORY_USER: "dana" };
    cli(["memory", "add", "--db", db, "First fact"], env);
    chmodSync(db, 0o640);
    cli(["memory", "add", "--db", db, "Second fact"], env);
    expect(mode(db)).toBe("640");
  });
});

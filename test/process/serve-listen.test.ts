// `serve` when an address it was told to listen on is taken or does not exist: exit 1 with the
// option to change, and nothing else on stderr (grpc-js's own lines go to the log file).
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

let taken: Server;
let port = 0;

beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((done) => taken.listen(0, "127.0.0.1", done));
  port = (taken.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((done) => taken.close(() => done())));

describe("serve cannot listen", () => {
  it("names the option whose address is in use, for each server it starts", () => {
    const home = tempDir("imem-listen-");
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    const cases: [string[], string][] = [
      [["--port", String(port)], "--port"],
      [["--port", "0", "--ui", "--ui-port", String(port)], "--ui-port"],
      [["--port", "0", "--admin-grpc", "--admin-grpc-port", String(port)], "--admin-grpc-port"],
      [["--port", "0", "--grpc", `127.0.0.1:${port}`], "--grpc"],
    ];
    for (const [args, option] of cases) {
      const r = runCli(["serve", ...args, "--log", join(home, "serve.log")], env);
      expect(r.status, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toBe(
        `infinity-memory: ${option}: 127.0.0.1:${port} is already in use (another infinity-memory serve?); stop that server, or choose another port (0 picks a free one)\n`,
      );
    }
  });

  it("names a socket folder that does not exist and a host that is not this machine's", () => {
    const home = tempDir("imem-listen-");
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    const sock = join(home, "no-such-dir", "hook.sock");
    const r = runCli(["serve", "--port", "0", "--grpc", `unix:${sock}`], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`infinity-memory: --grpc unix:${sock}: the folder ${join(home, "no-such-dir")} does not exist; create it or choose another socket path\n`);
    // 192.0.2.0/24 is reserved for documentation: no machine has it
    const h = runCli(["serve", "--host", "192.0.2.7", "--allow-remote", "--port", "0"], env);
    expect(h.status).toBe(1);
    expect(h.stderr).toBe(`infinity-memory: --host: cannot listen on 192.0.2.7:0: no such address on this machine (127.0.0.1 is the loopback)\n`);
  });

  it("binds an address other machines reach only with --allow-remote, and says so in its log", async () => {
    const home = tempDir("imem-listen-");
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    const db = join(home, "m.db");
    const r = runCli(["serve", "--host", "0.0.0.0", "--port", "0", "--db", db], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      "infinity-memory: --host: 0.0.0.0 is not a loopback address, and the RAP endpoint has no authentication: anyone who reaches 0.0.0.0 could read and forget every user's memories; keep 127.0.0.1 (the default) and let a tunnel or proxy with authentication reach it, or add --allow-remote to accept that\n",
    );
    expect(r.stdout).toBe("");
    // nothing was opened or created: the refusal comes before the database
    expect(existsSync(db)).toBe(false);
    // loopback names are fine without it
    for (const host of ["localhost", "127.0.0.2"]) {
      const s = await startServe(["--host", host, "--db", db], env);
      try {
        expect(s.url).toMatch(host === "localhost" ? /^http:\/\/(127\.0\.0\.1|\[::1\]):\d+$/ : /^http:\/\/127\.0\.0\.2:\d+$/);
      } finally {
        s.child.kill();
        await s.exited;
      }
    }
    // the ContextHook gRPC service asks for no credential either
    const other = join(home, "other.db");
    const g = runCli(["serve", "--port", "0", "--grpc", "0.0.0.0:0", "--db", other], env);
    expect(g.status).toBe(1);
    expect(g.stderr).toBe(
      "infinity-memory: --grpc: 0.0.0.0 is not a loopback address, and the ContextHook gRPC service has no authentication: anyone who reaches 0.0.0.0 could read every user's memories; keep 127.0.0.1 (the default) and let a tunnel or proxy with authentication reach it, or add --allow-remote to accept that\n",
    );
    expect(existsSync(other)).toBe(false);
    const log = join(home, "remote.log");
    const s = await startServe(["--host", "0.0.0.0", "--allow-remote", "--grpc", "0.0.0.0:0", "--db", db, "--log", log], env);
    try {
      // reachable through loopback too, as 0.0.0.0 is every address of the machine
      const port = new URL(s.url).port;
      const res = await fetch(`http://127.0.0.1:${port}/.well-known/rap-toolset`);
      expect(res.status).toBe(200);
      expect(readFileSync(log, "utf8")).toContain("--allow-remote: the RAP endpoint answers any machine");
      expect(readFileSync(log, "utf8")).toContain("--allow-remote: the ContextHook gRPC service answers any machine");
    } finally {
      s.child.kill();
      await s.exited;
    }
  });
});

async function startServe(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", ...args], {
    env: { ...process.env, ...env, RAP_EMBEDDED: "" },
    stdio: ["ignore", "pipe", "ignore"],
  });
  const exited = new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
  const rl = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    rl.on("line", (l) => {
      const m = /listening on (http:\/\/\S+)/.exec(l);
      if (m) resolve(m[1]!);
    });
    child.on("exit", (c) => reject(new Error(`serve exited ${c} before listening`)));
  });
  return { child, exited, url };
}

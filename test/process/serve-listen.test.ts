// `serve` when an address it was told to listen on is taken or does not exist: exit 1 with the
// option to change, and nothing else on stderr (grpc-js's own lines go to the log file).
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
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
    const h = runCli(["serve", "--host", "192.0.2.7", "--port", "0"], env);
    expect(h.status).toBe(1);
    expect(h.stderr).toBe(`infinity-memory: --host: cannot listen on 192.0.2.7:0: no such address on this machine (127.0.0.1 is the loopback)\n`);
  });
});

// Command-server mode in a real child process, as the daemon runs it: `sh -c`, RAP_EMBEDDED=1,
// cwd in a temp dir, stdout piped and stderr discarded, SIGINT to the process group.
// Runs the compiled code in dist/ (`npm test` builds first).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { isEmbedded } from "../../toolsets/rap/command-server.js";
import { post, resultFor, sleep, startListener, tempDir, waitFor } from "./helpers.js";

const here = dirname(fileURLToPath(import.meta.url));
const fixture = join(here, "fixtures", "command-server.mjs");

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Booted {
  child: ChildProcess;
  cwd: string;
  port: number;
  /** everything read from stdout so far (while the pipe is kept open) */
  stdout(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function boot(opts: { closeStdoutAfterPort: boolean }): Promise<Booted> {
  const t = tempDir("rap-cmd-");
  const cwd = join(t.dir, ".infinity");
  mkdirSync(cwd);
  // `exec` so the exit status we observe is the server's own, not that of a shell killed by
  // the same group-wide SIGINT.
  const child = spawn("sh", ["-c", `exec "${process.execPath}" "${fixture}"`], {
    cwd,
    env: { ...process.env, RAP_EMBEDDED: "1" },
    stdio: ["ignore", "pipe", "ignore"],
    detached: true,
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid!, "SIGKILL");
      await exit;
    }
    t.cleanup();
  });
  let out = "";
  const firstLine = new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString("utf8");
      const nl = out.indexOf("\n");
      if (nl >= 0) {
        resolve(out.slice(0, nl + 1));
        // the daemon reads one line and drops the pipe
        if (opts.closeStdoutAfterPort) child.stdout!.destroy();
      }
    });
    void exit.then(() => reject(new Error(`exited before the port line; stdout: ${out}`)));
  });
  const line = await firstLine;
  expect(line).toMatch(/^\{"port":\d+\}\n$/);
  const port = (JSON.parse(line) as { port: number }).port;
  return { child, cwd, port, stdout: () => out, exit };
}

describe("command server", () => {
  it("detects embedded mode from RAP_EMBEDDED=1 only", () => {
    expect(isEmbedded({ RAP_EMBEDDED: "1" })).toBe(true);
    expect(isEmbedded({ RAP_EMBEDDED: "0" })).toBe(false);
    expect(isEmbedded({})).toBe(false);
  });

  it("prints only the port line, serves RAP, logs to a file in its cwd and exits 0 on SIGINT", async () => {
    const s = await boot({ closeStdoutAfterPort: false });
    const listener = await startListener();
    cleanups.push(() => listener.close());
    const base = `http://127.0.0.1:${s.port}`;

    const manifest = (await (await fetch(`${base}/.well-known/rap-toolset`)).json()) as { endpoint: string; tools: { name: string }[] };
    expect(manifest.endpoint).toBe(`${base}/invoke`);
    expect(manifest.tools.map((t) => t.name)).toEqual(["noisy_echo"]);
    const ack = await post(base, "/invoke", {
      operation: "noisy_echo",
      arguments: { text: "hello" },
      id: "cmd-1",
      call_id: null,
      callback_url: listener.url,
      group_id: "g1",
      thread_ancestors: null,
    });
    expect(ack.status).toBe(200);
    expect((await resultFor(listener, "cmd-1")).text).toBe("echo: hello");

    process.kill(-s.child.pid!, "SIGINT");
    expect(await s.exit).toEqual({ code: 0, signal: null });
    expect(s.stdout()).toBe(`{"port":${s.port}}\n`);
    const log = readFileSync(join(s.cwd, "rap-fixture.log"), "utf8");
    expect(log).toContain("fixture ready");
    expect(log).toContain("fixture stopped");
    expect(existsSync(join(s.cwd, "rap.sqlite"))).toBe(true);
  });

  it("survives writes after the daemon closed its stdout pipe", async () => {
    const s = await boot({ closeStdoutAfterPort: true });
    const listener = await startListener();
    cleanups.push(() => listener.close());
    const base = `http://127.0.0.1:${s.port}`;
    await sleep(50);
    for (const id of ["epipe-1", "epipe-2"]) {
      await post(base, "/invoke", {
        operation: "noisy_echo",
        arguments: { text: id },
        id,
        callback_url: listener.url,
        group_id: "g1",
      });
      expect((await resultFor(listener, id)).text).toBe(`echo: ${id}`);
    }
    expect(s.child.exitCode).toBeNull();
    process.kill(-s.child.pid!, "SIGINT");
    expect(await s.exit).toEqual({ code: 0, signal: null });
    await waitFor(() => readFileSync(join(s.cwd, "rap-fixture.log"), "utf8").includes("fixture stopped"), "shutdown log line");
  });
});

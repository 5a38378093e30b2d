import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { resolve } from "node:path";

/** The built CLI (npm test builds first). */
export const CLI = resolve(fileURLToPath(import.meta.url), "../../../dist/cli/main.js");

export function runCli(args: string[], env: Record<string, string>, input?: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: "utf8", input, timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Start a command server the way the daemon does: `sh -c`, RAP_EMBEDDED=1, stdout piped, stderr ignored. */
export async function spawnCommandServer(
  command: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcessWithoutNullStreams; port: number; firstLine: string; exited: Promise<number | null> }> {
  const child = spawn("sh", ["-c", command], {
    cwd,
    env: { ...process.env, ...env, RAP_EMBEDDED: "1" },
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  }) as ChildProcessWithoutNullStreams;
  const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
  const rl = createInterface({ input: child.stdout });
  const firstLine = await new Promise<string>((res, rej) => {
    const t = setTimeout(() => rej(new Error("no port line within 15 s")), 15_000);
    rl.once("line", (l) => {
      clearTimeout(t);
      res(l);
    });
    child.once("exit", (c) => rej(new Error(`server exited with ${c} before printing its port`)));
  });
  rl.close();
  const port = (JSON.parse(firstLine) as { port: number }).port;
  return { child, port, firstLine, exited };
}

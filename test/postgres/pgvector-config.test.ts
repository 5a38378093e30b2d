// The configured embedder on PostgreSQL, end to end through the command line: config.json's
// "embedder" turns on the pgvector channel of every command that opens a postgres:// URL, and
// `memory reindex --vectors` embeds what was written without one. PGlite with its pgvector
// extension, in this process, reached over a socket by the CLI as a child process (asynchronous:
// a blocking spawn would stop the event loop that serves it).
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function cli(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

describe("config.json embedder on PostgreSQL (PGlite with pgvector)", () => {
  let lite: PGlite;
  let server: PGLiteSocketServer;
  let url: string;

  beforeAll(async () => {
    lite = await PGlite.create({ extensions: { vector } });
    const port = await freePort();
    server = new PGLiteSocketServer({ db: lite, port, host: "127.0.0.1" });
    await server.start();
    // PGlite serves one connection at a time
    url = `postgres://postgres@127.0.0.1:${port}/postgres?pool_max=1`;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await lite?.close();
  });

  it("memory reindex --vectors embeds what was written without an embedder, and search finds it by meaning", async () => {
    const home = tempDir("imem-pgvec-");
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice", INFINITY_HOME: join(home, "no-daemon") };
    const add = await cli(["memory", "add", "Calligraphing herons at dawn by the lake", "--db", url], env);
    expect(add.status, add.stderr).toBe(0);

    writeFileSync(join(home, "config.json"), JSON.stringify({ embedder: { kind: "hashing", hashing: { dimensions: 64 } } }));
    const r = await cli(["memory", "reindex", "--vectors", "--db", url, "--json"], env);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ embedded: 1, dimensions: 64 });
    const again = await cli(["memory", "reindex", "--vectors", "--db", url, "--json"], env);
    expect(JSON.parse(again.stdout.trim())).toMatchObject({ embedded: 0 });

    // english stemming: "calligraphy" and "calligraphing" share no word; only the vector finds it
    const s = await cli(["memory", "search", "calligraphy", "--db", url, "--json"], env);
    expect(s.status, s.stderr).toBe(0);
    expect(s.stdout).toContain("Calligraphing herons at dawn");

    // and a write with the embedder configured stores its vector at once
    const add2 = await cli(["memory", "add", "Violin practice in the attic", "--db", url], env);
    expect(add2.status, add2.stderr).toBe(0);
    const none = await cli(["memory", "reindex", "--vectors", "--db", url, "--json"], env);
    expect(JSON.parse(none.stdout.trim())).toMatchObject({ embedded: 0 });
  }, 120_000);
});

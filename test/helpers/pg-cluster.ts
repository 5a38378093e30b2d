// Vitest globalSetup: a throwaway PostgreSQL 15 cluster for the PostgreSQL suites (test/postgres,
// and any suite using test/helpers/postgres.ts). initdb + pg_ctl from the server binaries, in a
// temporary directory, on a free loopback port, as the non-root `postgres` user when we are root.
// The cluster URL reaches the tests through `provide`; when the cluster cannot start, the reason
// does, and the PG suites skip with it (or fail under INFINITY_MEMORY_REQUIRE_PG=1).
// INFINITY_MEMORY_PG_URL=postgres://… uses an existing server instead.
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const BIN = process.env.INFINITY_MEMORY_PG_BIN ?? "/usr/lib/postgresql/15/bin";

interface ProvideCtx {
  provide(key: string, value: unknown): void;
}

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

/** Only start a cluster when the run may include a PostgreSQL suite (no filter, or a pg one). */
function runWantsPg(): boolean {
  if (process.env.INFINITY_MEMORY_REQUIRE_PG === "1") return true;
  const args = process.argv.slice(2).filter((a) => !a.startsWith("-") && a !== "run" && a !== "watch" && !a.includes("vitest"));
  if (args.length === 0) return true;
  return args.some((a) => /postgres|(^|[/_-])pg([/_.-]|$)/i.test(a));
}

export default async function setup(ctx: ProvideCtx): Promise<(() => void) | undefined> {
  const external = process.env.INFINITY_MEMORY_PG_URL;
  if (external) {
    ctx.provide("pgUrl", external);
    return undefined;
  }
  if (!runWantsPg()) {
    ctx.provide("pgSkip", "no PostgreSQL suite selected in this run");
    return undefined;
  }
  const c = await startPgCluster();
  if ("skip" in c) {
    ctx.provide("pgSkip", c.skip);
    return undefined;
  }
  ctx.provide("pgUrl", c.url);
  return c.stop;
}

/** Start a throwaway cluster (benchmarks use it too); `skip` says why it could not start. */
export async function startPgCluster(): Promise<{ url: string; stop: () => void } | { skip: string }> {
  if (!existsSync(join(BIN, "initdb")) || !existsSync(join(BIN, "pg_ctl"))) {
    return { skip: `PostgreSQL server binaries not found in ${BIN} (install postgresql-15 or set INFINITY_MEMORY_PG_BIN / INFINITY_MEMORY_PG_URL)` };
  }
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "imem-pg-"));
  const run = (cmd: string, args: string[]) =>
    root ? execFileSync("runuser", ["-u", "postgres", "--", join(BIN, cmd), ...args], { stdio: "pipe" }) : execFileSync(join(BIN, cmd), args, { stdio: "pipe" });
  try {
    if (root) {
      // initdb refuses to run as root: the cluster belongs to the system's postgres user
      const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
      const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
      chownSync(dir, uid, gid);
    }
    const data = join(dir, "data");
    run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
    const port = await freePort();
    const opts = [
      `-p ${port}`,
      `-k ${dir}`,
      "-c listen_addresses=127.0.0.1",
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
      "-c max_connections=300",
    ].join(" ");
    run("pg_ctl", ["-D", data, "-o", opts, "-l", join(dir, "server.log"), "-w", "-t", "30", "start"]);
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      stop: () => {
        try {
          run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
        } catch {
          // already gone
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    rmSync(dir, { recursive: true, force: true });
    return { skip: `could not start a PostgreSQL 15 cluster: ${(err.stderr?.toString() || err.message).trim().slice(0, 300)}` };
  }
}

// startAdmin: the admin API over one opened backend — the token, the services, the change
// watcher, and the HTTP (page + JSON + events) and gRPC transports that `serve --ui` and
// `serve --admin-grpc` run alongside the toolset server.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Logger } from "pino";
import { systemClock, type Clock } from "../../core/clock.js";
import type { MemoryConfig } from "../../core/config.js";
import { isLoopbackHost } from "../../core/loopback.js";
import { settleFiledRequests, type EvolutionService } from "../../core/learning/evolution.js";
import { experienceForgetHook } from "../../core/learning/forget.js";
import { skillForgetHook } from "../../core/learning/skill-forget.js";
import { MemoryService } from "../../core/memory/service.js";
import { SkillService } from "../../core/skills/service.js";
import type { Backend } from "../../stores/backend.js";
import type { SqliteBackend } from "../../stores/sqlite/backend.js";
import { routesOf } from "./dispatch.js";
import { ChangeWatcher } from "./events.js";
import { startAdminGrpc, type AdminGrpcServer } from "./grpc.js";
import { startAdminHttp, type AdminHttpServer } from "./http.js";
import type { AdminQueries } from "./queries.js";
import { createAdminService, evolutionOver } from "./service.js";
import { SqliteAdminQueries } from "./sqlite-queries.js";
import { PgAdminQueries } from "./pg-queries.js";
import type { PgDb } from "../../stores/postgres/pool.js";
import { loadOrCreateToken } from "./token.js";
import { listenProblem } from "../../cli/listen-errors.js";
import { outboxForgetHook } from "../../toolsets/rap/outbox-forget.js";

export const DEFAULT_UI_PORT = 7413;
export const DEFAULT_ADMIN_GRPC_PORT = 7414;

export interface StartAdminOptions {
  backend: Backend;
  config: MemoryConfig;
  /** $INFINITY_MEMORY_HOME: where admin.token lives */
  home: string;
  logger: Logger;
  clock?: Clock;
  /** the server's memory service (with its forget hooks); built over the backend when absent */
  memory?: MemoryService;
  skills?: SkillService;
  evolution?: EvolutionService;
  queries?: AdminQueries;
  /** the HTTP API + page; false to skip. Port 0 picks a free one. */
  http?: { host?: string; port?: number; uiDir?: string } | false;
  /** the gRPC services; false (default) to skip */
  grpc?: { host?: string; port?: number } | false;
  /** bring the session index up to date before source messages are shown (serve: its session search refresh) */
  refreshMessages?: () => Promise<unknown>;
  /** bind a non-loopback host (the token still guards every call) */
  allowRemote?: boolean;
  pollMs?: number;
}

export interface AdminServers {
  token: string;
  tokenPath: string;
  http: (AdminHttpServer & { pageUrl: string }) | null;
  grpc: AdminGrpcServer | null;
  close(): Promise<void>;
}

/** The package root (where package.json is), from src (admin/api) or the build (dist/admin/api). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const pj = join(dir, "package.json");
    if (existsSync(pj)) {
      try {
        if ((JSON.parse(readFileSync(pj, "utf8")) as { name?: string }).name === "infinity-memory") return dir;
      } catch {
        // keep walking
      }
    }
    dir = dirname(dir);
  }
  return process.cwd();
}

export function defaultUiDir(): string {
  return join(packageRoot(), "dist", "admin-ui");
}

function checkHost(host: string, allowRemote: boolean): void {
  if (!isLoopbackHost(host) && !allowRemote) throw new Error(`admin API: refusing to bind "${host}"; it serves loopback only unless allowRemote is set`);
}

function checkPort(port: number, what: string): number {
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${what} must be a port number 0..65535 (0 picks a free one); got ${port}`);
  return port;
}

function queriesFor(backend: Backend): AdminQueries {
  if (backend.kind === "sqlite" && "db" in backend) return new SqliteAdminQueries((backend as SqliteBackend).db);
  if (backend.kind === "postgres" && "pg" in backend) return new PgAdminQueries((backend as Backend & { pg: Pick<PgDb, "query"> }).pg);
  throw new Error(`the admin API has no queries for this ${backend.kind} backend; pass \`queries\``);
}

export async function startAdmin(o: StartAdminOptions): Promise<AdminServers> {
  const clock = o.clock ?? systemClock;
  const { token, path: tokenPath } = loadOrCreateToken(o.home);
  const memory =
    o.memory ??
    (() => {
      const m = new MemoryService(o.backend.memory, clock, o.config);
      m.onForget({ beforeForget: async (user, contents, madeFrom) => void (await o.backend.sessionIndex.purgeContaining(user, contents, madeFrom)) });
      m.onForget(experienceForgetHook(o.backend, clock));
      m.onForget(skillForgetHook(o.backend, clock));
      m.onForget(outboxForgetHook(o.backend.outbox, o.backend.userChoices));
      return m;
    })();
  const skills = o.skills ?? new SkillService(o.backend.skills, clock, o.config);
  skills.onDecided(settleFiledRequests(o.backend.evolution, clock));
  const evolution = o.evolution ?? evolutionOver(o.backend, skills, o.config, clock);
  const queries = o.queries ?? queriesFor(o.backend);
  const handlers = createAdminService({ backend: o.backend, memory, skills, evolution, queries, config: o.config, clock, localUser: o.config.localUser, refreshMessages: o.refreshMessages });
  const routes = routesOf(handlers);
  const watcher = new ChangeWatcher(queries, clock, o.logger, o.pollMs);

  let http: AdminServers["http"] = null;
  let grpc: AdminGrpcServer | null = null;
  try {
    if (o.http !== false) {
      const h = o.http ?? {};
      const host = h.host ?? "127.0.0.1";
      checkHost(host, o.allowRemote ?? false);
      const port = checkPort(h.port ?? DEFAULT_UI_PORT, "--ui-port");
      const s = await startAdminHttp({ routes, token, watcher, uiDir: h.uiDir ?? defaultUiDir(), host, port, logger: o.logger }).catch((e: unknown) => {
        throw listenProblem("--ui-port", `${host}:${port}`, e);
      });
      http = { ...s, pageUrl: `${s.url}#token=${token}` };
      o.logger.info({ url: s.url }, "admin page and HTTP API listening");
    }
    if (o.grpc) {
      const host = o.grpc.host ?? "127.0.0.1";
      checkHost(host, o.allowRemote ?? false);
      const port = checkPort(o.grpc.port ?? DEFAULT_ADMIN_GRPC_PORT, "--admin-grpc-port");
      grpc = await startAdminGrpc({ routes, token, host, port, logger: o.logger }).catch((e: unknown) => {
        throw listenProblem("--admin-grpc-port", `${host}:${port}`, e);
      });
      o.logger.info({ address: grpc.address }, "admin gRPC services listening");
    }
  } catch (e) {
    await http?.close();
    throw e;
  }
  return {
    token,
    tokenPath,
    http,
    grpc,
    close: async () => {
      watcher.stop();
      await Promise.all([http?.close(), grpc?.close()]);
    },
  };
}

// `infinity-memory serve`: the memory toolset as a RAP server, standalone or as a daemon
// command server (RAP_EMBEDDED=1: free port, port line on stdout, logs to a file in cwd).
import type { Command } from "commander";
import { existsSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { projectDir } from "../../stores/infinity-files/project-dir.js";
import { SessionsReader } from "../../stores/infinity-files/sessions.js";
import { announcePort, fileLogger, installCrashGuards, installShutdown, isEmbedded } from "../../toolsets/rap/command-server.js";
import { startRapServer } from "../../toolsets/rap/server.js";
import { startContextHookServer } from "../../context-hook/grpc/server.js";
import { memoryPrefixBuilder, warmStore } from "../../context-hook/provider-proxy/builder.js";
import { memoryToolset } from "../../toolsets/memory/tools.js";
import type { MemoryConfig } from "../../core/config.js";
import { EvolutionService } from "../../core/learning/evolution.js";
import { startEvolution } from "../../core/learning/evolution-start.js";
import { startLearning } from "../../core/learning/start.js";
import { llmFromConfig } from "../../context-hook/llm/from-config.js";
import { SKILLS_TOOLSET, skillsToolset } from "../../toolsets/skills/tools.js";
import { openSkills } from "../skills-context.js";
import { dataHome, loadConfig, openAnyMemory, printMigration, type AnyMemoryContext, type MemoryContext } from "../context.js";
import { maskLocation } from "../../stores/backend.js";
import { openedReadOnly, openProblem } from "../../stores/sqlite/database.js";
import { deriveRequestScope } from "../../core/memory/scope.js";
import { asSystemMethod, bindCallsToUser, NO_IDENTITY, pgIdentity } from "../pg-identity.js";
import { rapJson, serverEntry, commandEntry } from "../rap-json.js";
import { defaultInfinityHome, makeSessionSearch, openSources } from "../sessions.js";
import { DEFAULT_ADMIN_GRPC_PORT, DEFAULT_UI_PORT, startAdmin } from "../../admin/api/start.js";
import { warmSafetyScan } from "../../core/safety/index.js";
import { port, userId } from "../options.js";
import { isLoopbackHost } from "../../core/loopback.js";
import { listenProblem } from "../listen-errors.js";
import { removeStaleTemps } from "../temp-files.js";
import { dropKilledRebuild } from "../../stores/sqlite/memory-fts.js";
import { claimServing, processEnded } from "../serving-marks.js";
import { thisProcess } from "../process-ids.js";
import { setLogger as setGrpcLogger } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { format } from "node:util";

export const DEFAULT_PORT = 7411;
const EXPIRY_SWEEP_MS = 60_000;

interface ServeOptions {
  toolset: string;
  host?: string;
  allowRemote?: boolean;
  port?: string;
  db?: string;
  project?: string;
  infinityHome?: string;
  user?: string;
  log?: string;
  sessionsFrom?: string[];
  grpc?: string;
  ui?: boolean;
  uiPort?: string;
  adminGrpc?: boolean;
  adminGrpcPort?: string;
}

/** how often a forget reads conversation threads that were unreadable, and how far apart */
const FORGET_READ_ATTEMPTS = 3;
const FORGET_READ_RETRY_MS = 100;

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("serve a toolset over RAP (standalone, or as a daemon command server when RAP_EMBEDDED=1)")
    .option("--toolset <name>", "toolset to serve", "memory")
    .option("--host <host>", "address to bind (standalone; anything but loopback needs --allow-remote)", "127.0.0.1")
    .option("--allow-remote", "let --host (and --grpc) bind an address other machines reach (neither asks for a credential: whoever reaches them reads, and over RAP forgets, every user's memories)")
    .option("--port <port>", `port to bind (standalone; default ${DEFAULT_PORT})`, port)
    .option("--db <path|url>", "SQLite file or postgres:// URL (default $INFINITY_MEMORY_DB, else $INFINITY_MEMORY_HOME/memory.db or ~/.infinity/memory/memory.db)")
    .option("--project <dir>", "project directory for project-scoped memories (standalone)")
    .option("--infinity-home <dir>", "the daemon's state directory, to read each session's working directory from sessions.json")
    .option(
      "--sessions-from <source...>",
      "conversations for session_search: infinity-home:DIR (the daemon's files) or sqlite:FILE; default: the daemon home ($INFINITY_HOME or ~/.infinity) when it exists",
    )
    .option("--user <id>", "user id for invocations that carry none", userId)
    .option("--grpc <address>", "also serve the ContextHook gRPC service (for a patched daemon) on HOST:PORT or unix:/path.sock")
    .option("--ui", "also serve the review page and its HTTP API on 127.0.0.1 (prints the page URL with the access token)")
    .option("--ui-port <port>", `port of the review page (default ${DEFAULT_UI_PORT}; 0 picks a free one)`, port)
    .option("--admin-grpc", "also serve the MemoryAdmin and SkillAdmin gRPC services on 127.0.0.1 (access token required)")
    .option("--admin-grpc-port <port>", `port of the admin gRPC services (default ${DEFAULT_ADMIN_GRPC_PORT}; 0 picks a free one)`, port)
    .option("--log <file>", "log file")
    .action(async (o: ServeOptions) => {
      await serve(o);
    });
}

/**
 * A standalone server binds loopback unless the person says otherwise: the RAP endpoint asks for
 * no credential, so on another address anyone who reaches the port can read, write and forget
 * any user's memories (docs/THREAT-MODEL.md).
 */
export function checkHost(host: string, allowRemote: boolean, option = "--host", service = "the RAP endpoint", exposes = "read and forget every user's memories"): void {
  if (isLoopbackHost(host) || allowRemote) return;
  throw new Error(
    `${option}: ${host} is not a loopback address, and ${service} has no authentication: anyone who reaches ${host} could ${exposes}; keep 127.0.0.1 (the default) and let a tunnel or proxy with authentication reach it, or add --allow-remote to accept that`,
  );
}

/** the host of a --grpc HOST:PORT address; null for a unix socket or an address its parser refuses */
function grpcHost(address: string): string | null {
  if (address.startsWith("unix:")) return null;
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.exec(address);
  return m ? m[1]! : null;
}

/** The toolsets this build serves; anything else is an error naming them. */
export function checkToolset(name: string): void {
  if (name !== "memory" && name !== SKILLS_TOOLSET) throw new Error(`unknown toolset "${name}"; this version serves: memory, skills`);
}

async function serve(o: ServeOptions): Promise<void> {
  const embedded = isEmbedded(process.env);
  const home = dataHome();
  const logFile = o.log ?? (embedded ? join(process.cwd(), `infinity-${o.toolset}.log`) : join(home, `${o.toolset}-server.log`));
  // Logs go to a file in both modes: the daemon discards a command server's stderr, and a person
  // running `npm start` wants the banner, not JSON lines.
  const logger = fileLogger(logFile);
  // a stray rejection is logged and survived, an uncaught exception logged before the exit: under
  // the daemon stderr goes nowhere, so either used to end the server with no word anywhere
  installCrashGuards(logger);
  let config: MemoryConfig;
  try {
    checkToolset(o.toolset);
  } catch (e) {
    logger.fatal({ err: e }, "unknown toolset; not starting");
    throw e;
  }
  try {
    if (!embedded) checkHost(o.host ?? "127.0.0.1", o.allowRemote === true);
    const grpcOn = o.grpc ? grpcHost(o.grpc) : null;
    if (grpcOn !== null) checkHost(grpcOn, o.allowRemote === true, "--grpc", "the ContextHook gRPC service", "read every user's memories");
  } catch (e) {
    logger.fatal({ err: e }, "an address other machines reach, without --allow-remote; not starting");
    throw e;
  }
  if (!embedded && !isLoopbackHost(o.host ?? "127.0.0.1")) logger.warn({ host: o.host }, "--allow-remote: the RAP endpoint answers any machine that reaches this address, with no authentication");
  const grpcRemote = o.grpc ? grpcHost(o.grpc) : null;
  if (grpcRemote !== null && !isLoopbackHost(grpcRemote)) logger.warn({ grpc: o.grpc }, "--allow-remote: the ContextHook gRPC service answers any machine that reaches this address, with no authentication");
  try {
    config = loadConfig(home);
  } catch (e) {
    // under the daemon stderr goes nowhere: the log is the one place that says why we stopped
    logger.fatal({ err: e }, "config.json is not valid; not starting");
    throw e;
  }
  if (o.user) config.localUser = o.user;
  // Node's warnings (e.g. a semantic worker that fell back to the store's thread) would go to the
  // discarded stderr: the log file gets them.
  process.on("warning", (w) => logger.warn({ warning: w.name, detail: w.message }, "node warning"));
  // grpc-js prints its own errors on stderr ("E No address added …" before the bind error we
  // report): into the log file with the rest.
  setGrpcLogger({
    error: (...a: unknown[]) => logger.warn({ detail: format(...a) }, "grpc-js"),
    info: (...a: unknown[]) => logger.info({ detail: format(...a) }, "grpc-js"),
    debug: (...a: unknown[]) => logger.debug({ detail: format(...a) }, "grpc-js"),
  });
  let ctx: AnyMemoryContext;
  try {
    ctx = await openAnyMemory({
      location: o.db,
      config,
      // A schema step that rewrites an index holds the first start after an upgrade (tens of
      // seconds at a million memories): the log says so, and so does the terminal of a person.
      onMigration: (e) => {
        logger.info({ schema: e.version, step: e.name, phase: e.phase, ms: e.ms }, "database upgrade");
        if (!embedded) printMigration(e);
      },
    });
  } catch (e) {
    logger.fatal({ err: e, db: o.db ? maskLocation(o.db) : undefined }, "cannot open the database; not starting");
    throw e;
  }
  // a server writes with every call (its journal before any tool runs): a database this user may
  // only read would answer every call with an error
  if (openedReadOnly(ctx.location)) {
    const e = openProblem(ctx.location, { code: "SQLITE_READONLY" });
    logger.fatal({ err: e }, "cannot write the database; not starting");
    await ctx.close();
    throw e;
  }
  if ("dbPath" in ctx) {
    // restore refuses to swap the file under a running server: it looks for this mark; and a
    // restore under way (its own mark) keeps the server from starting on a file about to be replaced
    try {
      claimServing((ctx as MemoryContext).dbPath, `serve --toolset ${o.toolset}${embedded ? " (command server)" : ""}`);
    } catch (e) {
      logger.fatal({ err: e }, "a restore is replacing the database; not starting");
      await ctx.close();
      throw e;
    }
    // a restore killed outright left its staged copy of every memory beside the database
    const stale = removeStaleTemps((ctx as MemoryContext).dbPath);
    if (stale.length > 0) logger.info({ removed: stale }, "removed what an interrupted restore left beside the database");
    // a memory reindex killed outright left its half-built index, which every write kept feeding
    dropKilledReindex(ctx as MemoryContext, logger);
  }
  const stores = ctx.backend;
  // With row-level security (postgres …?rls=1) every store call must run as a user or as system
  // maintenance: tool calls as their user, the background and cross-user work as system.
  const identity = (stores as { pg?: { rls?: boolean } }).pg?.rls ? await pgIdentity() : NO_IDENTITY;

  // The daemon starts a command server in {session cwd}/.infinity: the project is its parent.
  const cwd = process.cwd();
  const commandProject = basename(cwd) === ".infinity" ? dirname(cwd) : cwd;
  const sessionsFile = o.infinityHome ? new SessionsReader(resolve(o.infinityHome)) : null;
  const fixedProject = o.project ? projectDir(o.project) : null;
  const projectOf = (session: string): string | null => {
    if (embedded) return commandProject;
    return sessionsFile?.cwdOf(session) ?? fixedProject;
  };

  const specs = o.sessionsFrom ?? (o.infinityHome ? [`infinity-home:${o.infinityHome}`] : existsSync(defaultInfinityHome()) ? [`infinity-home:${defaultInfinityHome()}`] : []);
  const own = "db" in ctx ? (ctx as MemoryContext).db : stores;
  const sources = openSources(specs, own, ctx.location);
  const sessions = makeSessionSearch("db" in ctx ? (ctx as MemoryContext).db : stores.sessionIndex, sources.sources, ctx.clock, config.localUser);
  asSystemMethod(sessions, "refresh", identity);
  if (sessions.configured) {
    // A forget purges what is indexed, so a thread caught mid-write (the daemon rewrites its files
    // in place) is read again a few times first: its newest messages may be the ones that said it.
    ctx.sessionForget.refresh = async () => {
      for (let attempt = 1; ; attempt++) {
        const reports = await sessions.refresh(true);
        if (attempt === FORGET_READ_ATTEMPTS || reports.every((r) => r.skipped.length === 0)) return;
        await new Promise((r) => setTimeout(r, FORGET_READ_RETRY_MS));
      }
    };
  }
  const toldSkipped = new Set<string>();
  sessions.onSkipped = (source, skipped) => {
    // once per thread and reason: a damaged file would otherwise be logged at every refresh
    const fresh = skipped.filter((t) => !toldSkipped.has(`${t.threadId}\u0000${t.reason}`));
    for (const t of fresh) toldSkipped.add(`${t.threadId}\u0000${t.reason}`);
    if (fresh.length > 0) logger.warn({ source, skipped: fresh }, "conversation threads that could not be read were left out of the session index (tried again at the next refresh)");
  };
  const toldUnknown = new Set<string>();
  sessions.onUnknownKinds = (source, threads) => {
    // once per thread: each append to it is read again and would say so again
    const fresh = threads.filter((t) => !toldUnknown.has(t.threadId));
    for (const t of fresh) toldUnknown.add(t.threadId);
    if (fresh.length > 0) logger.warn({ source, threads: fresh }, "conversation messages of kinds this version does not know (written by a newer daemon) were left out of the session index; the rest of those threads is indexed");
  };
  const roots = stores.roots;
  const known = new Map<string, string>();
  const recordRoot = (root: string, user: string, project: string | null) => {
    // One write per session, not per call.
    const v = `${user}\u0000${project ?? ""}`;
    if (known.get(root) === v) return;
    known.set(root, v);
    roots.upsert(root, user, project, ctx.clock.now()).catch((e: unknown) => logger.warn({ err: e }, "recording the session's user failed"));
  };
  // The learning loop's background worker: turns new experience into episodes, rewards and
  // pending memory candidates, off the request path (queue on disk, resumes after a restart).
  // one model adapter (a spawned provider, maybe) shared by the learning worker and the evolution loop
  const learningLlm = config.learning.enabled && o.toolset === "memory" && config.llm.adapter !== "none"
    ? llmFromConfig(config.llm, { budgetStore: stores.llmBudget, clock: ctx.clock, logger })
    : null;
  const learning = config.learning.enabled && o.toolset === "memory"
    ? identity.asSystem(() => startLearning({
        store: stores.learning,
        memory: stores.memory,
        config,
        clock: ctx.clock,
        conversation: sources.sources[0]?.reader ?? null,
        // what a forget purged from the session index is not learned from afterwards
        forgottenMessages: (thread) => stores.sessionIndex.forgottenMessages(thread),
        traces: { feed: stores.traceFeed, store: stores.traces },
        // the rubric signal only when a model is configured (llm.adapter); low weight either way
        llm: learningLlm,
        scope: { roots, userOf: sources.sources[0]?.userOf, cwdOf: sources.sources[0]?.cwdOf, projectOf, localUser: config.localUser },
        log: logger,
      }))
    : null;
  // Skills that evolve: policies → gated candidates → approval requests; curator proposals.
  const evolution = learning && config.evolution.enabled
    ? identity.asSystem(() =>
        startEvolution(
          { store: stores.evolution, learning: learning.service.store, skills: openSkills(ctx).service, config, clock: ctx.clock, llm: learningLlm, processes: thisProcess },
          logger,
        ),
      )
    : null;
  const toolset =
    o.toolset === SKILLS_TOOLSET
      ? (() => {
          const skills = openSkills(ctx).service;
          // the learning loop's approval requests are decided here too (skill_review, RAP user_choice)
          const evo = new EvolutionService({ store: stores.evolution, learning: stores.learning, skills, config, clock: ctx.clock, llm: null, processes: thisProcess });
          return skillsToolset({ service: skills, toggles: stores.toggles, localUser: config.localUser, projectOf, evolution: config.evolution.enabled ? evo : null, limits: config });
        })()
      : bindCallsToUser(memoryToolset({
          service: ctx.service,
          toggles: stores.toggles,
          clock: ctx.clock,
          localUser: config.localUser,
          projectOf,
          sessions,
          recordRoot,
          learning: learning?.service,
          askAboutCandidates: config.learning.candidates.askInConversation,
          limits: config,
        }), (inv) => deriveRequestScope(inv, { localUser: config.localUser, project: projectOf(inv.thread_ancestors?.[0] ?? inv.group_id) }).user, identity);
  // The content scan's patterns compile on their first runs (~0.17 s): here, not in the first call.
  warmSafetyScan();
  // A standing memory server (`npm start`, one process for every session) warms its store up as
  // the prefix builders do (with --grpc, memoryPrefixBuilder already has): semantic indexes of the
  // scopes written last, the commonest words' counts. A command server the daemon starts for one
  // session does not: that session may never search, and a start per session would pay it each time.
  if (o.toolset === "memory" && !embedded && !o.grpc) warmStore(stores.memory, logger);
  const rapHost = embedded ? "127.0.0.1" : (o.host ?? "127.0.0.1");
  const rapPort = embedded ? 0 : Number(o.port ?? DEFAULT_PORT);
  // A command server re-runs only the open calls of its own project (another project's server
  // on the same database would run them against the wrong memories).
  const journalScope = embedded ? { journalScope: commandProject } : {};
  const server = await startRapServer({ toolset, db: stores, host: rapHost, port: rapPort, logger, ...journalScope }).catch((e: unknown) => {
    throw listenProblem("--port", `${rapHost}:${rapPort}`, e, "--host");
  });
  // The gRPC ContextHook (for a daemon patched with ThreadConfigSource::prompt_prefix).
  const grpc = o.grpc
    ? await identity.asSystem(async () => startContextHookServer({
        builder: await memoryPrefixBuilder({ memory: ctx, logger }),
        traces: stores.traces,
        address: o.grpc!,
        allowRemote: o.allowRemote === true,
        logger,
      })).catch((e: unknown) => {
        throw listenProblem("--grpc", o.grpc!, e);
      })
    : null;
  if (grpc) logger.info({ address: grpc.address }, "ContextHook gRPC service listening");
  // The review page and the admin API (admin/api): a person sees and steers what was learned.
  const admin =
    o.ui || o.adminGrpc
      ? await identity.asSystem(() => startAdmin({
          backend: stores,
          config,
          home,
          logger,
          clock: ctx.clock,
          memory: ctx.service,
          refreshMessages: sessions.configured ? () => sessions.refresh() : undefined,
          http: o.ui ? { port: Number(o.uiPort ?? DEFAULT_UI_PORT) } : false,
          grpc: o.adminGrpc ? { port: Number(o.adminGrpcPort ?? DEFAULT_ADMIN_GRPC_PORT) } : false,
        }))
      : null;
  // A forget or reject whose process stopped between its claim and its purge (the records are
  // forgotten for everyone, their texts kept for the cascade) is finished now, cascade and all.
  const finishForgets = () =>
    identity.asSystem(() => ctx.service.finishForgets()).then(
      (ids) => {
        if (ids.length > 0) logger.info({ ids }, "finished forgets that a stopped process left part way");
      },
      (e: unknown) => logger.warn({ err: e }, "finishing unfinished forgets failed"),
    );
  // A skill request approval whose process stopped between its claim and its decision (status
  // "approving") is finished as its approver asked, or pending again when its action is refused now.
  let approvalsRunning = false;
  const finishApprovals = () => {
    // one run at a time: a run still carrying out an action is not raced by the next minute's
    if (approvalsRunning) return;
    approvalsRunning = true;
    void identity
      .asSystem(() => new EvolutionService({ store: stores.evolution, learning: stores.learning, skills: openSkills(ctx).service, config, clock: ctx.clock, llm: null, processes: thisProcess }).finishApprovals())
      .then(
        (r) => {
          if (r.finished.length + r.reopened.length > 0) logger.info(r, "finished skill request approvals that a stopped process left part way");
        },
        (e: unknown) => logger.warn({ err: e }, "finishing skill request approvals failed"),
      )
      .finally(() => {
        approvalsRunning = false;
      });
  };
  const sweep = setInterval(() => {
    ctx.service.expireDue("system").catch((e: unknown) => logger.warn({ err: e }, "expiry sweep failed"));
    // and again each minute: a claim left to its process at start-up (its cascade was under way)
    // is finished once that process is gone or its lease is out (cheap: a partial index finds them)
    void finishForgets();
    // likewise an approval whose process stopped while this server runs, not only at its next start
    finishApprovals();
    // and a reindex killed while this server runs (its triggers note every write until removed)
    if ("dbPath" in ctx) dropKilledReindex(ctx as MemoryContext, logger);
  }, EXPIRY_SWEEP_MS);
  sweep.unref();
  void finishForgets();
  finishApprovals();

  installShutdown(async () => {
    clearInterval(sweep);
    await evolution?.stop();
    await learning?.worker.stop();
    await learning?.service.close();
    await grpc?.close({ graceMs: 2000 });
    await admin?.close();
    sources.close();
    await server.close({ graceMs: 5000 });
    await ctx.close();
    logger.info("stopped");
  });

  if (embedded) {
    announcePort(server.port);
    logger.info({ port: server.port, db: ctx.location, project: commandProject }, "command server ready");
    return;
  }
  logger.info({ url: server.url, db: ctx.location }, "standalone server ready");
  process.stdout.write(
    `infinity-memory: "${o.toolset}" toolset listening on ${server.url}\n` +
      `database: ${ctx.location}\nlog: ${logFile}\n` +
      (grpc ? `ContextHook gRPC: ${grpc.address}\n` : "") +
      (admin?.http ? `Review page: ${admin.http.pageUrl}\n` : "") +
      (admin?.grpc ? `Admin gRPC: ${admin.grpc.address} (metadata authorization: Bearer <the token in ${admin.tokenPath}>)\n` : "") +
      `\n` +
      `Add it to Infinity in ~/.infinity/rap.json (or {project}/.infinity/rap.json), either as this running server:\n` +
      `${rapJson([serverEntry(o.toolset, server.url)])}\n\n` +
      `or as a command server the daemon starts per session:\n${rapJson([commandEntry(o.toolset)])}\n`,
  );
}

/** Remove what a memory reindex killed outright left in the database (logged), if its process is gone. */
function dropKilledReindex(ctx: MemoryContext, logger: Logger): void {
  try {
    const rebuild = dropKilledRebuild(ctx.db, processEnded);
    if (rebuild !== null) logger.info({ pid: rebuild }, "removed the half-built word index a killed memory reindex left");
  } catch (e) {
    // (the database busy for longer than its timeout: the next sweep tries again)
    logger.warn({ err: e }, "removing a killed memory reindex's half-built word index failed");
  }
}

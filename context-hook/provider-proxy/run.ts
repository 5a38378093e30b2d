// `infinity-memory provider-proxy`: a model provider (reference §4.3 item 2) that starts the real
// provider, serves the same protocol on its own socket and puts the memory prefix in front of
// each model call's preamble. The daemon reads exactly one stdout line from us: the socket path.
import { join, resolve } from "node:path";
import type { Logger } from "pino";
import type { MemoryConfig } from "../../core/config.js";
import { dataHome, loadConfig, openAnyMemory, type AnyMemoryContext } from "../../cli/context.js";
import { openInfinityHome } from "../../stores/infinity-files/home.js";
import { fileLogger, installCrashGuards, installShutdown } from "../../toolsets/rap/command-server.js";
import { claimServing } from "../../cli/serving-marks.js";
import { AncestorCache, resolveThreadContext } from "../thread-context.js";
import { createBuilder } from "./builder.js";
import { ProviderProxyServer } from "./server.js";
import { startUpstream, UPSTREAM_START_TIMEOUT_MS, type UpstreamProcess } from "./upstream.js";

export interface ProviderProxyOptions {
  /** the wrapped provider's argv */
  upstream: string[];
  /** the daemon's state directory, for thread ancestry, user ids and session directories */
  infinityHome?: string | undefined;
  dbPath?: string | undefined;
  /** default: config prefix.deadlineMs */
  deadlineMs?: number | undefined;
  /** default: config prefix.budgetTokens */
  budgetTokens?: number | undefined;
  logFile?: string | undefined;
  /** module exporting createPrefixBuilder(ctx); default: the memory prefix builder */
  builderModule?: string | undefined;
  upstreamTimeoutMs?: number | undefined;
  /** see ExchangeDeps.endedStallMs */
  endedStallMs?: number | undefined;
}

export async function runProviderProxy(o: ProviderProxyOptions): Promise<void> {
  const home = dataHome();
  const logger = fileLogger(o.logFile ?? join(home, "provider-proxy.log"));
  installCrashGuards(logger);
  let config: MemoryConfig;
  try {
    config = loadConfig(home);
  } catch (e) {
    // the daemon keeps a provider's stderr to itself: the log says why the proxy did not start
    logger.fatal({ err: e }, "config.json is not valid; not starting");
    throw e;
  }
  const deadlineMs = o.deadlineMs ?? config.prefix.deadlineMs;
  const budgetTokens = o.budgetTokens ?? config.prefix.budgetTokens;

  let memory: AnyMemoryContext | null = null;
  let upstream: UpstreamProcess | null = null;
  try {
    // --db, else INFINITY_MEMORY_DB (the daemon passes its environment on), else the home's file:
    // the same store the daemon's memory command servers use, SQLite or PostgreSQL.
    memory = await openAnyMemory({ location: o.dbPath, config });
    // restore refuses to swap the file under a running process: it looks for this mark; a
    // restore under way keeps the proxy from starting (the error names it)
    if ("dbPath" in memory) claimServing((memory as { dbPath: string }).dbPath, "provider-proxy");
    const ctx = { memory, logger };
    // The tokenizer loads while the upstream starts; neither is left behind when the other fails.
    const [built, started] = await Promise.allSettled([
      createBuilder(ctx, o.builderModule ?? null),
      startUpstream(o.upstream, { logger, timeoutMs: o.upstreamTimeoutMs ?? UPSTREAM_START_TIMEOUT_MS }),
    ]);
    if (started.status === "fulfilled") upstream = started.value;
    if (built.status === "rejected") throw built.reason;
    if (started.status === "rejected") throw started.reason;
    const builder = built.value;
    const up = started.value;
    // Whatever ends this process, the upstream goes with it (SIGTERM reaches it only through us).
    process.once("exit", () => {
      if (up.exitReason === null) process.kill(up.pid, "SIGKILL");
    });

    const infinityHome = o.infinityHome ? openInfinityHome(resolve(o.infinityHome)) : null;
    const rootContexts = memory.backend.roots;
    const ancestorCache = new AncestorCache();
    const server = new ProviderProxyServer({
      upstream: up,
      prefix: {
        builder,
        resolve: (preamble) =>
          resolveThreadContext(preamble, {
            localUser: config.localUser,
            home: infinityHome,
            rootContexts,
            ancestorCache,
            onSourceError: (source, err) => logger.warn({ source, err }, "thread context source unreadable"),
          }),
        deadlineMs,
        budgetTokens,
        onLate: (ms, err) => logger.info({ ms: Math.round(ms), err }, "prefix finished after its deadline"),
      },
      traces: memory.backend.traces,
      clock: memory.clock,
      logger,
      ...(o.endedStallMs !== undefined ? { endedStallMs: o.endedStallMs } : {}),
    });
    const socketPath = await server.listen();

    const mem = memory;
    installShutdown(
      async () => {
        await server.close();
        await up.stop();
        await mem.close();
        logger.info("stopped");
      },
      { logger },
    );
    announceSocketPath(socketPath);
    logger.info(
      { socketPath, upstream: up.socketPath, upstreamPid: up.pid, db: mem.location, infinityHome: o.infinityHome ?? null, deadlineMs, budgetTokens },
      "provider proxy ready",
    );
  } catch (e) {
    logger.error({ err: e }, "provider proxy failed to start");
    await stopQuietly(upstream, logger);
    await memory?.close();
    logger.flush();
    throw e;
  }
}

/** the one stdout line; anything later would land in the daemon's log as provider output */
function announceSocketPath(path: string): void {
  // The daemon may stop reading either pipe; an EPIPE must not take the proxy down.
  process.stdout.on("error", () => {});
  process.stderr.on("error", () => {});
  process.stdout.write(`${path}\n`);
  process.stdout.write = ((..._args: unknown[]) => true) as typeof process.stdout.write;
}

async function stopQuietly(upstream: UpstreamProcess | null, logger: Logger): Promise<void> {
  try {
    await upstream?.stop();
  } catch (e) {
    logger.warn({ err: e }, "could not stop the upstream provider");
  }
}

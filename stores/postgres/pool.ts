// The PostgreSQL connection layer every PG store shares: a node-postgres Pool plus the settings
// read from the URL (profile, row-level security), transaction helpers, serialisable retries and
// the mapping of server errors onto StoreError. Queries are always parameterised.
import { AsyncLocalStorage } from "node:async_hooks";
import pg from "pg";
import { StoreError } from "../traits.js";
import { isCoreError } from "../../core/errors.js";

export type PgProfile = "postgres" | "dsql";

export interface PgLogger {
  info(msg: string): void;
  warn(msg: string): void;
}

export interface PgOpenOptions {
  /** "dsql": only what Aurora DSQL supports (see README.md); default "postgres" */
  profile?: PgProfile;
  /** row-level security per user as a second line of defence (see README.md) */
  rls?: boolean;
  /** pool size; default 10 */
  max?: number;
  /** leave PostgreSQL's JIT compilation as the server has it (default: off on our connections; see PgDb) */
  jit?: boolean;
  logger?: PgLogger;
}

/** Optional server capabilities, detected after migration. */
export interface PgFeatures {
  trigram: boolean;
  vector: boolean;
  /** why a channel is off, for logs and `doctor` output */
  reasons: string[];
}

export type Q = Pick<pg.PoolClient, "query">;

/**
 * int8 (bigint, count(*)) as a JS number: every bigint here is an epoch-ms time, a row id below
 * 2^53 or a count. The driver's default is a string.
 */
export const PG_TYPES = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

const SILENT: PgLogger = { info: () => {}, warn: () => {} };

/** Settings carried in the URL's query string; removed before node-postgres sees it. */
export function parsePgUrl(url: string): { connectionString: string; profile?: PgProfile; rls?: boolean; max?: number; jit?: boolean } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new StoreError("io", `invalid PostgreSQL URL; expected postgres://user:password@host:port/database`);
  }
  const out: { connectionString: string; profile?: PgProfile; rls?: boolean; max?: number; jit?: boolean } = { connectionString: "" };
  const profile = u.searchParams.get("profile");
  if (profile !== null) {
    if (profile !== "postgres" && profile !== "dsql") throw new StoreError("io", `profile=${profile} is unknown; use profile=postgres or profile=dsql`);
    out.profile = profile;
  }
  const rls = u.searchParams.get("rls");
  if (rls !== null) out.rls = rls === "1" || rls === "true" || rls === "on";
  const max = u.searchParams.get("pool_max");
  if (max !== null) {
    const n = Number(max);
    if (!Number.isInteger(n) || n < 1 || n > 1000) throw new StoreError("io", `pool_max=${max} must be an integer from 1 to 1000`);
    out.max = n;
  }
  const jit = u.searchParams.get("jit");
  if (jit !== null) out.jit = jit === "1" || jit === "true" || jit === "on";
  for (const k of ["profile", "rls", "pool_max", "jit"]) u.searchParams.delete(k);
  out.connectionString = u.toString();
  return out;
}

/**
 * Who the current request acts for, for row-level security: queries of a PgDb opened with
 * `rls` run with `app.user_id` set to this user (SET LOCAL), so a policy hides other users' rows
 * even when a WHERE clause is wrong. No user: user-scoped tables show nothing.
 */
const userContext = new AsyncLocalStorage<{ user: string | null; system: boolean }>();

export function withPgUser<T>(user: string, fn: () => T): T {
  return userContext.run({ user, system: false }, fn);
}

/** Maintenance across users (expiry sweeps, index rebuilds, migrations' data steps). */
export function asPgSystem<T>(fn: () => T): T {
  return userContext.run({ user: null, system: true }, fn);
}

const RETRYABLE = new Set(["40001", "40P01"]);

export function isRetryable(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  // DSQL reports optimistic-concurrency conflicts as 40001 with OC000/OC001 in the message.
  return typeof code === "string" && RETRYABLE.has(code);
}

/** A server or driver error as StoreError (a StoreError, or a CoreError about an argument, passes through). */
export function toStoreError(e: unknown): Error {
  if (e instanceof StoreError || isCoreError(e)) return e;
  const err = e as { code?: string; message?: string; constraint?: string };
  const msg = err?.message ?? String(e);
  const code = err?.code ?? "";
  if (code.startsWith("23")) return new StoreError("constraint", `constraint violated${err.constraint ? ` (${err.constraint})` : ""}: ${msg}`);
  if (code === "42P01" || code === "42703" || code === "42883" || code === "3F000") {
    return new StoreError("schema", `database schema is missing or older than this build (${msg}); bring it up to date as the tables' owner: infinity-memory db upgrade --db <owner's URL>`);
  }
  if (code === "28P01" || code === "28000") return new StoreError("io", `PostgreSQL refused the login: ${msg}`);
  if (code === "3D000") return new StoreError("io", `PostgreSQL database does not exist: ${msg}`);
  if (code === "42501") return new StoreError("io", `PostgreSQL permission denied: ${msg}`);
  // character_not_in_repertoire / untranslatable_character: a NUL or bytes that are not UTF-8
  if (code === "22021" || code === "22P05") return new StoreError("constraint", `the text holds a character PostgreSQL cannot store (${msg}): a NUL (U+0000) or invalid UTF-8; remove it`);
  if (e instanceof Error && !(e as { code?: string }).code?.match(/^[0-9A-Z]{5}$/)) {
    return new StoreError("io", `PostgreSQL unreachable or failed: ${msg}`);
  }
  return new StoreError("io", `PostgreSQL error ${code}: ${msg}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` in one transaction on one pooled connection; rolls back on any error. */
export async function tx<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>, opts: { isolation?: "serializable" | "repeatable read"; setup?: (c: pg.PoolClient) => Promise<void> } = {}): Promise<T> {
  let c: pg.PoolClient;
  try {
    c = await pool.connect();
  } catch (e) {
    throw toStoreError(e);
  }
  let broken = false;
  try {
    await c.query(opts.isolation ? `BEGIN ISOLATION LEVEL ${opts.isolation === "serializable" ? "SERIALIZABLE" : "REPEATABLE READ"}` : "BEGIN");
    if (opts.setup) await opts.setup(c);
    const out = await fn(c);
    await c.query("COMMIT");
    return out;
  } catch (e) {
    try {
      await c.query("ROLLBACK");
    } catch {
      broken = true; // the connection is gone; do not return it to the pool
    }
    throw e;
  } finally {
    c.release(broken);
  }
}

/**
 * A SERIALIZABLE transaction retried on serialisation failures and deadlocks (40001, 40P01) with
 * jittered exponential backoff; other errors and the last failure propagate as they are.
 */
export async function serializable<T>(
  pool: pg.Pool,
  fn: (c: pg.PoolClient) => Promise<T>,
  opts: { attempts?: number; baseMs?: number; setup?: (c: pg.PoolClient) => Promise<void>; isolation?: "serializable" | "repeatable read" } = {},
): Promise<T> {
  const attempts = opts.attempts ?? 8;
  const base = opts.baseMs ?? 5;
  for (let i = 1; ; i++) {
    try {
      return await tx(pool, fn, { isolation: opts.isolation ?? "serializable", ...(opts.setup ? { setup: opts.setup } : {}) });
    } catch (e) {
      if (!isRetryable(e) || i >= attempts) throw e;
      await sleep(base * 2 ** (i - 1) * (0.5 + Math.random()));
    }
  }
}

/**
 * Row ids for the DSQL profile, which has no sequences: milliseconds × 4096 plus a per-process
 * counter seeded at random, so ids stay below 2^53, grow with time and rarely meet across processes
 * (a clash is a unique violation, not a silent overwrite).
 */
export class RowIds {
  private last = 0;
  next(): number {
    const base = Date.now() * 4096 + Math.floor(Math.random() * 256);
    this.last = Math.max(this.last + 1, base);
    return this.last;
  }
}

/**
 * A client that turns JIT compilation off as it connects, before the pool hands it out. Every
 * statement here is short and index-driven, but row estimates (a table just imported and not yet
 * analysed, an array of row ids) easily pass jit_above_cost, and PostgreSQL then compiles each
 * such statement for 20-80 ms, ten times what it takes to run (pg-memory at 20k memories: search
 * p50 28.7 -> 12.1 ms with it off). A server that refuses the setting keeps its own, with a warning.
 */
function jitOffClient(log: PgLogger): typeof pg.Client {
  return class JitOffClient extends pg.Client {
    override connect(): Promise<pg.Client>;
    override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
    override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | void {
      const ready = super.connect().then(async () => {
        await this.query("SET jit = off").catch((e: unknown) => log.warn(`postgres: could not turn JIT off (${(e as Error).message}); searches may be slower`));
        return this;
      });
      if (!callback) return ready;
      const cb = callback as (err: Error | null, c?: pg.Client) => void;
      ready.then((c) => cb(null, c), (e: Error) => cb(e));
    }
  };
}

/** how long a query waits for a free connection of the pool before it fails */
export const CONNECT_TIMEOUT_MS = 10_000;

/** One database: the pool, its profile and features, and the RLS context of each transaction. */
export class PgDb {
  readonly pool: pg.Pool;
  readonly profile: PgProfile;
  readonly rls: boolean;
  readonly log: PgLogger;
  readonly rowIds = new RowIds();
  features: PgFeatures = { trigram: false, vector: false, reasons: ["features not detected yet"] };
  /**
   * The server is Aurora DSQL itself (detected by preparePg), not plain PostgreSQL running the
   * dsql profile. DSQL transactions are repeatable read with optimistic concurrency; on plain
   * PostgreSQL the profile uses SERIALIZABLE, which likewise turns write conflicts into retried 40001s.
   */
  serverIsDsql = false;
  private ended = false;

  constructor(pool: pg.Pool, opts: PgOpenOptions = {}) {
    this.pool = pool;
    this.profile = opts.profile ?? "postgres";
    this.rls = opts.rls ?? false;
    this.log = opts.logger ?? SILENT;
    // An idle client's error (server restart) must not crash the process; the next query reconnects.
    pool.on("error", (e) => this.log.warn(`postgres pool: idle connection failed: ${e.message}`));
  }

  static open(url: string, opts: PgOpenOptions = {}): PgDb {
    const parsed = parsePgUrl(url);
    const profile = opts.profile ?? parsed.profile ?? "postgres";
    const jit = opts.jit ?? parsed.jit ?? false;
    const log = opts.logger ?? SILENT;
    const pool = new pg.Pool({
      // Aurora DSQL has no JIT to turn off
      ...(profile === "postgres" && !jit ? { Client: jitOffClient(log) } : {}),
      connectionString: parsed.connectionString,
      max: opts.max ?? parsed.max ?? 10,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      types: PG_TYPES,
    });
    return new PgDb(pool, {
      ...opts,
      profile,
      rls: opts.rls ?? parsed.rls ?? false,
      jit,
    });
  }

  /** RLS settings for this transaction: an explicit user, else the async context's. */
  private setup(user?: string | null): ((c: pg.PoolClient) => Promise<void>) | undefined {
    if (!this.rls) return undefined;
    // The request's identity (withPgUser) wins over the user a store call names: a call that names
    // another user's rows by mistake then finds nothing, which is the point of this defence.
    const ctx = userContext.getStore();
    const u = ctx?.user ?? user ?? "";
    const system = ctx?.system === true ? "on" : "off";
    return async (c) => {
      await c.query(`SELECT set_config('app.user_id', $1, true), set_config('app.system', $2, true)`, [u, system]);
    };
  }

  /**
   * A transaction; `user` names the row owner for RLS when no request identity is set. A deadlock
   * or serialisation failure (several servers touching the same rows) reruns `fn`, so `fn` must
   * only talk to the database.
   */
  async tx<T>(fn: (c: pg.PoolClient) => Promise<T>, user?: string | null): Promise<T> {
    const setup = this.setup(user);
    try {
      // DSQL runs every transaction optimistically: conflicts surface as 40001 at commit.
      if (this.profile === "dsql") {
        return await serializable(this.pool, fn, { isolation: this.serverIsDsql ? "repeatable read" : "serializable", ...(setup ? { setup } : {}) });
      }
      for (let i = 1; ; i++) {
        try {
          return await tx(this.pool, fn, setup ? { setup } : {});
        } catch (e) {
          if (!isRetryable(e) || i >= 5) throw e;
          await sleep(5 * 2 ** i * Math.random());
        }
      }
    } catch (e) {
      throw toStoreError(e);
    }
  }

  async serializable<T>(fn: (c: pg.PoolClient) => Promise<T>, user?: string | null): Promise<T> {
    const setup = this.setup(user);
    try {
      return await serializable(this.pool, fn, { isolation: this.serverIsDsql ? "repeatable read" : "serializable", ...(setup ? { setup } : {}) });
    } catch (e) {
      throw toStoreError(e);
    }
  }

  /**
   * Reads on one pooled connection: no BEGIN/COMMIT round trips unless RLS needs its setting
   * (each statement then sees its own committed snapshot, like SQLite's autocommit reads).
   */
  async read<T>(fn: (c: pg.PoolClient) => Promise<T>, user?: string | null): Promise<T> {
    if (this.rls || this.profile === "dsql") return this.tx(fn, user);
    let c: pg.PoolClient;
    try {
      c = await this.pool.connect();
    } catch (e) {
      throw toStoreError(e);
    }
    try {
      return await fn(c);
    } catch (e) {
      throw toStoreError(e);
    } finally {
      c.release();
    }
  }

  /** One statement; inside a transaction only when RLS needs its setting. */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = [], user?: string | null): Promise<R[]> {
    if (this.rls) return this.tx(async (c) => (await c.query<R>(sql, params)).rows, user);
    try {
      return (await this.pool.query<R>(sql, params)).rows;
    } catch (e) {
      throw toStoreError(e);
    }
  }

  async close(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.pool.end();
  }
}

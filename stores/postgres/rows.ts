// Row decoding shared by the PostgreSQL stores: bigint columns arrive as strings unless a type
// parser was installed, and JSON may come back as text or (jsonb) already parsed.
import type { Pool, PoolClient } from "pg";
import { serializable, tx } from "./pool.js";

export type Queryable = Pool | PoolClient;

export function num(v: unknown): number {
  return typeof v === "number" ? v : Number(v);
}

export function numOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : num(v);
}

export function parseJson<T>(v: unknown): T {
  return (typeof v === "string" ? JSON.parse(v) : v) as T;
}

/**
 * Run `fn` in one transaction on a pooled connection (pool.ts); a SERIALIZABLE one that loses a
 * conflict is retried from the start, so its body must only touch the database.
 */
export async function inTx<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>, opts: { serializable?: boolean } = {}): Promise<T> {
  // Contended optimistic units (queue claims under the DSQL profile) may lose several rounds.
  return retryIdClash(() => (opts.serializable ? serializable(pool, fn, { attempts: 25, baseMs: 2 }) : tx(pool, fn)));
}

/** unique constraints on ids the store makes itself under the DSQL profile (RowIds) */
const STORE_ID_KEYS = /^(trace_events|rap_outbox|learning_signals|learning_events|skill_trials|skill_eval_reports|skill_golden_tasks|audit_log)_pkey$|^skills_rowid_key$/;

/**
 * Run `fn` again when a store-made row id met another process's (DSQL profile: ids are time-based
 * and only rarely clash; sequences on PostgreSQL never do). The whole unit re-runs with new ids.
 */
export async function retryIdClash<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (e) {
      const err = e as { code?: string; constraint?: string };
      if (i >= 5 || err.code !== "23505" || !err.constraint || !STORE_ID_KEYS.test(err.constraint)) throw e;
    }
  }
}

/**
 * What the catalog stores must do differently on Aurora DSQL (profile "dsql"): no sequences (the
 * store supplies row ids), no advisory locks, no FOR UPDATE SKIP LOCKED (claims are optimistic
 * and retried on conflict), no tsvector. Plain PostgreSQL uses none of these workarounds.
 */
export interface PgFlavor {
  dsql: boolean;
  ids: { next(): number };
}

export const POSTGRES_FLAVOR: PgFlavor = { dsql: false, ids: { next: () => { throw new Error("row ids come from sequences on PostgreSQL"); } } };

// PostgreSQL toolset toggles, root contexts and the LLM call budget: the small stores, each one
// statement or one transaction, with the semantics of their SQLite twins in stores/sqlite/.
import type { LlmBudgetStore } from "../../core/llm/budget.js";
import type { AuditEntry, RootContext, RootContextStore, ToggleStore } from "../traits.js";
import type { PgDb } from "./pool.js";

/** Per-thread toolset switches; a thread without its own setting inherits its nearest ancestor's. */
export class PgToggleStore implements ToggleStore {
  constructor(private readonly db: PgDb) {}

  async set(toolset: string, threadId: string, enabled: boolean | null, audit: AuditEntry): Promise<void> {
    const dsql = this.db.profile === "dsql";
    await this.db.tx(async (c) => {
      if (enabled === null) {
        await c.query(`DELETE FROM toolset_toggles WHERE toolset = $1 AND thread_id = $2`, [toolset, threadId]);
      } else {
        await c.query(
          `INSERT INTO toolset_toggles (toolset, thread_id, enabled, updated_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (toolset, thread_id) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`,
          [toolset, threadId, enabled ? 1 : 0, audit.at],
        );
      }
      await c.query(
        `INSERT INTO audit_log (${dsql ? "seq, " : ""}at, actor, action, target_kind, target_id, detail)
         VALUES (${dsql ? "$7, " : ""}$1, $2, $3, $4, $5, $6)`,
        [audit.at, audit.actor, audit.action, audit.targetKind, audit.targetId, JSON.stringify(audit.detail), ...(dsql ? [this.db.rowIds.next()] : [])],
      );
    });
  }

  async resolve(toolset: string, chain: string[]): Promise<boolean | null> {
    if (chain.length === 0) return null;
    const rows = await this.db.query<{ thread_id: string; enabled: number }>(
      `SELECT thread_id, enabled FROM toolset_toggles WHERE toolset = $1 AND thread_id = ANY($2::text[])`,
      [toolset, chain],
    );
    const byThread = new Map(rows.map((r) => [r.thread_id, r.enabled === 1]));
    for (const t of chain) {
      const v = byThread.get(t);
      if (v !== undefined) return v;
    }
    return null;
  }
}

/** What the toolsets learned about each session: the user and project its invocations carried. */
export class PgRootContexts implements RootContextStore {
  constructor(private readonly db: PgDb) {}

  async upsert(rootThreadId: string, userId: string, project: string | null, at: number): Promise<void> {
    // Writers race (several toolset processes per session); the newest observation wins.
    await this.db.query(
      `INSERT INTO root_contexts (root_thread_id, user_id, project, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (root_thread_id) DO UPDATE SET
         user_id = excluded.user_id, project = excluded.project, updated_at = excluded.updated_at
       WHERE excluded.updated_at >= root_contexts.updated_at`,
      [rootThreadId, userId, project, at],
      userId,
    );
  }

  async get(rootThreadId: string): Promise<RootContext | null> {
    const r = (
      await this.db.query<{ root_thread_id: string; user_id: string; project: string | null; updated_at: number }>(
        `SELECT * FROM root_contexts WHERE root_thread_id = $1`,
        [rootThreadId],
      )
    )[0];
    return r ? { rootThreadId: r.root_thread_id, userId: r.user_id, project: r.project, updatedAt: r.updated_at } : null;
  }
}

/** The daily model-call budget: one conditional upsert, so servers sharing it never overspend a day. */
export class PgLlmBudgetStore implements LlmBudgetStore {
  constructor(private readonly db: PgDb) {}

  async tryTake(day: string, limit: number): Promise<boolean> {
    // the insert branch would grant a first call even with a zero limit
    if (limit <= 0) return false;
    const rows = await this.db.query(
      `INSERT INTO llm_budget (day, calls) VALUES ($1, 1)
       ON CONFLICT (day) DO UPDATE SET calls = llm_budget.calls + 1 WHERE llm_budget.calls < $2
       RETURNING calls`,
      [day, limit],
    );
    return rows.length === 1;
  }

  async used(day: string): Promise<number> {
    return (await this.db.query<{ calls: number }>(`SELECT calls FROM llm_budget WHERE day = $1`, [day]))[0]?.calls ?? 0;
  }
}

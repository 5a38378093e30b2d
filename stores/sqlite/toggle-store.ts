// Per-thread toolset switches. A thread without its own setting inherits its nearest ancestor's.
import type { AuditEntry, ToggleStore } from "../traits.js";
import type { Db } from "./database.js";

export class SqliteToggleStore implements ToggleStore {
  private readonly upsert;
  private readonly remove;
  private readonly audit;

  constructor(private readonly db: Db) {
    this.upsert = db.prepare(
      `INSERT INTO toolset_toggles (toolset, thread_id, enabled, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (toolset, thread_id) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`,
    );
    this.remove = db.prepare(`DELETE FROM toolset_toggles WHERE toolset = ? AND thread_id = ?`);
    this.audit = db.prepare(
      `INSERT INTO audit_log (at, actor, action, target_kind, target_id, detail) VALUES (?, ?, ?, ?, ?, ?)`,
    );
  }

  async set(toolset: string, threadId: string, enabled: boolean | null, audit: AuditEntry): Promise<void> {
    this.db.transaction(() => {
      if (enabled === null) this.remove.run(toolset, threadId);
      else this.upsert.run(toolset, threadId, enabled ? 1 : 0, audit.at);
      this.audit.run(audit.at, audit.actor, audit.action, audit.targetKind, audit.targetId, JSON.stringify(audit.detail));
    }).immediate();
  }

  async resolve(toolset: string, chain: string[]): Promise<boolean | null> {
    if (chain.length === 0) return null;
    const rows = this.db
      .prepare(`SELECT thread_id, enabled FROM toolset_toggles WHERE toolset = ? AND thread_id IN (${chain.map(() => "?").join(",")})`)
      .all(toolset, ...chain) as { thread_id: string; enabled: number }[];
    if (rows.length === 0) return null;
    const byThread = new Map(rows.map((r) => [r.thread_id, r.enabled === 1]));
    for (const t of chain) {
      const v = byThread.get(t);
      if (v !== undefined) return v;
    }
    return null;
  }
}

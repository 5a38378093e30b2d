// SQLite store of what the toolsets learned about each session (table root_contexts): the user and
// project its invocations carried. The context hook falls back to it when the daemon's own files
// are not readable from where it runs.
import type Database from "better-sqlite3";
import type { RootContext, RootContextStore } from "../traits.js";
import type { Db } from "./database.js";

interface Row {
  root_thread_id: string;
  user_id: string;
  project: string | null;
  updated_at: number;
}

export class SqliteRootContexts implements RootContextStore {
  private readonly put: Database.Statement;
  private readonly select: Database.Statement;

  constructor(db: Db) {
    // Writers race (several toolset processes per session); the newest observation wins.
    this.put = db.prepare(
      `INSERT INTO root_contexts (root_thread_id, user_id, project, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (root_thread_id) DO UPDATE SET
         user_id = excluded.user_id, project = excluded.project, updated_at = excluded.updated_at
       WHERE excluded.updated_at >= root_contexts.updated_at`,
    );
    this.select = db.prepare(`SELECT * FROM root_contexts WHERE root_thread_id = ?`);
  }

  async upsert(rootThreadId: string, userId: string, project: string | null, at: number): Promise<void> {
    this.put.run(rootThreadId, userId, project, at);
  }

  async get(rootThreadId: string): Promise<RootContext | null> {
    const r = this.select.get(rootThreadId) as Row | undefined;
    if (!r) return null;
    return { rootThreadId: r.root_thread_id, userId: r.user_id, project: r.project, updatedAt: r.updated_at };
  }
}

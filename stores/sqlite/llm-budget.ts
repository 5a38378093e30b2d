// SQLite LlmBudgetStore (table llm_budget, migration 7). The take is one conditional upsert, so
// concurrent processes on the same database never overspend a day.
import type Database from "better-sqlite3";
import type { LlmBudgetStore } from "../../core/llm/budget.js";
import type { Db } from "./database.js";

export class SqliteLlmBudgetStore implements LlmBudgetStore {
  private readonly take: Database.Statement;
  private readonly select: Database.Statement;

  constructor(db: Db) {
    this.take = db.prepare(
      `INSERT INTO llm_budget (day, calls) VALUES (@day, 1)
       ON CONFLICT (day) DO UPDATE SET calls = calls + 1 WHERE calls < @limit`,
    );
    this.select = db.prepare(`SELECT calls FROM llm_budget WHERE day = ?`).pluck();
  }

  tryTake(day: string, limit: number): boolean {
    // the insert branch would grant a first call even with a zero limit
    if (limit <= 0) return false;
    return this.take.run({ day, limit }).changes === 1;
  }

  used(day: string): number {
    return (this.select.get(day) as number | undefined) ?? 0;
  }
}

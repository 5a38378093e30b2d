// The per-day call budget. The counter lives behind `LlmBudgetStore` so core stays free of I/O:
// the in-memory store below serves tests, stores/sqlite/llm-budget.ts persists it across processes.
import type { Clock } from "../clock.js";
import { LlmError } from "./types.js";

export interface LlmBudgetStore {
  /** adds one call to `day` if it has fewer than `limit`; true when the call may go ahead */
  tryTake(day: string, limit: number): boolean | Promise<boolean>;
  /** calls taken on `day` */
  used(day: string): number | Promise<number>;
}

export class MemoryLlmBudgetStore implements LlmBudgetStore {
  private readonly days = new Map<string, number>();

  tryTake(day: string, limit: number): boolean {
    const n = this.days.get(day) ?? 0;
    if (n >= limit) return false;
    this.days.set(day, n + 1);
    return true;
  }

  used(day: string): number {
    return this.days.get(day) ?? 0;
  }
}

/** the budget day: the UTC calendar date, so every process on the machine agrees */
export function budgetDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

export class CallBudget {
  constructor(
    private readonly store: LlmBudgetStore,
    readonly dailyLimit: number,
    private readonly clock: Clock,
  ) {}

  /** takes one call from today's budget or throws LlmError("budget_exhausted") */
  async take(op: string): Promise<void> {
    const day = budgetDay(this.clock.now());
    if (await this.store.tryTake(day, this.dailyLimit)) return;
    throw new LlmError("budget_exhausted", `${op}: the daily model-call budget (${this.dailyLimit}) for ${day} is used up`, {
      op,
    });
  }

  async remaining(): Promise<number> {
    const used = await this.store.used(budgetDay(this.clock.now()));
    return Math.max(0, this.dailyLimit - used);
  }
}

// The per-day call budget: in memory, and persisted in SQLite (migration 7) across handles.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fixedClock } from "../../core/clock.js";
import { budgetDay, CallBudget, MemoryLlmBudgetStore } from "../../core/llm/budget.js";
import { createFakeLlm } from "../../core/llm/fake.js";
import { LlmError } from "../../core/llm/types.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteLlmBudgetStore } from "../../stores/sqlite/llm-budget.js";
import { tempDir } from "../helpers/tmp.js";

const T0 = Date.UTC(2026, 10, 30, 23, 59, 0);
const DAY = 24 * 3600 * 1000;

async function code(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => "ok",
    (e: unknown) => (e instanceof LlmError ? e.code : `not an LlmError: ${String(e)}`),
  );
}

describe("daily call budget", () => {
  it("stops calls once the day's budget is spent and renews it the next UTC day", async () => {
    const clock = fixedClock(T0);
    const budget = new CallBudget(new MemoryLlmBudgetStore(), 2, clock);
    const llm = createFakeLlm({ op: "x" }, { budget });
    expect(await code(llm.complete({ op: "op", prompt: "1" }))).toBe("ok");
    expect(await code(llm.complete({ op: "op", prompt: "2" }))).toBe("ok");
    expect(await budget.remaining()).toBe(0);
    expect(await code(llm.complete({ op: "op", prompt: "3" }))).toBe("budget_exhausted");
    // the refused call never reached the model
    expect(llm.calls).toHaveLength(2);
    clock.advance(60_000); // 00:00 UTC next day
    expect(budgetDay(clock.now())).toBe("2026-12-01");
    expect(await budget.remaining()).toBe(2);
    expect(await code(llm.complete({ op: "op", prompt: "4" }))).toBe("ok");
  });

  it("counts the repair retry as a call", async () => {
    const budget = new CallBudget(new MemoryLlmBudgetStore(), 1, fixedClock(T0));
    const llm = createFakeLlm({ judge: ["no json", '{"ok":true}'] }, { budget });
    expect(await code(llm.complete({ op: "judge", prompt: "?", schema: z.object({ ok: z.boolean() }) }))).toBe(
      "budget_exhausted",
    );
    expect(llm.calls).toHaveLength(1);
  });

  it("a zero budget refuses every call", async () => {
    const llm = createFakeLlm({ op: "x" }, { budget: new CallBudget(new MemoryLlmBudgetStore(), 0, fixedClock(T0)) });
    expect(await code(llm.complete({ op: "op", prompt: "1" }))).toBe("budget_exhausted");
  });

  it("persists the counter in SQLite, shared by two handles on one file", async () => {
    const file = join(tempDir("imem-llm-"), "memory.db");
    const db1 = openDatabase(file, { targetVersion: 7 });
    const db2 = openDatabase(file, { targetVersion: 7 });
    try {
      const s1 = new SqliteLlmBudgetStore(db1);
      const s2 = new SqliteLlmBudgetStore(db2);
      expect(s1.tryTake("2026-11-30", 3)).toBe(true);
      expect(s2.tryTake("2026-11-30", 3)).toBe(true);
      expect(s1.tryTake("2026-11-30", 3)).toBe(true);
      expect(s2.tryTake("2026-11-30", 3)).toBe(false);
      expect(s1.used("2026-11-30")).toBe(3);
      expect(s2.used("2026-12-01")).toBe(0);
      expect(s2.tryTake("2026-12-01", 3)).toBe(true);
      expect(s1.tryTake("2026-12-02", 0)).toBe(false);
      expect(s1.used("2026-12-02")).toBe(0);

      const clock = fixedClock(T0 + DAY);
      const budget = new CallBudget(s1, 1, clock);
      const llm = createFakeLlm({ op: "x" }, { budget });
      expect(await code(llm.complete({ op: "op", prompt: "1" }))).toBe("budget_exhausted"); // 2026-12-01 already has 1
      clock.advance(DAY);
      expect(await code(llm.complete({ op: "op", prompt: "2" }))).toBe("ok");
    } finally {
      db1.close();
      db2.close();
    }
  });
});

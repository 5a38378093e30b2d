// Bulk seeding of memories for benchmarks and large-store tests: the policy-free store path, one
// commit per batch (store.insert runs its SQL synchronously, so an outer transaction turns each
// record's own transaction into a savepoint).
import { newId } from "../core/ids.js";
import type { MemoryKind, NewMemory, ScopeLevel } from "../core/memory/record.js";
import { recordScopeFor, type RequestScope } from "../core/memory/scope.js";
import { contentHash } from "../core/memory/write-policy.js";
import type { MemoryContext } from "../cli/context.js";

export interface SeedItem {
  scope: RequestScope;
  level: ScopeLevel;
  kind: MemoryKind;
  content: string;
  at: number;
}

export function seedRecord(item: SeedItem, i: number): NewMemory {
  const id = newId("mem", item.at);
  return {
    id,
    lineageId: id,
    scope: recordScopeFor(item.scope, item.level),
    kind: item.kind,
    content: item.content,
    tags: [],
    trust: "model_inferred",
    confidence: 0.7,
    status: "active",
    flags: [],
    version: 1,
    supersedes: null,
    validFrom: null,
    validTo: null,
    createdAt: item.at,
    expiresAt: null,
    contentHash: contentHash(item.content),
    source: { threadId: item.scope.thread, messageIds: [], toolCallId: `seed-${i}`, actor: "model", at: item.at },
  };
}

/** Insert `n` memories made by `make(i)`, `batch` per commit. */
export async function seedMemories(ctx: Pick<MemoryContext, "db" | "store">, n: number, make: (i: number) => SeedItem, batch = 5000): Promise<void> {
  for (let start = 0; start < n; start += batch) {
    const pending: Promise<unknown>[] = [];
    ctx.db.transaction(() => {
      for (let i = start; i < Math.min(n, start + batch); i++) {
        const rec = seedRecord(make(i), i);
        pending.push(ctx.store.insert(rec, { at: rec.createdAt, actor: "seed", action: "create", targetKind: "memory", targetId: rec.id, detail: {} }));
      }
    }).immediate();
    await Promise.all(pending);
  }
}

// Bulk seeding of memories for benchmarks and large-store tests: the policy-free store path, one
// commit per batch.
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

/**
 * Insert `n` memories made by `make(i)`, `batch` per commit, through the store's batched path
 * (MemoryStore.insertMany: no write policy, content already stored under the same scope skipped).
 */
export async function seedMemories(ctx: Pick<MemoryContext, "store">, n: number, make: (i: number) => SeedItem, batch = 5000): Promise<void> {
  for (let start = 0; start < n; start += batch) {
    const items = [];
    for (let i = start; i < Math.min(n, start + batch); i++) {
      const rec = seedRecord(make(i), i);
      items.push({ rec, audit: { at: rec.createdAt, actor: "seed", action: "create" as const, targetKind: "memory" as const, targetId: rec.id, detail: {} } });
    }
    await ctx.store.insertMany(items);
  }
}

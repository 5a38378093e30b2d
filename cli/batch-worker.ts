// Worker thread of BatchWriter: runs the pure write policy (prepareBatch) on its own core.
import { parentPort } from "node:worker_threads";
import { prepareBatch, type BatchRememberItem } from "../core/memory/batch.js";
import type { MemoryConfig } from "../core/config.js";

parentPort!.on("message", (m: { id: number; items: BatchRememberItem[]; config: Pick<MemoryConfig, "write">; now: number }) => {
  try {
    parentPort!.postMessage({ id: m.id, prepared: prepareBatch(m.items, m.config, m.now) });
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) });
  }
});

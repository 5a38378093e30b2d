// `infinity-memory memory reindex --vectors`: embeds every live memory that has no vector yet
// (after the embedder was switched on or changed, or an embedding failed), with a progress bar.
import cliProgress from "cli-progress";
import type { AnyMemoryContext, MemoryContext } from "../context.js";
import type { PostgresBackend } from "../../stores/postgres/backend.js";

const NO_EMBEDDER = `no embedder configured: set "embedder": { "kind": "hashing" | "openai" | "onnx", … } in config.json`;

export async function reindexVectors(ctx: MemoryContext, opts: { batch: number; json?: boolean }): Promise<void> {
  const ch = ctx.store.vectors;
  if (!ch || ctx.config.embedder.kind === "none") throw new Error(NO_EMBEDDER);
  const ready = await ch.whenReady();
  if (!ready) throw new Error(`the embedder could not be loaded: ${ch.lastError ?? "unknown error"}`);
  const bar =
    process.stderr.isTTY && !opts.json
      ? new cliProgress.SingleBar({ format: `vectors [{bar}] {value}/{total} memories` }, cliProgress.Presets.shades_classic)
      : null;
  const t0 = performance.now();
  let started = false;
  let r: Awaited<ReturnType<typeof ch.backfill>>;
  try {
    r = await ch.backfill(opts.batch, (done, total) => {
      if (!bar) return;
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.update(done);
    });
  } finally {
    bar?.stop();
  }
  const ms = Math.round(performance.now() - t0);
  const summary = {
    embedder: ready.embedder.id,
    dimensions: ready.embedder.dimensions,
    embedded: r.embedded,
    ...(r.skipped ? { skipped: r.skipped, reason: r.reason } : {}),
    vectors: ch.count(),
    ms,
  };
  const skipped = r.skipped ? `; ${r.skipped} left without a vector: ${r.reason}` : "";
  process.stdout.write(
    opts.json ? `${JSON.stringify(summary)}\n` : `embedded ${r.embedded} memories with ${summary.embedder} in ${ms} ms (${summary.vectors} vectors stored${skipped})\n`,
  );
}

/** The same on PostgreSQL: the pgvector table of the configured embedder (stores/postgres/memory-store.ts). */
export async function reindexVectorsPg(ctx: AnyMemoryContext, opts: { batch: number; json?: boolean }): Promise<void> {
  const store = (ctx.backend as PostgresBackend).memory;
  const embedder = store.vectorEmbedder();
  if (!embedder || ctx.config.embedder.kind === "none") throw new Error(NO_EMBEDDER);
  const status = store.vectorStatus();
  if (!status.enabled) throw new Error(status.reason);
  const t0 = performance.now();
  const r = await store.backfillVectors(opts.batch);
  const ms = Math.round(performance.now() - t0);
  const summary = { embedder: embedder.id, dimensions: embedder.dimensions, embedded: r.embedded, ...(r.skipped ? { skipped: r.skipped, reason: r.reason } : {}), ms };
  const skipped = r.skipped ? `; ${r.skipped} left without a vector: ${r.reason}` : "";
  process.stdout.write(opts.json ? `${JSON.stringify(summary)}\n` : `embedded ${r.embedded} memories with ${embedder.id} in ${ms} ms (pgvector${skipped})\n`);
}

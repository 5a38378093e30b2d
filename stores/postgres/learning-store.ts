// PostgreSQL store of the learning loop: episodes with steps and message edges, reward signals,
// task feedback, candidates, the shared work queue, read cursors and worker events. The queue is
// claimed with FOR UPDATE SKIP LOCKED plus a lease, so across every server sharing the database
// each queued thread is processed by one worker at a time.
import type { Pool, PoolClient } from "pg";
import {
  FORGOTTEN_EPISODE_HASH,
  type CandidateDisposition,
  type EpisodeDraft,
  type EpisodeSource,
  type LearningEvent,
  type QueueItem,
  type RewardSignal,
  type ScoredStep,
  type SignalKind,
  type StoredEpisode,
  type StoredSignal,
  type TaskFeedback,
} from "../../core/learning/types.js";
import type { DroppedThread, LearningStore, MessageRef, ThreadSkip } from "../traits.js";
import { inTx, num, numOrNull, parseJson, POSTGRES_FLAVOR, retryIdClash, type PgFlavor } from "./rows.js";

interface EpisodeRow {
  id: string;
  source: EpisodeSource;
  thread_id: string;
  root_thread_id: string;
  start_ord: number;
  end_ord: number;
  state: StoredEpisode["state"];
  task: string;
  final_excerpt: string | null;
  reward: number | null;
  grounded: number;
  suppressed: number;
  candidates_done: number;
  content_hash: string;
  created_at: string | number;
  updated_at: string | number;
}

function toEpisode(r: EpisodeRow): StoredEpisode {
  return {
    id: r.id,
    source: r.source,
    threadId: r.thread_id,
    rootThreadId: r.root_thread_id,
    startOrd: r.start_ord,
    endOrd: r.end_ord,
    state: r.state,
    task: r.task,
    finalExcerpt: r.final_excerpt,
    reward: r.reward,
    grounded: r.grounded === 1,
    suppressed: r.suppressed === 1,
    candidatesDone: r.candidates_done === 1,
    contentHash: r.content_hash,
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

interface DroppedRow {
  source: string;
  thread_id: string;
  root_thread_id: string;
  format: string;
  drops: string | number;
  retry_at: string | number;
  reason: string;
}

interface SkipRow {
  thread_id: string;
  skipped_from: string | number;
  skipped_format: string;
}

export class PgLearningStore implements LearningStore {
  constructor(
    private readonly pool: Pool,
    private readonly f: PgFlavor = POSTGRES_FLAVOR,
  ) {}

  /** DSQL runs every transaction optimistically: retry on conflict */
  private get txOpts() {
    return { serializable: this.f.dsql };
  }

  /** the signal insert (with a store-made id on DSQL) and its parameters */
  private signal(episodeId: string, s: RewardSignal): [string, unknown[]] {
    const args = [episodeId, s.kind, s.source, s.value, s.weight, s.note, s.dedupKey, s.at];
    if (this.f.dsql) {
      return [
        `INSERT INTO learning_signals (episode_id, kind, source, value, weight, note, dedup_key, at, id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (dedup_key) DO NOTHING`,
        [...args, this.f.ids.next()],
      ];
    }
    return [
      `INSERT INTO learning_signals (episode_id, kind, source, value, weight, note, dedup_key, at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (dedup_key) DO NOTHING`,
      args,
    ];
  }

  async upsertEpisode(draft: EpisodeDraft, derived: RewardSignal[], derivedKinds: SignalKind[], newId: string, at: number) {
    return inTx(this.pool, async (c) => {
      // Insert-or-nothing first, so two servers building the same episode meet on the unique key
      // and the loser then locks and compares the winner's row.
      const ins = await c.query(
        `INSERT INTO learning_episodes (id, source, thread_id, root_thread_id, start_ord, end_ord, state, task, final_excerpt,
           content_hash, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
         ON CONFLICT (source, thread_id, start_ord) DO NOTHING`,
        [newId, draft.source, draft.threadId, draft.rootThreadId, draft.startOrd, draft.endOrd, draft.state, draft.task, draft.finalExcerpt, draft.contentHash, at],
      );
      const created = ins.rowCount === 1;
      let id = newId;
      let changed = true;
      if (!created) {
        const ex = (
          await c.query<EpisodeRow>(`SELECT * FROM learning_episodes WHERE source = $1 AND thread_id = $2 AND start_ord = $3 FOR UPDATE`, [
            draft.source,
            draft.threadId,
            draft.startOrd,
          ])
        ).rows[0]!;
        id = ex.id;
        // a forgotten episode stays blank, whatever its thread says now
        changed = ex.content_hash !== draft.contentHash && ex.content_hash !== FORGOTTEN_EPISODE_HASH;
        if (changed) {
          await c.query(
            `UPDATE learning_episodes SET end_ord = $2, state = $3, task = $4, final_excerpt = $5, content_hash = $6, updated_at = $7 WHERE id = $1`,
            [id, draft.endOrd, draft.state, draft.task, draft.finalExcerpt, draft.contentHash, at],
          );
        }
      }
      if (changed) await this.replaceParts(c, id, draft, derived, derivedKinds);
      const row = (await c.query<EpisodeRow>(`SELECT * FROM learning_episodes WHERE id = $1`, [id])).rows[0]!;
      return { episode: toEpisode(row), changed, created };
    }, this.txOpts);
  }

  private async replaceParts(c: PoolClient, id: string, draft: EpisodeDraft, derived: RewardSignal[], kinds: SignalKind[]) {
    await c.query(`DELETE FROM learning_steps WHERE episode_id = $1`, [id]);
    for (const st of draft.steps) {
      await c.query(
        `INSERT INTO learning_steps (episode_id, idx, ord, tool, call_id, args_digest, args_shape, outcome, verdict, excerpt, latency_ms, alpha, value)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0, NULL)`,
        [id, st.idx, st.ord, st.tool, st.callId, st.argsDigest, st.argsShape, st.outcome, st.verdict, st.excerpt, st.latencyMs],
      );
    }
    await c.query(`DELETE FROM learning_episode_messages WHERE episode_id = $1`, [id]);
    for (const m of draft.messages) {
      await c.query(
        `INSERT INTO learning_episode_messages (episode_id, ord, message_id, role) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
        [id, m.ord, m.messageId, m.role],
      );
    }
    if (kinds.length > 0) await c.query(`DELETE FROM learning_signals WHERE episode_id = $1 AND kind = ANY($2::text[])`, [id, kinds]);
    for (const sig of derived) await c.query(...this.signal(id, sig));
  }

  async episode(id: string): Promise<StoredEpisode | null> {
    const r = (await this.pool.query<EpisodeRow>(`SELECT * FROM learning_episodes WHERE id = $1`, [id])).rows[0];
    return r ? toEpisode(r) : null;
  }

  async episodesOfThread(source: EpisodeSource, threadId: string): Promise<StoredEpisode[]> {
    const r = await this.pool.query<EpisodeRow>(`SELECT * FROM learning_episodes WHERE source = $1 AND thread_id = $2 ORDER BY start_ord`, [source, threadId]);
    return r.rows.map(toEpisode);
  }

  async resumeOrd(source: EpisodeSource, threadId: string): Promise<number | null> {
    const r = await this.pool.query<{ s: number | null }>(
      `SELECT min(s) AS s FROM (
         SELECT max(start_ord) AS s FROM learning_episodes WHERE source = $1 AND thread_id = $2
         UNION ALL
         SELECT min(start_ord) FROM learning_episodes
         WHERE source = $1 AND thread_id = $2 AND candidates_done = 0 AND state <> 'open') AS x`,
      [source, threadId],
    );
    return numOrNull(r.rows[0]!.s);
  }

  async stepsOf(episodeId: string): Promise<ScoredStep[]> {
    const r = await this.pool.query(`SELECT * FROM learning_steps WHERE episode_id = $1 ORDER BY idx`, [episodeId]);
    return r.rows.map((x) => ({
      idx: x.idx,
      ord: x.ord,
      tool: x.tool,
      callId: x.call_id,
      argsDigest: x.args_digest,
      argsShape: x.args_shape,
      outcome: x.outcome,
      verdict: x.verdict,
      excerpt: x.excerpt,
      latencyMs: x.latency_ms,
      alpha: x.alpha,
      value: x.value,
    }));
  }

  async episodeOfCall(threadId: string, callId: string): Promise<StoredEpisode | null> {
    const r = await this.pool.query<EpisodeRow>(
      `SELECT e.* FROM learning_steps s JOIN learning_episodes e ON e.id = s.episode_id
       WHERE e.thread_id = $1 AND s.call_id = $2 ORDER BY e.start_ord DESC LIMIT 1`,
      [threadId, callId],
    );
    return r.rows[0] ? toEpisode(r.rows[0]) : null;
  }

  async addSignal(episodeId: string, signal: RewardSignal): Promise<boolean> {
    return (await retryIdClash(() => this.pool.query(...this.signal(episodeId, signal)))).rowCount === 1;
  }

  async signalsOf(episodeId: string): Promise<StoredSignal[]> {
    const r = await this.pool.query(`SELECT * FROM learning_signals WHERE episode_id = $1 ORDER BY id`, [episodeId]);
    return r.rows.map((x) => ({
      id: num(x.id),
      episodeId: x.episode_id,
      kind: x.kind,
      source: x.source,
      value: x.value,
      weight: x.weight,
      note: x.note,
      dedupKey: x.dedup_key,
      at: num(x.at),
    }));
  }

  async setScores(episodeId: string, reward: number | null, grounded: boolean, steps: { idx: number; alpha: number; value: number | null }[], at: number) {
    await inTx(this.pool, async (c) => {
      await c.query(`UPDATE learning_episodes SET reward = $1, grounded = $2, updated_at = $3 WHERE id = $4`, [reward, grounded ? 1 : 0, at, episodeId]);
      if (steps.length > 0 && this.f.dsql) {
        for (const st of steps) await c.query(`UPDATE learning_steps SET alpha = $1, value = $2 WHERE episode_id = $3 AND idx = $4`, [st.alpha, st.value, episodeId, st.idx]);
      } else if (steps.length > 0) {
        await c.query(
          `UPDATE learning_steps s SET alpha = u.alpha, value = u.value
           FROM unnest($2::int[], $3::float8[], $4::float8[]) AS u(idx, alpha, value)
           WHERE s.episode_id = $1 AND s.idx = u.idx`,
          [episodeId, steps.map((s) => s.idx), steps.map((s) => s.alpha), steps.map((s) => s.value)],
        );
      }
    }, this.txOpts);
  }

  async setSuppressed(episodeId: string, at: number) {
    await this.pool.query(`UPDATE learning_episodes SET suppressed = 1, updated_at = $1 WHERE id = $2`, [at, episodeId]);
  }

  async markCandidatesDone(episodeId: string, at: number) {
    await this.pool.query(`UPDATE learning_episodes SET candidates_done = 1, updated_at = $1 WHERE id = $2`, [at, episodeId]);
  }

  async addCandidate(episodeId: string, memoryId: string, disposition: CandidateDisposition, at: number) {
    await this.pool.query(
      `INSERT INTO learning_candidates (episode_id, memory_id, disposition, at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (episode_id, memory_id) DO UPDATE SET disposition = excluded.disposition, at = excluded.at`,
      [episodeId, memoryId, disposition, at],
    );
  }

  async candidatesOf(episodeId: string) {
    const r = await this.pool.query<{ memory_id: string; disposition: CandidateDisposition }>(
      `SELECT memory_id, disposition FROM learning_candidates WHERE episode_id = $1 ORDER BY at, memory_id`,
      [episodeId],
    );
    return r.rows.map((x) => ({ memoryId: x.memory_id, disposition: x.disposition }));
  }

  async addRejected(visKey: string, fingerprints: string[], at: number) {
    if (fingerprints.length === 0) return;
    await this.pool.query(
      `INSERT INTO learning_rejected (vis_key, fingerprint, at) SELECT $1, f, $3 FROM unnest($2::text[]) AS f
       ON CONFLICT (vis_key, fingerprint) DO NOTHING`,
      [visKey, [...new Set(fingerprints)], at],
    );
  }

  async isRejected(visKey: string, fingerprint: string): Promise<boolean> {
    return (await this.pool.query(`SELECT 1 FROM learning_rejected WHERE vis_key = $1 AND fingerprint = $2`, [visKey, fingerprint])).rows.length > 0;
  }

  async proposedAmong(memoryIds: string[]): Promise<Set<string>> {
    if (memoryIds.length === 0) return new Set();
    const r = await this.pool.query<{ memory_id: string }>(`SELECT DISTINCT memory_id FROM learning_candidates WHERE memory_id = ANY($1::text[])`, [memoryIds]);
    return new Set(r.rows.map((x) => x.memory_id));
  }

  async episodesMentioning(probes: string[]) {
    const r = await this.pool.query<{ episode_id: string; root_thread_id: string; text: string }>(
      `SELECT m.episode_id, e.root_thread_id, m.text FROM (
         SELECT id AS episode_id, task AS text FROM learning_episodes
         UNION ALL SELECT id, final_excerpt FROM learning_episodes
         UNION ALL SELECT episode_id, excerpt FROM learning_steps
         UNION ALL SELECT episode_id, args_shape FROM learning_steps
         UNION ALL SELECT episode_id, note FROM learning_signals
         UNION ALL SELECT episode_id, note FROM learning_feedback WHERE episode_id IS NOT NULL
       ) AS m JOIN learning_episodes e ON e.id = m.episode_id
       WHERE m.text IS NOT NULL AND EXISTS (SELECT 1 FROM unnest($1::text[]) AS p WHERE strpos(lower(m.text), p) > 0)`,
      [probes],
    );
    const byId = new Map<string, { id: string; rootThreadId: string; texts: string[] }>();
    for (const x of r.rows) {
      let e = byId.get(x.episode_id);
      if (!e) byId.set(x.episode_id, (e = { id: x.episode_id, rootThreadId: x.root_thread_id, texts: [] }));
      e.texts.push(x.text);
    }
    return [...byId.values()];
  }

  async forgetEpisodes(ids: string[], at: number) {
    await inTx(this.pool, async (c) => {
      await c.query(
        `UPDATE learning_episodes SET task = '', final_excerpt = NULL, content_hash = $3, suppressed = 1, candidates_done = 1,
           updated_at = $2 WHERE id = ANY($1::text[])`,
        [ids, at, FORGOTTEN_EPISODE_HASH],
      );
      await c.query(`DELETE FROM learning_steps WHERE episode_id = ANY($1::text[])`, [ids]);
      await c.query(`UPDATE learning_signals SET note = NULL WHERE episode_id = ANY($1::text[])`, [ids]);
      await c.query(`UPDATE learning_feedback SET note = NULL WHERE episode_id = ANY($1::text[])`, [ids]);
    }, this.txOpts);
  }

  async forgottenEpisodeMessages(source: EpisodeSource, threadId: string): Promise<Set<string>> {
    const r = await this.pool.query<{ message_id: string }>(
      `SELECT DISTINCT m.message_id FROM learning_episodes e JOIN learning_episode_messages m ON m.episode_id = e.id
       WHERE e.source = $1 AND e.thread_id = $2 AND e.content_hash = $3`,
      [source, threadId, FORGOTTEN_EPISODE_HASH],
    );
    return new Set(r.rows.map((x) => x.message_id));
  }

  async episodesOfMessages(refs: MessageRef[], opts: { withForgotten?: boolean } = {}) {
    if (refs.length === 0) return [];
    const r = await this.pool.query<{ id: string; root_thread_id: string }>(
      `SELECT DISTINCT e.id, e.root_thread_id FROM learning_episode_messages m
         JOIN learning_episodes e ON e.id = m.episode_id
         JOIN unnest($1::text[], $2::text[]) AS r (thread_id, message_id) ON e.thread_id = r.thread_id AND m.message_id = r.message_id
       WHERE e.content_hash <> $3`,
      // (no content hash is the empty string: with it, forgotten episodes are found too)
      [refs.map((x) => x.threadId), refs.map((x) => x.messageId), opts.withForgotten ? "" : FORGOTTEN_EPISODE_HASH],
    );
    return r.rows.map((x) => ({ id: x.id, rootThreadId: x.root_thread_id }));
  }

  async recordFeedback(fb: TaskFeedback): Promise<boolean> {
    const r = await this.pool.query(
      `INSERT INTO learning_feedback (thread_id, call_id, episode_id, rating, note, at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (thread_id, call_id) DO NOTHING`,
      [fb.threadId, fb.callId, fb.episodeId, fb.rating, fb.note, fb.at],
    );
    return r.rowCount === 1;
  }

  async unresolvedFeedback(threadId: string): Promise<TaskFeedback[]> {
    const r = await this.pool.query(`SELECT * FROM learning_feedback WHERE thread_id = $1 AND episode_id IS NULL ORDER BY at, call_id`, [threadId]);
    return r.rows.map((x) => ({ threadId: x.thread_id, callId: x.call_id, episodeId: x.episode_id, rating: x.rating, note: x.note, at: num(x.at) }));
  }

  async resolveFeedback(threadId: string, callId: string, episodeId: string) {
    await this.pool.query(`UPDATE learning_feedback SET episode_id = $1 WHERE thread_id = $2 AND call_id = $3`, [episodeId, threadId, callId]);
  }

  async enqueue(source: EpisodeSource, threadId: string, rootThreadId: string, at: number) {
    await this.pool.query(
      `INSERT INTO learning_queue (source, thread_id, root_thread_id, enqueued_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (source, thread_id) DO UPDATE SET enqueued_at = greatest(learning_queue.enqueued_at, excluded.enqueued_at)`,
      [source, threadId, rootThreadId, at],
    );
  }

  async claim(now: number, leaseMs: number, limit: number): Promise<QueueItem[]> {
    type Claimed = { source: EpisodeSource; thread_id: string; root_thread_id: string; attempts: number; enqueued_at: string };
    const due = (limit: string) => `SELECT source, thread_id FROM learning_queue
         WHERE lease_until IS NULL OR lease_until <= $1
         ORDER BY enqueued_at, thread_id
         LIMIT ${limit}`;
    const returning = `RETURNING q.source, q.thread_id, q.root_thread_id, q.attempts, q.enqueued_at`;
    const rows = this.f.dsql
      ? // no SKIP LOCKED on DSQL: concurrent claims of one row conflict at commit; the loser
        // retries and then sees the lease
        await inTx(
          this.pool,
          async (c) => {
            const keys = (await c.query<{ source: string; thread_id: string }>(due("$2"), [now, limit])).rows;
            const out: Claimed[] = [];
            for (const k of keys) {
              const r = await c.query<Claimed>(
                `UPDATE learning_queue q SET lease_until = $2 WHERE q.source = $3 AND q.thread_id = $4
                   AND (q.lease_until IS NULL OR q.lease_until <= $1) ${returning}`,
                [now, now + leaseMs, k.source, k.thread_id],
              );
              out.push(...r.rows);
            }
            return out;
          },
          { serializable: true },
        )
      : (
          await this.pool.query<Claimed>(
            `WITH due AS (${due("$3")} FOR UPDATE SKIP LOCKED)
             UPDATE learning_queue q SET lease_until = $2 FROM due
             WHERE q.source = due.source AND q.thread_id = due.thread_id
             ${returning}`,
            [now, now + leaseMs, limit],
          )
        ).rows;
    return rows
      .sort((a, b) => num(a.enqueued_at) - num(b.enqueued_at) || (a.thread_id < b.thread_id ? -1 : a.thread_id > b.thread_id ? 1 : 0))
      .map((x) => ({ source: x.source, threadId: x.thread_id, rootThreadId: x.root_thread_id, attempts: x.attempts }));
  }

  async complete(source: EpisodeSource, threadId: string, claimedAt: number) {
    await inTx(this.pool, async (c) => {
      const d = await c.query(`DELETE FROM learning_queue WHERE source = $1 AND thread_id = $2 AND enqueued_at <= $3`, [source, threadId, claimedAt]);
      // Enqueued again while it was being processed: keep it, free for the next pass.
      if (d.rowCount === 0) {
        await c.query(`UPDATE learning_queue SET lease_until = NULL, attempts = 0, last_error = NULL WHERE source = $1 AND thread_id = $2`, [source, threadId]);
      }
    }, this.txOpts);
  }

  async fail(source: EpisodeSource, threadId: string, error: string, maxAttempts: number, retryAt: number): Promise<boolean> {
    return inTx(this.pool, async (c) => {
      const row = (await c.query<{ attempts: number }>(`SELECT attempts FROM learning_queue WHERE source = $1 AND thread_id = $2 FOR UPDATE`, [source, threadId])).rows[0];
      if (!row) return false;
      const attempts = row.attempts + 1;
      if (attempts >= maxAttempts) {
        await c.query(`DELETE FROM learning_queue WHERE source = $1 AND thread_id = $2`, [source, threadId]);
        return true;
      }
      await c.query(`UPDATE learning_queue SET attempts = $1, last_error = $2, lease_until = $3 WHERE source = $4 AND thread_id = $5`, [
        attempts,
        error.slice(0, 500),
        retryAt,
        source,
        threadId,
      ]);
      return false;
    }, this.txOpts);
  }

  async queueDepth(): Promise<number> {
    return num((await this.pool.query<{ n: string }>(`SELECT count(*) AS n FROM learning_queue`)).rows[0]!.n);
  }

  async cursor(source: string, key: string): Promise<number> {
    const r = await this.pool.query<{ position: string }>(`SELECT position FROM learning_cursors WHERE source = $1 AND key = $2`, [source, key]);
    return r.rows[0] ? num(r.rows[0].position) : 0;
  }

  async setCursor(source: string, key: string, position: number) {
    await this.pool.query(
      `INSERT INTO learning_cursors (source, key, position) VALUES ($1, $2, $3)
       ON CONFLICT (source, key) DO UPDATE SET position = excluded.position`,
      [source, key, position],
    );
  }

  async skipped(source: EpisodeSource, threadId: string): Promise<ThreadSkip | null> {
    const r = (await this.pool.query<SkipRow>(`SELECT thread_id, skipped_from, skipped_format FROM learning_skips WHERE source = $1 AND thread_id = $2`, [source, threadId])).rows[0];
    return r ? { from: num(r.skipped_from), format: r.skipped_format } : null;
  }

  async skippedThreads(source: EpisodeSource): Promise<({ threadId: string } & ThreadSkip)[]> {
    const r = await this.pool.query<SkipRow>(`SELECT thread_id, skipped_from, skipped_format FROM learning_skips WHERE source = $1 ORDER BY thread_id`, [source]);
    return r.rows.map((x) => ({ threadId: x.thread_id, from: num(x.skipped_from), format: x.skipped_format }));
  }

  async setSkipped(source: EpisodeSource, threadId: string, skip: ThreadSkip | null) {
    if (!skip) {
      await this.pool.query(`DELETE FROM learning_skips WHERE source = $1 AND thread_id = $2`, [source, threadId]);
      return;
    }
    await this.pool.query(
      `INSERT INTO learning_skips (source, thread_id, skipped_from, skipped_format) VALUES ($1, $2, $3, $4)
       ON CONFLICT (source, thread_id) DO UPDATE SET skipped_from = excluded.skipped_from, skipped_format = excluded.skipped_format`,
      [source, threadId, skip.from, skip.format],
    );
  }

  async droppedThreads(): Promise<DroppedThread[]> {
    const r = await this.pool.query<DroppedRow>(
      `SELECT source, thread_id, root_thread_id, format, drops, retry_at, reason FROM learning_dropped ORDER BY source, thread_id`,
    );
    return r.rows.map((x) => ({
      source: x.source as EpisodeSource,
      threadId: x.thread_id,
      rootThreadId: x.root_thread_id,
      format: x.format,
      drops: num(x.drops),
      retryAt: num(x.retry_at),
      reason: x.reason,
    }));
  }

  async setDropped(source: EpisodeSource, threadId: string, d: Omit<DroppedThread, "source" | "threadId"> | null) {
    if (!d) {
      await this.pool.query(`DELETE FROM learning_dropped WHERE source = $1 AND thread_id = $2`, [source, threadId]);
      return;
    }
    await this.pool.query(
      `INSERT INTO learning_dropped (source, thread_id, root_thread_id, format, drops, retry_at, reason) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (source, thread_id) DO UPDATE SET root_thread_id = excluded.root_thread_id, format = excluded.format,
         drops = excluded.drops, retry_at = excluded.retry_at, reason = excluded.reason`,
      [source, threadId, d.rootThreadId, d.format, d.drops, d.retryAt, d.reason.slice(0, 500)],
    );
  }

  async event(kind: string, threadId: string | null, episodeId: string | null, detail: Record<string, unknown>, at: number) {
    const args = [at, kind, threadId, episodeId, JSON.stringify(detail)];
    if (this.f.dsql) await retryIdClash(() => this.pool.query(`INSERT INTO learning_events (at, kind, thread_id, episode_id, detail, id) VALUES ($1, $2, $3, $4, $5, $6)`, [...args, this.f.ids.next()]));
    else await this.pool.query(`INSERT INTO learning_events (at, kind, thread_id, episode_id, detail) VALUES ($1, $2, $3, $4, $5)`, args);
  }

  async events(opts: { kind?: string; limit?: number } = {}): Promise<LearningEvent[]> {
    const limit = opts.limit ?? 100;
    const r = opts.kind
      ? await this.pool.query(`SELECT * FROM learning_events WHERE kind = $1 ORDER BY id DESC LIMIT $2`, [opts.kind, limit])
      : await this.pool.query(`SELECT * FROM learning_events ORDER BY id DESC LIMIT $1`, [limit]);
    return r.rows.map((x) => ({
      id: num(x.id),
      at: num(x.at),
      kind: x.kind,
      threadId: x.thread_id,
      episodeId: x.episode_id,
      detail: parseJson<Record<string, unknown>>(x.detail),
    }));
  }
}

// SQLite store of the learning loop (migration 8): episodes with their steps and message edges,
// reward signals, task feedback, proposed candidates (and the fingerprints of rejected ones,
// migration 27), the on-disk work queue, read cursors and worker events. Every multi-row change is one transaction.
import type Database from "better-sqlite3";
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
import type { Db } from "./database.js";

/** rows per page of a forget's scan (a few milliseconds of reading) */
const SCAN_PAGE = 4000;

const giveWay = () => new Promise<void>((r) => setImmediate(r));

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
  created_at: number;
  updated_at: number;
}

interface StepRow {
  idx: number;
  ord: number;
  tool: string;
  call_id: string | null;
  args_digest: string;
  args_shape: string;
  outcome: ScoredStep["outcome"];
  verdict: ScoredStep["verdict"];
  excerpt: string;
  latency_ms: number | null;
  alpha: number;
  value: number | null;
}

interface SignalRow {
  id: number;
  episode_id: string;
  kind: SignalKind;
  source: string;
  value: number;
  weight: number;
  note: string | null;
  dedup_key: string;
  at: number;
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
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

interface DroppedRow {
  source: string;
  thread_id: string;
  root_thread_id: string;
  format: string;
  drops: number;
  retry_at: number;
  reason: string;
}

interface SkipRow {
  thread_id: string;
  skipped_from: number;
  skipped_format: string;
}

export class SqliteLearningStore implements LearningStore {
  private readonly s: Record<string, Database.Statement>;
  private readonly upsertTx: Database.Transaction<
    (draft: EpisodeDraft, derived: RewardSignal[], kinds: SignalKind[], newId: string, at: number) => { episode: StoredEpisode; changed: boolean; created: boolean }
  >;

  constructor(private readonly db: Db) {
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      byKey: p(`SELECT * FROM learning_episodes WHERE source = ? AND thread_id = ? AND start_ord = ?`),
      byId: p(`SELECT * FROM learning_episodes WHERE id = ?`),
      insertEpisode: p(
        `INSERT INTO learning_episodes (id, source, thread_id, root_thread_id, start_ord, end_ord, state, task, final_excerpt,
           content_hash, created_at, updated_at)
         VALUES (@id, @source, @threadId, @rootThreadId, @startOrd, @endOrd, @state, @task, @finalExcerpt, @contentHash, @at, @at)`,
      ),
      updateEpisode: p(
        `UPDATE learning_episodes SET end_ord = @endOrd, state = @state, task = @task, final_excerpt = @finalExcerpt,
           content_hash = @contentHash, updated_at = @at WHERE id = @id`,
      ),
      deleteSteps: p(`DELETE FROM learning_steps WHERE episode_id = ?`),
      insertStep: p(
        `INSERT INTO learning_steps (episode_id, idx, ord, tool, call_id, args_digest, args_shape, outcome, verdict, excerpt, latency_ms, alpha, value)
         VALUES (@episodeId, @idx, @ord, @tool, @callId, @argsDigest, @argsShape, @outcome, @verdict, @excerpt, @latencyMs, 0, NULL)`,
      ),
      deleteMessages: p(`DELETE FROM learning_episode_messages WHERE episode_id = ?`),
      insertMessage: p(`INSERT OR IGNORE INTO learning_episode_messages (episode_id, ord, message_id, role) VALUES (?, ?, ?, ?)`),
      deleteDerived: p(`DELETE FROM learning_signals WHERE episode_id = ? AND kind = ?`),
      insertSignal: p(
        `INSERT INTO learning_signals (episode_id, kind, source, value, weight, note, dedup_key, at)
         VALUES (@episodeId, @kind, @source, @value, @weight, @note, @dedupKey, @at) ON CONFLICT (dedup_key) DO NOTHING`,
      ),
      ofThread: p(`SELECT * FROM learning_episodes WHERE source = ? AND thread_id = ? ORDER BY start_ord`),
      resume: p(
        `SELECT min(s) AS s FROM (
           SELECT max(start_ord) AS s FROM learning_episodes WHERE source = @source AND thread_id = @thread
           UNION ALL
           SELECT min(start_ord) FROM learning_episodes
           WHERE source = @source AND thread_id = @thread AND candidates_done = 0 AND state <> 'open')`,
      ),
      steps: p(`SELECT * FROM learning_steps WHERE episode_id = ? ORDER BY idx`),
      ofCall: p(
        `SELECT e.* FROM learning_steps s JOIN learning_episodes e ON e.id = s.episode_id
         WHERE e.thread_id = ? AND s.call_id = ? ORDER BY e.start_ord DESC LIMIT 1`,
      ),
      signals: p(`SELECT * FROM learning_signals WHERE episode_id = ? ORDER BY id`),
      setReward: p(`UPDATE learning_episodes SET reward = ?, grounded = ?, updated_at = ? WHERE id = ?`),
      setStep: p(`UPDATE learning_steps SET alpha = ?, value = ? WHERE episode_id = ? AND idx = ?`),
      suppress: p(`UPDATE learning_episodes SET suppressed = 1, updated_at = ? WHERE id = ?`),
      candidatesDone: p(`UPDATE learning_episodes SET candidates_done = 1, updated_at = ? WHERE id = ?`),
      addCandidate: p(
        `INSERT INTO learning_candidates (episode_id, memory_id, disposition, at) VALUES (?, ?, ?, ?)
         ON CONFLICT (episode_id, memory_id) DO UPDATE SET disposition = excluded.disposition, at = excluded.at`,
      ),
      candidates: p(`SELECT memory_id, disposition FROM learning_candidates WHERE episode_id = ? ORDER BY at, memory_id`),
      addRejected: p(`INSERT INTO learning_rejected (vis_key, fingerprint, at) VALUES (?, ?, ?) ON CONFLICT (vis_key, fingerprint) DO NOTHING`),
      isRejected: p(`SELECT 1 FROM learning_rejected WHERE vis_key = ? AND fingerprint = ?`).pluck(),
      proposed: p(`SELECT DISTINCT memory_id FROM learning_candidates WHERE memory_id IN (SELECT value FROM json_each(?))`).pluck(),
      recordFeedback: p(
        `INSERT INTO learning_feedback (thread_id, call_id, episode_id, rating, note, at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (thread_id, call_id) DO NOTHING`,
      ),
      unresolved: p(`SELECT * FROM learning_feedback WHERE thread_id = ? AND episode_id IS NULL ORDER BY at, call_id`),
      resolve: p(`UPDATE learning_feedback SET episode_id = ? WHERE thread_id = ? AND call_id = ?`),
      enqueue: p(
        `INSERT INTO learning_queue (source, thread_id, root_thread_id, enqueued_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (source, thread_id) DO UPDATE SET enqueued_at = max(enqueued_at, excluded.enqueued_at)`,
      ),
      due: p(
        `SELECT source, thread_id, root_thread_id, attempts FROM learning_queue
         WHERE lease_until IS NULL OR lease_until <= ? ORDER BY enqueued_at, thread_id LIMIT ?`,
      ),
      lease: p(`UPDATE learning_queue SET lease_until = ? WHERE source = ? AND thread_id = ?`),
      complete: p(`DELETE FROM learning_queue WHERE source = ? AND thread_id = ? AND enqueued_at <= ?`),
      release: p(`UPDATE learning_queue SET lease_until = NULL, attempts = 0, last_error = NULL WHERE source = ? AND thread_id = ?`),
      failRow: p(`SELECT attempts FROM learning_queue WHERE source = ? AND thread_id = ?`),
      failUpdate: p(`UPDATE learning_queue SET attempts = ?, last_error = ?, lease_until = ? WHERE source = ? AND thread_id = ?`),
      drop: p(`DELETE FROM learning_queue WHERE source = ? AND thread_id = ?`),
      depth: p(`SELECT count(*) AS n FROM learning_queue`),
      cursor: p(`SELECT position FROM learning_cursors WHERE source = ? AND key = ?`),
      setCursor: p(
        `INSERT INTO learning_cursors (source, key, position) VALUES (?, ?, ?)
         ON CONFLICT (source, key) DO UPDATE SET position = excluded.position`,
      ),
      skipped: p(`SELECT thread_id, skipped_from, skipped_format FROM learning_skips WHERE source = ? AND thread_id = ?`),
      skippedThreads: p(`SELECT thread_id, skipped_from, skipped_format FROM learning_skips WHERE source = ? ORDER BY thread_id`),
      setSkipped: p(
        `INSERT INTO learning_skips (source, thread_id, skipped_from, skipped_format) VALUES (?, ?, ?, ?)
         ON CONFLICT (source, thread_id) DO UPDATE SET skipped_from = excluded.skipped_from, skipped_format = excluded.skipped_format`,
      ),
      dropped: p(`SELECT source, thread_id, root_thread_id, format, drops, retry_at, reason FROM learning_dropped ORDER BY source, thread_id`),
      setDropped: p(
        `INSERT INTO learning_dropped (source, thread_id, root_thread_id, format, drops, retry_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (source, thread_id) DO UPDATE SET root_thread_id = excluded.root_thread_id, format = excluded.format,
           drops = excluded.drops, retry_at = excluded.retry_at, reason = excluded.reason`,
      ),
      clearDropped: p(`DELETE FROM learning_dropped WHERE source = ? AND thread_id = ?`),
      clearSkipped: p(`DELETE FROM learning_skips WHERE source = ? AND thread_id = ?`),
      event: p(`INSERT INTO learning_events (at, kind, thread_id, episode_id, detail) VALUES (?, ?, ?, ?, ?)`),
      // A forget's scan, each table a page at a time in its own key order (reading the steps in
      // episode order instead jumped about the file: twice as slow), every probe in one pass.
      // LIKE ignores ASCII case, and a probe is ASCII letters and digits: nothing to escape.
      episodePageEnd: p(`SELECT max(rowid) FROM (SELECT rowid FROM learning_episodes WHERE rowid > ? ORDER BY rowid LIMIT ?)`).pluck(),
      episodesLike: p(
        `SELECT id AS episode_id, task, final_excerpt FROM learning_episodes WHERE rowid > @after AND rowid <= @upto
           AND EXISTS (SELECT 1 FROM json_each(@likes) WHERE task LIKE value OR final_excerpt LIKE value)`,
      ),
      stepPageEnd: p(
        `SELECT episode_id, idx FROM (SELECT episode_id, idx FROM learning_steps WHERE (episode_id, idx) > (@e, @i) ORDER BY episode_id, idx LIMIT @n)
         ORDER BY episode_id DESC, idx DESC LIMIT 1`,
      ),
      stepsLike: p(
        `SELECT episode_id, excerpt, args_shape FROM learning_steps WHERE (episode_id, idx) > (@e, @i) AND (episode_id, idx) <= (@e2, @i2)
           AND EXISTS (SELECT 1 FROM json_each(@likes) WHERE excerpt LIKE value OR args_shape LIKE value)`,
      ),
      signalPageEnd: p(`SELECT max(id) FROM (SELECT id FROM learning_signals WHERE id > ? ORDER BY id LIMIT ?)`).pluck(),
      signalsLike: p(
        `SELECT episode_id, note FROM learning_signals WHERE id > @after AND id <= @upto
           AND EXISTS (SELECT 1 FROM json_each(@likes) WHERE note LIKE value)`,
      ),
      // task_feedback notes: a small table, read whole
      feedbackLike: p(
        `SELECT episode_id, note FROM learning_feedback WHERE episode_id IS NOT NULL
           AND EXISTS (SELECT 1 FROM json_each(@likes) WHERE note LIKE value)`,
      ),
      rootOf: p(`SELECT root_thread_id FROM learning_episodes WHERE id = ?`).pluck(),
      blank: p(
        `UPDATE learning_episodes SET task = '', final_excerpt = NULL, content_hash = @hash, suppressed = 1,
           candidates_done = 1, updated_at = @at WHERE id = @id`,
      ),
      ofMessage: p(
        `SELECT e.id, e.root_thread_id FROM learning_episode_messages m JOIN learning_episodes e ON e.id = m.episode_id
         WHERE m.message_id = @message AND e.thread_id = @thread AND e.content_hash <> @forgotten`,
      ),
      forgottenMessages: p(
        `SELECT DISTINCT m.message_id FROM learning_episodes e JOIN learning_episode_messages m ON m.episode_id = e.id
         WHERE e.source = ? AND e.thread_id = ? AND e.content_hash = ?`,
      ).pluck(),
      clearSignalNotes: p(`UPDATE learning_signals SET note = NULL WHERE episode_id = ?`),
      clearFeedbackNotes: p(`UPDATE learning_feedback SET note = NULL WHERE episode_id = ?`),
      events: p(`SELECT * FROM learning_events ORDER BY id DESC LIMIT ?`),
      eventsOfKind: p(`SELECT * FROM learning_events WHERE kind = ? ORDER BY id DESC LIMIT ?`),
    };

    this.upsertTx = db.transaction((draft: EpisodeDraft, derived: RewardSignal[], kinds: SignalKind[], newId: string, at: number) => {
      const existing = this.s.byKey!.get(draft.source, draft.threadId, draft.startOrd) as EpisodeRow | undefined;
      const fields = {
        source: draft.source,
        threadId: draft.threadId,
        rootThreadId: draft.rootThreadId,
        startOrd: draft.startOrd,
        endOrd: draft.endOrd,
        state: draft.state,
        task: draft.task,
        finalExcerpt: draft.finalExcerpt,
        contentHash: draft.contentHash,
        at,
      };
      let id: string;
      let changed = true;
      if (!existing) {
        id = newId;
        this.s.insertEpisode!.run({ id, ...fields });
      } else {
        id = existing.id;
        // a forgotten episode stays blank, whatever its thread says now
        changed = existing.content_hash !== draft.contentHash && existing.content_hash !== FORGOTTEN_EPISODE_HASH;
        if (changed) this.s.updateEpisode!.run({ id, ...fields });
      }
      if (changed) {
        this.s.deleteSteps!.run(id);
        for (const st of draft.steps) this.s.insertStep!.run({ episodeId: id, ...st });
        this.s.deleteMessages!.run(id);
        for (const m of draft.messages) this.s.insertMessage!.run(id, m.ord, m.messageId, m.role);
        for (const k of kinds) this.s.deleteDerived!.run(id, k);
        for (const sig of derived) this.s.insertSignal!.run({ episodeId: id, ...sig });
      }
      return { episode: toEpisode(this.s.byId!.get(id) as EpisodeRow), changed, created: !existing };
    });
  }

  async upsertEpisode(draft: EpisodeDraft, derived: RewardSignal[], derivedKinds: SignalKind[], newId: string, at: number) {
    return this.upsertTx.immediate(draft, derived, derivedKinds, newId, at);
  }

  async episode(id: string): Promise<StoredEpisode | null> {
    const r = this.s.byId!.get(id) as EpisodeRow | undefined;
    return r ? toEpisode(r) : null;
  }

  async episodesOfThread(source: EpisodeSource, threadId: string): Promise<StoredEpisode[]> {
    return (this.s.ofThread!.all(source, threadId) as EpisodeRow[]).map(toEpisode);
  }

  async resumeOrd(source: EpisodeSource, threadId: string): Promise<number | null> {
    return (this.s.resume!.get({ source, thread: threadId }) as { s: number | null }).s;
  }

  async stepsOf(episodeId: string): Promise<ScoredStep[]> {
    return (this.s.steps!.all(episodeId) as StepRow[]).map((r) => ({
      idx: r.idx,
      ord: r.ord,
      tool: r.tool,
      callId: r.call_id,
      argsDigest: r.args_digest,
      argsShape: r.args_shape,
      outcome: r.outcome,
      verdict: r.verdict,
      excerpt: r.excerpt,
      latencyMs: r.latency_ms,
      alpha: r.alpha,
      value: r.value,
    }));
  }

  async episodeOfCall(threadId: string, callId: string): Promise<StoredEpisode | null> {
    const r = this.s.ofCall!.get(threadId, callId) as EpisodeRow | undefined;
    return r ? toEpisode(r) : null;
  }

  async addSignal(episodeId: string, sig: RewardSignal): Promise<boolean> {
    return this.s.insertSignal!.run({ episodeId, ...sig }).changes === 1;
  }

  async signalsOf(episodeId: string): Promise<StoredSignal[]> {
    return (this.s.signals!.all(episodeId) as SignalRow[]).map((r) => ({
      id: r.id,
      episodeId: r.episode_id,
      kind: r.kind,
      source: r.source,
      value: r.value,
      weight: r.weight,
      note: r.note,
      dedupKey: r.dedup_key,
      at: r.at,
    }));
  }

  async setScores(episodeId: string, reward: number | null, grounded: boolean, steps: { idx: number; alpha: number; value: number | null }[], at: number) {
    this.db.transaction(() => {
      this.s.setReward!.run(reward, grounded ? 1 : 0, at, episodeId);
      for (const st of steps) this.s.setStep!.run(st.alpha, st.value, episodeId, st.idx);
    }).immediate();
  }

  async setSuppressed(episodeId: string, at: number) {
    this.s.suppress!.run(at, episodeId);
  }

  async markCandidatesDone(episodeId: string, at: number) {
    this.s.candidatesDone!.run(at, episodeId);
  }

  async addCandidate(episodeId: string, memoryId: string, disposition: CandidateDisposition, at: number) {
    this.s.addCandidate!.run(episodeId, memoryId, disposition, at);
  }

  async candidatesOf(episodeId: string) {
    return (this.s.candidates!.all(episodeId) as { memory_id: string; disposition: CandidateDisposition }[]).map((r) => ({
      memoryId: r.memory_id,
      disposition: r.disposition,
    }));
  }

  async addRejected(visKey: string, fingerprints: string[], at: number) {
    this.db.transaction(() => {
      for (const fp of fingerprints) this.s.addRejected!.run(visKey, fp, at);
    }).immediate();
  }

  async isRejected(visKey: string, fingerprint: string): Promise<boolean> {
    return this.s.isRejected!.get(visKey, fingerprint) !== undefined;
  }

  async proposedAmong(memoryIds: string[]): Promise<Set<string>> {
    return new Set(memoryIds.length === 0 ? [] : (this.s.proposed!.all(JSON.stringify(memoryIds)) as string[]));
  }

  async episodesMentioning(probes: string[]) {
    const likes = JSON.stringify(probes.map((p) => `%${p}%`));
    const texts = new Map<string, string[]>();
    // every text of a row where one of them holds a probe, for the caller's exact check
    const scan = (st: Database.Statement, bounds: Record<string, unknown>) => {
      for (const r of st.all({ ...bounds, likes }) as Record<string, string | null>[]) {
        const { episode_id: id, ...row } = r;
        texts.set(id!, [...(texts.get(id!) ?? []), ...Object.values(row).filter((t): t is string => t !== null)]);
      }
    };
    scan(this.s.feedbackLike!, {});
    // a page at a time, giving way in between: the scan reads every excerpt the loop kept
    for (const [end, rows] of [[this.s.episodePageEnd!, this.s.episodesLike!], [this.s.signalPageEnd!, this.s.signalsLike!]] as const) {
      for (let after = 0; ; ) {
        const upto = end.get(after, SCAN_PAGE) as number | null;
        if (upto === null) break;
        scan(rows, { after, upto });
        after = upto;
        await giveWay();
      }
    }
    for (let from = { e: "", i: -1 }; ; ) {
      const to = this.s.stepPageEnd!.get({ ...from, n: SCAN_PAGE }) as { episode_id: string; idx: number } | undefined;
      if (!to) break;
      scan(this.s.stepsLike!, { ...from, e2: to.episode_id, i2: to.idx });
      from = { e: to.episode_id, i: to.idx };
      await giveWay();
    }
    // (an episode gone meanwhile has no root: counted as nobody's)
    return [...texts].map(([id, t]) => ({ id, rootThreadId: (this.s.rootOf!.get(id) as string | undefined) ?? "", texts: t }));
  }

  async forgetEpisodes(ids: string[], at: number) {
    this.db.transaction(() => {
      for (const id of ids) {
        this.s.blank!.run({ id, at, hash: FORGOTTEN_EPISODE_HASH });
        this.s.deleteSteps!.run(id);
        this.s.clearSignalNotes!.run(id);
        this.s.clearFeedbackNotes!.run(id);
      }
    }).immediate();
  }

  async forgottenEpisodeMessages(source: EpisodeSource, threadId: string): Promise<Set<string>> {
    return new Set(this.s.forgottenMessages!.all(source, threadId, FORGOTTEN_EPISODE_HASH) as string[]);
  }

  async episodesOfMessages(refs: MessageRef[], opts: { withForgotten?: boolean } = {}) {
    const found = new Map<string, { id: string; rootThreadId: string }>();
    // (no content hash is the empty string: with it, forgotten episodes are found too)
    const forgotten = opts.withForgotten ? "" : FORGOTTEN_EPISODE_HASH;
    for (const ref of refs) {
      for (const r of this.s.ofMessage!.all({ message: ref.messageId, thread: ref.threadId, forgotten }) as { id: string; root_thread_id: string }[]) {
        found.set(r.id, { id: r.id, rootThreadId: r.root_thread_id });
      }
    }
    return [...found.values()];
  }

  async recordFeedback(fb: TaskFeedback): Promise<boolean> {
    return this.s.recordFeedback!.run(fb.threadId, fb.callId, fb.episodeId, fb.rating, fb.note, fb.at).changes === 1;
  }

  async unresolvedFeedback(threadId: string): Promise<TaskFeedback[]> {
    const rows = this.s.unresolved!.all(threadId) as { thread_id: string; call_id: string; episode_id: string | null; rating: number; note: string | null; at: number }[];
    return rows.map((r) => ({ threadId: r.thread_id, callId: r.call_id, episodeId: r.episode_id, rating: r.rating, note: r.note, at: r.at }));
  }

  async resolveFeedback(threadId: string, callId: string, episodeId: string) {
    this.s.resolve!.run(episodeId, threadId, callId);
  }

  async enqueue(source: EpisodeSource, threadId: string, rootThreadId: string, at: number) {
    this.s.enqueue!.run(source, threadId, rootThreadId, at);
  }

  async claim(now: number, leaseMs: number, limit: number): Promise<QueueItem[]> {
    return this.db
      .transaction(() => {
        const rows = this.s.due!.all(now, limit) as { source: EpisodeSource; thread_id: string; root_thread_id: string; attempts: number }[];
        for (const r of rows) this.s.lease!.run(now + leaseMs, r.source, r.thread_id);
        return rows.map((r) => ({ source: r.source, threadId: r.thread_id, rootThreadId: r.root_thread_id, attempts: r.attempts }));
      })
      .immediate();
  }

  async complete(source: EpisodeSource, threadId: string, claimedAt: number) {
    this.db.transaction(() => {
      // Enqueued again while it was being processed: keep it, free for the next pass.
      if (this.s.complete!.run(source, threadId, claimedAt).changes === 0) this.s.release!.run(source, threadId);
    }).immediate();
  }

  async fail(source: EpisodeSource, threadId: string, error: string, maxAttempts: number, retryAt: number): Promise<boolean> {
    return this.db
      .transaction(() => {
        const row = this.s.failRow!.get(source, threadId) as { attempts: number } | undefined;
        if (!row) return false;
        const attempts = row.attempts + 1;
        if (attempts >= maxAttempts) {
          this.s.drop!.run(source, threadId);
          return true;
        }
        this.s.failUpdate!.run(attempts, error.slice(0, 500), retryAt, source, threadId);
        return false;
      })
      .immediate();
  }

  async queueDepth(): Promise<number> {
    return (this.s.depth!.get() as { n: number }).n;
  }

  async cursor(source: string, key: string): Promise<number> {
    return (this.s.cursor!.get(source, key) as { position: number } | undefined)?.position ?? 0;
  }

  async setCursor(source: string, key: string, position: number) {
    this.s.setCursor!.run(source, key, position);
  }

  async skipped(source: EpisodeSource, threadId: string): Promise<ThreadSkip | null> {
    const r = this.s.skipped!.get(source, threadId) as SkipRow | undefined;
    return r ? { from: r.skipped_from, format: r.skipped_format } : null;
  }

  async skippedThreads(source: EpisodeSource): Promise<({ threadId: string } & ThreadSkip)[]> {
    return (this.s.skippedThreads!.all(source) as SkipRow[]).map((r) => ({ threadId: r.thread_id, from: r.skipped_from, format: r.skipped_format }));
  }

  async setSkipped(source: EpisodeSource, threadId: string, skip: ThreadSkip | null) {
    if (skip) this.s.setSkipped!.run(source, threadId, skip.from, skip.format);
    else this.s.clearSkipped!.run(source, threadId);
  }

  async droppedThreads(): Promise<DroppedThread[]> {
    return (this.s.dropped!.all() as DroppedRow[]).map((r) => ({
      source: r.source as EpisodeSource,
      threadId: r.thread_id,
      rootThreadId: r.root_thread_id,
      format: r.format,
      drops: r.drops,
      retryAt: r.retry_at,
      reason: r.reason,
    }));
  }

  async setDropped(source: EpisodeSource, threadId: string, d: Omit<DroppedThread, "source" | "threadId"> | null) {
    if (d) this.s.setDropped!.run(source, threadId, d.rootThreadId, d.format, d.drops, d.retryAt, d.reason.slice(0, 500));
    else this.s.clearDropped!.run(source, threadId);
  }

  async event(kind: string, threadId: string | null, episodeId: string | null, detail: Record<string, unknown>, at: number) {
    this.s.event!.run(at, kind, threadId, episodeId, JSON.stringify(detail));
  }

  async events(opts: { kind?: string; limit?: number } = {}): Promise<LearningEvent[]> {
    const limit = opts.limit ?? 100;
    const rows = (opts.kind ? this.s.eventsOfKind!.all(opts.kind, limit) : this.s.events!.all(limit)) as {
      id: number;
      at: number;
      kind: string;
      thread_id: string | null;
      episode_id: string | null;
      detail: string;
    }[];
    return rows.map((r) => ({
      id: r.id,
      at: r.at,
      kind: r.kind,
      threadId: r.thread_id,
      episodeId: r.episode_id,
      detail: JSON.parse(r.detail) as Record<string, unknown>,
    }));
  }
}

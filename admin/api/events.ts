// Live updates: polls cheap watermarks (AdminQueries.watermark) every ~500 ms while someone
// listens, and tells listeners which views changed. Polling the database rather than hooking
// the services catches changes by every process writing it (the agent's command servers).
import type { Logger } from "pino";
import type { Clock } from "../../core/clock.js";
import type { ChangeEvent, Topic } from "./contract.js";
import type { AdminQueries, Watermark } from "./queries.js";

export type ChangeListener = (e: ChangeEvent & { id: number }) => void;

const TOPICS_OF_KIND: Record<string, Topic[]> = {
  memory: ["memories", "pending", "audit"],
  skill: ["skills", "candidates", "audit"],
  toolset: ["audit"],
};

export class ChangeWatcher {
  private readonly listeners = new Set<ChangeListener>();
  private last: Watermark | null = null;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private seq = 0;

  constructor(
    private readonly queries: AdminQueries,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly intervalMs = 500,
  ) {}

  /** The current state, for the stream's first (hello) event. */
  async snapshot(): Promise<ChangeEvent> {
    const w = await this.queries.watermark();
    // the baseline for the next poll, so a change right after connecting is not missed
    if (!this.last) this.last = w;
    return { topics: [], auditSeq: String(w.auditSeq), at: new Date(this.clock.now()).toISOString() };
  }

  subscribe(fn: ChangeListener): () => void {
    this.listeners.add(fn);
    if (!this.timer) {
      this.timer = setInterval(() => void this.poll(), this.intervalMs);
      this.timer.unref();
    }
    return () => {
      this.listeners.delete(fn);
      if (this.listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.last = null;
  }

  /** One comparison with the previous watermark; exported for tests and the first subscriber. */
  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const w = await this.queries.watermark();
      const prev = this.last;
      this.last = w;
      if (!prev) return;
      const topics = new Set<Topic>();
      if (w.auditSeq !== prev.auditSeq) {
        topics.add("audit");
        for (const r of await this.queries.auditKindsAfter(prev.auditSeq, 1000)) for (const t of TOPICS_OF_KIND[r.targetKind] ?? []) topics.add(t);
      }
      if (w.skills !== prev.skills) topics.add("skills");
      if (w.requests !== prev.requests) for (const t of ["candidates", "skills", "learning"] as const) topics.add(t);
      if (w.learning !== prev.learning) topics.add("learning");
      if (topics.size === 0) return;
      const e = { id: ++this.seq, topics: [...topics].sort(), auditSeq: String(w.auditSeq), at: new Date(this.clock.now()).toISOString() };
      for (const fn of this.listeners) fn(e);
    } catch (e) {
      this.logger.warn({ err: e }, "admin change poll failed");
    } finally {
      this.polling = false;
    }
  }
}

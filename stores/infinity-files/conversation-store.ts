// ConversationStore + ConversationReader over the daemon's threads/ directory (read-only):
// `{id}.json` for history and summaries, `{id}.meta.json` (or the older embedded `thread_info`)
// for the thread tree, `{id}.views.json` for views. Each file is re-read when it changes.
import { readdir, stat } from "node:fs/promises";
import { InfinityStoreError } from "../infinity/errors.js";
import { historySlice, loadHistoryWithAncestors } from "../infinity/history.js";
import type { InfinityMessage, ThreadInfo } from "../infinity/messages.js";
import type {
  AncestorLink,
  ConversationReader,
  ConversationStore,
  HistoryWithAncestors,
  ToleratedEntry,
} from "../infinity/traits.js";
import { JsonFileCache, isNotFound } from "./json-file.js";
import { InfinityHomeLayout } from "./layout.js";
import { readOnly } from "./read-only.js";
import { messageFormat, parseThreadFile, parseThreadMeta, threadInfoOf, type ThreadFile, type ThreadMeta } from "./thread-file.js";

function parseViews(raw: unknown): Record<string, unknown> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Error("views file is not an object");
  return raw as Record<string, unknown>;
}

export class InfinityFilesConversationStore implements ConversationStore, ConversationReader {
  constructor(
    private readonly layout: InfinityHomeLayout,
    private readonly files: JsonFileCache = new JsonFileCache(),
  ) {}

  // ---- daemon extras (not part of the traits) ----

  /**
   * `.meta.json`, else the `thread_info` older daemons kept in `{id}.json` (the daemon's own
   * fallback order, including for a meta file that does not parse).
   */
  async threadMeta(threadId: string): Promise<ThreadMeta | null> {
    let metaError: unknown = null;
    try {
      const meta = await this.files.read(this.layout.metaFile(threadId), parseThreadMeta);
      if (meta) return meta;
    } catch (e) {
      if (!(e instanceof InfinityStoreError) || e.code !== "corrupt") throw e;
      metaError = e;
    }
    const embedded = (await this.threadFile(threadId))?.embeddedMeta ?? null;
    if (embedded === null && metaError !== null) throw metaError;
    return embedded;
  }

  /** the thread's views (`{view_type: content}`); empty when it has none */
  async views(threadId: string): Promise<Record<string, unknown>> {
    return structuredClone((await this.files.read(this.layout.viewsFile(threadId), parseViews)) ?? {});
  }

  /** the history file's mtime and size (changes with every rewrite that appends); null when there is none */
  async historyVersion(threadId: string): Promise<string | null> {
    const path = this.layout.threadFile(threadId);
    try {
      const st = await stat(path, { bigint: true });
      return `${st.mtimeNs}:${st.size}`;
    } catch (e) {
      if (isNotFound(e)) return null;
      throw new InfinityStoreError("io", `cannot stat ${path}: ${(e as Error).message}`);
    }
  }

  /** which format the thread's history file is in; null when there is none */
  async historyFormat(threadId: string): Promise<ThreadFile["format"] | null> {
    return (await this.threadFile(threadId))?.format ?? null;
  }

  // ---- ConversationStore, reads ----

  async threadExists(threadId: string): Promise<boolean> {
    return (await this.threadMeta(threadId)) !== null;
  }

  async loadHistoryUpTo(threadId: string, startFrom?: number | null, upTo?: number | null): Promise<InfinityMessage[]> {
    return (await this.loadMessagesWithIds(threadId, startFrom, upTo)).map(([m]) => m);
  }

  async loadHistoryWithAncestors(threadId: string): Promise<HistoryWithAncestors> {
    return loadHistoryWithAncestors(this, threadId);
  }

  async isThreadClosed(threadId: string): Promise<boolean> {
    return (await this.threadMeta(threadId))?.closed ?? false;
  }

  async isSubscriptionEventThread(threadId: string): Promise<boolean> {
    return (await this.threadMeta(threadId))?.is_subscription_event ?? false;
  }

  async getThreadParentInfo(threadId: string): Promise<[string, string] | null> {
    const m = await this.threadMeta(threadId);
    if (!m || m.parent_thread_id === null || m.spawn_tool_call_id === null) return null;
    return [m.parent_thread_id, m.spawn_tool_call_id];
  }

  async getAncestorChain(threadId: string): Promise<AncestorLink[]> {
    const chain: AncestorLink[] = [];
    const seen = new Set([threadId]);
    for (let m = await this.threadMeta(threadId); m?.parent_thread_id != null; ) {
      const parent: string = m.parent_thread_id;
      if (seen.has(parent)) break; // hand-edited files can loop; stop instead of spinning
      seen.add(parent);
      chain.push([parent, m.spawn_message_order ?? 0]);
      m = await this.threadMeta(parent);
    }
    return chain.reverse();
  }

  async isCompactionThread(threadId: string): Promise<boolean> {
    return (await this.threadMeta(threadId))?.is_compaction ?? false;
  }

  async getThreadSpawnOrder(threadId: string): Promise<number | null> {
    return (await this.threadMeta(threadId))?.spawn_message_order ?? null;
  }

  async loadLatestCompactionSummaryUpTo(threadId: string, upToOrder?: number | null): Promise<[string, number] | null> {
    const list = (await this.threadFile(threadId))?.compactionSummaries ?? [];
    for (let i = list.length - 1; i >= 0; i--) {
      const s = list[i]!;
      if (upToOrder == null || s.up_to_order <= upToOrder) return [s.summary, s.up_to_order];
    }
    return null;
  }

  // ---- ConversationStore, writes ----

  async ensureRootThread(_threadId: string): Promise<void> {
    throw readOnly("ensureRootThread");
  }

  async appendMessages(_threadId: string, _messages: ReadonlyArray<readonly [InfinityMessage, string]>): Promise<void> {
    throw readOnly("appendMessages");
  }

  async spawnThread(_parent: string, _toolCallId: string, _forEvent: boolean, _order?: number | null): Promise<string> {
    throw readOnly("spawnThread");
  }

  async closeThread(_threadId: string): Promise<void> {
    throw readOnly("closeThread");
  }

  async markThreadAsCompaction(_threadId: string): Promise<void> {
    throw readOnly("markThreadAsCompaction");
  }

  async saveCompactionSummary(_threadId: string, _summary: string, _upToOrder: number): Promise<void> {
    throw readOnly("saveCompactionSummary");
  }

  // ---- ConversationReader ----

  /** every thread with a history or meta file, sorted */
  async listThreads(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.layout.threadsDir);
    } catch (e) {
      if (isNotFound(e)) return [];
      throw new InfinityStoreError("io", `cannot list ${this.layout.threadsDir}: ${(e as Error).message}`);
    }
    const ids = new Set<string>();
    for (const name of names) {
      const id = InfinityHomeLayout.threadIdOfFile(name);
      if (id !== null) ids.add(id);
    }
    return [...ids].sort();
  }

  async getRootThreadId(threadId: string): Promise<string> {
    return (await this.threadMeta(threadId))?.root_thread_id ?? threadId;
  }

  async loadMessagesWithIds(
    threadId: string,
    startFrom?: number | null,
    upTo?: number | null,
  ): Promise<[InfinityMessage, string][]> {
    const file = await this.threadFile(threadId);
    const list = file?.messages ?? [];
    const [start, end] = historySlice(list.length, startFrom, upTo);
    // a history with a gap is not the history: as strict as the daemon that cannot load it
    const gap = file?.unknown.find((u) => u.index >= start && u.index < end);
    if (gap) {
      throw new InfinityStoreError(
        "corrupt",
        `${this.layout.threadFile(threadId)}: message ${gap.index} (kind ${gap.kind}) is not one this version reads (written by a newer daemon?)`,
        { file: this.layout.threadFile(threadId) },
      );
    }
    // the cache holds the parsed file; hand out copies so callers cannot edit it
    return structuredClone(list.slice(start, end) as [InfinityMessage, string][]);
  }

  async loadMessagesTolerant(threadId: string, startFrom?: number | null, upTo?: number | null): Promise<ToleratedEntry[]> {
    const file = await this.threadFile(threadId);
    const list = file?.messages ?? [];
    const [start, end] = historySlice(list.length, startFrom, upTo);
    const kinds = new Map(file?.unknown.map((u) => [u.index, u.kind]));
    return structuredClone(list.slice(start, end)).map(([m, id], i): ToleratedEntry => (m ? [m, id] : [null, id, kinds.get(start + i) ?? "unknown"]));
  }

  messageFormat(): string {
    return messageFormat();
  }

  async threadInfo(threadId: string): Promise<ThreadInfo | null> {
    const meta = await this.threadMeta(threadId);
    return meta ? threadInfoOf(meta) : null;
  }

  async messageCount(threadId: string): Promise<number> {
    return (await this.threadFile(threadId))?.messages.length ?? 0;
  }

  private threadFile(threadId: string): Promise<ThreadFile | null> {
    return this.files.read(this.layout.threadFile(threadId), parseThreadFile);
  }
}

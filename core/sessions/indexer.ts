// Incremental indexing of past conversations from any Infinity-shaped store into the session
// index. Infinity histories are append-only per thread, so each thread keeps a watermark (how
// many of its own messages are indexed) plus the id of the last one; a thread that shrank or whose
// last indexed id changed is indexed again from the start. Running it twice changes nothing.
// Messages left out as kinds the reader does not know are remembered (the first one's position and
// the reader's message format), so a reader that knows more reads them after an upgrade.
import type { Clock } from "../clock.js";
import type { ConversationReader, InfinityMessage } from "../../stores/traits.js";
import type { IndexedMessage, SessionIndexStore } from "../../stores/traits.js";
import { isInfinityStoreError } from "../../stores/infinity/errors.js";
// a newer daemon may write message kinds we do not know: read around them where the source can
import { loadTolerant } from "../../stores/infinity/history.js";
import { messageText } from "../../stores/infinity/messages.js";
import { headOf } from "../text.js";

export interface SessionSource {
  /** where the conversations live: the daemon's files or a store of ours (sqlite, postgres) */
  kind: "infinity-files" | "sqlite" | "postgres";
  location: string;
  /** the location as given, when it differs (a path through a symbolic link): what earlier versions keyed this source by */
  formerLocation?: string;
  reader: ConversationReader;
  /** the `user_id` in the session's root metadata, if any */
  userOf(rootThreadId: string): Promise<string | null>;
  cwdOf(rootThreadId: string): Promise<string | null>;
  /**
   * A value that changes whenever the thread's history may have (the daemon's file: its mtime and
   * size), read without reading the history; null, or no method, when the source cannot tell.
   */
  historyVersion?(threadId: string): Promise<string | null>;
  /**
   * Whether another location of this kind still exists; with it, a source gone from its location
   * whose threads this one holds (the same home, moved) is taken for this one. No method: never.
   */
  locationExists?(location: string): Promise<boolean>;
}

export interface IndexReport {
  threads: number;
  threadsChanged: number;
  messagesAdded: number;
  reset: number;
  /** indexed threads the source no longer holds (deleted there), taken out of the index */
  removed: number;
  /** earlier locations of this source (moved away from; their threads are here): dropped from the index */
  movedFrom: string[];
  /** threads that could not be read this run (left as they were indexed; tried again next run) */
  skipped: { threadId: string; reason: string }[];
  /**
   * threads read this run holding message kinds this version does not know (a newer daemon's):
   * those messages are left out, the rest indexed at their own positions
   */
  unknownKinds: { threadId: string; kinds: string[]; messages: number }[];
}

function roleOf(m: InfinityMessage): string {
  switch (m.kind) {
    case "user":
      return m.content.type === "toolresult" ? "tool" : "user";
    case "assistant":
      return "text" in m.content ? "assistant" : "tool_call";
    case "tool_call":
      return "tool_call";
    default:
      return "tool";
  }
}

/** Tool results can be long; the index keeps an excerpt, enough to find and recognise them. */
const RESULT_EXCERPT = 2000;

export function indexable(m: InfinityMessage, ord: number, id: string): IndexedMessage {
  const role = roleOf(m);
  // A NUL (a binary tool result) cannot be stored in PostgreSQL text and matches no search: the
  // index keeps a space in its place; the conversation itself is untouched.
  let text = messageText(m).replace(/\u0000/g, " ");
  if (role === "tool" && text.length > RESULT_EXCERPT) text = `${headOf(text, RESULT_EXCERPT)}…`;
  return { ord, messageId: id, role, text };
}

export class SessionIndexer {
  /**
   * `source id, thread id` → the history version last indexed whole. A thread whose version has
   * not moved is not read again: every run read and parsed every thread, so with more threads
   * than the file cache holds, a search after an idle moment re-read the user's whole history.
   */
  private readonly indexedVersions = new Map<string, string>();
  /**
   * `source id, thread id` → its root: a thread's place in its tree never changes, and a thread
   * without a meta file (an older daemon's) names its root inside its history, read whole.
   */
  private readonly rootsOf = new Map<string, string>();

  constructor(
    private readonly index: SessionIndexStore,
    private readonly clock: Clock,
    private readonly localUser: string,
  ) {}

  async run(src: SessionSource, onProgress?: (done: number, total: number) => void): Promise<IndexReport> {
    const sourceId = await this.index.sourceId(src.kind, src.location, src.formerLocation);
    const threads = await src.reader.listThreads();
    const report: IndexReport = { threads: threads.length, threadsChanged: 0, messagesAdded: 0, reset: 0, removed: 0, movedFrom: [], skipped: [], unknownKinds: [] };
    await this.adoptMoved(src, sourceId, threads, report);
    let done = 0;
    /** threads this run did not read (their history unchanged since it was indexed whole) */
    const unread: string[] = [];
    let ownerChanged = false;
    /** one thread, or null when it is left out: one unreadable thread must not stop the others */
    const tolerate = async <T>(threadId: string, step: () => Promise<T>): Promise<T | null> => {
      try {
        return await step();
      } catch (e) {
        // a file the daemon is rewriting in place, a damaged one
        if (!isInfinityStoreError(e) || (e.code !== "corrupt" && e.code !== "io" && e.code !== "invalid_id")) throw e;
        report.skipped.push({ threadId, reason: e.message });
        return null;
      }
    };
    /** root thread → its owner now, read once per run */
    const owners = new Map<string, Promise<string>>();
    const ownerOf = async (threadId: string) => {
      const key = `${sourceId}\u0000${threadId}`;
      let root = this.rootsOf.get(key);
      if (root === undefined) this.rootsOf.set(key, (root = await src.reader.getRootThreadId(threadId)));
      let owner = owners.get(root);
      if (!owner) owners.set(root, (owner = src.userOf(root).then((u) => u ?? this.localUser)));
      return owner;
    };
    for (const threadId of threads) {
      done++;
      await tolerate(threadId, async () => {
        // taken before the read: a write during it moves the version, and the next run reads again.
        // The session's owner is part of it: an input replacing the root metadata's user_id adds no
        // message, so the history's version alone kept the thread under its former owner until the
        // next message or a restart.
        const history = (await src.historyVersion?.(threadId)) ?? null;
        const version = history === null ? null : `${history}\u0000${await ownerOf(threadId)}`;
        const key = `${sourceId}\u0000${threadId}`;
        if (version !== null && this.indexedVersions.get(key) === version) {
          unread.push(threadId);
          return;
        }
        ownerChanged = (await this.thread(src, sourceId, threadId, report)) || ownerChanged;
        if (version !== null) this.indexedVersions.set(key, version);
      });
      onProgress?.(done, threads.length);
    }
    // A session's owner changed (its root metadata names another user): the threads of it this run
    // did not read still carry the former owner; each is checked (and re-indexed if it is so).
    if (ownerChanged) for (const threadId of unread) await tolerate(threadId, () => this.thread(src, sourceId, threadId, report));
    // A conversation deleted from the source (its thread files removed) stayed searchable from the
    // index for good: what the person threw away kept coming back in session_search.
    // Listed again after reading what is indexed: another server sharing this index may have
    // indexed a thread created after this run listed the source.
    const indexed = await this.index.indexedThreads(sourceId);
    const listed = new Set(await src.reader.listThreads());
    for (const threadId of indexed) {
      if (listed.has(threadId)) continue;
      await this.index.resetThread(sourceId, threadId);
      this.indexedVersions.delete(`${sourceId}\u0000${threadId}`);
      this.rootsOf.delete(`${sourceId}\u0000${threadId}`);
      report.removed++;
    }
    return report;
  }

  /**
   * A daemon home moved (not linked) to another folder is a new location with the same threads: its
   * old location's rows stayed, so every match showed twice, once pointing at a path that no longer
   * exists. A source of the same kind gone from its location and sharing a thread id with this one
   * is this one, moved: what a forget suppressed there stays suppressed here, the rest is dropped.
   */
  private async adoptMoved(src: SessionSource, sourceId: number, threads: string[], report: IndexReport): Promise<void> {
    if (!src.locationExists || threads.length === 0) return;
    const here = new Set(threads);
    for (const other of await this.index.sources(src.kind)) {
      if (other.location === src.location || (await src.locationExists(other.location))) continue;
      if (!(await this.index.indexedThreads(other.id)).some((t) => here.has(t))) continue;
      await this.index.mergeSource(other.id, sourceId);
      report.movedFrom.push(other.location);
    }
  }

  /** index what is new in one thread; true when its session's owner changed since it was indexed */
  private async thread(src: SessionSource, sourceId: number, threadId: string, report: IndexReport): Promise<boolean> {
    const count = await src.reader.messageCount(threadId);
    const state = await this.index.threadState(sourceId, threadId);
    const root = await src.reader.getRootThreadId(threadId);
    const user = (await src.userOf(root)) ?? this.localUser;
    let from = state?.indexedCount ?? 0;
    // The session's owner is its root metadata's user_id, which a later input may replace: the
    // messages indexed under the former owner stayed searchable by them and hidden from the new one.
    const ownerChanged = state !== null && state.user !== user;
    let reset = false;
    if (state && state.indexedCount > 0) {
      const last = ownerChanged ? [] : await loadTolerant(src.reader, threadId, state.indexedCount - 1, state.indexedCount);
      if (ownerChanged || count < state.indexedCount || last[0]?.[1] !== state.fingerprint) {
        await this.index.resetThread(sourceId, threadId);
        report.reset++;
        from = 0;
        reset = true;
      }
    }
    // Messages an earlier run left out as kinds its reader did not know stayed out for good once
    // the watermark had moved past them: a reader of another message format (an upgrade) reads
    // from the first of them; one of the same format does not read them again.
    const format = src.reader.messageFormat?.() ?? "";
    const kept = reset ? null : (state?.skipped ?? null);
    const reread = kept !== null && kept.format !== format;
    if (reread) from = Math.min(from, kept.from);
    if (from >= count && state && !ownerChanged) return false;
    const cwd = await src.cwdOf(root);
    // a child's parent and spawn point: a forget of what the child remembered finds the user's turn there
    const info = threadId === root ? null : await src.reader.threadInfo(threadId);
    const parent = info?.parent_thread_id && info.spawn_message_order !== null ? { threadId: info.parent_thread_id, spawnOrder: info.spawn_message_order } : null;
    const msgs = await loadTolerant(src.reader, threadId, from, count);
    // an unknown message keeps its position (ord): the next known one is still at its store index
    const items = msgs.flatMap(([m, id], i) => (m ? [indexable(m, from + i, id)] : []));
    const unknown = msgs.flatMap((e) => (e[0] === null ? [e[2]] : []));
    if (unknown.length > 0) report.unknownKinds.push({ threadId, kinds: [...new Set(unknown)], messages: unknown.length });
    const firstUnknown = msgs.findIndex((e) => e[0] === null);
    // an earlier skip (before this read's start) stays the first; a re-read replaces it
    const skipped = kept !== null && !reread ? kept : firstUnknown >= 0 ? { from: from + firstUnknown, format } : null;
    report.messagesAdded += await this.index.append(
      sourceId,
      { threadId, rootThreadId: root, user, cwd, parent, skipped },
      items,
      count,
      msgs.at(-1)?.[1] ?? state?.fingerprint ?? null,
      this.clock.now(),
    );
    report.threadsChanged++;
    return ownerChanged;
  }
}

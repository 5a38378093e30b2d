// Opens a daemon home directory (`~/.infinity/`) as read-only Infinity stores.
import { InfinityFilesConversationStore } from "./conversation-store.js";
import { DEFAULT_CACHE_ENTRIES, JsonFileCache } from "./json-file.js";
import { InfinityHomeLayout } from "./layout.js";
import { SessionsReader } from "./sessions.js";
import { InfinityFilesStateStore } from "./state-store.js";

export interface InfinityHome {
  layout: InfinityHomeLayout;
  conversation: InfinityFilesConversationStore;
  state: InfinityFilesStateStore;
  sessions: SessionsReader;
}

export interface OpenInfinityHomeOptions {
  /** parsed files kept in memory (shared by both stores) */
  cacheEntries?: number;
  /** a file caught mid-rewrite: serve its last good copy (the default) or report it unreadable */
  tornReads?: "last-good" | "refuse";
}

export function openInfinityHome(home: string, opts: OpenInfinityHomeOptions = {}): InfinityHome {
  const layout = new InfinityHomeLayout(home);
  const files = new JsonFileCache(opts.cacheEntries ?? DEFAULT_CACHE_ENTRIES, opts.tornReads);
  const sessions = new SessionsReader(home);
  const conversation = new InfinityFilesConversationStore(layout, files);
  const state = new InfinityFilesStateStore(layout, conversation, sessions, files);
  return { layout, conversation, state, sessions };
}

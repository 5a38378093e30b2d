// StateStore over the daemon's state/ directory (read-only): one `{key}.state.json` ThreadState per
// thread, session metadata under the root's key; "stopped" is the session's shut_down flag in
// sessions.json, as in the daemon's PersistentStateStore.
import type { ThreadState, UserChoice } from "../infinity/messages.js";
import { ThreadState as ThreadStateSchema } from "../infinity/messages.js";
import type { Json, StateStore } from "../infinity/traits.js";
import type { InfinityFilesConversationStore } from "./conversation-store.js";
import { JsonFileCache } from "./json-file.js";
import type { InfinityHomeLayout } from "./layout.js";
import { readOnly } from "./read-only.js";
import type { SessionsReader } from "./sessions.js";

const EMPTY_STATE: ThreadState = ThreadStateSchema.parse({});

function parseState(raw: unknown): ThreadState {
  return ThreadStateSchema.parse(raw);
}

export class InfinityFilesStateStore implements StateStore {
  constructor(
    private readonly layout: InfinityHomeLayout,
    private readonly conversation: InfinityFilesConversationStore,
    private readonly sessions: SessionsReader,
    private readonly files: JsonFileCache = new JsonFileCache(),
  ) {}

  /** the key's whole state file; empty state when there is none */
  async threadState(key: string): Promise<ThreadState> {
    const state = (await this.files.read(this.layout.stateFile(key), parseState)) ?? EMPTY_STATE;
    return structuredClone(state);
  }

  async getProcessedIds(threadId: string): Promise<[Set<string>, Set<string>]> {
    const s = await this.threadState(threadId);
    return [new Set(s.processed_message_ids), new Set(s.processed_tool_call_ids)];
  }

  async getMetadata(rootThreadId: string): Promise<Json | null> {
    return (await this.threadState(rootThreadId)).metadata ?? null;
  }

  async getActiveSubscriptions(threadId: string): Promise<string[]> {
    return (await this.threadState(threadId)).subscriptions;
  }

  async getPendingUserChoices(threadId: string): Promise<UserChoice[]> {
    return (await this.threadState(threadId)).pending_user_choices;
  }

  async isThreadStopped(threadId: string): Promise<boolean> {
    return this.sessions.isShutDown(await this.conversation.getRootThreadId(threadId));
  }

  async addProcessedMessageIds(_threadId: string, _ids: readonly string[]): Promise<void> {
    throw readOnly("addProcessedMessageIds");
  }

  async addProcessedToolCalls(_threadId: string, _ids: readonly string[]): Promise<void> {
    throw readOnly("addProcessedToolCalls");
  }

  async setMetadata(_rootThreadId: string, _metadata: Json): Promise<void> {
    throw readOnly("setMetadata");
  }

  async addActiveSubscription(_threadId: string, _toolCallId: string): Promise<void> {
    throw readOnly("addActiveSubscription");
  }

  async removeActiveSubscription(_threadId: string, _toolCallId: string): Promise<void> {
    throw readOnly("removeActiveSubscription");
  }

  async addPendingUserChoice(_threadId: string, _choice: UserChoice): Promise<void> {
    throw readOnly("addPendingUserChoice");
  }

  async removePendingUserChoice(_threadId: string, _choiceId: string): Promise<void> {
    throw readOnly("removePendingUserChoice");
  }
}

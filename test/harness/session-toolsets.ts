// Per-session toolset resolution as the daemon's `SessionRapManager` does it (reference §2.3,
// §1.3): on a session's first step the merged rap.json is read, every server is booted and its
// manifest fetched ONCE, and the resulting tool list (plus set_title and the extra system
// prompt) is cached for the whole session — also when a server failed, so a server that was down
// at discovery stays absent for that session. Each thread load gets a notifier for the servers
// that are up at that moment.
import type { ServerEvent } from "./command-servers.js";
import { ManagedRapServer, type ManagedServerOptions } from "./command-servers.js";
import type { HarnessEvent } from "./events.js";
import { daemonExtraSystemPrompt } from "./preamble.js";
import { loadMergedRapConfig } from "./rap-config.js";
import { RapNotifier } from "./rap-http.js";
import { ManagedRapTool, SetTitleTool, type ThreadConfig, type Tool } from "./tools.js";

export interface SessionToolset {
  tools: Tool[];
  servers: ManagedRapServer[];
  extraSystemPrompt: string;
}

export interface SessionRapManagerOptions {
  /** the session's working directory; null for an unknown session (the daemon panics there) */
  sessionCwd: (sessionId: string) => string | null;
  /** `{infinity home}/rap.json`, or null for no user config */
  userConfigPath: string | null;
  /** thread → its root (= session) id */
  rootOf: (threadId: string) => Promise<string>;
  server?: Omit<ManagedServerOptions, "onEvent">;
  record: (e: HarnessEvent) => void;
  setTitle: (threadId: string, title: string) => void;
}

export class SessionRapManager {
  private readonly toolsets = new Map<string, Promise<SessionToolset>>();

  constructor(private readonly o: SessionRapManagerOptions) {}

  private info(sessionId: string, text: string): void {
    this.o.record({ type: "session_info", sessionId, text });
  }

  /** `get_or_init`: build once per session, cached even when servers failed. */
  getOrInit(sessionId: string): Promise<SessionToolset> {
    let ts = this.toolsets.get(sessionId);
    if (!ts) {
      ts = this.init(sessionId);
      this.toolsets.set(sessionId, ts);
      // An error here (unknown session) is not cached: the daemon panics instead of caching.
      ts.catch(() => this.toolsets.delete(sessionId));
    }
    return ts;
  }

  private async init(sessionId: string): Promise<SessionToolset> {
    const cwd = this.o.sessionCwd(sessionId);
    if (cwd === null) throw new Error("bug: session not found in store");
    const servers: ManagedRapServer[] = [];
    const serverOpts: ManagedServerOptions = { ...this.o.server, onEvent: (e: ServerEvent) => this.o.record(e) };
    try {
      const merged = loadMergedRapConfig(cwd, this.o.userConfigPath);
      this.info(sessionId, merged.info);
      for (const entry of merged.config?.tool_sets ?? []) {
        const id = entry.id ?? null;
        if (entry.type === "toolset_server") servers.push(new ManagedRapServer(sessionId, id, { kind: "external", url: entry.server_url }, serverOpts));
        else if (entry.type === "toolset_command") servers.push(new ManagedRapServer(sessionId, id, { kind: "command", command: entry.command, cwd }, serverOpts));
        else this.info(sessionId, `Warning: failed to start RAP server: ${entry.type} entries (MCP proxies) are not supported by the mock harness`);
      }
    } catch (e) {
      this.info(sessionId, `Warning: failed to read RAP config: ${(e as Error).message}`);
    }
    const tools: Tool[] = [];
    let count = 0;
    for (const server of servers) {
      try {
        const manifest = await server.ensureUp();
        for (const def of manifest.tools) {
          count++;
          tools.push(new ManagedRapTool(def.name, def.description, def.inputSchema, def.displayScript ?? null, server, this.o.record));
        }
      } catch (e) {
        this.info(sessionId, `Warning: failed to start RAP server: ${(e as Error).message}`);
      }
    }
    if (count > 0) this.info(sessionId, `Loaded ${count} RAP tool(s)`);
    tools.push(new SetTitleTool(this.o.setTitle));
    return { tools, servers, extraSystemPrompt: daemonExtraSystemPrompt(cwd) };
  }

  /** `ThreadConfigSource::resolve`: the session's tools, prompt, and a notifier for servers up now. */
  async resolve(threadId: string): Promise<ThreadConfig> {
    const sessionId = await this.o.rootOf(threadId);
    const ts = await this.getOrInit(sessionId);
    const urls = ts.servers.map((s) => s.currentBaseUrl()).filter((u): u is string => u !== null);
    return {
      tools: [...ts.tools],
      extraSystemPrompt: ts.extraSystemPrompt,
      rapNotifier: new RapNotifier(urls, (r) => this.o.record({ type: "notify", path: r.url.endsWith("/close_thread") ? "/close_thread" : "/cancel_tool_call", url: r.url, body: r.body, status: r.status, ...(r.error === undefined ? {} : { error: r.error }) })),
    };
  }

  /** The session's servers (booted or not), once its toolset was resolved. */
  async servers(sessionId: string): Promise<ManagedRapServer[]> {
    const ts = this.toolsets.get(sessionId);
    return ts ? (await ts.catch(() => null))?.servers ?? [] : [];
  }

  /** `shutdown_session`: stop the command servers, keep the cached toolset (next use reboots). */
  async shutdownSession(sessionId: string): Promise<boolean> {
    const servers = await this.servers(sessionId);
    for (const s of servers) await s.shutdown();
    return servers.length > 0;
  }

  /** `evict_session`: stop and forget, so the next use re-reads rap.json and refetches manifests. */
  async evictSession(sessionId: string): Promise<void> {
    await this.shutdownSession(sessionId);
    this.toolsets.delete(sessionId);
  }

  async shutdownAll(): Promise<void> {
    for (const id of [...this.toolsets.keys()]) await this.shutdownSession(id);
  }
}

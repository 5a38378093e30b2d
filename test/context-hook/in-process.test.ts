// The in-process prompt-prefix seam over the reference Infinity stores and the real prefix builder
// on a SQLite file: what a runtime's step hands it is a whole thread history, tool results of any
// size included.
import { mkdirSync, realpathSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { inProcessPromptPrefix, RECENT_MAX_CHARS } from "../../context-hook/in-process.js";
import { MemoryPrefixBuilder } from "../../core/retrieval/prefix.js";
import type { PrefixBuilder, PrefixRequest } from "../../core/retrieval/prefix-types.js";
import { loadTokenCounter, type TokenCounter } from "../../core/retrieval/tokens.js";
import { MemoryConversationStore, MemoryStateStore } from "../../stores/infinity/memory-store.js";
import type { InfinityMessage } from "../../stores/infinity/messages.js";
import { modelOrigin, openTestMemory, req } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

let tokens: TokenCounter;
beforeAll(async () => {
  tokens = await loadTokenCounter("o200k_base");
});

describe("in-process prompt prefix", () => {
  it("hands the builder only the heads of huge messages, and still recalls what is relevant", async () => {
    const m = openTestMemory(tempDir());
    await m.service.remember(req(), { content: "The staging cluster is deployed with helm from the ops repo", kind: "project" }, modelOrigin());
    const real = new MemoryPrefixBuilder({ service: m.service, toggles: m.toggles, edgesOf: (id) => m.store.edgesOf(id), tokens, config: m.config });
    const seen: PrefixRequest[] = [];
    const builder: PrefixBuilder = { build: (r) => (seen.push(r), real.build(r)) };
    const conversation = new MemoryConversationStore();
    const state = new MemoryStateStore();
    await conversation.ensureRootThread("root-1");
    await state.setMetadata("root-1", { user_id: "alice" });
    const hook = inProcessPromptPrefix({ builder, conversation, state, cwdOf: () => "/work/proj-a", localUser: "nobody" });

    // a 20 MB log from a tool, and a pasted one in the user's own message
    const log = "helm upgrade staging: rendering chart, waiting for rollout of pod 12345 abcdef\n".repeat(250_000);
    const history: InfinityMessage[] = [
      { kind: "user", content: { type: "text", text: `why did this fail?\n${log}` } },
      { kind: "assistant", content: { text: "Let me look at the staging deploy." } },
      { kind: "user", content: { type: "text", text: "deploy staging with helm please" } },
      { kind: "tool_call", call: { id: "t1", call_id: null, function: { name: "run", arguments: { cmd: "helm upgrade" } }, signature: null, additional_params: null } },
      { kind: "tool_result", result: { id: "t1", content: [{ type: "text", text: log }] } },
    ];
    const prefix = await hook("root-1", history);

    expect(prefix).toContain("The staging cluster is deployed with helm from the ops repo");
    expect(seen).toHaveLength(1);
    const r = seen[0]!;
    expect(r.task.startsWith("deploy staging with helm please")).toBe(true);
    expect(r.task.length).toBeLessThanOrEqual(2000);
    expect(r.recent!.length).toBe(5);
    for (const t of r.recent!) expect(t.length).toBeLessThanOrEqual(RECENT_MAX_CHARS);
    expect(r.recent).toContain("deploy staging with helm please");
    m.close();
  });

  it("keys the session's project as the memory toolset does, through a link or with a trailing slash", async () => {
    const dir = tempDir("imem-inproc-proj-");
    const real = join(dir, "checkout-service");
    mkdirSync(real);
    const link = join(dir, "work-link");
    symlinkSync(real, link);
    const m = openTestMemory(dir);
    await m.service.remember(
      req({ project: realpathSync(real) }),
      { content: "The checkout service deploys through the blue-green pipeline in the ops repo", kind: "project", scope: "project" },
      modelOrigin(),
    );
    const builder = new MemoryPrefixBuilder({ service: m.service, toggles: m.toggles, edgesOf: (id) => m.store.edgesOf(id), tokens, config: m.config });
    const conversation = new MemoryConversationStore();
    const state = new MemoryStateStore();
    await conversation.ensureRootThread("root-2");
    await state.setMetadata("root-2", { user_id: "alice" });
    const history: InfinityMessage[] = [{ kind: "user", content: { type: "text", text: "deploy the checkout service with the blue-green pipeline" } }];
    for (const cwd of [`${realpathSync(real)}/`, link, `${link}/`]) {
      const hook = inProcessPromptPrefix({ builder, conversation, state, cwdOf: () => cwd, localUser: "nobody" });
      expect(await hook("root-2", history), `cwd ${cwd}`).toContain("blue-green pipeline in the ops repo");
    }
    const other = join(dir, "billing");
    mkdirSync(other);
    const elsewhere = inProcessPromptPrefix({ builder, conversation, state, cwdOf: () => other, localUser: "nobody" });
    expect(await elsewhere("root-2", history)).toBeNull();
    m.close();
  });
  it("gives a compaction thread's model call no prefix, so its summary cannot absorb recalled memories", async () => {
    const m = openTestMemory(tempDir());
    await m.service.remember(req(), { content: "The staging cluster is deployed with helm from the ops repo", kind: "project" }, modelOrigin());
    const builder = new MemoryPrefixBuilder({ service: m.service, toggles: m.toggles, edgesOf: (id) => m.store.edgesOf(id), tokens, config: m.config });
    const conversation = new MemoryConversationStore();
    const state = new MemoryStateStore();
    await conversation.ensureRootThread("root-3");
    await state.setMetadata("root-3", { user_id: "alice" });
    const hook = inProcessPromptPrefix({ builder, conversation, state, cwdOf: () => "/work/proj-a", localUser: "nobody" });
    const parent: InfinityMessage[] = [
      { kind: "user", content: { type: "text", text: "deploy staging with helm please" } },
      { kind: "assistant", content: { text: "Deploying the staging cluster now." } },
    ];
    expect(await hook("root-3", parent)).toContain("deployed with helm from the ops repo");
    // what the runtime writes into the compaction child it spawns (reference §3.4)
    const compaction: InfinityMessage[] = [
      ...parent,
      { kind: "tool_call", call: { id: "cmp-1", call_id: null, function: { name: "__harness_begin_compaction__", arguments: {} }, signature: null, additional_params: null } },
      {
        kind: "tool_result",
        result: { id: "cmp-1", content: [{ type: "text", text: "You are now INSIDE a compaction thread. Summarize ALL of this content… Then call close_thread with your thread ID (root-3)." }] },
      },
    ];
    expect(await hook("root-3", compaction)).toBeNull();
    m.close();
  });
});

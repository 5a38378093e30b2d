// The `memory` toolset: zod input schemas (the single source of the manifest's JSON Schema)
// and handlers that call MemoryService and render readable text for the model.
import { z } from "zod";
import type { Clock } from "../../core/clock.js";
import { defaultConfig, type MemoryConfig } from "../../core/config.js";
import { CoreError } from "../../core/errors.js";
import { MEMORY_KINDS, MEMORY_STATUSES, SCOPE_LEVELS } from "../../core/memory/record.js";
import { deriveRequestScope, type RequestScope } from "../../core/memory/scope.js";
import type { MemoryService, Origin, RememberResult } from "../../core/memory/service.js";
import type { LearningService } from "../../core/learning/service.js";
import type { SessionMatch, SessionSearch } from "../../core/sessions/search.js";
import type { ToggleStore } from "../../stores/traits.js";
import type { RapInvocation } from "../rap/wire.js";
import { defineTool, type ToolContext, type Toolset } from "../rap/registry.js";
import { age, filterText, recordBlock, recordList, totalText, windowLines } from "./render.js";
import { clip, headOf } from "../../core/text.js";

export const MEMORY_TOOLSET = "memory";

const kind = z.enum(MEMORY_KINDS);
const level = z.enum(SCOPE_LEVELS);
const memId = z.string().min(1).max(64).describe("a memory id such as mem_01jc…, from memory_search or memory_list");

/**
 * The config.json limits the arguments are checked against (write.maxContentChars, search and list
 * maxLimit, their defaults): a limit a person raised or lowered holds over RAP as in the CLI, and
 * the manifest says so. With the numbers written into the schemas, content over 4,000 characters
 * or a limit over 50 was refused over RAP whatever config.json allowed.
 */
export type MemoryToolLimits = Pick<MemoryConfig, "write" | "search" | "list">;

const DEFAULT_LIMITS: MemoryToolLimits = defaultConfig();

const count = (n: number) => n.toLocaleString("en-US");

export const rememberInput = (l: MemoryToolLimits = DEFAULT_LIMITS) => z.strictObject({
  content: z
    .string()
    .min(1)
    .max(l.write.maxContentChars)
    .describe(`the fact, preference, lesson or note, as one or two self-contained sentences (max ${count(l.write.maxContentChars)} characters)`),
  kind: kind.optional().describe("what it is; default note"),
  scope: level
    .optional()
    .describe("who sees it: user (all of this user's sessions), project, session or thread; default project for project/lesson/procedure, else user"),
  tags: z.array(z.string().min(1).max(64)).max(20).optional().describe("short labels to find it by"),
  confidence: z.number().min(0).max(1).optional().describe("how sure you are, 0..1"),
  expires_at: z.string().optional().describe('when it stops being useful: ISO date/time or a duration such as "30d"'),
  supersedes: memId.optional().describe("id of a memory this one corrects; the old one becomes a past version"),
  user_stated: z.boolean().optional().describe("true when the user said this directly (higher trust)"),
});

export const searchInput = (l: MemoryToolLimits = DEFAULT_LIMITS) => z.strictObject({
  query: z.string().min(1).max(1000).describe("what to look for, in plain words"),
  kinds: z.array(kind).optional().describe("only these kinds"),
  scopes: z.array(level).optional().describe("only these scopes"),
  limit: z.number().int().min(1).max(l.search.maxLimit).optional().describe(`how many results, default ${l.search.defaultLimit}`),
  include_history: z.boolean().optional().describe("also return superseded and expired versions"),
});

export const updateInput = (l: MemoryToolLimits = DEFAULT_LIMITS) => z.strictObject({
  id: memId,
  content: z.string().min(1).max(l.write.maxContentChars).describe("the corrected content; the old version is kept in history"),
  kind: kind.optional(),
  tags: z.array(z.string().min(1).max(64)).max(20).optional(),
  confidence: z.number().min(0).max(1).optional(),
  expires_at: z
    .string()
    .optional()
    .describe('a new expiry (ISO date/time or a duration such as "30d"), or "never" to clear it; default: the current one is kept'),
  user_stated: z.boolean().optional(),
});

export const historyInput = z.strictObject({ id: memId });

export const forgetInput = z
  .strictObject({
    id: memId.optional().describe("forget this memory (all its versions)"),
    ids: z.array(memId).min(1).max(100).optional().describe("forget several memories by id"),
    query: z.string().min(1).max(1000).optional().describe("forget everything matching this; the person is asked to confirm first"),
  })
  .refine((a) => [a.id, a.ids, a.query].filter((x) => x !== undefined).length === 1, {
    message: 'give exactly one of "id", "ids" or "query"',
  });

export const listInput = (l: MemoryToolLimits = DEFAULT_LIMITS) => z.strictObject({
  kinds: z.array(kind).optional(),
  scopes: z.array(level).optional(),
  status: z.array(z.enum(MEMORY_STATUSES).exclude(["deleted"])).optional().describe("default active and pending"),
  limit: z.number().int().min(1).max(l.list.maxLimit).optional().describe(`page size, default ${l.list.defaultLimit}`),
  cursor: z.string().optional().describe("next_cursor from the previous page"),
  order: z.enum(["newest", "oldest"]).optional(),
});

export const reviewInput = z
  .strictObject({
    action: z.enum(["list", "confirm", "reject"]).describe("list pending memories, or confirm/reject some by id"),
    ids: z.array(memId).min(1).max(50).optional().describe("required for confirm and reject"),
  })
  .refine((a) => a.action === "list" || (a.ids !== undefined && a.ids.length > 0), {
    message: '"ids" is required for confirm and reject',
    path: ["ids"],
  });

export const sessionSearchInput = z
  .strictObject({
    query: z.string().min(1).max(1000).optional().describe("words said in a past conversation"),
    current_session: z.boolean().optional().describe("search only this session (default: every earlier session but this one)"),
    thread_id: z.string().min(1).max(200).optional().describe("read mode: the thread of a message from an earlier result"),
    message_index: z.number().int().min(0).optional().describe("read mode: the message's index in that thread"),
    message_id: z.string().min(1).max(200).optional().describe("read mode: the message's id (instead of the index)"),
    window: z.number().int().min(0).max(10).optional().describe("messages shown before and after each match, default 2"),
    limit: z.number().int().min(1).max(20).optional().describe("how many matches, default 5"),
  })
  .superRefine((a, ctx) => {
    const read = a.thread_id !== undefined;
    if (a.query === undefined && !read) {
      ctx.addIssue({ code: "custom", message: 'give "query" to search, or "thread_id" with "message_index" or "message_id" to read around a message' });
    }
    // One mode a call: the other mode's fields were dropped without a word (a query "in" a thread
    // searched every other session; a message_id beside a message_index read that id's message).
    if (a.query !== undefined && read) {
      ctx.addIssue({ code: "custom", path: ["thread_id"], message: 'give "query" to search or "thread_id" to read around a message, not both' });
    }
    for (const k of ["message_index", "message_id"] as const) {
      if (!read && a[k] !== undefined) ctx.addIssue({ code: "custom", path: [k], message: `"${k}" reads around a message of "thread_id": give "thread_id" too, or leave "${k}" out to search` });
    }
    if (a.message_index !== undefined && a.message_id !== undefined) {
      ctx.addIssue({ code: "custom", path: ["message_id"], message: 'give "message_index" or "message_id", not both' });
    }
  });

export const taskFeedbackInput = z.strictObject({
  rating: z.number().min(-1).max(1).describe("how well the task went: -1 (failed or wrong) … 0 (mixed) … 1 (fully right)"),
  note: z.string().min(1).max(500).optional().describe("what was good or wrong, in a sentence"),
  episode_id: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe("rate this earlier episode (ep_…); default: the task this call belongs to, or the one before it when the user is reacting to it"),
});

function sessionMatchText(m: SessionMatch, n?: number): string {
  const h = m.hit;
  const head =
    `${n !== undefined ? `${n}. ` : ""}session ${h.rootThreadId} · thread ${h.threadId} · message #${h.ord} (id ${h.messageId}) · ` +
    `${h.role} · indexed ${new Date(h.at).toISOString().slice(0, 16).replace("T", " ")}`;
  const lines = [head, `   ${m.snippet}`];
  if (m.window.length > 1) lines.push("   conversation:", ...windowLines(m, "   "));
  return lines.join("\n");
}

export interface MemoryToolsetDeps {
  /** full-text search over past conversations; absent when no conversation source is configured */
  sessions?: SessionSearch | null;
  service: MemoryService;
  toggles: ToggleStore;
  clock: Clock;
  localUser: string;
  /** the project (working directory) of a session, or null when unknown */
  projectOf(sessionId: string): string | null;
  /** remember who a session belongs to, for the context hook (best effort) */
  recordRoot?(root: string, user: string, project: string | null): void;
  /** ask about new auto-extracted candidates in the conversation (config learning.candidates.askInConversation) */
  askAboutCandidates?: boolean;
  /** the learning loop, for task_feedback; absent when learning is off */
  learning?: LearningService | null;
  /** config.json's limits for the arguments (default: the built-in ones) */
  limits?: MemoryToolLimits;
}

function scopeOf(deps: MemoryToolsetDeps, inv: RapInvocation): RequestScope {
  const session = inv.thread_ancestors?.[0] ?? inv.group_id;
  const scope = deriveRequestScope(inv, { localUser: deps.localUser, project: deps.projectOf(session) });
  deps.recordRoot?.(scope.session, scope.user, scope.project);
  return scope;
}

function originOf(inv: RapInvocation): Origin {
  return { actor: "model", threadId: inv.group_id, toolCallId: inv.id };
}

function rememberText(r: RememberResult, now: number): string {
  const lines: string[] = [];
  const rec = r.record;
  if (r.status === "duplicate") lines.push(`Already remembered as ${rec.id}; recorded this as another source for it.`);
  else if (r.status === "replayed") lines.push(`Remembered as ${rec.id} (this call was already processed).`);
  else if (r.status === "superseded") lines.push(`Saved ${rec.id} as version ${rec.version}; ${rec.supersedes} is now a past version.`);
  else if (r.status === "proposed") lines.push(`Saved ${rec.id} as a proposed correction (version ${rec.version}) of ${rec.supersedes}, which stays current until a person confirms it.`);
  else lines.push(`Remembered as ${rec.id} (${rec.kind}, ${rec.scope.level} scope, trust ${rec.trust}).`);
  for (const n of r.notes) lines.push(`Note: ${n}.`);
  if (r.conflicts.length > 0) {
    lines.push(
      `Possible conflict with ${r.conflicts.length} existing memor${r.conflicts.length === 1 ? "y" : "ies"} (both are kept; ` +
        `if the new one corrects an old one, call memory_update on the old id or memory_forget it):`,
    );
    lines.push(recordList(r.conflicts, now));
  }
  return lines.join("\n");
}

export function memoryToolset(deps: MemoryToolsetDeps): Toolset {
  const { service, clock } = deps;
  const limits = deps.limits ?? DEFAULT_LIMITS;
  // Candidates already put to the person in this process ("ask me later" waits for a restart).
  const asked = new Set<string>();

  /** With learning.candidates.askInConversation: ask about this conversation's new candidates first. */
  const reviewCandidates = async (ctx: ToolContext): Promise<void> => {
    if (!deps.askAboutCandidates) return;
    const req = scopeOf(deps, ctx.invocation);
    const threads = new Set([req.thread, req.session, ...req.ancestors]);
    const page = await service.pending({ thread: req }, 50);
    const fresh = page.items
      .filter((r) => r.tags.includes("auto_extracted") && !asked.has(r.id) && r.sources.some((s) => s.threadId !== null && threads.has(s.threadId)))
      .slice(0, 5);
    if (fresh.length === 0) return;
    for (const r of fresh) asked.add(r.id);
    const choice = await ctx.askUser(
      `From this conversation I could remember for next time:\n${fresh.map((r) => `• ${r.content}`).join("\n")}\nKeep ${fresh.length === 1 ? "it" : "them"}?`,
      ["Keep", "Forget", "Ask me later"],
      2,
    );
    const ids = fresh.map((r) => r.id);
    const origin: Origin = { actor: "user", threadId: req.thread, toolCallId: ctx.invocation.id };
    if (choice === 0) await service.confirm({ thread: req }, ids, origin);
    else if (choice === 1) await service.reject({ thread: req }, ids, origin);
  };

  const tools = [
    defineTool({
      name: "memory_remember",
      description:
        "Save a fact, preference, lesson or note to long-term memory so later sessions can recall it. Write declarative " +
        'facts ("User prefers tabs in TypeScript"), not instructions. Returns the memory id and any conflicting memories.',
      input: rememberInput(limits),
      displayScript: `"Remember: " + args.content`,
      handler: async (a, ctx) => {
        const req = scopeOf(deps, ctx.invocation);
        const r = await service.remember(
          req,
          {
            content: a.content,
            kind: a.kind,
            scope: a.scope,
            tags: a.tags,
            confidence: a.confidence,
            expiresAt: a.expires_at,
            supersedes: a.supersedes,
            userStated: a.user_stated,
          },
          originOf(ctx.invocation),
        );
        return { text: rememberText(r, clock.now()) };
      },
    }),
    defineTool({
      name: "memory_search",
      description:
        "Search long-term memory (facts, preferences, project context, lessons) visible to this thread. Returns ranked " +
        "memories with id, kind, scope, trust, confidence, source and age.",
      input: searchInput(limits),
      displayScript: `"Search memory: " + args.query`,
      handler: async (a, ctx) => {
        const req = scopeOf(deps, ctx.invocation);
        const hits = await service.search(
          { thread: req },
          { query: a.query, kinds: a.kinds, scopes: a.scopes, limit: a.limit, includeHistory: a.include_history },
        );
        if (hits.length === 0) {
          const narrowed = filterText({ kinds: a.kinds, scopes: a.scopes });
          return { text: `No memories match "${a.query}"${narrowed ? ` with ${narrowed}` : ""}.` };
        }
        const now = clock.now();
        return {
          text:
            `${hits.length} memor${hits.length === 1 ? "y" : "ies"} for "${a.query}", most relevant first:\n` +
            recordList(
              hits.map((h) => h.record),
              now,
            ),
        };
      },
    }),
    defineTool({
      name: "memory_update",
      description:
        "Correct a memory: stores the new content as a new version and keeps the old one in its history (see memory_history).",
      input: updateInput(limits),
      displayScript: `"Update memory " + args.id`,
      handler: async (a, ctx) => {
        const req = scopeOf(deps, ctx.invocation);
        const r = await service.update(
          req,
          {
            id: a.id,
            content: a.content,
            kind: a.kind,
            tags: a.tags,
            confidence: a.confidence,
            expiresAt: a.expires_at,
            userStated: a.user_stated,
          },
          originOf(ctx.invocation),
        );
        return { text: rememberText(r, clock.now()) };
      },
    }),
    defineTool({
      name: "memory_history",
      description: "Show every version of a memory and the audit trail of changes to it.",
      input: historyInput,
      displayScript: `"Memory history " + args.id`,
      handler: async (a, ctx) => {
        const req = scopeOf(deps, ctx.invocation);
        const { versions, audit } = await service.history({ thread: req }, a.id);
        const now = clock.now();
        const lines = [`${versions.length} version${versions.length === 1 ? "" : "s"} of ${a.id} (oldest first):`, recordList(versions, now)];
        if (audit.length > 0) {
          lines.push("Changes:");
          for (const e of audit) lines.push(`- ${new Date(e.at).toISOString()} ${e.action} ${e.targetId} by ${e.actor}`);
        }
        return { text: lines.join("\n") };
      },
    }),
    defineTool({
      name: "memory_forget",
      description:
        "Forget memories for good: by id (all versions are removed from every index) or by query (the person is asked " +
        "to confirm the list first).",
      input: forgetInput,
      displayScript: `"Forget memory"`,
      handler: async (a, ctx) => {
        const viewer = { thread: scopeOf(deps, ctx.invocation) };
        const origin = originOf(ctx.invocation);
        if (a.query === undefined) {
          const ids = [...new Set(a.ids ?? [a.id!])];
          const purged = await service.forget(viewer, ids, origin);
          return { text: `Forgot ${ids.join(", ")} (${purged.length} version${purged.length === 1 ? "" : "s"} removed from memory and its indexes).` };
        }
        const { records: matches, more: others } = await service.findForForget(viewer, a.query);
        if (matches.length === 0) return { text: `No memories match "${a.query}"; nothing was forgotten.` };
        // more match than one forget takes (forget.maxByQuery): said to the person and the model
        const rest = others ? ` More than ${matches.length} match; the others stay until the next forget.` : "";
        const now = clock.now();
        const preview = matches
          .slice(0, 10)
          .map((r) => `• ${clip(r.content, 80)} (${age(r.createdAt, now)})`)
          .join("\n");
        const more = matches.length > 10 ? `\n…and ${matches.length - 10} more` : "";
        const choice = await ctx.askUser(
          `Forget ${matches.length} memor${matches.length === 1 ? "y" : "ies"} matching "${a.query}"?${rest}\n${preview}${more}`,
          [`Forget ${matches.length === 1 ? "it" : `all ${matches.length}`}`, "Cancel"],
          1,
        );
        if (choice !== 0) return { text: `The person declined; nothing was forgotten.` };
        const purged = await service.forgetVersions(
          viewer,
          matches.map((m) => m.id),
          origin,
          `forget by query, confirmed by the person`,
        );
        return {
          text:
            `Forgot ${matches.length} memor${matches.length === 1 ? "y" : "ies"} matching "${a.query}" (${purged.length} version${purged.length === 1 ? "" : "s"} removed).` +
            (others ? ` More memories match it: call memory_forget with the query again to forget the rest.` : ""),
        };
      },
    }),
    defineTool({
      name: "memory_list",
      description: "Browse memories visible to this thread as a timeline, newest first, a page at a time.",
      input: listInput(limits),
      displayScript: `"List memories"`,
      handler: async (a, ctx) => {
        const req = scopeOf(deps, ctx.invocation);
        const page = await service.list(
          { thread: req },
          { kinds: a.kinds, scopes: a.scopes, statuses: a.status, limit: a.limit, cursor: a.cursor, order: a.order },
        );
        if (page.items.length === 0) {
          const narrowed = filterText({ kinds: a.kinds, scopes: a.scopes, statuses: a.status });
          return { text: a.cursor ? "No more memories." : narrowed ? `No memories with ${narrowed}.` : "No memories yet." };
        }
        const lines = [`${page.items.length} of ${totalText(page)} memories:`, recordList(page.items, clock.now())];
        if (page.nextCursor) lines.push(`More: call memory_list with cursor "${page.nextCursor}".`);
        return { text: lines.join("\n") };
      },
    }),
    defineTool({
      name: "memory_review",
      description:
        "Review pending memories (auto-extracted or flagged by the safety scan): list them, or confirm/reject by id. " +
        "Confirming asks the person.",
      input: reviewInput,
      displayScript: `"Review memories: " + args.action`,
      handler: async (a, ctx) => {
        const viewer = { thread: scopeOf(deps, ctx.invocation) };
        const origin = originOf(ctx.invocation);
        const now = clock.now();
        if (a.action === "list") {
          const page = await service.pending(viewer, 50);
          if (page.items.length === 0) return { text: "No memories are waiting for review." };
          return { text: `${totalText(page)} pending memor${page.total === 1 && !page.totalCapped ? "y" : "ies"}:\n${recordList(page.items, now)}` };
        }
        // an id given twice is one memory: the person was asked "Confirm 2 memories?" about one
        const ids = [...new Set(a.ids!)];
        if (a.action === "reject") {
          await service.reject(viewer, ids, origin);
          return { text: `Rejected and forgot ${ids.join(", ")}.` };
        }
        const recs = await Promise.all(ids.map((id) => service.getVisible(viewer, id)));
        const notPending = recs.find((r) => r.status !== "pending");
        if (notPending) throw new CoreError("conflict", `memory ${notPending.id} is ${notPending.status}, not pending; nothing to confirm.`);
        const choice = await ctx.askUser(
          `Confirm ${recs.length} memor${recs.length === 1 ? "y" : "ies"} so they can be used in later sessions?\n` +
            recs.map((r) => `• ${headOf(r.content, 120)}${r.flags.length ? " (flagged by the safety scan)" : ""}`).join("\n"),
          ["Confirm", "Reject", "Keep pending"],
          2,
        );
        if (choice === 0) {
          await service.confirm(viewer, ids, { ...origin, actor: "user" });
          return { text: `Confirmed by the person: ${ids.join(", ")}.` };
        }
        if (choice === 1) {
          await service.reject(viewer, ids, { ...origin, actor: "user" });
          return { text: `The person rejected ${ids.join(", ")}; they were forgotten.` };
        }
        return { text: `Kept pending: ${ids.join(", ")}.` };
      },
    }),
    defineTool({
      name: "session_search",
      description:
        "Full-text search over past conversations with this user (what was said, tool calls and results), separate from " +
        "stored memories. Returns matching messages with their session, thread and message index and a few messages " +
        "around each; call again with thread_id and message_index to read more around one.",
      input: sessionSearchInput,
      displayScript: `"Search past sessions"`,
      handler: async (a, ctx) => {
        const sessions = deps.sessions;
        if (!sessions || !sessions.configured) {
          throw new CoreError(
            "unavailable",
            "session search has no conversation source on this server; start it with --sessions-from infinity-home:~/.infinity (or sqlite:FILE).",
          );
        }
        const req = scopeOf(deps, ctx.invocation);
        const window = a.window ?? 2;
        if (a.query === undefined) {
          const m = await sessions.read(req.user, { threadId: a.thread_id!, ord: a.message_index, messageId: a.message_id, window });
          return { text: `Around message #${m.hit.ord} of thread ${m.hit.threadId}:\n${sessionMatchText(m)}` };
        }
        const matches = await sessions.search(req.user, {
          query: a.query,
          limit: a.limit ?? 5,
          window,
          sessionId: a.current_session ? req.session : undefined,
          excludeSessionId: a.current_session ? undefined : req.session,
        });
        if (matches.length === 0) return { text: `No past conversation matches "${a.query}".` };
        return {
          text:
            `${matches.length} match${matches.length === 1 ? "" : "es"} in past conversations for "${a.query}":\n` +
            matches.map((m, i) => sessionMatchText(m, i + 1)).join("\n"),
        };
      },
    }),
    defineTool({
      name: "task_feedback",
      description:
        "Record how well the current task went, when the user says so (\"that worked\", \"no, that's wrong\") or a check " +
        "proves it. The rating feeds the learning loop: it re-scores the task and the steps that led to it.",
      input: taskFeedbackInput,
      displayScript: `"Task feedback"`,
      handler: async (a, ctx) => {
        const learning = deps.learning;
        if (!learning) throw new CoreError("unavailable", "learning is turned off on this server (config learning.enabled); the feedback was not recorded.");
        const inv = ctx.invocation;
        const req = scopeOf(deps, inv);
        const r = await learning.feedback({ threadId: inv.group_id, callId: inv.id, rating: a.rating, note: a.note, episodeId: a.episode_id, rater: { user: req.user, session: req.session } });
        const rating = a.rating.toFixed(2);
        if (r.applied) {
          const e = r.applied.episode;
          return {
            text:
              `${r.duplicate ? "Already recorded" : "Recorded"} rating ${rating} for episode ${e.id}: its reward is now ` +
              `${e.reward === null ? "unset" : e.reward.toFixed(2)} from ${r.applied.signals.length} signal(s).`,
          };
        }
        return {
          text: `${r.duplicate ? "Already recorded" : "Recorded"} rating ${rating} for this task; it is applied when the thread's experience is next processed.`,
        };
      },
    }),
  ];

  // Every tool asks first when configured to; the review never changes what the tool then does.
  for (const t of tools) {
    const run = t.handler.bind(t);
    t.handler = async (args: never, ctx: ToolContext) => {
      await reviewCandidates(ctx).catch((e: unknown) => {
        if (ctx.signal.aborted) throw e;
        ctx.log.warn({ err: e }, "asking about memory candidates failed");
      });
      return run(args, ctx);
    };
  }

  return {
    name: MEMORY_TOOLSET,
    description: "Long-term memory: facts, preferences, project context and lessons that survive across sessions",
    needsMigration: false,
    tools,
    gate: async (inv: RapInvocation, _ctx?: ToolContext) => {
      const chain = [inv.group_id, ...[...(inv.thread_ancestors ?? [])].reverse()];
      const enabled = await deps.toggles.resolve(MEMORY_TOOLSET, chain);
      return enabled === false ? "Error: the memory toolset is disabled for this thread" : null;
    },
  };
}

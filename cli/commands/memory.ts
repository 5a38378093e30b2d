// `infinity-memory memory …`: the person's own view of their memories (add, correct, search,
// list, show, review, forget, import, export). Every command works on the database directly; no
// server needed.
import { InvalidArgumentError, type Command } from "commander";
import { closeSync, existsSync, openSync, readSync } from "node:fs";
import { createInterface } from "node:readline/promises";
import { resolve } from "node:path";
import { projectDir } from "../../stores/infinity-files/project-dir.js";
import { MEMORY_KINDS, MEMORY_STATUSES, SCOPE_LEVELS, type MemoryRecord } from "../../core/memory/record.js";
import type { Origin, Viewer } from "../../core/memory/service.js";
import { filterText, recordBlock, recordList, totalText } from "../../toolsets/memory/render.js";
import { writeLines } from "../line-output.js";
import { defaultInfinityHome, makeSessionSearch, openSources, type OpenedSources } from "../sessions.js";
import { databaseLocation, openAnyMemory, openMemory, type AnyMemoryContext, type MemoryContext } from "../context.js";
import { backendKindOf } from "../../stores/backend.js";
import { recreateWordIndex, wordIndexDrift } from "../../stores/sqlite/memory-fts.js";
import { claimForgetting, claimReindexing, claimWordReindexing, processEnded, processStart } from "../serving-marks.js";

/** longer than the 100 ms a writer's busy handler sleeps at most between tries (see recreateWordIndex) */
const REBUILD_PAUSE_MS = 120;
const PAUSE = new Int32Array(new SharedArrayBuffer(4));
import { addMemory, correctMemory, expiryOption, tagsOption, type AddOptions, type CorrectOptions } from "./memory-edit.js";
import { importFileSize, importMemories } from "./memory-import.js";
import { reindexVectors, reindexVectorsPg } from "./memory-vectors.js";
import { numberAtLeast, numberBetween, userId, wholeNumber } from "../options.js";

interface Common {
  db?: string;
  user?: string;
  project?: string;
  json?: boolean;
}

const CLI_ORIGIN: Origin = { actor: "user", threadId: null, toolCallId: null };

/** Runs a command over the opened stores; only `create` commands may start a new database file. */
function withMemory<T extends Common>(fn: (ctx: AnyMemoryContext, viewer: Viewer, o: T, ...rest: string[][]) => Promise<void>, opts: { create?: boolean } = {}) {
  return async (...args: unknown[]) => {
    const o = args.find((a) => a && typeof a === "object" && !Array.isArray(a) && !("commands" in (a as object))) as T;
    const positional = args.filter((a) => Array.isArray(a) || typeof a === "string").map((a) => (Array.isArray(a) ? a : [a as string]));
    const ctx = await openAnyMemory({ location: o.db, existing: opts.create !== true });
    const conversations = indexBeforeForget(ctx);
    try {
      const viewer: Viewer = { owner: o.user ?? ctx.config.localUser, project: o.project ? projectDir(o.project) : null };
      await fn(ctx, viewer, o, ...positional);
    } finally {
      conversations.close();
      await ctx.close();
    }
  };
}

/**
 * A forget from the command line purges what the daemon's conversations said of the memory, as
 * a server's does: the daemon home ($INFINITY_HOME or ~/.infinity) is indexed first, only when a
 * forget happens. Without it, messages not yet indexed were indexed later, forgotten text and all.
 */
function indexBeforeForget(ctx: AnyMemoryContext): { close(): void } {
  const home = defaultInfinityHome();
  if (!existsSync(home)) return { close: () => undefined };
  let opened: OpenedSources | null = null;
  ctx.sessionForget.refresh = async () => {
    opened ??= openSources([`infinity-home:${home}`], "db" in ctx ? (ctx as MemoryContext).db : ctx.backend, ctx.location);
    const search = makeSessionSearch("db" in ctx ? (ctx as MemoryContext).db : ctx.backend.sessionIndex, opened.sources, ctx.clock, ctx.config.localUser);
    await search.refresh(true);
  };
  return { close: () => opened?.close() };
}

/**
 * Run a CLI forget (or reject) under a `.NAME.PID.forgetting` mark: after its claim the cascade
 * writes by row id, so a restore swapping the file meanwhile got those writes in the restored
 * database. restore refuses while the mark lives; a restore under way refuses this forget before
 * it does anything. (PostgreSQL has no restore command: nothing to mark there.)
 */
async function whileForgetting<R>(ctx: AnyMemoryContext, what: string, fn: () => Promise<R>): Promise<R> {
  const unmark = "dbPath" in ctx ? claimForgetting((ctx as MemoryContext).dbPath, what) : () => undefined;
  try {
    return await fn();
  } finally {
    unmark();
  }
}

function csv<T extends string>(allowed: readonly T[], what: string) {
  return (v: string): T[] => {
    const xs = v.split(",").map((s) => s.trim()).filter(Boolean);
    const bad = xs.find((x) => !(allowed as readonly string[]).includes(x));
    if (bad) throw new Error(`unknown ${what} "${bad}"; use one of ${allowed.join(", ")}`);
    return xs as T[];
  };
}

function jsonRecord(r: MemoryRecord): Record<string, unknown> {
  return {
    id: r.id,
    lineage_id: r.lineageId,
    version: r.version,
    supersedes: r.supersedes,
    scope: r.scope,
    kind: r.kind,
    content: r.content,
    tags: r.tags,
    trust: r.trust,
    confidence: r.confidence,
    status: r.status,
    flags: r.flags,
    valid_from: r.validFrom,
    valid_to: r.validTo,
    created_at: new Date(r.createdAt).toISOString(),
    updated_at: new Date(r.updatedAt).toISOString(),
    expires_at: r.expiresAt ? new Date(r.expiresAt).toISOString() : null,
    sources: r.sources.map((s) => ({
      thread_id: s.threadId,
      message_ids: s.messageIds,
      tool_call_id: s.toolCallId,
      actor: s.actor,
      at: new Date(s.at).toISOString(),
    })),
  };
}

function common(c: Command): Command {
  return c
    .option("--db <path|url>", "SQLite file or postgres:// URL")
    .option("--user <id>", "whose memories (default: the configured local user)", userId)
    .option("--project <dir>", "narrow to one project (plus user-scope memories)");
}

async function confirm(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1");

/**
 * `export --out` replaces the file it names: given the database (a slip of --out for --db), or a
 * backup, it swapped every memory, tombstone and audit row for a JSON-lines file without a word.
 */
function refuseDatabaseOut(out: string, dbPath: string | null): void {
  const db = dbPath ? resolve(dbPath) : null;
  if (db !== null && [db, `${db}-wal`, `${db}-shm`, `${db}-journal`].includes(out)) {
    throw new Error(`--out ${out} is the database's own file; the export would replace it: give a new file, such as memories.jsonl`);
  }
  let head = Buffer.alloc(0);
  try {
    const fd = openSync(out, "r");
    try {
      head = Buffer.alloc(SQLITE_HEADER.length);
      head = head.subarray(0, readSync(fd, head, 0, head.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return; // not there yet (or a folder, or unreadable): the write says what is wrong
  }
  if (head.equals(SQLITE_HEADER)) {
    throw new Error(`--out ${out} is a SQLite database (an infinity-memory database or backup?); the export would replace it: give a new file, such as memories.jsonl`);
  }
}

export function registerMemory(program: Command): void {
  const memory = program.command("memory").description("add, correct, search, browse, review, forget and export memories");

  const kindOption = (v: string) => {
    if (!(MEMORY_KINDS as readonly string[]).includes(v)) throw new InvalidArgumentError(`expected one of ${MEMORY_KINDS.join(", ")}`);
    return v;
  };

  common(memory.command("add").argument("<text...>", "what to remember, or - to read it from standard input").description("remember something you state yourself (trust user_stated)"))
    .option("--kind <kind>", `${MEMORY_KINDS.join(", ")} (default note)`, kindOption)
    .option("--scope <level>", "user or project (default: project for project, lesson and procedure with --project, else user)", (v: string) => {
      if (v !== "user" && v !== "project") throw new InvalidArgumentError("expected user or project (session and thread memories are written by a thread)");
      return v;
    })
    .option("--tags <tags>", "comma-separated labels", tagsOption)
    .option("--confidence <n>", "how sure, 0..1 (default: the configured user-stated confidence)", numberBetween(0, 1))
    .option("--expires-at <when>", 'when it stops applying: ISO date/time or a duration such as "30d"', expiryOption)
    .option("--json", "print the outcome as JSON")
    .action(
      withMemory<Common & AddOptions>(async (ctx, viewer, o, text) => {
        await addMemory(ctx, viewer as { owner: string; project: string | null }, text ?? [], o);
      }, { create: true }),
    );

  common(memory.command("correct").alias("update").argument("<id>").argument("[text...]", "the corrected text, or - to read it from standard input").description("store a corrected version of a memory (the old one is kept as a past version)"))
    .option("--kind <kind>", "a new kind", kindOption)
    .option("--tags <tags>", 'comma-separated labels in place of the current ones ("" clears them)', tagsOption)
    .option("--confidence <n>", "how sure, 0..1", numberBetween(0, 1))
    .option("--expires-at <when>", 'a new expiry (ISO date/time or "30d"), or "never" to clear it; default: kept', expiryOption)
    .option("--json", "print the outcome as JSON")
    .action(
      withMemory<Common & CorrectOptions>(async (ctx, viewer, o, id, text) => {
        await correctMemory(ctx, viewer as { owner: string; project: string | null }, id![0]!, text ?? [], o);
      }),
    );

  common(memory.command("search").argument("<query...>").description("search memories"))
    .option("--kind <kinds>", "comma-separated kinds", csv(MEMORY_KINDS, "kind"))
    .option("--scope <levels>", "comma-separated scopes", csv(SCOPE_LEVELS, "scope"))
    .option("--limit <n>", "how many (at most 50 are returned)", wholeNumber(1), 10)
    .option("--history", "include superseded and expired versions")
    .option("--json", "JSON lines")
    .action(
      withMemory<Common & { kind?: (typeof MEMORY_KINDS)[number][]; scope?: (typeof SCOPE_LEVELS)[number][]; limit: string; history?: boolean }>(async (ctx, viewer, o, q) => {
        const query = (q ?? []).join(" ");
        const hits = await ctx.service.search(viewer, { query, kinds: o.kind, scopes: o.scope, limit: Number(o.limit), includeHistory: o.history });
        if (o.json) for (const h of hits) process.stdout.write(`${JSON.stringify({ score: h.score, ...jsonRecord(h.record) })}\n`);
        else if (hits.length) process.stdout.write(`${recordList(hits.map((h) => h.record), ctx.clock.now())}\n`);
        else {
          const narrowed = filterText({ kinds: o.kind, scopes: o.scope });
          process.stdout.write(`no memories match "${query}"${narrowed ? ` with ${narrowed}` : ""}\n`);
        }
      }),
    );

  common(memory.command("list").description("browse memories, newest first"))
    .option("--kind <kinds>", "comma-separated kinds", csv(MEMORY_KINDS, "kind"))
    .option("--scope <levels>", "comma-separated scopes", csv(SCOPE_LEVELS, "scope"))
    .option("--status <statuses>", "comma-separated statuses (default active,pending)", csv(MEMORY_STATUSES, "status"))
    .option("--limit <n>", "page size (at most 100)", wholeNumber(1), 20)
    .option("--cursor <c>", "next page")
    .option("--oldest", "oldest first")
    .option("--json", "JSON lines")
    .action(
      withMemory<
        Common & {
          kind?: (typeof MEMORY_KINDS)[number][];
          scope?: (typeof SCOPE_LEVELS)[number][];
          status?: (typeof MEMORY_STATUSES)[number][];
          limit: string;
          cursor?: string;
          oldest?: boolean;
        }
      >(async (ctx, viewer, o) => {
        const page = await ctx.service.list(viewer, {
          kinds: o.kind,
          scopes: o.scope,
          statuses: o.status,
          limit: Number(o.limit),
          cursor: o.cursor,
          order: o.oldest ? "oldest" : "newest",
        });
        if (o.json) {
          for (const r of page.items) process.stdout.write(`${JSON.stringify(jsonRecord(r))}\n`);
          // stdout stays one record per line; where to continue goes to stderr
          if (page.nextCursor) process.stderr.write(`next page: --cursor ${page.nextCursor}\n`);
          return;
        }
        if (page.items.length === 0) {
          const narrowed = filterText({ kinds: o.kind, scopes: o.scope, statuses: o.status });
          process.stdout.write(
            o.cursor ? "no more memories\n" : narrowed ? `no memories with ${narrowed}\n` : "no memories here yet (add one with `memory add TEXT`, or import a file with `memory import FILE`)\n",
          );
          return;
        }
        process.stdout.write(`${page.items.length} of ${totalText(page)}\n${recordList(page.items, ctx.clock.now())}\n`);
        if (page.nextCursor) process.stdout.write(`next page: --cursor ${page.nextCursor}\n`);
      }),
    );

  common(memory.command("show").argument("<id>").description("one memory with all its versions and its audit trail"))
    .option("--json", "JSON")
    .action(
      withMemory<Common>(async (ctx, viewer, o, id) => {
        const { versions, audit } = await ctx.service.history(viewer, id![0]!);
        if (o.json) {
          process.stdout.write(`${JSON.stringify({ versions: versions.map(jsonRecord), audit }, null, 2)}\n`);
          return;
        }
        const now = ctx.clock.now();
        process.stdout.write(`${versions.map((v) => recordBlock(v, now)).join("\n")}\n`);
        for (const e of audit) process.stdout.write(`  ${new Date(e.at).toISOString()} ${e.action} ${e.targetId} by ${e.actor}\n`);
      }),
    );

  common(memory.command("forget").argument("[ids...]").description("forget memories by id, or by --query after confirmation"))
    .option("--query <text>", "forget everything matching this")
    .option("--yes", "do not ask")
    .action(
      withMemory<Common & { query?: string; yes?: boolean }>((ctx, viewer, o, ids) => whileForgetting(ctx, "memory forget", async () => {
        let targets = ids ?? [];
        // as memory_forget: the ids were dropped for the query's matches without a word
        if (o.query !== undefined && targets.length > 0) throw new Error("give memory ids or --query, not both");
        if (o.query) {
          const { records: matches, more } = await ctx.service.findForForget(viewer, o.query);
          if (matches.length === 0) {
            process.stdout.write(`no memories match "${o.query}"\n`);
            return;
          }
          process.stderr.write(`${recordList(matches, ctx.clock.now())}\n`);
          // one forget takes forget.maxByQuery at most: the person hears that others stay
          if (more) process.stderr.write(`more than ${matches.length} memories match; the others stay until the command is run again\n`);
          if (!o.yes && !(await confirm(`Forget these ${matches.length} memories?`))) {
            process.stderr.write("nothing forgotten (pass --yes to confirm without a prompt)\n");
            process.exitCode = 1;
            return;
          }
          targets = matches.map((m) => m.id);
        }
        if (targets.length === 0) throw new Error("give memory ids or --query");
        // by query: the versions listed above, as memory_forget (by id: every version)
        const purged = o.query
          ? await ctx.service.forgetVersions(viewer, targets, CLI_ORIGIN, "forgotten from the CLI")
          : await ctx.service.forget(viewer, targets, CLI_ORIGIN, "forgotten from the CLI");
        if (purged.length === 0) process.stdout.write(`nothing to forget: ${targets.length === 1 ? "that memory was" : "those memories were"} forgotten already\n`);
        else process.stdout.write(`forgot ${targets.length} memor${targets.length === 1 ? "y" : "ies"} (${purged.length} versions purged)\n`);
      })),
    );

  common(memory.command("review").description("list pending memories, or confirm/reject them"))
    .option("--confirm <ids>", "comma-separated ids to confirm")
    .option("--reject <ids>", "comma-separated ids to reject (forgets them)")
    .option("--json", "JSON lines")
    .action(
      withMemory<Common & { confirm?: string; reject?: string }>(async (ctx, viewer, o) => {
        const split = (s: string) => s.split(",").map((x) => x.trim()).filter(Boolean);
        for (const [flag, v] of [["--confirm", o.confirm], ["--reject", o.reject]] as const) {
          if (v !== undefined && split(v).length === 0) throw new Error(`${flag} needs memory ids (comma-separated); \`memory review\` lists the pending ones`);
        }
        // one id in both would be confirmed and then forgotten
        const twice = o.confirm && o.reject ? split(o.confirm).find((id) => split(o.reject!).includes(id)) : undefined;
        if (twice) throw new Error(`${twice} is in both --confirm and --reject; give it in one of them`);
        if (o.confirm) {
          const done = await ctx.service.confirm(viewer, split(o.confirm), CLI_ORIGIN);
          process.stdout.write(`confirmed ${done.map((r) => r.id).join(", ")}\n`);
        }
        if (o.reject) {
          await whileForgetting(ctx, "memory review --reject", () => ctx.service.reject(viewer, split(o.reject!), CLI_ORIGIN));
          process.stdout.write(`rejected ${o.reject}\n`);
        }
        if (o.confirm || o.reject) return;
        const page = await ctx.service.pending(viewer, 100);
        if (o.json) for (const r of page.items) process.stdout.write(`${JSON.stringify(jsonRecord(r))}\n`);
        else process.stdout.write(page.items.length ? `${recordList(page.items, ctx.clock.now())}\n` : "nothing pending\n");
      }),
    );

  memory
    .command("reindex")
    .description("rebuild the word index from the memories table (its bm25 totals drift upward with use)")
    .option("--db <path>", "database file (with --vectors also a postgres:// URL)")
    .option("--if-drift <ratio>", "only when the index counts this many times the live rows", numberAtLeast(0), 1)
    .option("--vectors", "instead: embed every memory that has no vector yet (needs config embedder)")
    .option("--batch <n>", "with --vectors: texts per embedding call", wholeNumber(1, 10_000), 64)
    .option("--json", "with --vectors: print the summary as JSON")
    .action(async (o: { db?: string; ifDrift: string; vectors?: boolean; batch: string; json?: boolean }) => {
      if (o.vectors && backendKindOf(databaseLocation(o.db)) === "postgres") {
        const pg = await openAnyMemory({ location: o.db });
        try {
          return await reindexVectorsPg(pg, { batch: Number(o.batch), json: o.json ?? false });
        } finally {
          await pg.close();
        }
      }
      const ctx = openMemory({ dbPath: o.db, existing: true });
      try {
        if (o.vectors) {
          // vectors are written by row id: restore looks for this mark and refuses while it lives
          const unmark = claimReindexing(ctx.dbPath, "memory reindex --vectors");
          try {
            return await reindexVectors(ctx, { batch: Number(o.batch), json: o.json ?? false });
          } finally {
            unmark();
          }
        }
        const before = wordIndexDrift(ctx.db);
        if (before < Number(o.ifDrift)) {
          process.stdout.write(`drift ${before.toFixed(2)} is below ${o.ifDrift}; nothing to do\n`);
          return;
        }
        // restore finds a rebuild by its state in the database; the mark makes this one refuse
        // while a restore runs (started under one, it made the restore give up at its last look,
        // or had the file replaced beneath it)
        const unmark = claimWordReindexing(ctx.dbPath);
        const t0 = performance.now();
        try {
          // beside the live index, in batches: servers' writes go on meanwhile
          recreateWordIndex(ctx.db, { pid: process.pid, start: processStart(process.pid), gone: processEnded, pause: () => Atomics.wait(PAUSE, 0, 0, REBUILD_PAUSE_MS) });
        } finally {
          unmark();
        }
        process.stdout.write(`word index rebuilt in ${Math.round(performance.now() - t0)} ms (drift ${before.toFixed(2)} → ${wordIndexDrift(ctx.db).toFixed(2)})\n`);
      } finally {
        ctx.close();
      }
    });

  common(memory.command("import").argument("<file>").description("add memories from a JSON-lines file (one object per line; export output works)"))
    // the import's own limit: a larger one passed here and was refused after the database was made
    .option("--batch <n>", "lines per transaction (at most 50000)", wholeNumber(1, 50_000), 1000)
    .option("--json", "print the summary as JSON")
    .action((file: string, ...rest: unknown[]) => {
      // a missing file is named before the database is opened: a typo created an empty one
      importFileSize(resolve(file));
      return withMemory<Common & { batch: string }>(async (ctx, viewer, o, f) => {
        await importMemories(ctx, viewer as { owner: string; project: string | null }, f![0]!, { batch: Number(o.batch), json: o.json === true });
      }, { create: true })(file, ...rest);
    });

  common(memory.command("export").description("write every memory (all versions, no forgotten ones) as JSON lines"))
    .option("--out <file>", "output file (default stdout)")
    .action(
      withMemory<Common & { out?: string }>(async (ctx, viewer, o) => {
        if (o.out) refuseDatabaseOut(resolve(o.out), "dbPath" in ctx ? (ctx as MemoryContext).dbPath : null);
        const records = ctx.service.exportAll(viewer);
        async function* lines() {
          for await (const r of records) yield JSON.stringify(jsonRecord(r));
        }
        const n = await writeLines(lines(), o.out);
        if (o.out) process.stderr.write(`exported ${n} ${n === 1 ? "memory" : "memories"} to ${resolve(o.out)}\n`);
      }),
    );
}

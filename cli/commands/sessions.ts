// `infinity-memory sessions index|search`: the session index from the command line.
import type { Command } from "commander";
import cliProgress from "cli-progress";
import { SessionIndexer, type IndexReport } from "../../core/sessions/indexer.js";
import { SqliteSessionIndex } from "../../stores/sqlite/session-index.js";
import { openMemory } from "../context.js";
import { windowLines } from "../../toolsets/memory/render.js";
import { defaultInfinityHome, makeSessionSearch, openSources } from "../sessions.js";
import { userId, wholeNumber } from "../options.js";

interface SourceOpts {
  db?: string;
  infinityHome?: string;
  from?: string[];
}

function specsOf(o: SourceOpts): string[] {
  if (o.from && o.from.length > 0) return o.from;
  return [`infinity-home:${o.infinityHome ?? defaultInfinityHome()}`];
}

/** stderr: the threads an index run left out, and that the rest was indexed and searched */
function warnSkipped(skipped: IndexReport["skipped"]): void {
  for (const t of skipped) process.stderr.write(`infinity-memory: left out thread ${t.threadId}, which could not be read (${t.reason}); the other conversations are indexed, and it is tried again next time\n`);
}

/** stderr: the messages an index run left out because this version does not know their kind */
function warnUnknown(threads: IndexReport["unknownKinds"]): void {
  for (const t of threads) process.stderr.write(`infinity-memory: left out ${t.messages} message(s) of thread ${t.threadId} of kind ${t.kinds.map((k) => `"${k}"`).join(", ")}, which this version does not know (a newer daemon wrote them); the rest of the thread is indexed\n`);
}

export function registerSessions(program: Command): void {
  const cmd = program.command("sessions").description("full-text search over past conversations");
  cmd
    .command("index")
    .description("index (incrementally) the conversations of a daemon home or an Infinity-shaped SQLite store")
    .option("--infinity-home <dir>", "the daemon's state directory (default $INFINITY_HOME or ~/.infinity)")
    .option("--from <source...>", "infinity-home:DIR or sqlite:FILE (instead of --infinity-home)")
    .option("--db <path>", "database file")
    .option("--json", "print the report as JSON")
    .action(async (o: SourceOpts & { json?: boolean }) => {
      const ctx = openMemory({ dbPath: o.db });
      const opened = openSources(specsOf(o), ctx.db, ctx.dbPath);
      try {
        const index = new SqliteSessionIndex(ctx.db);
        const indexer = new SessionIndexer(index, ctx.clock, ctx.config.localUser);
        for (const src of opened.sources) {
          const bar = process.stderr.isTTY && !o.json ? new cliProgress.SingleBar({ format: `${src.location} [{bar}] {value}/{total} threads` }, cliProgress.Presets.shades_classic) : null;
          let started = false;
          const report = await indexer.run(src, (done, total) => {
            if (!bar) return;
            if (!started) {
              bar.start(total, 0);
              started = true;
            }
            bar.update(done);
          });
          bar?.stop();
          if (o.json) process.stdout.write(`${JSON.stringify({ source: src.location, ...report })}\n`);
          else
            process.stdout.write(
              `${src.location}: ${report.threads} threads, ${report.threadsChanged} changed, ${report.messagesAdded} messages added` +
                `${report.reset ? `, ${report.reset} re-indexed from the start` : ""}` +
                `${report.removed ? `, ${report.removed} deleted from the source and taken out of the index` : ""}` +
                `${report.movedFrom.length ? `, taken over from where it was before (${report.movedFrom.join(", ")})` : ""}` +
                `${report.skipped.length ? `, ${report.skipped.length} could not be read` : ""}\n`,
            );
          warnSkipped(report.skipped);
          warnUnknown(report.unknownKinds);
          if (report.skipped.length > 0) process.exitCode = 1;
        }
      } finally {
        opened.close();
        ctx.close();
      }
    });
  cmd
    .command("search")
    .argument("<query...>")
    .description("search past conversations of a user")
    .option("--infinity-home <dir>", "the daemon's state directory (default $INFINITY_HOME or ~/.infinity)")
    .option("--from <source...>", "infinity-home:DIR or sqlite:FILE")
    .option("--db <path>", "database file")
    .option("--user <id>", "whose sessions (default the local user)", userId)
    .option("--limit <n>", "matches", wholeNumber(1), 10)
    .option("--window <n>", "messages around each match (at most 10)", wholeNumber(0), 1)
    .option("--json", "JSON lines")
    .action(async (q: string[], o: SourceOpts & { user?: string; limit: string; window: string; json?: boolean }) => {
      const ctx = openMemory({ dbPath: o.db });
      const opened = openSources(specsOf(o), ctx.db, ctx.dbPath);
      try {
        const search = makeSessionSearch(ctx.db, opened.sources, ctx.clock, ctx.config.localUser);
        search.onSkipped = (_source, skipped) => warnSkipped(skipped);
        search.onUnknownKinds = (_source, threads) => warnUnknown(threads);
        const matches = await search.search(o.user ?? ctx.config.localUser, { query: q.join(" "), limit: Number(o.limit), window: Number(o.window) });
        for (const m of matches) {
          // --window: the messages around the match (it was computed and never shown)
          const around = m.window.length > 1 ? m.window : [];
          if (o.json) {
            const window = around.map((w) => ({ message_index: w.ord, message_id: w.messageId, role: w.role, text: w.text }));
            process.stdout.write(
              `${JSON.stringify({ session_id: m.hit.rootThreadId, thread_id: m.hit.threadId, message_index: m.hit.ord, message_id: m.hit.messageId, role: m.hit.role, text: m.hit.text, ...(window.length ? { window } : {}) })}\n`,
            );
          } else {
            process.stdout.write(`session ${m.hit.rootThreadId} thread ${m.hit.threadId} #${m.hit.ord} (${m.hit.role}): ${m.snippet}\n`);
            if (around.length > 0) process.stdout.write(`${windowLines({ hit: m.hit, window: around }, "  ").join("\n")}\n`);
          }
        }
        if (!o.json && matches.length === 0) process.stdout.write("no matches\n");
      } finally {
        opened.close();
        ctx.close();
      }
    });
}

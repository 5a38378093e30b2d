// `infinity-memory memory import FILE.jsonl`: bulk-add memories through the batched write path.
// Each line is one JSON object: {"content": …} plus optional kind, scope (a level, or the object
// `memory export` writes), tags, confidence, expires_at, valid_from, project, session, thread.
// A bad line is reported with its line number and field and never stops the good ones; content
// already stored under the same scope is skipped, so running an import twice adds nothing. An
// exported record keeps its standing: past versions (superseded, expired) are left out, and a
// pending one stays pending. On
// PostgreSQL a large import ends with VACUUM (ANALYZE) of the memory tables, as `migrate` does.
import { SingleBar } from "cli-progress";
import { createReadStream, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { createInterface } from "node:readline";
import { z } from "zod";
import type { BatchRememberItem, BatchRememberResult } from "../../core/memory/batch.js";
import { MemoryKind, MemoryStatus, ScopeLevel } from "../../core/memory/record.js";
import { defaultLevelFor } from "../../core/memory/write-policy.js";
import { EARLIEST_TIME, LATEST_TIME, epochMillisProblem, parseIsoTime } from "../../core/timestamps.js";
import { projectDir } from "../../stores/infinity-files/project-dir.js";
import type { PostgresBackend } from "../../stores/postgres/backend.js";
import { MEMORY_WRITE_TABLES, vacuumAnalyze } from "../../stores/postgres/vacuum.js";
import { issueParts } from "../../toolsets/rap/arg-errors.js";
import { BatchWriter } from "../batch-writer.js";
import type { AnyMemoryContext } from "../context.js";

/**
 * New memories from which a PostgreSQL import analyses the tables itself: a large import leaves
 * them without statistics until autovacuum comes (100k memories: search p95 ~55 ms before, ~16 ms
 * after); a small one changes too little to matter.
 */
export const ANALYZE_AFTER_IMPORTED = 1000;

const id = z.string().trim().min(1).max(500);


const ImportLine = z
  .object({
    content: z.string(),
    kind: MemoryKind.optional(),
    scope: z
      .union([
        ScopeLevel,
        z.object({
          level: ScopeLevel,
          user: id.optional(),
          project: id.nullable().optional(),
          session: id.nullable().optional(),
          thread: id.nullable().optional(),
        }),
      ])
      .optional(),
    tags: z.array(z.string()).optional(),
    confidence: z.number().min(0).max(1).optional(),
    expires_at: z.string().nullable().optional(),
    valid_from: z.union([z.number().int(), z.string()]).nullable().optional(),
    user: id.optional(),
    project: id.optional(),
    session: id.optional(),
    thread: id.optional(),
    sources: z.array(z.object({ thread_id: z.string().nullable().optional() }).loose()).optional(),
    /** an exported record's status: past versions are left out, a pending one stays pending */
    status: MemoryStatus.optional(),
  })
  // Exported records also carry id, status, trust, sources…: imported memories get fresh ids and
  // the "imported" trust, whatever the file claims.
  .loose();
type ImportLine = z.infer<typeof ImportLine>;

class LineError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** The batch item for one parsed line, or a LineError naming the field to fix. */
function toItem(line: ImportLine, viewer: { owner: string; project: string | null }): BatchRememberItem {
  const sc = typeof line.scope === "object" ? line.scope : null;
  const level = (typeof line.scope === "string" ? line.scope : sc?.level) ?? defaultLevelFor(line.kind ?? "note");
  const user = sc?.user ?? line.user ?? viewer.owner;
  if (user !== viewer.owner) {
    throw new LineError(sc?.user ? "scope.user" : "user", `belongs to user "${user}" but the import runs as "${viewer.owner}"; pass --user ${user} to import their memories`);
  }
  const written = sc?.project ?? line.project;
  // a project is its real absolute directory (what sessions and --project use): "/p/" or a link
  // was stored as written and seen by no session; a relative one could mean any folder
  if (written && !isAbsolute(written)) {
    throw new LineError(sc?.project ? "scope.project" : "project", `"${written}" is not an absolute directory path; write the project's full path (as \`memory export\` does)`);
  }
  const project = written ? projectDir(written) : viewer.project;
  if (level === "project" && !project) {
    throw new LineError("scope.project", `a project-scope memory needs a project: add "project" to the line or pass --project DIR`);
  }
  const thread = sc?.thread ?? line.thread ?? line.sources?.find((s) => s.thread_id)?.thread_id ?? null;
  const session = sc?.session ?? line.session ?? null;
  if (level === "session" && !session) throw new LineError("scope.session", `a session-scope memory needs "session"`);
  if (level === "thread" && !thread) throw new LineError("scope.thread", `a thread-scope memory needs "thread"`);
  let validFrom: number | null = null;
  if (line.valid_from !== undefined && line.valid_from !== null) {
    validFrom = typeof line.valid_from === "number" ? line.valid_from : parseIsoTime(line.valid_from);
    if (Number.isNaN(validFrom)) throw new LineError("valid_from", `must be an ISO 8601 date or epoch milliseconds (got "${line.valid_from}")`);
    // epoch milliseconds of years 0000 to 9999 (anything else broke every view showing it), and
    // not a Unix time in seconds, which read as milliseconds lands in January 1970
    if (typeof line.valid_from === "number") {
      // `memory export`'s own lines (they carry its lineage_id) hold epoch milliseconds: a date
      // from late 1966 to early 1973 is a number small enough to look like seconds, and its line
      // was refused on the way back in
      const exported = typeof (line as { lineage_id?: unknown }).lineage_id === "string";
      const problem = exported && validFrom >= EARLIEST_TIME && validFrom <= LATEST_TIME ? null : epochMillisProblem(validFrom);
      if (problem) throw new LineError("valid_from", problem);
    } else if (validFrom < EARLIEST_TIME || validFrom > LATEST_TIME) {
      throw new LineError("valid_from", `${line.valid_from} is outside the years 0 to 9999; give an ISO 8601 date or epoch milliseconds`);
    }
  }
  return {
    req: {
      user,
      project: project ?? null,
      session: session ?? thread ?? "import",
      thread: thread ?? session ?? "import",
      ancestors: [],
    },
    input: {
      content: line.content,
      kind: line.kind,
      scope: level,
      tags: line.tags,
      confidence: line.confidence,
      expiresAt: line.expires_at ?? undefined,
      validFrom,
      trust: "imported",
      pending: line.status === "pending",
    },
    // Turns of one conversation become neighbours (the word index's context column).
    origin: { actor: "import", threadId: thread ?? session, toolCallId: null },
  };
}

/**
 * Whether an exported line is a past version: superseded, expired (by status, or by an expiry
 * already behind it), or forgotten. An import adds the current version of each memory; bringing
 * a past one back as current would undo the correction that replaced it.
 */
function isPastVersion(line: ImportLine, now: number): boolean {
  if (line.status === undefined) return false; // a hand-written line: a past expiry is an error to report
  if (line.status === "superseded" || line.status === "expired" || line.status === "deleted") return true;
  const ends = line.expires_at ? parseIsoTime(line.expires_at) : Number.NaN;
  return !Number.isNaN(ends) && ends <= now;
}

/** The first bad field of a line, with every problem of the line in the message. */
function zodProblem(e: z.ZodError, value: unknown): LineError {
  const [first, ...rest] = e.issues.slice(0, 4).map((i) => issueParts(ImportLine, value, i));
  const more = rest.map((p) => `; ${p.field === null ? "" : `"${p.field}" `}${p.text}`).join("");
  return new LineError(first!.field ?? "(line)", `${first!.text}${more}`);
}

export interface ImportSummary {
  file: string;
  lines: number;
  imported: number;
  duplicates: number;
  pending_review: number;
  /** exported past versions (superseded, expired) left out */
  past_versions: number;
  failed: number;
  /** PostgreSQL only: "vacuum analyze" when the import ran it, else "skipped: <why>" */
  analyzed?: string;
}

/**
 * The size of the file to import, or an error naming it when it is missing or a folder. Checked
 * before the database is opened too: a mistyped file name created an empty database.
 */
export function importFileSize(path: string): number {
  const stat = statSync(path);
  if (stat.isDirectory()) throw new Error(`${path} is a directory; give the JSON-lines file to import (memory export writes one)`);
  return stat.size;
}

// fatal: a line that is not UTF-8 (a file saved as Latin-1 or Windows-1252) is reported, not
// stored with U+FFFD where each accented letter was
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export async function importMemories(
  ctx: Pick<AnyMemoryContext, "clock" | "config" | "service" | "backend">,
  viewer: { owner: string; project: string | null },
  file: string,
  opts: { batch: number; json: boolean },
): Promise<ImportSummary> {
  if (!Number.isInteger(opts.batch) || opts.batch < 1 || opts.batch > 50_000) {
    throw new Error(`--batch must be an integer from 1 to 50000 (got ${opts.batch})`);
  }
  const path = resolve(file);
  const size = importFileSize(path);
  const bar = new SingleBar({ stream: process.stderr, format: "importing [{bar}] {percentage}% | {lines} lines | {imported} new", hideCursor: true });
  if (process.stderr.isTTY) bar.start(size, 0, { lines: 0, imported: 0 });
  const summary: ImportSummary = { file: path, lines: 0, imported: 0, duplicates: 0, pending_review: 0, past_versions: 0, failed: 0 };
  // Reported in line order once the file is done (policy refusals arrive a batch late).
  const failures: { line: number; text: string }[] = [];
  const fail = (lineNo: number, field: string, message: string) => {
    summary.failed++;
    failures.push({ line: lineNo, text: `line ${lineNo}: "${field}": ${message}` });
  };
  const writer = new BatchWriter(ctx.service, ctx.config, ctx.clock);
  const inFlight: Promise<void>[] = [];
  let batch: BatchRememberItem[] = [];
  let lineNos: number[] = [];
  // lines that stay pending without a flag (exported candidates no person confirmed yet)
  const stillPending = new Set<number>();
  let bytes = 0;
  const settle = (res: BatchRememberResult[], nos: number[]) => {
    res.forEach((r, i) => {
      if (r.status === "refused") fail(nos[i]!, r.field, r.message);
      else if (r.status === "duplicate") summary.duplicates++;
      else {
        summary.imported++;
        if (r.flagged || stillPending.has(nos[i]!)) summary.pending_review++;
      }
    });
    if (process.stderr.isTTY) bar.update(bytes, { lines: summary.lines, imported: summary.imported });
  };
  const flush = async () => {
    if (batch.length === 0) return;
    const items = batch;
    const nos = lineNos;
    batch = [];
    lineNos = [];
    // Two batches in flight: one is checked (on a worker) while the other commits.
    inFlight.push(writer.write(items).then((res) => settle(res, nos)));
    if (inFlight.length >= 2) await inFlight.shift();
  };
  try {
    // Read as bytes (latin1 maps each byte to one character) and decoded line by line, so a line
    // that is not UTF-8 is named by its number. Line ends are ASCII bytes, never inside a UTF-8 letter.
    const rl = createInterface({ input: createReadStream(path, { encoding: "latin1" }), crlfDelay: Infinity });
    let lineNo = 0;
    for await (const bytesOfLine of rl) {
      lineNo++;
      bytes += bytesOfLine.length + 1;
      let read: string;
      try {
        read = utf8.decode(Buffer.from(bytesOfLine, "latin1"));
      } catch {
        summary.lines++;
        fail(lineNo, "(line)", "is not UTF-8 text (the file was saved in another encoding, such as Latin-1 or Windows-1252); save the file as UTF-8 and import it again");
        continue;
      }
      // a byte-order mark, as Windows editors and PowerShell write one, is not part of the first line
      const raw = lineNo === 1 ? read.replace(/^\uFEFF/, "") : read;
      if (raw.trim() === "") continue;
      summary.lines++;
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch (e) {
        fail(lineNo, "(line)", `not valid JSON (${(e as Error).message}); each line must be one JSON object like {"content": "..."}`);
        continue;
      }
      const line = ImportLine.safeParse(parsed);
      if (!line.success) {
        const p = zodProblem(line.error, parsed);
        fail(lineNo, p.field, p.message);
        continue;
      }
      if (isPastVersion(line.data, ctx.clock.now())) {
        summary.past_versions++;
        continue;
      }
      try {
        batch.push(toItem(line.data, viewer));
        lineNos.push(lineNo);
        if (line.data.status === "pending") stillPending.add(lineNo);
      } catch (e) {
        if (!(e instanceof LineError)) throw e;
        fail(lineNo, e.field, e.message);
        continue;
      }
      if (batch.length >= opts.batch) await flush();
    }
    await flush();
    await Promise.all(inFlight);
  } finally {
    await writer.close();
    if (process.stderr.isTTY) bar.stop();
  }
  if (ctx.backend.kind === "postgres") {
    summary.analyzed =
      summary.imported >= ANALYZE_AFTER_IMPORTED
        ? await vacuumAnalyze((ctx.backend as PostgresBackend).pg, MEMORY_WRITE_TABLES)
        : `skipped: ${summary.imported} new memories (fewer than ${ANALYZE_AFTER_IMPORTED}); autovacuum will analyse the tables`;
  }
  failures.sort((a, b) => a.line - b.line);
  for (const f of failures) process.stderr.write(`${f.text}\n`);
  if (opts.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else {
    process.stdout.write(
      `imported ${summary.imported} ${summary.imported === 1 ? "memory" : "memories"} from ${summary.lines} ${summary.lines === 1 ? "line" : "lines"} (${summary.duplicates} already stored, ` +
        `${summary.pending_review} pending review, ${summary.past_versions > 0 ? `${summary.past_versions} past ${summary.past_versions === 1 ? "version" : "versions"} left out, ` : ""}${summary.failed} failed)\n`,
    );
    if (summary.pending_review > 0) process.stdout.write(`review the pending ones with: infinity-memory memory review\n`);
    if (summary.analyzed === "vacuum analyze") process.stdout.write(`analysed the memory tables (VACUUM ANALYZE), so searches plan from statistics at once\n`);
  }
  if (summary.failed > 0) process.exitCode = 1;
  return summary;
}

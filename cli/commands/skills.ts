// `infinity-memory skills …`: the person's path to the skill catalog. Approve and rollback here
// need no user_choice: the person is the one typing.
import type { Command } from "commander";
import cliProgress from "cli-progress";
import { resolve } from "node:path";
import { projectDir } from "../../stores/infinity-files/project-dir.js";
import type { RequestScope } from "../../core/memory/scope.js";
import type { SkillService } from "../../core/skills/service.js";
import { splitToolList } from "../../core/skills/skill-md.js";
import { TOGGLE_LEVELS, type ToggleLevel } from "../../core/skills/version.js";
import { versionLine, viewText } from "../../toolsets/skills/render.js";
import { openAnyMemory } from "../context.js";
import { userId } from "../options.js";
import { exportSkills, importSkills } from "../skill-import.js";
import { hiddenSkillFolders, MAX_DEPTH } from "../skill-folders.js";
import { shellQuote } from "../../core/shell.js";
import { oneLine } from "../../core/text.js";
import { openSkills } from "../skills-context.js";
import { EvolutionService } from "../../core/learning/evolution.js";
import { thisProcess } from "../process-ids.js";
import type { SkillRequest, StoredEvalReport } from "../../stores/traits.js";

interface Common {
  db?: string;
  user?: string;
}

type Action<T> = (svc: SkillService, actor: string, user: string, o: T, ...rest: string[][]) => Promise<void>;

/** Runs a command over the skill service; only `create` commands may start a new database file. */
function withSkills<T extends Common>(fn: Action<T>, opts: { create?: boolean } = {}) {
  return async (...args: unknown[]) => {
    const o = args.find((a) => a && typeof a === "object" && !Array.isArray(a) && !("commands" in (a as object))) as T;
    const positional = args.filter((a) => Array.isArray(a) || typeof a === "string").map((a) => (Array.isArray(a) ? a : [a as string]));
    const ctx = await openAnyMemory({ location: o.db, existing: opts.create !== true });
    try {
      const user = o.user ?? ctx.config.localUser;
      await fn(openSkills(ctx).service, `cli:${user}`, user, o, ...positional);
    } finally {
      await ctx.close();
    }
  };
}

type EvoAction<T> = (evo: EvolutionService, actor: string, o: T, ...rest: string[][]) => Promise<void>;

/** The evolution loop over the same database (no LLM from the CLI: the template path and the replay gate). */
function withEvolution<T extends Common>(fn: EvoAction<T>) {
  return async (...args: unknown[]) => {
    const o = args.find((a) => a && typeof a === "object" && !Array.isArray(a) && !("commands" in (a as object))) as T;
    const positional = args.filter((a) => Array.isArray(a) || typeof a === "string").map((a) => (Array.isArray(a) ? a : [a as string]));
    const ctx = await openAnyMemory({ location: o.db, existing: true });
    try {
      const user = o.user ?? ctx.config.localUser;
      const evo = new EvolutionService({ store: ctx.backend.evolution, learning: ctx.backend.learning, skills: openSkills(ctx).service, config: ctx.config, clock: ctx.clock, llm: null, processes: thisProcess });
      await fn(evo, `cli:${user}`, o, ...positional);
    } finally {
      await ctx.close();
    }
  };
}

function requestText(r: SkillRequest, report: StoredEvalReport | null): string {
  // an approval under way names its approver and since when (a decline is refused meanwhile)
  const status = r.status === "approving" ? `approving (approved by ${r.decidedBy} at ${new Date(r.decidedAt ?? 0).toISOString()})` : r.status;
  const head = `${r.id} · ${r.kind} ${r.skillName}${r.otherSkill ? ` ← ${r.otherSkill}` : ""}${r.detail.seq ? ` v${String(r.detail.seq)}` : ""} · ${status}`;
  const lines = [head];
  if (r.kind === "publish") {
    const tools = Array.isArray(r.detail.newTools) ? (r.detail.newTools as string[]) : [];
    if (tools.length > 0) lines.push(`  new tools (granted on approval): ${tools.join(", ")}`);
  } else lines.push(`  ${JSON.stringify(r.detail)}`);
  if (report) {
    const e = report.report;
    lines.push(
      `  eval: ${e.passed ? "passed" : "failed"} · candidate ${Math.round(e.candidate.successRate * 100)}% done, ${e.candidate.meanSteps.toFixed(1)} steps · ` +
        `baseline (${e.baseline.label}) ${Math.round(e.baseline.successRate * 100)}%, ${e.baseline.meanSteps.toFixed(1)} steps · margin ${e.margin.toFixed(3)} (needs ${e.requiredMargin})`,
    );
    for (const why of e.reasons) lines.push(`  - ${why}`);
  }
  return lines.join("\n");
}

const out = (s: string): void => {
  process.stdout.write(s.endsWith("\n") ? s : `${s}\n`);
};

/**
 * The level an enable/disable applies at. An option that names a narrower place than the level
 * is refused rather than dropped: `disable x --project DIR` used to disable x for the whole user.
 */
function toggleLevel(o: { scope?: string; project?: string; id?: string }): ToggleLevel {
  if (o.scope !== undefined && !(TOGGLE_LEVELS as readonly string[]).includes(o.scope)) throw new Error(`--scope must be one of ${TOGGLE_LEVELS.join(", ")}`);
  if (o.scope === undefined && o.id !== undefined) throw new Error("--id names a session or a thread: add --scope session or --scope thread");
  const level = (o.scope ?? (o.project !== undefined ? "project" : "user")) as ToggleLevel;
  if ((level === "session" || level === "thread") && !o.id) throw new Error(`--scope ${level} needs --id`);
  if (level === "project" && !o.project) throw new Error("--scope project needs --project DIR");
  if (level !== "project" && o.project !== undefined) throw new Error(`--project applies to --scope project; at ${level} scope leave it out`);
  if ((level === "user" || level === "project") && o.id !== undefined) throw new Error(`--id applies to --scope session or thread; at ${level} scope leave it out`);
  return level;
}

export function registerSkills(program: Command): void {
  const cmd = program
    .command("skills")
    .description("the skill catalog: list, show, diff, approve, reject, rollback, pin, enable, grant, import, export, evolve, curate, requests, accept, decline, thumb");
  const common = (c: Command) => c.option("--db <path|url>", "SQLite file or postgres:// URL").option("--user <id>", "act as this user (default: the configured local user)", userId);

  common(cmd.command("list").description("every skill with its published version and pending candidates").option("--json", "JSON output")).action(
    withSkills<Common & { json?: boolean }>(async (svc, _a, _u, o) => {
      const rows = await svc.list();
      if (o.json) {
        out(JSON.stringify(rows.map((r) => ({ name: r.skill.name, pinned: r.skill.pinned, published: r.published?.seq ?? null, eta: r.published?.eta ?? null, status: r.published?.status ?? null, candidates: r.candidates, description: r.published?.description ?? null })), null, 2));
        return;
      }
      if (rows.length === 0) return out("No skills yet. Import some with: infinity-memory skills import DIR");
      // one line per skill, whatever line breaks the description holds (--json keeps them)
      for (const r of rows) {
        const pub = r.published ? `v${r.published.seq} ${r.published.status} η ${r.published.eta.toFixed(2)}` : "unpublished";
        out(`${r.skill.name}${r.skill.pinned ? " (pinned)" : ""} · ${pub}${r.candidates ? ` · ${r.candidates} candidate(s)` : ""}${r.published ? ` · ${oneLine(r.published.description)}` : ""}`);
      }
    }),
  );

  common(cmd.command("show <name>").description("a version (default published), its history and recent changes").option("--version <v>", "v3 or a hash prefix").option("--file <path>", "print one support file")).action(
    withSkills<Common & { version?: string; file?: string }>(async (svc, _a, _u, o, [name]) => {
      const { skill, versions } = await svc.history(name!);
      const v = await svc.version(skill, o.version ?? (skill.publishedVersionId ? undefined : `${versions.at(-1)?.seq}`));
      const files = await svc.files(v);
      if (o.file) {
        const f = files.find((x) => x.path === o.file);
        // as skill_view says it: the files there are, and SKILL.md itself is the show without --file
        if (!f) throw new Error(`v${v.seq} of "${name!}" has no file "${o.file}"; files: ${files.map((x) => x.path).join(", ") || "none"} (SKILL.md itself is what show prints without --file)`);
        return out(f.content);
      }
      out(viewText(v, files, skill.publishedVersionId));
      out(`\nVersions${skill.pinned ? " (pinned)" : ""}:`);
      for (const x of versions) out(`  ${versionLine(x, skill.publishedVersionId)}`);
      const grants = await svc.grants(skill.name);
      out(`Granted tools: ${grants.join(", ") || "none"}`);
    }),
  );

  common(cmd.command("diff <name> <from> [to]").description("unified diff between two versions (to: default published)")).action(
    withSkills(async (svc, _a, _u, _o, [name], [from], to) => {
      const skill = await svc.skill(name!);
      const target = to?.[0] ?? `${(await svc.version(skill)).seq}`;
      const d = await svc.diff(skill.name, from!, target);
      out(d.length > 0 ? d : "(identical)");
    }),
  );

  common(cmd.command("approve <name> [version]").description("publish a candidate (default: the newest); one the learning loop asked about is approved through its request")).action(
    withEvolution(async (evo, actor, _o, [name], version) => {
      const r = await evo.approveVersion(name!, version?.[0], actor);
      out(`Published ${r.skillName} v${r.seq}${r.previousSeq !== null ? ` (v${r.previousSeq} retired)` : ""}${r.request ? ` (request ${r.request.id} approved)` : ""}.`);
    }),
  );

  common(cmd.command("reject <name> [version]").description("reject a candidate (default: the newest)").option("--reason <text>", "why")).action(
    withSkills<Common & { reason?: string }>(async (svc, actor, _u, o, [name], version) => {
      const v = await svc.reject(name!, version?.[0], actor, o.reason);
      out(`Rejected ${name!} v${v.seq}.`);
    }),
  );

  common(cmd.command("rollback <name>").description("return to the previously published version").option("--to <version>", "a given earlier published version")).action(
    withSkills<Common & { to?: string }>(async (svc, actor, _u, o, [name]) => {
      const move = await svc.prepareRollback(name!, o.to);
      await svc.rollback(move, actor);
      out(`Rolled ${move.skill.name} back to v${move.to.seq} (v${move.from?.seq} retired).`);
    }),
  );

  for (const [verb, pinned] of [["pin", true], ["unpin", false]] as const) {
    common(cmd.command(`${verb} <name>`).description(pinned ? "protect a skill from any automatic change" : "allow automatic changes again")).action(
      withSkills(async (svc, actor, _u, _o, [name]) => {
        await svc.setPinned(name!, pinned, actor);
        out(`${pinned ? "Pinned" : "Unpinned"} ${name!}.`);
      }),
    );
  }

  for (const [verb, value] of [["enable", true], ["disable", false]] as const) {
    common(
      cmd
        .command(`${verb} <name>`)
        .description(`${verb} a skill for a user (default), project, session or thread`)
        .option("--scope <level>", `one of ${TOGGLE_LEVELS.join(", ")} (default: project with --project, else user)`)
        .option("--project <dir>", "the project (for --scope project)")
        .option("--id <id>", "the session or thread id (for --scope session/thread)")
        .option("--clear", "remove the setting at that scope instead"),
    ).action(
      withSkills<Common & { scope?: string; project?: string; id?: string; clear?: boolean }>(async (svc, actor, user, o, [name]) => {
        const level = toggleLevel(o);
        const req: RequestScope = { user, project: o.project ? projectDir(o.project) : null, session: o.id ?? "", thread: o.id ?? "", ancestors: [] };
        await svc.setEnabled(name!, req, level, o.clear ? null : value, actor);
        out(`${o.clear ? "Cleared the setting for" : value ? "Enabled" : "Disabled"} ${name!} at ${level} scope.`);
      }),
    );
  }

  common(cmd.command("grant <name> <tools...>").description('let a skill\'s versions declare these tools in allowed-tools (each argument is read as allowed-tools is: "Read,Grep" is two tools, "Bash(git log:*)" one)')).action(
    withSkills(async (svc, actor, _u, _o, [name], tools) => {
      // "Read,Grep" in one argument is two tools, as it would be in allowed-tools
      await svc.grant(name!, (tools ?? []).flatMap(splitToolList), actor);
      out(`Granted ${name!}: ${(await svc.grants(name!)).join(", ")}.`);
    }),
  );

  common(cmd.command("import <dirs...>").description("import SKILL.md folders (a skill folder, or a folder of them)").option("--publish", "publish each (granting exactly its allowed-tools)").option("--json", "JSON summary")).action(
    withSkills<Common & { publish?: boolean; json?: boolean }>(async (svc, actor, _u, o, dirs) => {
      const bar = process.stderr.isTTY ? new cliProgress.SingleBar({ stream: process.stderr, format: "importing [{bar}] {value}/{total} {name}" }, cliProgress.Presets.shades_classic) : null;
      let started = false;
      const reports = await importSkills(svc, dirs ?? [], {
        publish: o.publish ?? false,
        actor,
        onFolder: (done, total, name) => {
          if (!bar) return;
          if (!started) {
            bar.start(total, 0, { name });
            started = true;
          }
          bar.update(done, { name });
        },
      });
      bar?.stop();
      const count = (k: string) => reports.filter((r) => r.outcome === k).length;
      // exit status 2 when a folder was skipped, with --json too
      if (count("skipped") > 0) process.exitCode = 2;
      if (o.json) return out(JSON.stringify(reports, null, 2));
      out(`${reports.length} folder(s): ${count("published")} published, ${count("imported")} imported as candidates, ${count("unchanged")} unchanged, ${count("skipped")} skipped.`);
      if (reports.length === 0) {
        // nothing found: say where to look instead (hidden folders are searched only when named)
        const hidden = hiddenSkillFolders((dirs ?? []).map((d) => resolve(d)));
        out(
          hidden.length > 0
            ? `No SKILL.md folder found; hidden folders are searched only when named, and ${hidden.join(", ")} hold${hidden.length === 1 ? "s" : ""} skills: infinity-memory skills import ${hidden.map(shellQuote).join(" ")}`
            : `No SKILL.md folder found in ${(dirs ?? []).join(", ")} or up to ${MAX_DEPTH} levels below: name the folder that holds the skill folders (each with a SKILL.md)`,
        );
      }
      for (const r of reports) {
        if (r.outcome === "skipped") out(`skipped ${r.folder}: ${r.notes[0] ?? ""}`);
        else if (r.notes.length > 0) out(`${r.name} v${r.version}: ${r.notes.join("; ")}`);
      }
    }, { create: true }),
  );

  common(cmd.command("evolve").description("recompute policies from the learned episodes and gate candidate skills now").option("--json", "JSON output")).action(
    withEvolution<Common & { json?: boolean }>(async (evo, _a, o) => {
      const made = await evo.run(true);
      if (o.json) return out(JSON.stringify(made, null, 2));
      if (made.length === 0) return out("No eligible policy needs a new candidate.");
      for (const m of made) out(`${m.skillName} (${m.source}): ${m.passed ? `passed the gate${m.requestId ? `, request ${m.requestId}` : ""}` : `rejected: ${m.problems.join("; ")}`}`);
    }),
  );

  common(cmd.command("curate").description("propose merges of near-duplicate skills and retirement of stale ones (as requests; nothing is deleted)")).action(
    withEvolution(async (evo) => {
      const made = await evo.curate();
      if (made.length === 0) return out("Nothing to propose.");
      for (const r of made) out(requestText(r, null));
    }),
  );

  common(cmd.command("requests").description("what the learning loop and the curator ask you to decide, with eval reports").option("--all", "also decided ones").option("--json", "JSON output")).action(
    withEvolution<Common & { all?: boolean; json?: boolean }>(async (evo, _a, o) => {
      // the open ones: pending, and any whose approval is under way (or stopped part way)
      const rows = o.all ? await evo.requests("all") : [...(await evo.requests("approving")), ...(await evo.requests("pending"))];
      const withReports = [];
      for (const r of rows) withReports.push({ request: r, report: r.reportId !== null ? await evo.report(r.reportId) : null });
      if (o.json) return out(JSON.stringify(withReports, null, 2));
      if (rows.length === 0) return out(o.all ? "No requests yet." : "No pending requests.");
      for (const x of withReports) out(requestText(x.request, x.report));
    }),
  );

  for (const verb of ["accept", "decline"] as const) {
    common(cmd.command(`${verb} <request>`).description(verb === "accept" ? "approve a request (publish as probationary, retire, merge)" : "decline a request (a candidate becomes rejected)").option("--reason <text>", "why")).action(
      withEvolution<Common & { reason?: string }>(async (evo, actor, o, [id]) => {
        const r = verb === "accept" ? await evo.approve(id!, actor) : await evo.reject(id!, actor, o.reason);
        out(`${r.kind} ${r.skillName}: ${r.status}.`);
      }),
    );
  }

  common(cmd.command("thumb <name> <direction>").description("thumbs up or down on a skill's published version (η ± evolution.lifecycle.thumbDelta)")).action(
    withEvolution(async (evo, actor, _o, [name], [dir]) => {
      if (dir !== "up" && dir !== "down") throw new Error('direction must be "up" or "down"');
      const v = await evo.thumb(name!, dir === "up", actor);
      out(`${name!} v${v.seq}: η ${v.eta.toFixed(2)} (${v.status}).`);
    }),
  );

  common(cmd.command("export <dir>").description("write the published version of every skill as SKILL.md folders")).action(
    withSkills(async (svc, _a, _u, _o, [dir]) => {
      const names = await exportSkills(svc, dir!);
      out(`Exported ${names.length} skill(s) to ${resolve(dir!)}${names.length ? `: ${names.join(", ")}` : ""}.`);
    }),
  );
}

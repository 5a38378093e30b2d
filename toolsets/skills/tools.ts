// The `skills` toolset: progressive disclosure (search → view → file), proposals that are never
// live, and publication/rollback that only happen after the person answers a RAP user_choice.
import { z } from "zod";
import { defaultConfig, type MemoryConfig } from "../../core/config.js";
import { CoreError } from "../../core/errors.js";
import { deriveRequestScope, type RequestScope } from "../../core/memory/scope.js";
import type { PendingMove, SkillActor, SkillService } from "../../core/skills/service.js";
import { filePathProblem, parseSkillMd, SkillFormatError, type SkillFile } from "../../core/skills/skill-md.js";
import { TOGGLE_LEVELS } from "../../core/skills/version.js";
import type { EvolutionService } from "../../core/learning/evolution.js";
import type { SkillRequest, StoredEvalReport, ToggleStore } from "../../stores/traits.js";
import { defineTool, type Tool, type ToolContext, type Toolset } from "../rap/registry.js";
import type { RapInvocation } from "../rap/wire.js";
import { clipDiff, clipResultDiff, searchText, versionLine, viewText } from "./render.js";

export const SKILLS_TOOLSET = "skills";
const CHOICES = ["Approve", "Reject", "Show diff"];
/** skill_review asks about this many requests a call (newest first, as requests() lists them) */
const REVIEW_BATCH = 5;

const skillName = z.string().min(1).max(64).describe("the skill's name, e.g. release-notes");
const versionRef = z.string().min(1).max(80).describe('a version: "v3", or a content-hash prefix from skill_history');
const level = z.enum(TOGGLE_LEVELS);

/**
 * config.json's skills limits the arguments are checked against, so a limit a person changed holds
 * over RAP as in `skills import` (written into the schemas, a raised one was refused here).
 */
export type SkillToolLimits = Pick<MemoryConfig, "skills">;

const DEFAULT_LIMITS: SkillToolLimits = defaultConfig();

export const searchInput = (l: SkillToolLimits = DEFAULT_LIMITS) => z.strictObject({
  query: z.string().min(1).max(1000).describe("the task, in plain words"),
  limit: z.number().int().min(1).max(l.skills.searchMaxLimit).optional().describe(`how many skills, default ${l.skills.searchDefaultLimit}`),
});

export const viewInput = z.strictObject({
  name: skillName,
  version: versionRef.optional().describe("default: the published version"),
  file: z.string().min(1).max(300).optional().describe("one support file to read, by the path listed, e.g. references/api.md or reference.md"),
});

export const historyInput = z
  .strictObject({
    name: skillName,
    diff_from: versionRef.optional().describe("show a unified diff from this version…"),
    diff_to: versionRef.optional().describe("…to this one (default: the published version)"),
  })
  .refine((a) => a.diff_to === undefined || a.diff_from !== undefined, { message: '"diff_to" needs "diff_from"', path: ["diff_to"] });

/** A path inside the skill folder, checked by the format's rule so the error names the field. */
const supportPath = z
  .string()
  .min(1)
  .max(300)
  .superRefine((p, ctx) => {
    const why = filePathProblem(p);
    if (why) ctx.addIssue({ code: "custom", message: why });
  });

export const proposeInput = (l: SkillToolLimits = DEFAULT_LIMITS) => z.strictObject({
  skill_md: z
    .string()
    .min(1)
    .max(l.skills.maxBodyChars)
    .describe("the whole SKILL.md: YAML frontmatter (name, description, optional allowed-tools …) between --- lines, then the Markdown body"),
  files: z
    .array(z.strictObject({ path: supportPath, content: z.string().max(l.skills.maxFileChars) }))
    .max(l.skills.maxFiles)
    .optional()
    .describe(
      "the skill folder's other files, by path relative to it: scripts/, references/, assets/ or beside SKILL.md (e.g. forms.md); text, never executed; omit to keep the previous version's files",
    ),
  base_version: versionRef.optional().describe("the version this one revises (default: the published version)"),
});

export const publishInput = z.strictObject({
  name: skillName,
  version: versionRef.optional().describe("default: the newest candidate"),
});

export const feedbackInput = z.strictObject({
  name: skillName,
  outcome: z.enum(["pass", "fail"]).describe("did following the skill get the task done?"),
  note: z.string().max(2000).optional().describe("what worked or went wrong, in a sentence"),
  version: versionRef.optional().describe("the version you used, if it was not the published one"),
});

export const toggleInput = z.strictObject({
  name: skillName,
  scope: level.optional().describe("where: thread (default, this thread and its children), session, project or user"),
});

export const rollbackInput = z.strictObject({
  name: skillName,
  to_version: versionRef.optional().describe("default: the version published before the current one"),
});

export const reviewInput = z.strictObject({});

export interface SkillsToolsetDeps {
  service: SkillService;
  /** the learning loop's approval requests (skill_review); absent: the CLI decides them */
  evolution?: EvolutionService | null;
  toggles: ToggleStore;
  localUser: string;
  projectOf(sessionId: string): string | null;
  /** config.json's limits for the arguments (default: the built-in ones) */
  limits?: SkillToolLimits;
}

function scopeOf(deps: SkillsToolsetDeps, inv: RapInvocation): RequestScope {
  const session = inv.thread_ancestors?.[0] ?? inv.group_id;
  return deriveRequestScope(inv, { localUser: deps.localUser, project: deps.projectOf(session) });
}

const modelActor = (inv: RapInvocation): SkillActor => ({ actor: `model:${inv.group_id}`, author: "agent", ref: `thread ${inv.group_id}` });
const personActor = (req: RequestScope) => `user:${req.user}`;

/**
 * Ask Approve / Reject / Show diff; "Show diff" re-asks once with the diff in the prompt, then
 * with Approve / Reject only (the person has seen everything there is to see).
 */
async function decide(ctx: ToolContext, prompt: string, diff: string): Promise<"approve" | "reject"> {
  const first = await ctx.askUser(prompt, CHOICES, 1);
  if (first === 0) return "approve";
  if (first === 1) return "reject";
  const shown = `${prompt}\n\n${diff.length > 0 ? clipDiff(diff) : "(no textual difference)"}`;
  return (await ctx.askUser(shown, CHOICES.slice(0, 2), 1)) === 0 ? "approve" : "reject";
}

function movePrompt(verb: string, m: PendingMove): string {
  const from = m.from ? `v${m.from.seq}` : "nothing published";
  const tools = m.to.allowedTools.length > 0 ? ` It may use: ${m.to.allowedTools.join(", ")}.` : "";
  return `${verb} skill ${m.skill.name} v${m.to.seq} (now: ${from})? ${m.to.description}${tools}`;
}

/** " v3" for a version number a request recorded, "" when it has none */
const seqOf = (seq: unknown) => (typeof seq === "number" ? ` v${seq}` : "");

function requestPrompt(r: SkillRequest, report: StoredEvalReport | null): string {
  const what =
    r.kind === "publish"
      ? `Publish the learned skill ${r.skillName} v${String(r.detail.seq ?? "?")}${r.detail.newSkill === true ? " (new)" : ""}?`
      : r.kind === "retire"
        ? `Retire the skill ${r.skillName} (${String(r.detail.reason ?? "stale")})? It is kept and can be rolled back.`
        : `Merge ${r.otherSkill ?? "?"}${seqOf(r.detail.dropSeq)} into ${r.skillName}${seqOf(r.detail.keepSeq)} (near-duplicates; ${r.otherSkill ?? "?"} is retired, not deleted)?`;
  const tools = Array.isArray(r.detail.newTools) && r.detail.newTools.length > 0 ? ` It would be granted: ${(r.detail.newTools as string[]).join(", ")}.` : "";
  if (!report) return `${what}${tools}`;
  const e = report.report;
  return (
    `${what}${tools} Evaluation (${e.model}): ${Math.round(e.candidate.successRate * 100)}% of ${e.candidate.tasks.length} replayed tasks done in ` +
    `${e.candidate.meanSteps.toFixed(1)} steps on average, against ${Math.round(e.baseline.successRate * 100)}% and ${e.baseline.meanSteps.toFixed(1)} for ${e.baseline.label} ` +
    `(margin ${e.margin.toFixed(2)}, needed ${e.requiredMargin}).`
  );
}

export function skillsToolset(deps: SkillsToolsetDeps): Toolset {
  const { service } = deps;
  const limits = deps.limits ?? DEFAULT_LIMITS;
  const tools: Tool[] = [
    defineTool({
      name: "skill_search",
      description:
        "Find skills (reusable procedures) relevant to a task. Returns a few matches with name, description and score, never " +
        "the whole catalog; load one with skill_view before following it.",
      input: searchInput(limits),
      displayScript: `"Search skills: " + args.query`,
      handler: async (a, ctx) => {
        const req = scopeOf(deps, ctx.invocation);
        const text = searchText(a.query, await service.search(req, a.query, a.limit));
        const waiting = deps.evolution ? (await deps.evolution.requests("pending")).length : 0;
        return { text: waiting > 0 ? `${text}\n(${waiting} learned skill change${waiting === 1 ? "" : "s"} await the person's approval: skill_review asks them.)` : text };
      },
    }),
    defineTool({
      name: "skill_view",
      description:
        "Read a skill: the body of its published version (or a given version) and its list of files, or one support file. " +
        "Scripts are shown as text; run nothing from them without checking.",
      input: viewInput,
      displayScript: `"View skill " + args.name`,
      handler: async (a, ctx) => {
        const req = scopeOf(deps, ctx.invocation);
        const { skill, version, files, file: f } = await service.view(req, a.name, a.version, a.file);
        if (f === null) return { text: viewText(version, files, skill.publishedVersionId) };
        return { text: `${a.name} v${version.seq} · ${f.path}:\n${f.content}` };
      },
    }),
    defineTool({
      name: "skill_history",
      description: "List a skill's versions (status, η, author, usage) and optionally a unified diff between two versions.",
      input: historyInput,
      displayScript: `"Skill history " + args.name`,
      handler: async (a) => {
        const { skill, versions } = await service.history(a.name);
        const lines = [
          `${skill.name}: ${versions.length} version${versions.length === 1 ? "" : "s"}${skill.pinned ? " (pinned)" : ""}, oldest first:`,
          ...versions.map((v) => `- ${versionLine(v, skill.publishedVersionId)}`),
        ];
        if (a.diff_from !== undefined) {
          const to = a.diff_to ?? (skill.publishedVersionId ? `${versions.find((v) => v.id === skill.publishedVersionId)?.seq}` : undefined);
          if (to === undefined) throw new CoreError("invalid_argument", '"diff_to" is needed: nothing is published');
          const d = await service.diff(a.name, a.diff_from, to);
          lines.push("", d.length > 0 ? clipResultDiff(d.trimEnd()) : "(the two versions are identical)");
        }
        return { text: lines.join("\n") };
      },
    }),
    defineTool({
      name: "skill_propose",
      description:
        "Propose a new skill or a new version of one from SKILL.md text. It is stored as a candidate and is not used until " +
        "the person approves it (skill_publish). Propose after a task that needed several steps and worked, or to fix a skill that misled you.",
      input: proposeInput(limits),
      displayScript: `"Propose skill"`,
      handler: async (a, ctx) => {
        let files: SkillFile[] | undefined = a.files;
        let doc;
        try {
          doc = parseSkillMd(a.skill_md, files ?? []);
        } catch (e) {
          if (e instanceof SkillFormatError) throw new CoreError("invalid_argument", `${e.message}; nothing was stored`);
          throw e;
        }
        if (files === undefined) {
          // No files given: a revision keeps the files of the version it revises (the one named,
          // else the published one, else the newest draft: a fixed typo must not drop a draft's files).
          const skill = await service.findSkill(doc.name);
          const base = !skill
            ? null
            : a.base_version !== undefined || skill.publishedVersionId
              ? await service.version(skill, a.base_version)
              : ((await service.history(skill.name)).versions.at(-1) ?? null);
          files = base ? await service.files(base) : [];
          doc = { ...doc, files };
        }
        const r = await service.propose(doc, modelActor(ctx.invocation), a.base_version);
        const v = r.version;
        const head = r.created
          ? `Proposed ${v.name} v${v.seq} as a candidate (not live; hash ${v.contentHash.slice(0, 12)}). Ask the person to publish it with skill_publish.`
          : `Nothing new: ${v.name} v${v.seq} already has exactly this content.`;
        return { text: [head, ...r.notes.map((n) => `Note: ${n}.`)].join("\n") };
      },
    }),
    defineTool({
      name: "skill_publish",
      description:
        "Ask the person to publish a candidate version (they see Approve / Reject / Show diff against the published version). " +
        "Only after Approve does the skill's published version change.",
      input: publishInput,
      displayScript: `"Publish skill " + args.name`,
      handler: async (a, ctx) => {
        const req = scopeOf(deps, ctx.invocation);
        const move = await service.preparePublish(a.name, a.version);
        const answer = await decide(ctx, movePrompt("Publish", move), move.diff);
        if (answer === "approve") {
          await service.publish(move, personActor(req));
          return { text: `The person approved: ${a.name} v${move.to.seq} is published (probationary; η ${move.to.eta.toFixed(2)}).` };
        }
        // a candidate is marked rejected; an earlier version asked for again just stays where it is
        if (move.to.status === "candidate") await service.reject(a.name, move.to.id, personActor(req), "rejected through user_choice");
        return { text: `The person rejected ${a.name} v${move.to.seq}; it will not be published.` };
      },
    }),
    defineTool({
      name: "skill_feedback",
      description: "Report how following a skill went (pass or fail, with a short note); this moves its reliability η.",
      input: feedbackInput,
      displayScript: `"Skill feedback " + args.name + ": " + args.outcome`,
      handler: async (a, ctx) => {
        const v = await service.feedback(a.name, a.version, { passed: a.outcome === "pass", note: a.note }, ctx.invocation.group_id, `model:${ctx.invocation.group_id}`);
        return { text: `Recorded a ${a.outcome} for ${a.name} v${v.seq}: η is now ${v.eta.toFixed(2)} (${v.passes}/${v.trials} passed).` };
      },
    }),
    defineTool({
      name: "skill_enable",
      description: "Enable a skill here (thread by default, or session, project or user); the narrowest setting wins.",
      input: toggleInput,
      displayScript: `"Enable skill " + args.name`,
      handler: async (a, ctx) => {
        const req = scopeOf(deps, ctx.invocation);
        const lvl = a.scope ?? "thread";
        await service.setEnabled(a.name, req, lvl, true, `model:${req.thread}`);
        return { text: `Enabled ${a.name} for this ${lvl}.` };
      },
    }),
    defineTool({
      name: "skill_disable",
      description: "Disable a skill here (thread by default, or session, project or user): it is neither searched nor offered there.",
      input: toggleInput,
      displayScript: `"Disable skill " + args.name`,
      handler: async (a, ctx) => {
        const req = scopeOf(deps, ctx.invocation);
        const lvl = a.scope ?? "thread";
        await service.setEnabled(a.name, req, lvl, false, `model:${req.thread}`);
        return { text: `Disabled ${a.name} for this ${lvl}.` };
      },
    }),
    defineTool({
      name: "skill_rollback",
      description:
        "Ask the person to roll a skill back to the version published before (or a given earlier published version); " +
        "they see Approve / Reject / Show diff. One step, atomic.",
      input: rollbackInput,
      displayScript: `"Roll back skill " + args.name`,
      handler: async (a, ctx) => {
        const req = scopeOf(deps, ctx.invocation);
        const move = await service.prepareRollback(a.name, a.to_version);
        const answer = await decide(ctx, movePrompt("Roll back to", move), move.diff);
        if (answer === "approve") {
          await service.rollback(move, personActor(req));
          return { text: `The person approved: ${a.name} is back to v${move.to.seq} (v${move.from?.seq} retired).` };
        }
        return { text: `The person declined; ${a.name} stays at v${move.from?.seq}.` };
      },
    }),
  ];
  const evolution = deps.evolution;
  if (evolution) {
    tools.push(
      defineTool({
        name: "skill_review",
        description:
          "Ask the person about skill changes the learning loop proposes (new skills learned from repeated successful tasks, " +
          "merges and retirements). Each question shows the evaluation report; nothing changes without their Approve.",
        input: reviewInput,
        displayScript: `"Review learned skills"`,
        handler: async (_a, ctx) => {
          const req = scopeOf(deps, ctx.invocation);
          const pending = await evolution.requests("pending");
          if (pending.length === 0) return { text: "No learned skill changes are waiting." };
          const lines: string[] = [];
          const refused: string[] = [];
          const asked = pending.slice(0, REVIEW_BATCH);
          for (const r of asked) {
            const report = r.reportId !== null ? await evolution.report(r.reportId) : null;
            const answer = await decide(ctx, requestPrompt(r, report), typeof r.detail.diff === "string" ? r.detail.diff : "");
            const what = `${r.kind} ${r.skillName}${r.otherSkill ? ` (with ${r.otherSkill})` : ""}`;
            // One refused (measured on a version replaced since, decided elsewhere meanwhile) is
            // reported with the others: thrown, it hid the answers already carried out and the
            // questions after it were never asked.
            try {
              const done = answer === "approve" ? await evolution.approve(r.id, personActor(req)) : await evolution.reject(r.id, personActor(req), "rejected through user_choice");
              lines.push(`${what}: ${done.status}`);
            } catch (e) {
              if (!(e instanceof CoreError)) throw e;
              refused.push(`${what} was not changed: ${e.message}`);
            }
          }
          // the rest wait for the next call: said, or the model took the review for done
          const left = pending.length - asked.length;
          if (left > 0) lines.push(`${left} more learned skill change${left === 1 ? " awaits" : "s await"} the person's answer: call skill_review again.`);
          if (refused.length > 0) return { text: [`Error: ${refused.join("\n")}`, ...lines].join("\n") };
          return { text: lines.join("\n") };
        },
      }),
    );
  }
  return {
    name: SKILLS_TOOLSET,
    description: "Skills: reusable procedures (SKILL.md) with versions, approval, rollback and per-scope switches",
    needsMigration: false,
    tools,
    gate: async (inv: RapInvocation) => {
      const chain = [inv.group_id, ...[...(inv.thread_ancestors ?? [])].reverse()];
      const enabled = await deps.toggles.resolve(SKILLS_TOOLSET, chain);
      return enabled === false ? "Error: the skills toolset is disabled for this thread" : null;
    },
  };
}

// Text the skills tools return to the model: short, one fact per line, ids the model can reuse.
import type { SkillFile } from "../../core/skills/skill-md.js";
import type { SkillSearchHit, SkillVersion } from "../../core/skills/version.js";
import { headOf, oneLine } from "../../core/text.js";

const DIFF_PROMPT_MAX = 6000;
/** what skill_history shows of a diff: support files reach 1 MiB each, a whole diff would not fit a context window */
const DIFF_RESULT_MAX = 12_000;

export function versionLine(v: SkillVersion, publishedId: string | null): string {
  const live = v.id === publishedId ? " ← published" : "";
  const flags = v.flags.length > 0 ? ` · flagged (${v.flags.join("; ")})` : "";
  const u = v.usage;
  return (
    `v${v.seq} ${v.status}${live} · η ${v.eta.toFixed(2)} (${v.passes}/${v.trials} passed) · by ${v.author}` +
    `${v.authorRef ? ` (${v.authorRef})` : ""} · ${new Date(v.createdAt).toISOString().slice(0, 10)} · ` +
    `views ${u.views}, uses ${u.uses} · hash ${v.contentHash.slice(0, 12)}${flags}`
  );
}

export function searchText(query: string, hits: SkillSearchHit[]): string {
  if (hits.length === 0) return `No enabled skill matches "${query}".`;
  const lines = [`${hits.length} skill${hits.length === 1 ? "" : "s"} for "${query}" (load one with skill_view):`];
  // one line per skill: a `description: |` block's line breaks would read as more entries
  for (const h of hits) {
    lines.push(`- ${h.skill.name} (v${h.version.seq}, score ${h.score.toFixed(2)}, η ${h.version.eta.toFixed(2)}): ${oneLine(h.version.description)}`);
  }
  return lines.join("\n");
}

export function viewText(v: SkillVersion, files: SkillFile[], publishedId: string | null): string {
  const head = `Skill ${v.name} v${v.seq}${v.id === publishedId ? " (published)" : ` (${v.status})`}: ${v.description}`;
  const tools = v.allowedTools.length > 0 ? `\nAllowed tools: ${v.allowedTools.join(", ")}` : "";
  const list =
    files.length > 0
      ? `\n\nFiles (read one with skill_view and "file"):\n${files.map((f) => `- ${f.path} (${f.content.length} chars)`).join("\n")}`
      : "";
  return `${head}${tools}\n\n${v.body.trimEnd()}${list}`;
}

export function clipDiff(diff: string): string {
  if (diff.length <= DIFF_PROMPT_MAX) return diff;
  return `${headOf(diff, DIFF_PROMPT_MAX)}\n… (${diff.length - DIFF_PROMPT_MAX} more characters; see infinity-memory skills diff)`;
}

/** A diff as skill_history returns it to the model: the head, and how to read the rest. */
export function clipResultDiff(diff: string): string {
  if (diff.length <= DIFF_RESULT_MAX) return diff;
  // cut after a whole line where there is one, so no diff line reads as changed text it is not
  const head = headOf(diff, DIFF_RESULT_MAX);
  const line = head.lastIndexOf("\n");
  const kept = line > 0 ? head.slice(0, line + 1) : head;
  return `${kept}${kept.endsWith("\n") ? "" : "\n"}… (diff cut here: ${diff.length - kept.length} more characters; read a file whole with skill_view and "file")`;
}

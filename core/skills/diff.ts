// Unified diff between two versions of a skill: SKILL.md first, then each support file that
// differs (added, removed or changed), as one patch text a person can read in a prompt.
import { createTwoFilesPatch } from "diff";
import { renderSkillMd, SKILL_FILE, type SkillFile } from "./skill-md.js";
import type { SkillVersion } from "./version.js";

export interface VersionContent {
  version: Pick<SkillVersion, "name" | "seq" | "frontmatter" | "body">;
  files: SkillFile[];
}

function filesOf(c: VersionContent | null): Map<string, string> {
  const m = new Map<string, string>();
  if (!c) return m;
  m.set(SKILL_FILE, renderSkillMd(c.version));
  for (const f of c.files) m.set(f.path, f.content);
  return m;
}

/** "" when the two contents are identical; `from` null means "nothing published yet". */
export function diffVersions(from: VersionContent | null, to: VersionContent): string {
  const a = filesOf(from);
  const b = filesOf(to);
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => (x === SKILL_FILE ? -1 : y === SKILL_FILE ? 1 : x < y ? -1 : 1));
  const name = to.version.name;
  const fromLabel = from ? `v${from.version.seq}` : "(none)";
  const parts: string[] = [];
  for (const p of paths) {
    const oldText = a.get(p) ?? "";
    const newText = b.get(p) ?? "";
    // an empty file added or removed differs though its text does not (the patch is headers only)
    if (oldText === newText && a.has(p) === b.has(p)) continue;
    // the side that lacks the file says so: an added or removed empty file shows no hunk
    const labels = [a.has(p) ? fromLabel : "(none)", b.has(p) ? `v${to.version.seq}` : "(none)"] as const;
    const patch = createTwoFilesPatch(`a/${name}/${p}`, `b/${name}/${p}`, oldText, newText, labels[0], labels[1], { context: 3 });
    // Drop jsdiff's "====" banner line: plain unified diff is what people and tools expect.
    parts.push(patch.replace(/^=+\n/m, "").replace(/^Index: .*\n/m, ""));
  }
  return parts.join("");
}

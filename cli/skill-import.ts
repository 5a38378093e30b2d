// Import and export of SKILL.md folders through the skill service. Imported versions are authored
// by "import"; with `publish`, the person running the CLI grants exactly the skill's
// allowed-tools and the version is published in the same run.
import { join, resolve } from "node:path";
import { isCoreError } from "../core/errors.js";
import type { SkillService } from "../core/skills/service.js";
import { fileErrorText } from "./file-errors.js";
import { findSkillFolders, readSkillFolder, writeSkillFolders, type FolderSearch, type SkillFolder } from "./skill-folders.js";

export type ImportOutcome = "imported" | "published" | "unchanged" | "skipped";

export interface ImportReport {
  folder: string;
  name: string | null;
  outcome: ImportOutcome;
  version: number | null;
  /** why it was skipped, files left out, notes */
  notes: string[];
}

export interface ImportOptions {
  publish: boolean;
  /** the person running the CLI, e.g. "cli:alice" */
  actor: string;
  onFolder?(done: number, total: number, name: string): void;
}

export async function importSkills(service: SkillService, dirs: string[], o: ImportOptions): Promise<ImportReport[]> {
  const search: FolderSearch = { unreadable: [], hidden: [] };
  const folders = dirs.flatMap((d) => findSkillFolders(resolve(d), search));
  // a folder that cannot be listed is reported with the skipped ones; the others are imported
  const out: ImportReport[] = search.unreadable.map((u) => ({ folder: u.folder, name: null, outcome: "skipped", version: null, notes: [u.reason] }));
  const firstFolderOf = new Map<string, string>();
  let done = 0;
  for (const folder of folders) {
    const r = await importOne(service, folder, o);
    if (r.name !== null && r.outcome !== "skipped") {
      // two folders declaring one name are two versions of one skill: the later one comes after
      const earlier = firstFolderOf.get(r.name);
      if (earlier !== undefined) r.notes.push(`${earlier} in this import is the same skill; this folder's version came after it${r.outcome === "published" ? " and replaced it as the published one" : ""}`);
      else firstFolderOf.set(r.name, folder);
    }
    out.push(r);
    o.onFolder?.(++done, folders.length, r.name ?? folder);
  }
  return out;
}

async function importOne(service: SkillService, folder: string, o: ImportOptions): Promise<ImportReport> {
  const report: ImportReport = { folder, name: null, outcome: "skipped", version: null, notes: [] };
  try {
    const { doc, skipped } = readSkillFolder(folder);
    report.name = doc.name;
    for (const s of skipped) report.notes.push(`left out ${s.path}: ${s.reason}`);
    const base = folder.split(/[\\/]/).at(-1);
    if (base !== doc.name) report.notes.push(`folder "${base}" differs from the skill name "${doc.name}"`);
    const r = await service.propose(doc, { actor: o.actor, author: "import", ref: folder });
    report.version = r.version.seq;
    report.notes.push(...r.notes);
    const skill = await service.skill(doc.name);
    if (!r.created && r.version.id === skill.publishedVersionId) {
      report.outcome = "unchanged";
      return report;
    }
    report.outcome = r.created ? "imported" : "unchanged";
    if (o.publish && r.version.status !== "rejected") {
      // The person importing with --publish vouches for the tools the skill declares, no more.
      try {
        // granted in the publish's own write: a version that cannot be published grants nothing
        const granted = await service.grants(doc.name);
        const missing = doc.allowedTools.filter((t) => !granted.includes(t));
        const move = await service.preparePublish(doc.name, r.version.id, missing);
        await service.publish(move, o.actor, missing);
        report.outcome = "published";
        // The grant settled the ceiling; the proposal's warning about it no longer applies.
        report.notes = report.notes.filter((n) => !n.startsWith("allowed-tools asks for"));
      } catch (e) {
        if (!isCoreError(e)) throw e;
        report.notes.push(`stored as a candidate, not published: ${e.message}`);
      }
    }
  } catch (e) {
    // one folder that cannot be read or stored is reported; the others are still imported
    report.outcome = "skipped";
    report.notes.unshift(isCoreError(e) ? e.message : (fileErrorText(e) ?? (e instanceof Error ? e.message : String(e))));
  }
  return report;
}

/** Write every published skill to DIR/<name>/; returns the names written. */
export async function exportSkills(service: SkillService, dir: string): Promise<string[]> {
  // read every skill first: a folder refused for one of them leaves the others unwritten too
  const folders: (SkillFolder & { name: string })[] = [];
  for (const { skill, published } of await service.list()) {
    if (!published) continue;
    folders.push({ name: skill.name, dir: join(resolve(dir), skill.name), doc: published, files: await service.files(published) });
  }
  writeSkillFolders(folders);
  return folders.map((f) => f.name);
}

// SKILL.md folders on disk: finding them under a directory (.claude/skills, ~/.hermes/skills with
// categories, agentskills repositories), reading one into a document, and writing one back.
// Every other file in the folder is the skill's (scripts/, references/, a forms.md beside SKILL.md),
// read as UTF-8 text; anything else is reported, not stored.
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { fileReason } from "./file-errors.js";
import { filePathProblem, parseSkillMd, renderSkillMd, SKILL_FILE, SkillFormatError, type SkillDocument, type SkillFile } from "../core/skills/skill-md.js";

/** how many folders down from a given folder a skill folder is looked for */
export const MAX_DEPTH = 4;

/** What a search passed by: folders it could not list, and hidden ones it did not enter. */
export interface FolderSearch {
  unreadable: { folder: string; reason: string }[];
  hidden: string[];
}

/**
 * Folders holding a SKILL.md under `root` (root itself included); hidden folders are skipped. A
 * linked folder is followed (`~/.claude/skills/<name>` is often a link into a repository), each
 * real folder once, so a link back up cannot loop. A folder below the root that cannot be listed
 * goes to `unreadable` and the search goes on; the root itself failing throws.
 */
export function findSkillFolders(root: string, search: FolderSearch = { unreadable: [], hidden: [] }): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const walk = (dir: string, depth: number) => {
    let real: string;
    try {
      real = realpathSync(dir);
    } catch {
      return; // a dangling link
    }
    if (seen.has(real)) return;
    seen.add(real);
    if (existsSync(join(dir, SKILL_FILE))) {
      out.push(dir);
      return; // a skill's own subfolders are its files, not more skills
    }
    if (depth >= MAX_DEPTH) return;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      if (depth === 0) throw e;
      search.unreadable.push({ folder: dir, reason: `${fileReason(e)}; it was not searched for skills` });
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(dir, e.name);
      const folder = e.isDirectory() || (e.isSymbolicLink() && isFolder(p));
      if (e.name.startsWith(".")) {
        if (folder) search.hidden.push(p);
        continue;
      }
      if (folder && e.name !== "node_modules") walk(p, depth + 1);
    }
  };
  if (!statSync(root).isDirectory()) throw new Error(`${root} is not a folder`);
  walk(root, 0);
  return out;
}

/**
 * Hidden folders under `roots` that hold skill folders (a project's .claude/skills): told to a
 * person whose import found nothing, since hidden folders are not searched unless named.
 */
export function hiddenSkillFolders(roots: string[]): string[] {
  const out: string[] = [];
  for (const root of roots) {
    const search: FolderSearch = { unreadable: [], hidden: [] };
    try {
      findSkillFolders(root, search);
    } catch {
      continue;
    }
    for (const h of search.hidden) {
      try {
        if (findSkillFolders(h).length > 0) out.push(h);
      } catch {
        // unreadable: nothing to suggest
      }
    }
  }
  return out;
}

function isFolder(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Folders a tool fills in next to a skill's scripts (`npm install`, Python's bytecode cache): not part of the skill. */
const GENERATED_DIRS = new Set(["node_modules", "__pycache__"]);

/** A Python virtual environment (`python -m venv venv`): any name, known by the pyvenv.cfg it holds. */
function isVirtualEnv(dir: string): boolean {
  return existsSync(join(dir, "pyvenv.cfg"));
}

/**
 * Regular files under `dir`; anything else (a symbolic link, a socket) is listed apart, never
 * followed, and so is a generated folder (left unread: node_modules alone can hold thousands of files).
 */
function listFiles(dir: string, others: string[] = [], generated: string[] = []): { files: string[]; others: string[]; generated: string[] } {
  const files: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory() && (GENERATED_DIRS.has(e.name) || isVirtualEnv(p))) generated.push(p);
    else if (e.isDirectory()) files.push(...listFiles(p, others, generated).files);
    else if (e.isFile()) files.push(p);
    else others.push(p);
  }
  return { files, others, generated };
}

function asText(buf: Buffer): string | null {
  if (buf.includes(0)) return null;
  const text = buf.toString("utf8");
  return Buffer.from(text, "utf8").equals(buf) ? text.replace(/\r\n?/g, "\n") : null;
}

export interface ReadFolder {
  doc: SkillDocument;
  /** files left out, with why */
  skipped: { path: string; reason: string }[];
}

/** Read one skill folder. Throws SkillFormatError (line-numbered) for a malformed SKILL.md. */
export function readSkillFolder(dir: string): ReadFolder {
  const skipped: ReadFolder["skipped"] = [];
  const files: SkillFile[] = [];
  const found = listFiles(dir);
  for (const abs of found.generated.sort()) {
    const rel = relative(dir, abs).split(sep).join("/");
    if (rel.split("/").some((p) => p.startsWith("."))) continue;
    skipped.push({ path: `${rel}/`, reason: "generated by a tool (installed packages, a virtual environment or a bytecode cache), not part of the skill (not read)" });
  }
  for (const abs of found.others.sort()) {
    const rel = relative(dir, abs).split(sep).join("/");
    if (rel.split("/").some((p) => p.startsWith("."))) continue;
    if (rel === SKILL_FILE) continue; // the skill itself, read below (a linked SKILL.md is followed)
    // a link could point anywhere (~/.ssh, /etc): its target is not read
    skipped.push({ path: rel, reason: lstatSync(abs).isSymbolicLink() ? "a symbolic link (not followed; copy the file in instead)" : "not a regular file" });
  }
  for (const abs of found.files.sort()) {
    const rel = relative(dir, abs).split(sep).join("/");
    if (rel === SKILL_FILE) continue;
    if (rel.split("/").some((p) => p.startsWith("."))) continue; // .DS_Store, .git …
    // a name the format cannot hold (a backslash in it, a second skill.md) leaves that file out, not the skill
    const pathProblem = filePathProblem(rel);
    if (pathProblem) {
      skipped.push({ path: rel, reason: pathProblem });
      continue;
    }
    const text = asText(readFileSync(abs));
    if (text === null) {
      skipped.push({ path: rel, reason: "not UTF-8 text" });
      continue;
    }
    files.push({ path: rel, content: text });
  }
  let raw: Buffer;
  try {
    raw = readFileSync(join(dir, SKILL_FILE));
  } catch (e) {
    throw new Error(`${SKILL_FILE}: ${fileReason(e)}`);
  }
  const skillMd = asText(raw);
  // read as UTF-8 anyway, other encodings' letters would be stored as U+FFFD
  if (skillMd === null) throw new SkillFormatError("SKILL.md is not UTF-8 text (save it as UTF-8)", null);
  const doc = parseSkillMd(skillMd, files);
  return { doc, skipped };
}

export interface SkillFolder {
  dir: string;
  doc: Pick<SkillDocument, "frontmatter" | "body">;
  files: SkillFile[];
}

/**
 * Write skill folders: SKILL.md plus their support files. Each file goes to a temporary name and
 * is renamed into place, so a symbolic link already at a destination is replaced, never written
 * through. Every folder is checked before anything is written: a linked folder (or a file where a
 * folder goes) in any of them is refused with no skill written.
 */
export function writeSkillFolders(folders: SkillFolder[]): void {
  const plans = folders.map(({ dir, doc, files }) => {
    const writes: [string, string | Uint8Array][] = [[join(dir, SKILL_FILE), renderSkillMd(doc)]];
    for (const f of files) writes.push([join(dir, ...f.path.split("/")), f.content]);
    return { dir, writes };
  });
  for (const { dir, writes } of plans) for (const [p] of writes) refuseLinkedFolders(dir, dirname(p));
  for (const { writes } of plans) {
    for (const [p, content] of writes) {
      mkdirSync(dirname(p), { recursive: true });
      const tmp = join(dirname(p), `.${basename(p)}.${process.pid}.partial`);
      writeFileSync(tmp, content);
      try {
        renameSync(tmp, p);
      } catch (e) {
        rmSync(tmp, { force: true });
        throw new Error(`cannot write ${p}: ${fileReason(e)}`);
      }
    }
  }
}

/**
 * The skill folder and each folder below it on the way to a file must be real folders (or not exist
 * yet): a symbolic link there would send the write somewhere else. Folders above the skill folder
 * are the person's choice of destination and are not checked.
 */
function refuseLinkedFolders(skillDir: string, folder: string): void {
  const below = relative(skillDir, folder);
  const chain = [skillDir];
  if (below !== "") for (const part of below.split(sep)) chain.push(join(chain.at(-1)!, part));
  for (const f of chain) {
    let st;
    try {
      st = lstatSync(f);
    } catch {
      return; // this one and those below it are created by the export
    }
    if (st.isSymbolicLink()) throw new Error(`${f} is a symbolic link; not writing through it (remove it, or export into another folder)`);
    if (!st.isDirectory()) throw new Error(`${f} is in the way: a file where the export needs a folder (remove it, or export into another folder)`);
  }
}

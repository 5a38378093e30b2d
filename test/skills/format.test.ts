// SKILL.md parsing and rendering: the Agent Skills rules, readable line-numbered errors, and a
// content hash that survives render → parse.
import { describe, expect, it } from "vitest";
import { contentHash, filePathProblem, nameProblem, parseSkillMd, renderSkillMd, SkillFormatError } from "../../core/skills/skill-md.js";

function errorOf(text: string): SkillFormatError {
  try {
    parseSkillMd(text);
  } catch (e) {
    if (e instanceof SkillFormatError) return e;
    throw e;
  }
  throw new Error("parsed without error");
}

describe("SKILL.md format", () => {
  it("refuses a NUL character (U+0000) in the text, a file or a path, with the line where there is one", () => {
    const e = errorOf("---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\n# Steps\n\nOpen the\u0000 form.\n");
    expect(e.message).toBe("SKILL.md line 7: the text holds a NUL character (U+0000); remove it");
    const ok = "---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\n# Steps\n";
    expect(() => parseSkillMd(ok, [{ path: "references/a.md", content: "bin\u0000ary" }])).toThrow('"references/a.md" holds a NUL character (U+0000): support files are text');
    expect(filePathProblem("references/a\u0000.md")).toBe('"references/a\\0.md" holds a NUL character (U+0000)');
  });

  it("applies the name rules: ≤64, [a-z0-9-], no leading, trailing or double hyphen", () => {
    expect(nameProblem("pdf-forms")).toBeNull();
    expect(nameProblem("a".repeat(64))).toBeNull();
    expect(nameProblem("a".repeat(65))).toMatch(/65 characters; at most 64/);
    for (const bad of ["-lead", "trail-", "dou--ble", "Upper", "under_score", "sp ace", ""]) expect(nameProblem(bad)).not.toBeNull();
  });

  it("parses every field, keeps unknown keys, normalises the body and reads allowed-tools in three forms", () => {
    const doc = parseSkillMd(
      "---\r\nname: pdf-forms\r\ndescription: Fill PDF forms.\r\nlicense: MIT\r\ncompatibility: Python 3.10+\r\nmetadata:\r\n  author: x\r\nversion: 1.0.0\r\nallowed-tools: Bash(git add:*), Read\r\n---\r\n\r\n\r\n# Body\r\nline\r\n\r\n",
    );
    expect(doc.name).toBe("pdf-forms");
    expect(doc.frontmatter).toMatchObject({ license: "MIT", compatibility: "Python 3.10+", metadata: { author: "x" }, version: "1.0.0" });
    expect(doc.allowedTools).toEqual(["Bash(git add:*)", "Read"]);
    expect(doc.body).toBe("# Body\nline\n");
    expect(parseSkillMd("---\nname: a\ndescription: d\nallowed-tools: Read Grep\n---\nx").allowedTools).toEqual(["Read", "Grep"]);
    expect(parseSkillMd("---\nname: a\ndescription: d\nallowed-tools: [Read, Read, Write]\n---\nx").allowedTools).toEqual(["Read", "Write"]);
  });

  it("keeps a tool's argument pattern whole when it holds spaces or commas, in the space and the comma form", () => {
    const tools = (v: string) => parseSkillMd(`---\nname: a\ndescription: d\nallowed-tools: ${v}\n---\nx`).allowedTools;
    expect(tools("Bash(git log:*) Read Bash(npm run test:*)")).toEqual(["Bash(git log:*)", "Read", "Bash(npm run test:*)"]);
    expect(tools("Bash(sed -n 1,5p) Read")).toEqual(["Bash(sed -n 1,5p)", "Read"]);
    expect(tools("Bash(sed -n 1,5p), Bash(git status:*), Read")).toEqual(["Bash(sed -n 1,5p)", "Bash(git status:*)", "Read"]);
  });

  it("names the line of each problem", () => {
    expect(errorOf("no frontmatter").message).toBe('SKILL.md line 1: SKILL.md must start with a "---" line opening the YAML frontmatter');
    expect(errorOf("---\nname: a\ndescription: d\n").message).toMatch(/^SKILL\.md line 4: the frontmatter is never closed/);
    const yamlErr = errorOf("---\nname: a\ndescription: d\nmetadata:\n  k: [1, 2\nother: x\n---\nbody");
    expect(yamlErr.line).toBeGreaterThanOrEqual(5);
    expect(yamlErr.message).toMatch(/^SKILL\.md line \d+: invalid YAML: /);
    expect(errorOf("---\nname: a\nname: b\ndescription: d\n---\nx").message).toMatch(/^SKILL\.md line 3: invalid YAML: .*unique/i);
    expect(errorOf("---\ndescription: d\nname: Not_Valid\n---\nx").message).toMatch(/^SKILL\.md line 3: "Not_Valid" is not a valid skill name/);
    expect(errorOf("---\nname: a\ndescription: " + "x".repeat(1025) + "\n---\nx").message).toMatch(/^SKILL\.md line 3: the description is 1025 characters; at most 1024/);
    expect(errorOf("---\nname: a\ndescription: d\n---\n\n  \n").message).toMatch(/^SKILL\.md line 4: the body .* is empty/);
    expect(errorOf("---\nname: a\ndescription: d\nmetadata: [1]\n---\nx").message).toBe('SKILL.md line 4: "metadata" must be a mapping');
    expect(errorOf("---\nname: a\ndescription: d\nallowed-tools: 7\n---\nx").message).toBe("SKILL.md line 4: allowed-tools must be a list or a string");
    expect(errorOf("---\n- a\n- b\n---\nx").message).toMatch(/^SKILL\.md line 2: the frontmatter must be a mapping/);
  });

  it("a plain value YAML cannot read gets the fix: quote the value, naming the key", () => {
    const fm = (line: string) => errorOf(`---\nname: deploy-app\n${line}\n---\nbody\n`).message;
    expect(fm("description: Deploy the app. Use when: the user asks to ship")).toBe(
      'SKILL.md line 3: invalid YAML: Nested mappings are not allowed in compact mappings; if the value of "description" is text, put it in quotes: description: "…"',
    );
    expect(fm("description: `gh` helper for releases")).toMatch(/^SKILL\.md line 3: invalid YAML: .*; if the value of "description" is text, put it in quotes: description: "…"$/);
    expect(fm("description: [WIP] release helper")).toMatch(/; if the value of "description" is text, put it in quotes/);
    expect(fm("description: d\nlicense: @acme/internal")).toMatch(/^SKILL\.md line 4: .*; if the value of "license" is text, put it in quotes: license: "…"$/);
    // not a quoting problem: no such advice
    expect(fm("description: d\nname: again")).not.toContain("quotes");
    expect(fm('description: "unterminated')).not.toContain("put it in quotes");
  });

  it("accepts any file inside the skill folder (beside SKILL.md or in any sub-folder) but no escape and no second SKILL.md", () => {
    expect(filePathProblem("scripts/run.sh")).toBeNull();
    expect(filePathProblem("references/deep/a.md")).toBeNull();
    // files beside SKILL.md, as published skills have them (forms.md, reference.md, LICENSE.txt), and other folders
    expect(filePathProblem("reference.md")).toBeNull();
    expect(filePathProblem("LICENSE.txt")).toBeNull();
    expect(filePathProblem("templates/a.md")).toBeNull();
    expect(filePathProblem("scripts")).toBeNull();
    expect(filePathProblem("SKILL.md")).toBe('"SKILL.md" would be a second SKILL.md: the skill\'s own text is its SKILL.md; rename or remove this file');
    expect(filePathProblem("skill.md")).toMatch(/would be a second SKILL\.md/);
    expect(filePathProblem("scripts/../x")).toMatch(/relative path/);
    expect(filePathProblem("../x")).toMatch(/relative path/);
    expect(filePathProblem("./reference.md")).toMatch(/relative path/);
    expect(filePathProblem("/etc/passwd")).toMatch(/relative path/);
    expect(filePathProblem("a\\b.md")).toMatch(/relative path/);
    const doc = parseSkillMd("---\nname: a\ndescription: d\n---\nSee [forms.md](forms.md).", [{ path: "scripts/a.py", content: "1" }, { path: "forms.md", content: "# Forms\n" }]);
    expect(doc.files.map((f) => f.path)).toEqual(["forms.md", "scripts/a.py"]);
    expect(() => parseSkillMd("---\nname: a\ndescription: d\n---\nx", [{ path: "SKILL.md", content: "2" }])).toThrow(/would be a second SKILL\.md/);
    expect(() => parseSkillMd("---\nname: a\ndescription: d\n---\nx", [{ path: "scripts/a", content: "1" }, { path: "scripts/a", content: "2" }])).toThrow(/listed twice/);
  });

  it("a version that keeps its files under scripts/, references/ and assets/ hashes as it always has", () => {
    const files = [{ path: "scripts/b.sh", content: "echo b\n" }, { path: "references/a.md", content: "# A\n" }, { path: "assets/t.json", content: "{}\n" }];
    const doc = parseSkillMd("---\nname: stable-hash\ndescription: A skill that uses only the conventional folders.\nallowed-tools: Read\n---\n# T\n\nbody\n", files);
    // computed before files beside SKILL.md were accepted: stored versions keep their identity
    expect(contentHash(doc)).toBe("89c299e5ac2e6cd09d5772ead7d87469d64ed3195104bc4afb3a9bee178ffe80");
  });

  it("render → parse keeps the content hash; any change to frontmatter, body or a file changes it", () => {
    const files = [{ path: "scripts/b.sh", content: "echo b\n" }, { path: "references/a.md", content: "# A\n" }];
    const doc = parseSkillMd(
      '---\nname: round-trip\ndescription: "Quotes: yes, colons: too"\nmetadata:\n  hermes:\n    tags: [a, b]\nallowed-tools: Read\nversion: "2"\n---\n# T\n\nbody\n',
      files,
    );
    const again = parseSkillMd(renderSkillMd(doc), files);
    expect(again.frontmatter).toEqual(doc.frontmatter);
    expect(again.body).toBe(doc.body);
    expect(contentHash(again)).toBe(contentHash(doc));
    expect(contentHash({ ...doc, files: [...files].reverse() })).toBe(contentHash(doc));
    expect(contentHash({ ...doc, body: doc.body + "x\n" })).not.toBe(contentHash(doc));
    expect(contentHash({ ...doc, frontmatter: { ...doc.frontmatter, license: "MIT" } })).not.toBe(contentHash(doc));
    expect(contentHash({ ...doc, files: [{ path: "scripts/b.sh", content: "echo c\n" }] })).not.toBe(contentHash(doc));
    expect(renderSkillMd(doc).startsWith("---\nname: round-trip\ndescription:")).toBe(true);
  });
});

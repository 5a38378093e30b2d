// `bench locomo --questions-out FILE`: one JSON line per scored question for failure analysis, run
// as a real CLI process over a small made-up conversation in LoCoMo's format.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tinyLocomo } from "../helpers/locomo.js";
import { tempDir } from "../helpers/tmp.js";

describe("bench locomo --questions-out", () => {
  it("writes each question's evidence ranks and recall, which add up to the printed recall", () => {
    const out = join(tempDir(), "questions.jsonl");
    const r = runCli(["bench", "locomo", "--data", tinyLocomo(), "--k", "1,5", "--json", "--questions-out", out], {});
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { questions: number; recall: Record<string, number> };
    const lines = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l) as {
      sample: string; category: string; question: string; evidence: string[]; evidence_ranks: Record<string, number | null>; recall: Record<string, number>; ranked: string[];
    });
    expect(lines).toHaveLength(result.questions);
    expect(lines.map((l) => l.question)).toEqual(["What is the name of Mia's cat?", "Where did Leo ride his bicycle?", "When did Mia adopt a cat?"]);
    const cat = lines[0]!;
    expect(cat).toMatchObject({ sample: "conv-x", category: "single-hop", evidence: ["D1:3"] });
    // the rank is the evidence turn's place among the results, 1-based
    expect(cat.evidence_ranks["D1:3"]).toBe(cat.ranked.indexOf("D1:3") + 1);
    for (const k of ["1", "5"]) {
      const mean = (100 * lines.reduce((s, l) => s + l.recall[k]!, 0)) / lines.length;
      expect(Math.round(mean * 10) / 10).toBe(result.recall[k]);
    }
  });

  it("refuses a path it cannot write before ingesting anything", () => {
    const bad = join(tempDir(), "missing-dir", "q.jsonl");
    const r = runCli(["bench", "locomo", "--data", tinyLocomo(), "--json", "--questions-out", bad], {});
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/--questions-out: cannot write ".*missing-dir\/q\.jsonl"/);
    expect(r.stdout).toBe("");
    expect(existsSync(bad)).toBe(false);
  });

  it("names a file that is not LoCoMo's shape, and where", () => {
    const dir = tempDir();
    const cases: [string, RegExp][] = [
      ['{"conversations": []}', /is not a LoCoMo file \(a JSON array of conversations with sample_id, conversation and qa\): Invalid input: expected array, received object/],
      [JSON.stringify([{ sample_id: "x", conversation: {}, qa: [{ question: "q", category: "one" }] }]), /is not a LoCoMo file .*: at 0\.qa\.0\.category: Invalid input: expected number, received string/],
      ["not json", /: not readable as JSON \(/],
    ];
    for (const [i, [text, why]] of cases.entries()) {
      const file = join(dir, `bad-${i}.json`);
      writeFileSync(file, text);
      const r = runCli(["bench", "locomo", "--data", file, "--json"], {});
      expect(r.status, text).toBe(1);
      expect(r.stderr, text).toMatch(why);
      expect(r.stdout, text).toBe("");
    }
  });
});

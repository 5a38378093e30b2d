// proto/gen is committed so a build needs no code generator. This test regenerates it from the
// .proto files with the same script `npm run codegen` runs and fails when the committed copy is
// stale (someone edited a .proto and did not run codegen, or hand-edited a generated file).
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/tmp.js";

const repo = resolve(fileURLToPath(import.meta.url), "../../..");
const committed = join(repo, "proto", "gen");

/** Paths of every file below `dir`, relative to it, sorted. */
function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .flatMap((d) => (d.isDirectory() ? filesUnder(dir, join(prefix, d.name)) : [join(prefix, d.name)]))
    .sort();
}

describe("proto codegen", () => {
  it("proto/gen matches what `npm run codegen` generates now", () => {
    const out = tempDir("imem-codegen-");
    execFileSync(process.execPath, [join(repo, "scripts", "codegen.mjs"), "--out", out], { stdio: "pipe" });
    const fresh = join(out, "gen");

    const files = filesUnder(fresh);
    expect(files).toContain(join("infinity", "memory", "v1", "context_hook_pb.ts"));
    expect(filesUnder(committed), "proto/gen has missing or extra files; run npm run codegen").toEqual(files);
    for (const f of files) {
      const want = readFileSync(join(fresh, f), "utf8");
      const have = readFileSync(join(committed, f), "utf8");
      expect(have === want, `proto/gen/${f} is stale; run npm run codegen`).toBe(true);
    }
  });
});

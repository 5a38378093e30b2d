// A person declines a learned skill's first candidate; later the policy drifts. The drifted
// candidate is gated like the new skill it still is (nothing was ever granted or published), so
// it can be proposed again: it must not fail as "widening" a grant nobody gave.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openChoreWorld, rng, task } from "../../bench/evolution/chore.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

const cli = (dir: string, ...args: string[]) => runCli(["skills", ...args, "--db", join(dir, "memory.db")], { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "alice" });

async function learn(dir: string, from: number, to: number, seed: number) {
  const w = openChoreWorld(dir);
  const r = rng(seed);
  for (let i = from; i < to; i++) await w.runTask(task(i), r, { skills: false });
  await w.worker.drain();
  w.close();
}

describe("a declined new skill, after its policy drifts", () => {
  it("is proposed again as v2 of the same skill, within the evidence, and never published unasked", async () => {
    const dir = tempDir("evo-decline-");
    await learn(dir, 0, 12, 7);
    expect(cli(dir, "evolve").stdout).toMatch(/passed the gate, request srq/);
    const list = cli(dir, "requests").stdout;
    const id = /^(srq\S+)/m.exec(list)![1]!;
    const name = /publish (\S+?) v1 · pending/.exec(list)![1]!;
    expect(cli(dir, "decline", id).status).toBe(0);

    await learn(dir, 12, 40, 11);
    const again = cli(dir, "evolve");
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).not.toMatch(/widens the grant/);
    expect(again.stdout).toMatch(/passed the gate, request srq/);
    const pending = cli(dir, "requests").stdout;
    expect(pending).toMatch(new RegExp(`publish ${name} v2 · pending`));
    expect(pending).toMatch(/new tools \(granted on approval\): bump_version, update_changelog, run_tests, git_commit, git_tag/);
    // the declined version stays rejected, nothing is live or granted until a person says yes
    const shown = cli(dir, "show", name, "--version", "v1");
    expect(shown.stdout).toMatch(/^ {2}v1 rejected/m);
    expect(shown.stdout).toMatch(/^ {2}v2 candidate/m);
    expect(shown.stdout).toMatch(/^Granted tools: none$/m);
    expect(cli(dir, "list").stdout).not.toMatch(/probationary|active/);
  });
});

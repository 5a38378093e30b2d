// A learning pass that stops part way through crystallizing a skill. The policy was marked built
// before its candidate and request were stored, and the same content proposed again was "nothing
// new": a process killed in between left a learned skill nobody was ever asked about (not built
// again until the policy drifted, and then still no request for the stored candidate). Now the
// next pass builds it again and files the request.
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { openChoreWorld, rng, task, type ChoreWorld } from "../../bench/evolution/chore.js";
import { tempDir } from "../helpers/tmp.js";

const CHILD = resolve(fileURLToPath(import.meta.url), "../../../dist/test/evolution/crystallize-crash-child.js");

let w: ChoreWorld | null = null;
afterEach(() => {
  w?.close();
  w = null;
});

/** a chore world with enough successful episodes for one eligible policy */
async function learned(): Promise<{ dir: string; world: ChoreWorld }> {
  const dir = tempDir("evo-crash-");
  const world = openChoreWorld(dir);
  const r = rng(7);
  for (let i = 0; i < 12; i++) await world.runTask(task(i), r, { skills: false });
  await world.worker.drain();
  return { dir, world };
}

function crashAt(dir: string, store: "skills" | "evolution", method: string): void {
  const r = spawnSync(process.execPath, [CHILD, dir, store, method], { encoding: "utf8", timeout: 60_000 });
  expect(r.stdout, r.stderr).toBe(`dying at ${store}.${method}\n`);
  expect(r.signal).toBe("SIGKILL");
}

describe("a learning pass killed while crystallizing a skill", () => {
  for (const [store, method, when] of [
    ["skills", "insertVersion", "after the gate, before the candidate is stored"],
    ["evolution", "addRequest", "after the candidate is stored, before its request"],
  ] as const) {
    it(`${when}: the next pass files the request`, async () => {
      const l = await learned();
      w = l.world;
      crashAt(l.dir, store, method);
      expect(await w.evolution.requests("pending")).toEqual([]);
      const made = (await w.evolution.run(true)).filter((o) => o.requestId);
      expect(made).toHaveLength(1);
      const pending = await w.evolution.requests("pending");
      expect(pending.map((r) => [r.kind, r.skillName, r.versionId])).toEqual([["publish", made[0]!.skillName, made[0]!.versionId]]);
      // one candidate, asked about once; approving it publishes it
      expect((await w.skills.history(made[0]!.skillName)).versions.map((v) => v.status)).toEqual(["candidate"]);
      expect(await w.evolution.approve(pending[0]!.id, "cli:alice")).toMatchObject({ status: "approved" });
      expect((await w.skills.version(await w.skills.skill(made[0]!.skillName))).status).toBe("probationary");
      // and the pass after that has nothing new to ask
      expect((await w.evolution.run(true)).filter((o) => o.requestId)).toEqual([]);
    });
  }
});

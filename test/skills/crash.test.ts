// Crash consistency: a child process publishes and rolls back in a loop on a real SQLite file and
// is SIGKILLed at random moments. After every kill the file is intact and each skill's pointer
// names one of its own versions in a live status — the old or the new one, never in between.
import { spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/tmp.js";

const WORKER = resolve(fileURLToPath(import.meta.url), "../fixtures/crash-worker.mjs");

async function runAndKill(db: string, round: number, afterMs: number): Promise<void> {
  const child = spawn(process.execPath, [WORKER, db], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CRASH_ROUND: String(round) } });
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<NodeJS.Signals | number | null>((res) => child.on("exit", (code, sig) => res(sig ?? code)));
  await new Promise<void>((res, rej) => {
    child.stdout.once("data", () => res());
    child.once("exit", () => rej(new Error(`worker exited before starting: ${err}`)));
  });
  await new Promise((r) => setTimeout(r, afterMs));
  child.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");
}

function check(db: string): { skills: number; versions: number } {
  const d = new Database(db);
  try {
    expect(d.pragma("integrity_check", { simple: true })).toBe("ok");
    const skills = d.prepare(`SELECT rowid, id, name, published_version_id FROM skills`).all() as { rowid: number; id: string; name: string; published_version_id: string | null }[];
    for (const s of skills) {
      const live = d.prepare(`SELECT id FROM skill_versions WHERE skill_id = ? AND status IN ('probationary','active')`).all(s.id) as { id: string }[];
      if (s.published_version_id === null) {
        expect(live).toEqual([]);
        continue;
      }
      const v = d.prepare(`SELECT skill_id, status, description FROM skill_versions WHERE id = ?`).get(s.published_version_id) as { skill_id: string; status: string; description: string } | undefined;
      expect(v?.skill_id).toBe(s.id);
      expect(["probationary", "active"]).toContain(v?.status);
      // Exactly one live version, and the search index shows that one.
      expect(live).toEqual([{ id: s.published_version_id }]);
      expect(d.prepare(`SELECT description FROM skill_fts WHERE rowid = ?`).get(s.rowid)).toEqual({ description: v?.description });
      const files = d.prepare(`SELECT COUNT(*) AS n FROM skill_files WHERE version_id = ?`).get(s.published_version_id) as { n: number };
      expect(files.n).toBe(2);
    }
    const versions = (d.prepare(`SELECT COUNT(*) AS n FROM skill_versions`).get() as { n: number }).n;
    return { skills: skills.length, versions };
  } finally {
    d.close();
  }
}

describe("crash consistency of publish and rollback", () => {
  it("SIGKILL at random moments leaves every pointer at the old or the new version", async () => {
    const db = join(tempDir(), "crash.db");
    let last = 0;
    for (let round = 0; round < 8; round++) {
      await runAndKill(db, round, 40 + Math.floor(Math.random() * 160));
      const c = check(db);
      expect(c.skills).toBe(3);
      expect(c.versions).toBeGreaterThan(last); // the worker made progress this round
      last = c.versions;
    }
  }, 60_000);
});

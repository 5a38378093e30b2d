// Killing the worker's process mid-queue loses no episode: the queue is on disk, a killed
// worker's claims expire, and the next worker processes what is left exactly once.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { T0 } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";
import { msg, openWorld } from "./world.js";

const CHILD = resolve(fileURLToPath(new URL(".", import.meta.url)), "../../dist/test/learning/worker-child.js");
const THREADS = 10;
const LEASE_MS = 400;

describe("worker restart", () => {
  it("resumes after a SIGKILL mid-processing with no episode lost or duplicated", async () => {
    if (!existsSync(CHILD)) throw new Error(`${CHILD} is missing: run the build first`);
    const dir = tempDir("learn-kill-");
    const seed = openWorld(dir);
    for (let i = 0; i < THREADS; i++) {
      await seed.append(`t-${i}`, [
        msg.user(i === 0 ? "I prefer tabs." : `Run task ${i}`),
        msg.call(`c-${i}`, "shell", { cmd: `make task-${i}` }),
        msg.result(`c-${i}`, "ok"),
        msg.text(`Task ${i} done.`),
      ]);
    }
    seed.mem.close();

    const child = spawn(process.execPath, [CHILD, join(dir, "memory.db"), String(T0), String(LEASE_MS), "5000"], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise<NodeJS.Signals | null>((r) => child.once("exit", (_c, sig) => r(sig)));
    const lines = createInterface({ input: child.stdout! });
    await new Promise<void>((res) => lines.on("line", (l) => l.startsWith("processed") && res()));
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");

    const w = openWorld(dir);
    const count = (sql: string) => (w.mem.db.prepare(sql).get() as { n: number }).n;
    const before = count(`SELECT count(DISTINCT thread_id) AS n FROM learning_episodes`);
    expect(before).toBeGreaterThanOrEqual(1);
    expect(before).toBeLessThan(THREADS); // it really was killed mid-queue
    expect(await w.store.queueDepth()).toBe(THREADS - 1);

    // The dead worker's claims still hold; once they expire the queue is taken over.
    expect((await w.worker.runOnce()).processed).toBe(0);
    w.mem.clock.advance(LEASE_MS + 1);
    await w.worker.drain();
    expect(await w.store.queueDepth()).toBe(0);
    expect(count(`SELECT count(*) AS n FROM learning_episodes`)).toBe(THREADS);
    expect(count(`SELECT count(DISTINCT thread_id) AS n FROM learning_episodes WHERE state = 'done'`)).toBe(THREADS);
    expect(count(`SELECT count(*) AS n FROM learning_steps`)).toBe(THREADS);
    expect(count(`SELECT count(*) AS n FROM memories WHERE status = 'pending'`)).toBe(1);
    w.mem.close();
  });
});

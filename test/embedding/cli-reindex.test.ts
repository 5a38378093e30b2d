// `infinity-memory memory reindex --vectors` as a real child process: memories written with no
// embedder get vectors once config.json names one; with none configured the command says so.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openMemory } from "../../cli/context.js";
import { defaultConfig } from "../../core/config.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { runCli } from "../helpers/cli.js";
import { modelOrigin, req } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";
import { writeTinyOnnxFolder } from "./onnx-folder.js";

const alice = req({ user: "alice", project: null });

async function seed(dbPath: string, contents: string[]): Promise<void> {
  const ctx = openMemory({ dbPath, config: defaultConfig({ localUser: "alice" }), env: {} });
  try {
    for (const content of contents) await ctx.service.remember(alice, { content, kind: "fact", scope: "user" }, modelOrigin());
    expect(ctx.store.vectors).toBeNull(); // no embedder, never any vectors
  } finally {
    ctx.close();
  }
}

function vectorCount(dbPath: string): number {
  const ctx = openMemory({ dbPath, config: defaultConfig({ localUser: "alice" }), env: {} });
  try {
    return ctx.store.vectors?.count() ?? 0;
  } finally {
    ctx.close();
  }
}

describe("memory reindex --vectors", () => {
  it("backfills with the configured hashing embedder, then has nothing left to do", async () => {
    const home = tempDir();
    const dbPath = join(home, "memory.db");
    await seed(dbPath, ["Alice's bike is a green Brompton", "Alice is allergic to peanuts", "Standup is at 9:30"]);
    writeFileSync(join(home, "config.json"), JSON.stringify({ embedder: { kind: "hashing", hashing: { dimensions: 48 } } }));
    const env = { INFINITY_MEMORY_HOME: home, INFINITY_MEMORY_USER: "alice" };
    const r = runCli(["memory", "reindex", "--vectors", "--db", dbPath, "--batch", "2", "--json"], env);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ embedder: "hashing-v1:48:3-4:0.35", dimensions: 48, embedded: 3, vectors: 3 });
    expect(vectorCount(dbPath)).toBe(3);
    const again = runCli(["memory", "reindex", "--vectors", "--db", dbPath, "--json"], env);
    expect(JSON.parse(again.stdout)).toMatchObject({ embedded: 0, vectors: 3 });
    // the CLI's own search now fuses the vector channel
    const s = runCli(["memory", "search", "bicycle Brompton", "--db", dbPath, "--json"], env);
    expect(s.status).toBe(0);
    expect(s.stdout).toContain("Brompton");
  });

  it("backfills with a local ONNX model folder", async () => {
    const home = tempDir();
    const dbPath = join(home, "memory.db");
    await seed(dbPath, ["the cat sat on the mat", "dogs run"]);
    const dir = writeTinyOnnxFolder(tempDir("onnx-"), 8);
    writeFileSync(join(home, "config.json"), JSON.stringify({ embedder: { kind: "onnx", onnx: { dir } } }));
    const r = runCli(["memory", "reindex", "--vectors", "--db", dbPath, "--json"], { INFINITY_MEMORY_HOME: home });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ dimensions: 8, embedded: 2, vectors: 2 });
    const db = openDatabase(dbPath);
    const meta = db.prepare(`SELECT embedder_id, dimensions FROM memory_vector_meta`).get() as { embedder_id: string };
    db.close();
    expect(meta.embedder_id).toMatch(/^onnx:onnx-/);
  });

  it("says what to configure when no embedder is set, and what failed when it cannot load", async () => {
    const home = tempDir();
    const env = { INFINITY_MEMORY_HOME: home };
    await seed(join(home, "memory.db"), ["Alice keeps her notes in the blue binder"]);
    const r = runCli(["memory", "reindex", "--vectors", "--db", join(home, "memory.db")], env);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/no embedder configured: set "embedder"/);
    writeFileSync(join(home, "config.json"), JSON.stringify({ embedder: { kind: "onnx", onnx: { dir: join(home, "missing-model") } } }));
    const m = runCli(["memory", "reindex", "--vectors", "--db", join(home, "memory.db")], env);
    expect(m.status).not.toBe(0);
    expect(m.stderr).toMatch(/the embedder could not be loaded: embedder unavailable: .*missing-model does not exist/);
    const b = runCli(["memory", "reindex", "--vectors", "--batch", "0", "--db", join(home, "memory.db")], { INFINITY_MEMORY_HOME: tempDir() });
    expect(b.status).not.toBe(0);
  });
});

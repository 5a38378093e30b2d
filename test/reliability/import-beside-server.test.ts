// A bulk `memory import` into the SQLite file a running command server writes to, while an agent
// keeps remembering through RAP: SQLite's one writer lock makes them take turns, and neither may
// lose or double anything. Then the import is killed (SIGKILL) part-way: what it committed is
// whole batches, the server's acknowledged writes are all there, and running the same import again
// finishes it with every line stored exactly once.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { factOf, invocation, post, startImport, startServe, startSink, type ServeProcess, type Sink } from "../../bench/serve-fleet.js";
import { tempDir } from "../helpers/tmp.js";

const env = (dir: string) => ({ ...process.env, INFINITY_MEMORY_HOME: join(dir, "cli-home"), INFINITY_MEMORY_USER: "alice" });
const lineText = (i: number) => `Imported note ${i}: the ${["billing", "search", "deploy", "backup"][i % 4]} runbook step ${i * 7} lives in the wiki`;

function importFile(path: string, n: number): void {
  writeFileSync(path, `${Array.from({ length: n }, (_, i) => JSON.stringify({ content: lineText(i), kind: "fact" })).join("\n")}\n`);
}

const runImport = (dir: string, file: string, db: string, batch: number) => startImport({ file, db, batch, env: env(dir) });

/** Remembers one fact at a time (each result awaited, as an agent's thread does) while `busy()`. */
async function agentRemembers(server: ServeProcess, sink: Sink, tag: string, busy: () => boolean, atLeast: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; busy() || i < atLeast; i++) {
    const id = `${tag}-${i}`;
    ids.push(id);
    expect(await post(server.endpoint, invocation("memory_remember", { content: factOf(id), kind: "fact" }, id, sink.url, `${tag}-thread`))).toBe(200);
    expect(await sink.waitFor([id], 30_000)).toEqual([]);
    await new Promise((r) => setTimeout(r, 10));
  }
  return ids;
}

function contentCounts(db: string): Map<string, number> {
  const c = new Database(db, { readonly: true });
  try {
    const out = new Map<string, number>();
    for (const { content } of c.prepare(`SELECT content FROM memories WHERE status = 'active'`).all() as { content: string }[]) out.set(content, (out.get(content) ?? 0) + 1);
    return out;
  } finally {
    c.close();
  }
}

describe("memory import beside a running command server (one SQLite file)", () => {
  let server: ServeProcess | null = null;
  let sink: Sink | null = null;
  afterEach(async () => {
    await server?.stop();
    await sink?.close();
    server = sink = null;
  });

  it("every acknowledged remember and every imported line is stored exactly once", { timeout: 120_000 }, async () => {
    const dir = tempDir("imem-import-beside-");
    const db = join(dir, "memory.db");
    server = await startServe({ db, dir, name: "session" });
    sink = await startSink();
    const file = join(dir, "notes.jsonl");
    importFile(file, 10_000);
    const imp = runImport(dir, file, db, 1000);
    let importing = true;
    void imp.done.then(() => (importing = false));
    const ids = await agentRemembers(server, sink, "agent", () => importing, 20);
    const res = await imp.done;
    expect(res.code, res.err).toBe(0);
    expect(JSON.parse(res.out.trim().split("\n").at(-1)!)).toMatchObject({ lines: 10_000, imported: 10_000, failed: 0 });
    for (const id of ids) expect(sink.results.get(id)!.text, id).not.toMatch(/^Error/);
    const counts = contentCounts(db);
    expect(ids.filter((id) => counts.get(factOf(id)) !== 1)).toEqual([]);
    const imported = [...counts].filter(([c]) => c.startsWith("Imported note "));
    expect(imported).toHaveLength(10_000);
    expect(imported.every(([, n]) => n === 1)).toBe(true);
  });

  it("an import killed part-way leaves whole batches and the server's writes; run again, it stores each line once", { timeout: 180_000 }, async () => {
    const dir = tempDir("imem-import-killed-");
    const db = join(dir, "memory.db");
    server = await startServe({ db, dir, name: "session" });
    sink = await startSink();
    // one remember first, so the file exists for the watcher below
    const before = await agentRemembers(server, sink, "before", () => false, 1);
    const file = join(dir, "notes.jsonl");
    const LINES = 40_000;
    const BATCH = 500;
    importFile(file, LINES);
    const imp = runImport(dir, file, db, BATCH);
    let importing = true;
    void imp.done.then(() => (importing = false));
    const agent = agentRemembers(server, sink, "agent", () => importing, 10);
    // Kill it once a few batches are in, from a connection of its own.
    const watch = new Database(db, { readonly: true });
    const importedSoFar = () => (watch.prepare(`SELECT count(*) AS n FROM memories WHERE content LIKE 'Imported note %'`).get() as { n: number }).n;
    try {
      while (importing && importedSoFar() < 4 * BATCH) await new Promise((r) => setTimeout(r, 10));
    } finally {
      watch.close();
    }
    imp.child.kill("SIGKILL");
    const killed = await imp.done;
    expect(killed.signal, "the import finished before it could be killed: make the file larger").toBe("SIGKILL");
    const ids = [...before, ...(await agent)];

    const check = new Database(db, { readonly: true });
    try {
      expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      check.close();
    }
    const partial = [...contentCounts(db).keys()].filter((c) => c.startsWith("Imported note ")).length;
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(LINES);
    // each batch is one transaction: all of its lines or none
    expect(partial % BATCH).toBe(0);

    const again = runImport(dir, file, db, BATCH);
    const res = await again.done;
    expect(res.code, res.err).toBe(0);
    expect(JSON.parse(res.out.trim().split("\n").at(-1)!)).toMatchObject({ lines: LINES, imported: LINES - partial, duplicates: partial, failed: 0 });
    const counts = contentCounts(db);
    const imported = [...counts].filter(([c]) => c.startsWith("Imported note "));
    expect(imported).toHaveLength(LINES);
    expect(imported.every(([, n]) => n === 1)).toBe(true);
    for (const id of ids) expect(sink.results.get(id)!.text, id).not.toMatch(/^Error/);
    expect(ids.filter((id) => counts.get(factOf(id)) !== 1)).toEqual([]);
  });
});

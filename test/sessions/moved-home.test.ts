// A daemon home moved (not linked) to another folder is the same conversations: the index takes the
// old location's place instead of holding every message twice, and what a forget purged there is
// not found again from the new place.
import { cpSync, renameSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { makeSessionSearch, openSources } from "../../cli/sessions.js";
import { openTestMemory } from "../helpers/memory.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

const HOME = resolve("test/fixtures/infinity-home");
const ALICE_SESSION = "5b0e9d4c-2f6a-4c1e-9a7b-3d8f1e2c4a60";

describe("a moved daemon home", () => {
  it("replaces its old location in the index; forgotten messages stay forgotten", async () => {
    const dir = tempDir();
    const before = join(dir, "old-disk", ".infinity");
    cpSync(HOME, before, { recursive: true });
    const m = openTestMemory(dir);
    const first = openSources([`infinity-home:${before}`], m.db, m.dbPath);
    const s1 = makeSessionSearch(m.db, first.sources, m.clock, "local");
    expect(await s1.search("alice", { query: "wind speed mph imperial", limit: 5, window: 0 })).not.toEqual([]);
    // a forget took this message out of the index
    expect(await s1.purge("local", ["Tail the staging logs"])).toBeGreaterThan(0);
    first.close();

    const after = join(dir, "new-disk", ".infinity");
    cpSync(join(dir, "old-disk"), join(dir, "new-disk"), { recursive: true });
    rmSync(join(dir, "old-disk"), { recursive: true });
    const moved = openSources([`infinity-home:${after}`], m.db, m.dbPath);
    const s2 = makeSessionSearch(m.db, moved.sources, m.clock, "local");
    const report = (await s2.refresh(true))[0]!;
    expect(report.movedFrom).toEqual([before]);
    const hits = await s2.search("alice", { query: "wind speed mph imperial", limit: 10, window: 0 });
    const places = hits.map((h) => `${h.hit.threadId}#${h.hit.ord}`);
    expect(places.length).toBeGreaterThan(0);
    expect(new Set(places).size).toBe(places.length);
    expect(new Set(hits.map((h) => h.hit.sourceId)).size).toBe(1);
    expect(hits[0]!.hit.rootThreadId).toBe(ALICE_SESSION);
    expect(await s2.search("local", { query: "staging logs deploy", limit: 5, window: 0 })).toEqual([]);
    expect((await s2.refresh(true))[0]!.movedFrom).toEqual([]);
    moved.close();
    m.close();
  });

  it("an index holding both copies already (the new place indexed while the old one was still there) keeps one", async () => {
    const dir = tempDir();
    const before = join(dir, "a");
    cpSync(HOME, before, { recursive: true });
    const env = { INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "local" };
    expect(runCli(["sessions", "index", "--from", `infinity-home:${before}`], env).status).toBe(0);
    const m = openTestMemory(dir);
    const first = openSources([`infinity-home:${before}`], m.db, m.dbPath);
    expect(await makeSessionSearch(m.db, first.sources, m.clock, "local").purge("local", ["Tail the staging logs"])).toBeGreaterThan(0);
    first.close();
    m.close();
    // copied first, indexed from the copy, then the original removed
    const after = join(dir, "b");
    cpSync(before, after, { recursive: true });
    expect(runCli(["sessions", "index", "--from", `infinity-home:${after}`], env).status).toBe(0);
    renameSync(before, join(dir, "trash"));
    rmSync(join(dir, "trash"), { recursive: true });

    const r = runCli(["sessions", "index", "--from", `infinity-home:${after}`], env);
    expect(r.stdout).toContain(`taken over from where it was before (${before})`);
    const found = runCli(["sessions", "search", "wind", "speed", "mph", "--user", "alice", "--from", `infinity-home:${after}`, "--json", "--window", "0", "--limit", "20"], env);
    const places = found.stdout.trim().split("\n").map((l) => JSON.parse(l) as { thread_id: string; message_index: number }).map((h) => `${h.thread_id}#${h.message_index}`);
    expect(places.length).toBeGreaterThan(0);
    expect(new Set(places).size).toBe(places.length);
    // the purged message was indexed again from the copy; now that the copy is the home, it is gone
    expect(runCli(["sessions", "search", "staging", "logs", "deploy", "--from", `infinity-home:${after}`], env).stdout).toBe("no matches\n");
  });
});

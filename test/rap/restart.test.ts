// Crash and restart: invocations acknowledged but not answered are re-run by the next server
// on the same database; calls owned by a live process are left alone; shutdown drains.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "../../stores/sqlite/database.js";
import { SqliteRapJournal } from "../../stores/sqlite/rap-journal.js";
import { startRapServer, type RapServer } from "../../toolsets/rap/server.js";
import {
  FAST_OUTBOX,
  invocation,
  newToolState,
  post,
  resultFor,
  silentLogger,
  sleep,
  startListener,
  tempDir,
  testToolset,
  waitFor,
  type Listener,
  type ToolState,
} from "./helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ db: Db; path: string; listener: Listener }> {
  const t = tempDir();
  const path = join(t.dir, "rap.sqlite");
  const db = openDatabase(path);
  const listener = await startListener();
  cleanups.push(() => {
    db.close();
    t.cleanup();
  });
  cleanups.push(() => listener.close());
  return { db, path, listener };
}

async function serve(db: Db, state: ToolState): Promise<RapServer> {
  const s = await startRapServer({ toolset: testToolset(state), db, logger: silentLogger, outbox: FAST_OUTBOX });
  cleanups.push(() => s.close({ graceMs: 100 }));
  return s;
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "0"]);
  return r.pid!;
}

function journal(db: Db, callId: string) {
  return db.prepare("SELECT status, owner, body FROM rap_invocations WHERE call_id = ?").get(callId) as
    | { status: string; owner: string; body: string | null }
    | undefined;
}

describe("journal replay", () => {
  it("re-runs a call a previous boot left running, on the next start", async () => {
    const { db, listener } = await setup();
    const firstState = newToolState();
    const first = await serve(db, firstState);
    await post(first.url, "/invoke", invocation(listener.url, { operation: "slow", arguments: {}, id: "interrupted" }));
    await waitFor(() => firstState.release.get("interrupted"), "first run to start");
    await first.close({ graceMs: 50 });
    expect(firstState.aborted).toEqual(["interrupted"]);
    expect(journal(db, "interrupted")?.status).toBe("received");
    expect(listener.bodies).toHaveLength(0);

    const secondState = newToolState();
    await serve(db, secondState);
    const release = await waitFor(() => secondState.release.get("interrupted"), "the re-run");
    release("done on the second boot");
    const result = await resultFor(listener, "interrupted");
    expect(result).toEqual({ type: "tool_result", group_id: "6f1c2c7e-5b7e-4d0b-9a57-2b0c1d7f9e11", id: "interrupted", text: "done on the second boot" });
    await waitFor(() => journal(db, "interrupted")?.status === "done", "journal closed");
    expect(journal(db, "interrupted")?.body).toBeNull();
  });

  it("re-runs a call whose owner process died, and leaves a live owner's call alone", async () => {
    const { db, listener } = await setup();
    const j = new SqliteRapJournal(db);
    const key = (callId: string) => ({ toolset: "testing", groupId: "g", callId });
    const body = (id: string) => JSON.stringify(invocation(listener.url, { id, group_id: "g", arguments: { text: id } }));
    await j.record(key("orphan"), body("orphan"), `${deadPid()}:old-boot`, Date.now());
    // our parent (the vitest runner) is alive
    await j.record(key("owned"), body("owned"), `${process.ppid}:other-boot`, Date.now());
    await j.record(key("garbled"), "{not json", `${deadPid()}:old-boot`, Date.now());

    const state = newToolState();
    await serve(db, state);
    expect((await resultFor(listener, "orphan")).text).toBe("echo: orphan");
    await waitFor(() => journal(db, "garbled")?.status === "failed", "garbled entry failed");
    await sleep(100);
    expect(state.runs.get("owned")).toBeUndefined();
    expect(journal(db, "owned")?.status).toBe("received");
    expect(journal(db, "garbled")?.body).toBeNull();
  });

  it("takes over an orphaned call when the runtime sends it again", async () => {
    const { db, listener } = await setup();
    const state = newToolState();
    const server = await serve(db, state);
    // a process that crashed after this server started had acknowledged the call
    const inv = invocation(listener.url, { id: "resent", group_id: "g" });
    await new SqliteRapJournal(db).record({ toolset: "testing", groupId: "g", callId: "resent" }, JSON.stringify(inv), `${deadPid()}:x`, Date.now());
    expect((await post(server.url, "/invoke", inv)).status).toBe(200);
    expect((await resultFor(listener, "resent")).text).toBe("echo: hi");
    expect(state.runs.get("resent")).toBe(1);
  });
});

describe("shutdown", () => {
  it("waits for running calls within the grace period and delivers their results before returning", async () => {
    const { db, listener } = await setup();
    const state = newToolState();
    const server = await startRapServer({ toolset: testToolset(state), db, logger: silentLogger, outbox: FAST_OUTBOX });
    await post(server.url, "/invoke", invocation(listener.url, { operation: "slow", arguments: {}, id: "draining" }));
    const release = await waitFor(() => state.release.get("draining"), "slow call to start");
    setTimeout(() => release("finished during shutdown"), 100);
    await server.close({ graceMs: 3000 });
    expect(state.aborted).toEqual([]);
    expect(listener.accepted().map((b) => b.text)).toEqual(["finished during shutdown"]);
    expect(journal(db, "draining")?.status).toBe("done");
    // closed for business
    await expect(fetch(`${server.url}/.well-known/rap-toolset`)).rejects.toThrow();
  });
});

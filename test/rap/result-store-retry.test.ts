// A finished call whose result the database refuses to store (another connection holds the write
// lock past the busy timeout, as a long import or backup can) is stored and delivered once the
// database takes writes again, without running the tool a second time; an invocation arriving
// meanwhile gets a 503 (the daemon gives the model an Error result for it; a call made again
// then succeeds) and nothing is lost. Real HTTP, a real SQLite
// file and a second real connection holding its lock.
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { invocation, post, postTo, resultFor, sleep, startHarness, waitFor, type Harness } from "./helpers.js";

let h: Harness | null = null;
let locker: Database.Database | null = null;
afterEach(async () => {
  if (locker?.inTransaction) locker.exec("ROLLBACK");
  locker?.close();
  locker = null;
  await h?.stop();
  h = null;
});

function journalStatus(db: Database.Database, callId: string): string | undefined {
  return (db.prepare(`SELECT status FROM rap_invocations WHERE call_id = ?`).get(callId) as { status: string } | undefined)?.status;
}

describe("a result the database refuses to store", () => {
  it("is stored and delivered once the lock is gone, and the tool ran once", async () => {
    h = await startHarness({ server: { completeRetry: { baseDelayMs: 40, maxDelayMs: 160 } } });
    // the server's connection gives up on a lock after 50 ms instead of 5 s
    h.db.pragma("busy_timeout = 50");
    expect((await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "slow", arguments: {}, id: "locked-1" }))).status).toBe(200);
    const release = await waitFor(() => h!.state.release.get("locked-1"), "slow handler to start");

    locker = new Database(h.dbPath);
    locker.exec("BEGIN IMMEDIATE");
    release("done while locked");
    // several attempts fail meanwhile: nothing is delivered and the call stays open
    await sleep(700);
    expect(h.listener.bodies).toHaveLength(0);
    expect(journalStatus(locker, "locked-1")).toBe("received");
    // a new invocation cannot be journaled either: 503 (the model sees an Error result and may call again)
    const refused = await post(h.server.url, "/invoke", invocation(h.listener.url, { id: "while-locked" }));
    expect(refused.status).toBe(503);
    expect(refused.text).toMatch(/could not be recorded; try again/);

    locker.exec("COMMIT");
    expect((await resultFor(h.listener, "locked-1")).text).toBe("done while locked");
    expect(journalStatus(h.db, "locked-1")).toBe("done");
    expect(h.state.runs.get("locked-1")).toBe(1);
    // the same call made again is answered as usual
    expect((await post(h.server.url, "/invoke", invocation(h.listener.url, { id: "while-locked" }))).status).toBe(200);
    expect((await resultFor(h.listener, "while-locked")).text).toBe("echo: hi");
    await sleep(100);
    expect(h.listener.accepted().filter((b) => b.id === "locked-1")).toHaveLength(1);
  });

  it("a person's answer that arrives while another connection holds the lock is acted on, not dropped", async () => {
    // the daemon posts an answer once and never again: a 500 here left the call waiting 15 minutes
    h = await startHarness({ server: { completeRetry: { baseDelayMs: 40, maxDelayMs: 160 } } });
    h.db.pragma("busy_timeout = 50");
    expect((await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "ask", arguments: { question: "Forget all?" }, id: "ask-locked", group_id: "G" }))).status).toBe(200);
    const choice = await waitFor(() => h!.listener.accepted().find((b) => b.type === "user_choice"), "user_choice callback");

    locker = new Database(h.dbPath);
    locker.exec("BEGIN IMMEDIATE");
    const answer = await postTo(choice.response_url as string, { id: "ask-locked", selected: 0 });
    expect(answer.status).toBe(200);
    await sleep(300);
    locker.exec("COMMIT");
    expect((await resultFor(h.listener, "ask-locked")).text).toBe("the person chose Yes");
    expect(h.state.runs.get("ask-locked")).toBe(1);
  });

  it("a delivered callback whose outcome the database refused to record is not sent again, nor holds up its call's result", async () => {
    // left to its 30 s lease, the question went to the daemon a second time after the person had
    // answered, and the call's result waited behind it until then
    let lockOnQuestion = true;
    h = await startHarness({
      server: { completeRetry: { baseDelayMs: 40, maxDelayMs: 160 } },
      listenerStatus: (body) => {
        // another process takes the lock while the question is on its way
        if (lockOnQuestion && body.includes('"user_choice"')) {
          lockOnQuestion = false;
          locker = new Database(h!.dbPath);
          locker.exec("BEGIN IMMEDIATE");
        }
        return 200;
      },
    });
    h.db.pragma("busy_timeout = 50");
    expect((await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "ask", arguments: { question: "Publish it?" }, id: "ask-once", group_id: "G" }))).status).toBe(200);
    const choice = await waitFor(() => h!.listener.accepted().find((b) => b.type === "user_choice"), "user_choice callback");
    await sleep(300);
    locker!.exec("COMMIT");
    expect((await postTo(choice.response_url as string, { id: "ask-once", selected: 0 })).status).toBe(200);
    expect((await resultFor(h.listener, "ask-once")).text).toBe("the person chose Yes");
    expect(h.listener.accepted().filter((b) => b.type === "user_choice")).toHaveLength(1);
  });

  it("a cancel that arrives while another connection holds the lock is recorded once it is gone", async () => {
    // left open in the journal, the cancelled call was run again by the next process to start
    h = await startHarness({ server: { completeRetry: { baseDelayMs: 40, maxDelayMs: 160 } } });
    h.db.pragma("busy_timeout = 50");
    expect((await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "slow", arguments: {}, id: "cancel-locked", group_id: "G" }))).status).toBe(200);
    await waitFor(() => h!.state.release.get("cancel-locked"), "slow handler to start");

    locker = new Database(h.dbPath);
    locker.exec("BEGIN IMMEDIATE");
    expect((await post(h.server.url, "/cancel_tool_call", { thread_id: "G", tool_call_id: "cancel-locked" })).status).toBe(200);
    await sleep(300);
    expect(h.state.aborted).toEqual(["cancel-locked"]);
    locker.exec("COMMIT");
    await waitFor(() => journalStatus(h!.db, "cancel-locked") === "cancelled", "the cancel to be recorded", 3000);
    expect(h.listener.accepted().filter((b) => b.type === "tool_result")).toEqual([]);
  });

  it("stays open for the next process when the server stops before the lock is gone", async () => {
    h = await startHarness({ server: { completeRetry: { baseDelayMs: 40, maxDelayMs: 160 } } });
    h.db.pragma("busy_timeout = 50");
    expect((await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "slow", arguments: {}, id: "locked-2" }))).status).toBe(200);
    const release = await waitFor(() => h!.state.release.get("locked-2"), "slow handler to start");
    locker = new Database(h.dbPath);
    locker.exec("BEGIN IMMEDIATE");
    release("never stored");
    await sleep(300);
    const t = performance.now();
    await h.server.close({ graceMs: 200 });
    // the retry wait ends with the shutdown instead of holding it up
    expect(performance.now() - t).toBeLessThan(2000);
    locker.exec("COMMIT");
    expect(journalStatus(locker, "locked-2")).toBe("received");
    expect(h.listener.bodies).toHaveLength(0);
  });
});

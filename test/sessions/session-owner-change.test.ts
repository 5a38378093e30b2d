// A session's owner is the `user_id` of its root metadata, and an input carrying metadata replaces
// it (reference §3.1 set_metadata, §3.2 InputMessage.metadata). The session index follows: the
// messages indexed under the former owner, child threads included, move to the new one.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { copiedHome } from "../helpers/session-home.js";

const ALICE_SESSION = "5b0e9d4c-2f6a-4c1e-9a7b-3d8f1e2c4a60";
const CHILD = "8e3f2a71-6c4d-4b9e-a015-7f2d9c3b1e84";

describe("a session whose owner changes", () => {
  it("is searchable by the new owner only, its child threads too, within one running server", async () => {
    const { home, m, src, s } = copiedHome();
    const root = async (user: string, query: string) => (await s.search(user, { query, limit: 5, window: 0 })).map((h) => h.hit.threadId);
    expect(await root("alice", "wind speed mph imperial")).toContain(ALICE_SESSION);
    expect(await root("alice", "unit conversion helpers")).toContain(CHILD);

    // the next input of the session carries metadata naming another user
    const stateFile = join(home, "state", `${ALICE_SESSION}.state.json`);
    const state = JSON.parse(readFileSync(stateFile, "utf8")) as { metadata: unknown };
    state.metadata = { user_id: "carol" };
    writeFileSync(stateFile, JSON.stringify(state, null, 2));
    const threadFile = join(home, "threads", `${ALICE_SESSION}.json`);
    const thread = JSON.parse(readFileSync(threadFile, "utf8")) as { messages: unknown[] };
    thread.messages.push([{ kind: "user", content: { type: "text", text: "Carol here, picking this up" } }, "c0ffee00-0000-4000-8000-00000000ca01"]);
    writeFileSync(threadFile, JSON.stringify(thread, null, 2));
    m.clock.advance(5000);

    expect(await root("carol", "wind speed mph imperial")).toContain(ALICE_SESSION);
    expect(await root("carol", "unit conversion helpers")).toContain(CHILD);
    expect(await root("carol", "Carol picking")).toContain(ALICE_SESSION);
    expect(await root("alice", "wind speed mph imperial")).toEqual([]);
    expect(await root("alice", "unit conversion helpers")).toEqual([]);
    src.close();
    m.close();
  });

  it("moves to the new owner on the next indexing run though no message came with the new metadata", async () => {
    const { home, m, src, s } = copiedHome();
    const root = async (user: string, query: string) => (await s.search(user, { query, limit: 5, window: 0 })).map((h) => h.hit.threadId);
    expect(await root("alice", "wind speed mph imperial")).toContain(ALICE_SESSION);
    expect(await root("alice", "unit conversion helpers")).toContain(CHILD);

    // the session's metadata is replaced (reference §3.1 set_metadata); its history is untouched
    const stateFile = join(home, "state", `${ALICE_SESSION}.state.json`);
    const state = JSON.parse(readFileSync(stateFile, "utf8")) as { metadata: unknown };
    state.metadata = { user_id: "carol" };
    writeFileSync(stateFile, JSON.stringify(state, null, 2));
    m.clock.advance(5000);

    expect(await root("carol", "wind speed mph imperial")).toContain(ALICE_SESSION);
    expect(await root("carol", "unit conversion helpers")).toContain(CHILD);
    expect(await root("alice", "wind speed mph imperial")).toEqual([]);
    expect(await root("alice", "unit conversion helpers")).toEqual([]);
    src.close();
    m.close();
  });
});

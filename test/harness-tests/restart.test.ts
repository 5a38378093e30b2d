// A harness "restart" over the SQLite stores: threads, processed ids and the session table
// (sessions.json in the Infinity home) survive, so a result for a call made before the restart
// is still accepted, and the model sees the old conversation.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteConversationStore } from "../../stores/sqlite/conversation-store.js";
import { SqliteStateStore } from "../../stores/sqlite/state-store.js";
import { tempDir } from "../helpers/tmp.js";
import { MockInfinity } from "../harness/runtime.js";
import { echoTool, postCallback, startTestRapServer } from "./rap-fixture.js";
import { lastText, track, writeRapJson } from "./setup.js";

function stores(file: string) {
  const db = openDatabase(file);
  return { db, conversationStore: new SqliteConversationStore(db), stateStore: new SqliteStateStore(db) };
}

describe("restart", () => {
  it("keeps threads across a restart on SQLite stores", async () => {
    const server = await startTestRapServer({ tools: [echoTool] });
    const cwd = tempDir();
    const home = tempDir();
    const file = join(tempDir(), "threads.db");
    writeRapJson(cwd, [{ type: "toolset_server", server_url: server.url }]);

    const a = stores(file);
    const inf1 = track(await MockInfinity.start({ infinityHome: home, conversationStore: a.conversationStore, stateStore: a.stateStore }));
    const s = await inf1.createSession({ cwd, userId: "u1" });
    await inf1.sendUserText(s, "echo before the restart");
    (await inf1.model.nextRequest()).sendToolCall("t1", "echo", { text: "x" }).finish();
    await server.nextInvocation();
    await inf1.shutdown();
    a.db.close();

    const b = stores(file);
    const inf2 = track(await MockInfinity.start({ infinityHome: home, conversationStore: b.conversationStore, stateStore: b.stateStore }));
    expect(inf2.sessionCwd(s)).toBe(cwd);
    inf2.attachSession(s);
    // the server answers the old call at the new runtime's callback URL
    expect((await postCallback(inf2.callbackUrl, { type: "tool_result", group_id: s, id: "t1", text: "answered after restart" })).status).toBe(200);
    const r = await inf2.model.nextRequest();
    expect(r.request.chat_history.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(lastText(r)).toBe("answered after restart");
    r.sendToolCall("t2", "echo", { text: "y" }).finish();
    const second = await server.nextInvocation((i) => i.id === "t2");
    // root metadata survived too: user_id is still sent
    expect(second.inv.user_id).toBe("u1");
    expect(second.inv.callback_url).toBe(inf2.callbackUrl);
    await inf2.shutdown();
    b.db.close();
    await server.close();
  });
});

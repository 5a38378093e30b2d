// The RAP HTTP seam: manifest, invocation acks and results, request validation, cancellation,
// duplicates and user choices, through real HTTP against a real callback listener.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connect } from "node:net";
import { once } from "node:events";
import { invocationJson } from "../../toolsets/rap/wire-json.js";
import { RapInvocation, RapToolResult, ToolsetManifest } from "../../toolsets/rap/wire.js";
import { invocation, post, postTo, raw, resultFor, sleep, startHarness, waitFor, type Harness } from "./helpers.js";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.stop();
});

describe("manifest", () => {
  it("serves the toolset with an absolute endpoint built from the Host header", async () => {
    const res = await raw(h.server.url, "GET", "/.well-known/rap-toolset", undefined, { host: "tools.example:8123" });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json");
    const m = JSON.parse(res.text) as Record<string, unknown>;
    expect(Object.keys(m)).toEqual(["name", "description", "endpoint", "tools", "needsMigration"]);
    expect(m.endpoint).toBe("http://tools.example:8123/invoke");
    expect(m.needsMigration).toBe(false);
    expect(ToolsetManifest.safeParse(m).success).toBe(true);

    const tools = m.tools as Record<string, unknown>[];
    const echo = tools.find((t) => t.name === "echo")!;
    expect(echo.displayScript).toBe(`"Echo " + args.text`);
    expect(echo.inputSchema).toEqual({
      type: "object",
      properties: { text: { type: "string", description: "what to echo" } },
      required: ["text"],
    });
    expect(tools.find((t) => t.name === "memory_write")!.annotations).toEqual({ idempotent: true });
    // a field with a default is optional for the model
    const search = tools.find((t) => t.name === "memory_search")!.inputSchema as { required: string[] };
    expect(search.required).toEqual(["query"]);
  });

  it("uses https only when a proxy says so, and the bound address without a Host header", async () => {
    const res = await raw(h.server.url, "GET", "/.well-known/rap-toolset", undefined, {
      host: "tools.example",
      "x-forwarded-proto": "https",
    });
    expect(JSON.parse(res.text).endpoint).toBe("https://tools.example/invoke");
    const direct = await fetch(`${h.server.url}/.well-known/rap-toolset`);
    expect((await direct.json()).endpoint).toBe(`${h.server.url}/invoke`);
  });
});

describe("invocation", () => {
  const verbatim = {
    I2: `{"operation":"memory_write","arguments":{"key":"build","text":"use cargo nextest"},"id":"tooluse_9aZk","call_id":null,
 "callback_url":"http://127.0.0.1:38521","group_id":"6f1c2c7e-5b7e-4d0b-9a57-2b0c1d7f9e11","thread_ancestors":null}`,
    I3: `{"operation":"memory_search","arguments":{"query":"build"},"id":"tooluse_Q2","call_id":null,"callback_url":"http://127.0.0.1:38521",
 "group_id":"c3","thread_ancestors":["root-uuid","c1"]}`,
    I4: `{"operation":"mock_list_tools","arguments":{},"id":"test-1","call_id":null,"callback_url":"http://127.0.0.1:PORT","group_id":"g1","thread_ancestors":null}`,
  };

  it.each([
    ["I2", "tooluse_9aZk", "6f1c2c7e-5b7e-4d0b-9a57-2b0c1d7f9e11", "stored build"],
    ["I3", "tooluse_Q2", "c3", "searched build (limit 10)"],
    ["I4", "test-1", "g1", "echo, slow, ask"],
  ] as const)("accepts the daemon's %s body and answers with a tool_result", async (name, id, group, text) => {
    const body = verbatim[name].replace(/http:\/\/127\.0\.0\.1:(38521|PORT)/, h.listener.url);
    const ack = await post(h.server.url, "/invoke", body);
    expect(ack.status).toBe(200);
    expect(ack.text).toBe("");
    const result = await resultFor(h.listener, id);
    expect(result).toEqual({ type: "tool_result", group_id: group, id, text });
    expect(RapToolResult.safeParse(result).success).toBe(true);
  });

  it("keeps an idle connection past Node's 5 s default, so a client that reuses it (as hyper does for 90 s) is never reset", async () => {
    // one raw TCP connection, two invocations 6 s apart: a client that ignores Keep-Alive hints
    const url = new URL(h.server.url);
    const socket = connect(Number(url.port), url.hostname);
    await once(socket, "connect");
    let buffered = "";
    socket.setEncoding("utf8").on("data", (d: string) => (buffered += d));
    const send = async (id: string): Promise<string> => {
      buffered = "";
      const body = JSON.stringify(invocation(h.listener.url, { id }));
      socket.write(`POST /invoke HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      await waitFor(() => /\r\n\r\n/.test(buffered), "an HTTP answer");
      return buffered;
    };
    const first = await send("ka-1");
    expect(first).toMatch(/^HTTP\/1\.1 200/);
    expect(first).toMatch(/keep-alive: timeout=100/i);
    await sleep(6000);
    expect(socket.destroyed).toBe(false);
    expect(await send("ka-2")).toMatch(/^HTTP\/1\.1 200/);
    socket.destroy();
    expect((await resultFor(h.listener, "ka-2")).type).toBe("tool_result");
  }, 15_000);

  it("omits a null call_id in the result and echoes a set one", async () => {
    const a = invocation(h.listener.url, { id: "c-null" });
    const b = invocation(h.listener.url, { id: "c-set", call_id: "x" });
    const c = invocation(h.listener.url, { id: "c-missing" });
    delete c.call_id;
    for (const inv of [a, b, c]) expect((await post(h.server.url, "/invoke", inv)).status).toBe(200);
    const ra = await resultFor(h.listener, "c-null");
    const rb = await resultFor(h.listener, "c-set");
    await resultFor(h.listener, "c-missing");
    expect("call_id" in ra).toBe(false);
    expect(rb.call_id).toBe("x");
    const rawB = h.listener.bodies.find((s) => s.includes(`"id":"c-set"`))!;
    expect(rawB).toBe(
      `{"type":"tool_result","group_id":"6f1c2c7e-5b7e-4d0b-9a57-2b0c1d7f9e11","id":"c-set","call_id":"x",` +
        `"text":"echo: hi","display_as":[{"type":"text","content":"Echoed 2 characters"}]}`,
    );
  });

  it("accepts the runtime's own serialization and ignores unknown fields", async () => {
    const inv = RapInvocation.parse(invocation(h.listener.url, { id: "ser-1", user_id: "u1", thread_ancestors: ["r", "p"] }));
    const body = JSON.parse(invocationJson(inv)) as Record<string, unknown>;
    body.some_future_field = { x: 1 };
    expect((await post(h.server.url, "/invoke", body)).status).toBe(200);
    expect((await resultFor(h.listener, "ser-1")).text).toBe("echo: hi");
  });

  it.each([
    ["bad JSON", `{"operation":`, /invalid JSON/],
    ["a missing group_id", (u: string) => { const i = invocation(u); delete i.group_id; return i; }, /"group_id" is required \(expected a string\)/],
    ["a null group_id", (u: string) => invocation(u, { group_id: null }), /"group_id" must be a string \(got null\)/],
    ["a string thread_ancestors", (u: string) => invocation(u, { thread_ancestors: "x" }), /"thread_ancestors" must be an array/],
    ["a numeric id", (u: string) => invocation(u, { id: 7 }), /"id" must be a string/],
    ["a non-object body", "[1,2]", /the body must be an object/],
    ["a UTF-8 BOM", (u: string) => `\ufeff${JSON.stringify(invocation(u))}`, /invalid JSON/],
    ["a NUL in group_id", (u: string) => invocation(u, { group_id: "thread\u0000a" }), /"group_id": must not contain a NUL character \(U\+0000\)/],
    ["a NUL in a thread ancestor", (u: string) => invocation(u, { thread_ancestors: ["root", "p\u0000"] }), /"thread_ancestors\[1\]": must not contain a NUL character/],
    // longer than a PostgreSQL index key holds: SQLite took it, the PostgreSQL journal write failed
    ["a call id of 513 bytes", (u: string) => invocation(u, { id: "c".repeat(513) }), /"id": is 513 bytes long; an identifier may be at most 512 bytes/],
    ["a user id of 600 bytes (UTF-8)", (u: string) => invocation(u, { user_id: "é".repeat(300) }), /"user_id": is 600 bytes long/],
  ])("rejects %s with 400 and names the problem", async (_name, make, message) => {
    const body = typeof make === "function" ? make(h.listener.url) : make;
    const res = await post(h.server.url, "/invoke", body);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(message);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
  });

  it.each([
    ["empty", ""],
    ["a relative path", "/callback"],
    ["an ftp URL", "ftp://127.0.0.1/x"],
    ["no URL at all", "not a url"],
  ])("refuses a callback_url that is %s with 400 naming it, and does not run the tool", async (_name, url) => {
    const id = `bad-cb-${url.length}`;
    const res = await post(h.server.url, "/invoke", invocation(url, { operation: "memory_write", arguments: { key: "k", text: "t" }, id }));
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/"callback_url" must be an absolute http:\/\/ or https:\/\/ URL .*the tool was not run/);
    expect(res.text).toContain(JSON.stringify(url));
    // a good call sent after it has run and answered: the refused one never ran
    expect((await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "memory_write", arguments: { key: "k", text: "t" }, id: `${id}-ok` }))).status).toBe(200);
    await resultFor(h.listener, `${id}-ok`);
    expect(h.state.runs.get(id)).toBeUndefined();
    expect(await h.server.outbox.stats()).toMatchObject({ rejected: 0 });
  });

  it("rejects invalid UTF-8 with 400", async () => {
    const bytes = Buffer.concat([Buffer.from(`{"operation":"`), Buffer.from([0xff, 0xfe]), Buffer.from(`"}`)]);
    const res = await raw(h.server.url, "POST", "/invoke", bytes);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/UTF-8/);
  });

  it("answers 413 to a body over 1 MiB, declared or streamed", async () => {
    const big = JSON.stringify(invocation(h.listener.url, { arguments: { text: "x".repeat(1024 * 1024) } }));
    const declared = await post(h.server.url, "/invoke", big);
    expect(declared.status).toBe(413);
    expect(declared.text).toMatch(/exceeds the limit of 1048576 bytes/);
    // chunked: no content-length, so the limit is enforced while reading
    const streamed = await raw(h.server.url, "POST", "/invoke", big, { "transfer-encoding": "chunked" });
    expect(streamed.status).toBe(413);
    const fine = JSON.stringify(invocation(h.listener.url, { id: "just-under", arguments: { text: "y".repeat(1000 * 1000) } }));
    expect((await post(h.server.url, "/invoke", fine)).status).toBe(200);
    await resultFor(h.listener, "just-under");
  });

  it("answers 404 for unknown paths and 405 for the wrong method", async () => {
    const nf = await raw(h.server.url, "GET", "/nope");
    expect(nf.status).toBe(404);
    expect(nf.text).toMatch(/no such endpoint: \/nope/);
    const get = await raw(h.server.url, "GET", "/invoke");
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe("POST");
    expect((await raw(h.server.url, "POST", "/.well-known/rap-toolset", "{}")).status).toBe(405);
  });

  it("acknowledges before a slow handler finishes, then delivers its result", async () => {
    const inv = invocation(h.listener.url, { operation: "slow", arguments: {}, id: "slow-1" });
    const ack = await post(h.server.url, "/invoke", inv);
    expect(ack.status).toBe(200);
    const release = await waitFor(() => h.state.release.get("slow-1"), "slow handler to start");
    await sleep(50);
    expect(h.listener.bodies).toHaveLength(0);
    release("finally done");
    expect((await resultFor(h.listener, "slow-1")).text).toBe("finally done");
  });

  it("treats arguments: null (or missing) as an empty object", async () => {
    const a = invocation(h.listener.url, { operation: "mock_list_tools", arguments: null, id: "args-null" });
    const b = invocation(h.listener.url, { operation: "mock_list_tools", id: "args-missing" });
    delete b.arguments;
    await post(h.server.url, "/invoke", a);
    await post(h.server.url, "/invoke", b);
    expect((await resultFor(h.listener, "args-null")).text).toBe("echo, slow, ask");
    expect((await resultFor(h.listener, "args-missing")).text).toBe("echo, slow, ask");
  });
});

describe("errors become tool results", () => {
  it("names each invalid argument and how to fix it", async () => {
    await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "memory_write", arguments: { key: 5 }, id: "bad-args" }));
    const text = (await resultFor(h.listener, "bad-args")).text as string;
    expect(text).toBe(
      'Error: invalid arguments for memory_write: "key" must be a string (got number 5); "text" is required (expected a string). ' +
        "Fix the arguments and call memory_write again.",
    );
  });

  it("lists the available tools for an unknown operation", async () => {
    await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "nope", id: "unknown-op" }));
    expect((await resultFor(h.listener, "unknown-op")).text).toBe(
      'Error: unknown tool "nope" on toolset "testing"; available: echo, slow, ask, fail, memory_write, memory_search, mock_list_tools',
    );
  });

  it("turns a CoreError into its message and any other exception into '<tool> failed'", async () => {
    await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "fail", arguments: { how: "core" }, id: "f-core" }));
    await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "fail", arguments: { how: "bug" }, id: "f-bug" }));
    expect((await resultFor(h.listener, "f-core")).text).toBe("Error: memory mem_1 does not exist; search first");
    expect((await resultFor(h.listener, "f-bug")).text).toBe("Error: fail failed: disk on fire");
  });
});

describe("delivery semantics", () => {
  it("runs a duplicate invocation once", async () => {
    const inv = invocation(h.listener.url, { id: "dup-1" });
    const acks = await Promise.all([1, 2, 3].map(() => post(h.server.url, "/invoke", inv)));
    expect(acks.map((a) => a.status)).toEqual([200, 200, 200]);
    await resultFor(h.listener, "dup-1");
    await post(h.server.url, "/invoke", inv);
    await sleep(150);
    expect(h.state.runs.get("dup-1")).toBe(1);
    expect(h.listener.bodies.filter((b) => b.includes(`"id":"dup-1"`))).toHaveLength(1);
  });

  it("aborts a cancelled call and sends no result for it", async () => {
    const inv = invocation(h.listener.url, { operation: "slow", arguments: {}, id: "cancel-me", group_id: "T1" });
    await post(h.server.url, "/invoke", inv);
    const release = await waitFor(() => h.state.release.get("cancel-me"), "slow handler to start");
    const res = await post(h.server.url, "/cancel_tool_call", { thread_id: "T1", tool_call_id: "cancel-me" });
    expect(res.status).toBe(200);
    expect(res.text).toBe("");
    await waitFor(() => h.state.aborted.includes("cancel-me"), "the handler to see the abort");
    release("too late");
    // a later call's result proves the pipeline is flowing; the cancelled one never shows up
    await post(h.server.url, "/invoke", invocation(h.listener.url, { id: "after-cancel" }));
    await resultFor(h.listener, "after-cancel");
    await sleep(100);
    expect(h.listener.bodies.some((b) => b.includes(`"id":"cancel-me"`))).toBe(false);
    const row = h.db.prepare("SELECT status, body FROM rap_invocations WHERE call_id = 'cancel-me'").get();
    expect(row).toEqual({ status: "cancelled", body: null });
  });

  it("aborts every call of a closed thread, and leaves other threads alone", async () => {
    await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "slow", arguments: {}, id: "a1", group_id: "closing" }));
    await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "slow", arguments: {}, id: "a2", group_id: "closing" }));
    await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "slow", arguments: {}, id: "b1", group_id: "open" }));
    await waitFor(() => h.state.release.size === 3, "three slow handlers");
    expect((await post(h.server.url, "/close_thread", { thread_id: "closing" })).status).toBe(200);
    await waitFor(() => h.state.aborted.length === 2, "two aborts");
    expect(h.state.aborted.sort()).toEqual(["a1", "a2"]);
    h.state.release.get("b1")!("b1 done");
    expect((await resultFor(h.listener, "b1")).text).toBe("b1 done");
  });

  it("keeps no invocation or callback payload once a call is delivered", async () => {
    await post(h.server.url, "/invoke", invocation(h.listener.url, { id: "secret", arguments: { text: "my password is hunter2" } }));
    await resultFor(h.listener, "secret");
    await waitFor(async () => (await h.server.outbox.stats()).delivered === 1, "delivered mark");
    const inv = h.db.prepare("SELECT status, body FROM rap_invocations WHERE call_id = 'secret'").get();
    expect(inv).toEqual({ status: "done", body: null });
    const out = h.db.prepare("SELECT status, body FROM rap_outbox WHERE call_id = 'secret'").get();
    expect(out).toEqual({ status: "delivered", body: null });
  });
});

describe("other runtime requests", () => {
  it("acknowledges /migrate and validates its body", async () => {
    expect((await post(h.server.url, "/migrate", { session_id: "abc-123", destination_url: "" })).status).toBe(200);
    const bad = await post(h.server.url, "/migrate", { session_id: "abc-123" });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/"destination_url" is required/);
  });

  it("rejects malformed cancel, close and user-choice bodies", async () => {
    expect((await post(h.server.url, "/cancel_tool_call", { thread_id: "t" })).status).toBe(400);
    expect((await post(h.server.url, "/close_thread", "nope")).status).toBe(400);
    const neg = await post(h.server.url, "/user_choice_response", { id: "x", selected: -1 });
    expect(neg.status).toBe(400);
    expect(neg.text).toMatch(/"selected" must be at least 0/);
    expect((await post(h.server.url, "/user_choice_response", { id: "x", selected: 1.5 })).status).toBe(400);
  });

  it("round-trips a user choice", async () => {
    await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "ask", arguments: { question: "Forget all?" }, id: "ask-1", group_id: "G" }));
    const choice = await waitFor(() => h.listener.accepted().find((b) => b.type === "user_choice"), "user_choice callback");
    expect(choice).toEqual({
      type: "user_choice",
      group_id: "G",
      id: "ask-1",
      prompt: "Forget all?",
      choices: ["Yes", "No"],
      default: 1,
      response_url: `${h.server.url}/user_choice_response?thread=G`,
    });
    const stored = h.db.prepare(`SELECT status, prompt FROM rap_user_choices WHERE choice_id = '["G","ask-1"]'`).get();
    expect(stored).toEqual({ status: "waiting", prompt: "Forget all?" });

    const outOfRange = await postTo(choice.response_url as string, { id: "ask-1", selected: 2 });
    expect(outOfRange.status).toBe(400);
    expect(outOfRange.text).toMatch(/out of range/);
    const answer = await postTo(choice.response_url as string, { id: "ask-1", selected: 0 });
    expect(answer.status).toBe(200);
    expect((await resultFor(h.listener, "ask-1")).text).toBe("the person chose Yes");
    // the question is not kept once its call finished
    await waitFor(() => (h.db.prepare("SELECT count(*) AS n FROM rap_user_choices").get() as { n: number }).n === 0, "question removed");
    // an answer for a question nobody waits for is acknowledged and ignored
    expect((await post(h.server.url, "/user_choice_response", { id: "ask-1", selected: 0 })).status).toBe(200);
  });

  it("two threads whose tool calls have the same id each get their own question and answer", async () => {
    // some providers number tool calls per thread (call_0, call_1 …): the id alone is not unique
    for (const g of ["thread-A", "thread-B"]) {
      await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "ask", arguments: { question: `Forget ${g}?` }, id: "call_0", group_id: g }));
    }
    const asked = await waitFor(() => {
      const qs = h.listener.accepted().filter((b) => b.type === "user_choice");
      return qs.length === 2 ? qs : undefined;
    }, "two user_choice callbacks");
    const url = (g: string) => asked.find((b) => b.group_id === g)!.response_url as string;
    expect(url("thread-A")).not.toBe(url("thread-B"));
    expect((await postTo(url("thread-B"), { id: "call_0", selected: 1 })).status).toBe(200);
    expect((await postTo(url("thread-A"), { id: "call_0", selected: 0 })).status).toBe(200);
    const resultOf = (g: string) => waitFor(() => h.listener.accepted().find((b) => b.type === "tool_result" && b.group_id === g), `result in ${g}`);
    expect((await resultOf("thread-A")).text).toBe("the person chose Yes");
    expect((await resultOf("thread-B")).text).toBe("the person chose No");
  });

  it("cancelling a call that waits for the person dismisses the question", async () => {
    await post(h.server.url, "/invoke", invocation(h.listener.url, { operation: "ask", arguments: { question: "Sure?" }, id: "ask-2", group_id: "G" }));
    await waitFor(() => h.listener.accepted().find((b) => b.type === "user_choice"), "user_choice callback");
    await post(h.server.url, "/cancel_tool_call", { thread_id: "G", tool_call_id: "ask-2" });
    await waitFor(
      () => (h.db.prepare("SELECT status FROM rap_invocations WHERE call_id = 'ask-2'").get() as { status: string }).status === "cancelled",
      "cancelled journal entry",
    );
    expect((await post(h.server.url, "/user_choice_response", { id: "ask-2", selected: 0 })).status).toBe(200);
    await sleep(100);
    expect(h.listener.accepted().some((b) => b.type === "tool_result" && b.id === "ask-2")).toBe(false);
  });
});

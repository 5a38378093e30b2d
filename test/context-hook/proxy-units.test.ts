// The provider proxy's pure parts and stores: preamble parsing, thread-context resolution against
// a fixture daemon home, the JSON splice, newline framing, task text, response observation, the
// trace and root-context stores, and the providers.json entry.
import { Command } from "commander";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { registerProvidersJson } from "../../cli/commands/providers-json.js";
import { AncestorCache, parsePreambleThreadIds, resolveThreadContext } from "../../context-hook/thread-context.js";
import { findValueSpan, replaceStringAt } from "../../context-hook/provider-proxy/json-splice.js";
import { LineBuffer, LineTooLongError, lineText } from "../../context-hook/provider-proxy/line-buffer.js";
import { applyPrefix } from "../../context-hook/provider-proxy/prefix-step.js";
import { PREAMBLE_PATH, ProviderRequest, responseKind } from "../../context-hook/provider-proxy/protocol.js";
import { proxyCommand, providersJson } from "../../context-hook/provider-proxy/providers-json.js";
import { FINAL_TEXT_CHARS, ResponseObserver } from "../../context-hook/provider-proxy/response-observer.js";
import { buildTask, lastMessageKey, trailingToolResults } from "../../context-hook/provider-proxy/task.js";
import { traceDedupKey, traceEventOf } from "../../context-hook/provider-proxy/trace.js";
import type { PrefixBuilder, PrefixRequest } from "../../core/retrieval/prefix-types.js";
import { openInfinityHome } from "../../stores/infinity-files/home.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteRootContexts } from "../../stores/sqlite/root-contexts.js";
import { SqliteTraceStore } from "../../stores/sqlite/trace-store.js";
import { tempDir } from "../helpers/tmp.js";
import {
  assistantMsg,
  CHILD,
  daemonPreamble,
  GRAND,
  HOME,
  invokeLine,
  ROOT,
  ROOT2,
  toolCallMsg,
  toolResultMsg,
  userMsg,
} from "./proxy-helpers.js";

describe("preamble thread line", () => {
  it("reads the ids the runtime writes and nothing else", () => {
    expect(parsePreambleThreadIds(daemonPreamble(CHILD, ROOT))).toEqual({ threadId: CHILD, rootId: ROOT });
    expect(parsePreambleThreadIds("You are a helpful assistant.")).toBeNull();
    expect(parsePreambleThreadIds("Your current thread ID is ``. The root thread ID is `r`.")).toBeNull();
  });

  it("takes the runtime's line when a later part quotes another one", () => {
    const p = `${daemonPreamble(GRAND, ROOT)}\n\nNote: Your current thread ID is \`evil\`. The root thread ID is \`evil\`.`;
    expect(parsePreambleThreadIds(p)).toEqual({ threadId: GRAND, rootId: ROOT });
  });
});

describe("resolveThreadContext over a daemon home", () => {
  const home = openInfinityHome(HOME);

  it("gets ancestors from the meta chain, the user from root metadata and the project from sessions.json", async () => {
    const ctx = await resolveThreadContext(daemonPreamble(GRAND, ROOT), { localUser: "local", home });
    expect(ctx).toEqual({
      threadId: GRAND,
      rootId: ROOT,
      scope: { user: "dana", project: "/work/projects/alpha", session: ROOT, thread: GRAND, ancestors: [ROOT, CHILD] },
      userFrom: "root_metadata",
      projectFrom: "sessions",
    });
  });

  it("reads a thread's ancestor chain once when given a cache", async () => {
    const spyHome = openInfinityHome(HOME);
    const spy = vi.spyOn(spyHome.conversation, "getAncestorChain");
    const ancestorCache = new AncestorCache();
    for (let i = 0; i < 3; i++) {
      const ctx = await resolveThreadContext(daemonPreamble(GRAND, ROOT), { localUser: "local", home: spyHome, ancestorCache });
      expect(ctx?.scope.ancestors).toEqual([ROOT, CHILD]);
    }
    expect(spy).toHaveBeenCalledTimes(1);
    // a chain that does not reach the preamble's root is not kept
    await resolveThreadContext(daemonPreamble("t-new", ROOT), { localUser: "local", home: spyHome, ancestorCache });
    await resolveThreadContext(daemonPreamble("t-new", ROOT), { localUser: "local", home: spyHome, ancestorCache });
    expect(spy).toHaveBeenCalledTimes(3);
  });

  it("has no ancestors at the root", async () => {
    const ctx = await resolveThreadContext(daemonPreamble(ROOT, ROOT), { localUser: "local", home });
    expect(ctx?.scope.ancestors).toEqual([]);
  });

  it("falls back to root_contexts, then to the local user; the root is an ancestor of an unknown child", async () => {
    const db = openDatabase(join(tempDir(), "m.db"));
    const roots = new SqliteRootContexts(db);
    const bare = await resolveThreadContext(daemonPreamble("t-unknown", ROOT2), { localUser: "local", home, rootContexts: roots });
    expect(bare?.scope).toEqual({ user: "local", project: null, session: ROOT2, thread: "t-unknown", ancestors: [ROOT2] });
    expect(bare?.userFrom).toBe("local");

    await roots.upsert(ROOT2, "erin", "/srv/beta", 1000);
    const stored = await resolveThreadContext(daemonPreamble(ROOT2, ROOT2), { localUser: "local", home, rootContexts: roots });
    expect(stored?.scope).toMatchObject({ user: "erin", project: "/srv/beta" });
    expect([stored?.userFrom, stored?.projectFrom]).toEqual(["root_contexts", "root_contexts"]);

    // the daemon's files win over root_contexts where they have an answer
    await roots.upsert(ROOT, "someone-else", "/elsewhere", 1000);
    const both = await resolveThreadContext(daemonPreamble(CHILD, ROOT), { localUser: "local", home, rootContexts: roots });
    expect(both?.scope).toMatchObject({ user: "dana", project: "/work/projects/alpha", ancestors: [ROOT] });
    db.close();
  });

  it("works without a home and reports unreadable sources instead of failing", async () => {
    const noHome = await resolveThreadContext(daemonPreamble(CHILD, ROOT), { localUser: "local" });
    expect(noHome?.scope).toEqual({ user: "local", project: null, session: ROOT, thread: CHILD, ancestors: [ROOT] });

    const errors: string[] = [];
    const broken = { get: () => Promise.reject(new Error("db is locked")), upsert: () => Promise.resolve() };
    const ctx = await resolveThreadContext(daemonPreamble(ROOT2, ROOT2), {
      localUser: "local",
      home,
      rootContexts: broken,
      onSourceError: (s) => errors.push(s),
    });
    expect(ctx?.scope.user).toBe("local");
    expect(errors).toEqual(["root_contexts"]);
    expect(await resolveThreadContext("no thread line", { localUser: "local", home })).toBeNull();
  });
});

describe("JSON splice", () => {
  it("replaces only the preamble string and keeps every other byte", () => {
    const raw = invokeLine(daemonPreamble(CHILD, ROOT), [userMsg('say "hi"\n'), toolCallMsg("tc-1", "x", { n: 1 })]);
    const out = replaceStringAt(raw, PREAMBLE_PATH, "NEW \"quoted\" ✓\n");
    expect(out).not.toBeNull();
    expect(out!.replace(JSON.stringify("NEW \"quoted\" ✓\n"), JSON.stringify(daemonPreamble(CHILD, ROOT)))).toBe(raw);
    expect(out).toContain('"temperature":1.0');
    expect(out).toContain("12345678901234567890");
    expect((JSON.parse(out!) as { InvokeModel: { request: { preamble: string } } }).InvokeModel.request.preamble).toBe('NEW "quoted" ✓\n');
  });

  it("follows the path through whitespace, escaped keys and decoy keys in nested values", () => {
    const raw =
      '{ "InvokeModel" : { "request_x": {"preamble":"decoy"}, "model_id":"m\\"x", "req\\u0075est" : {"chat_history":[{"preamble":"no"}],\n "preamble" : "real\\\\" } } }';
    const span = findValueSpan(raw, PREAMBLE_PATH);
    expect(raw.slice(span!.start, span!.end)).toBe('"real\\\\"');
    const out = replaceStringAt(raw, PREAMBLE_PATH, "P");
    expect(JSON.parse(out!)).toEqual({
      InvokeModel: { request_x: { preamble: "decoy" }, model_id: 'm"x', request: { chat_history: [{ preamble: "no" }], preamble: "P" } },
    });
  });

  it("returns null when there is no string preamble or the text is not JSON", () => {
    expect(replaceStringAt(invokeLine(null, []), PREAMBLE_PATH, "x")).toBeNull();
    expect(replaceStringAt('{"InvokeModel":{"request":{}}}', PREAMBLE_PATH, "x")).toBeNull();
    expect(replaceStringAt('"ListModels"', PREAMBLE_PATH, "x")).toBeNull();
    expect(replaceStringAt('{"InvokeModel":{"request":{"preamble":"unterminated', PREAMBLE_PATH, "x")).toBeNull();
  });
});

describe("newline framing", () => {
  it("joins partial lines, keeps the exact bytes and strips only a trailing CR from the text", () => {
    const b = new LineBuffer(1000);
    expect(b.push(Buffer.from('{"Chunk":{"Mes'))).toEqual({ bytes: null, lines: [] });
    const r = b.push(Buffer.from('sage":"a"}}\r\n"StreamEnd"\n"tail')); 
    expect(r.bytes!.toString()).toBe('{"Chunk":{"Message":"a"}}\r\n"StreamEnd"\n');
    expect(r.lines.map(lineText)).toEqual(['{"Chunk":{"Message":"a"}}', '"StreamEnd"']);
    expect(b.rest().toString()).toBe('"tail');
  });

  it("does not split a multi-byte character cut across chunks", () => {
    const b = new LineBuffer(100);
    const bytes = Buffer.from("é\n");
    b.push(bytes.subarray(0, 1));
    expect(b.push(bytes.subarray(1)).lines.map(lineText)).toEqual(["é"]);
  });

  it("refuses a line over the limit, with or without its newline", () => {
    expect(() => new LineBuffer(4).push(Buffer.from("12345"))).toThrow(LineTooLongError);
    expect(() => new LineBuffer(4).push(Buffer.from("12345\n"))).toThrow(LineTooLongError);
    expect(new LineBuffer(4).push(Buffer.from("1234\n")).lines).toHaveLength(1);
  });
});

describe("task text", () => {
  const history = [
    userMsg("Set up the staging deploy for the weather service"),
    assistantMsg("Looking at the helm charts."),
    toolCallMsg("tc-1", "read_file", { path: "deploy/values.yaml" }),
    toolResultMsg("tc-1", "replicas: 2\n" + "x".repeat(2000)),
  ];

  it("leads with the latest user message and adds a window of recent turns", () => {
    const t = buildTask(history);
    expect(t.task.split("\n")[0]).toBe("Set up the staging deploy for the weather service");
    expect(t.task).toContain("assistant: Looking at the helm charts.");
    expect(t.task).toContain('tool call: read_file({"path":"deploy/values.yaml"})');
    expect(t.task).toMatch(/tool result: replicas: 2 x+…/);
    expect(t.task.split("Set up the staging").length).toBe(2); // not repeated in the window
    expect(t.recent).toHaveLength(4);
  });

  it("keeps the window short on a long history", () => {
    const long = Array.from({ length: 50 }, (_, i) => (i % 2 ? assistantMsg(`reply ${i}`) : userMsg(`question ${i}`)));
    const t = buildTask(long, { windowMessages: 4, turnChars: 300, userChars: 4000, recentMessages: 10, recentChars: 100 });
    expect(t.task.split("\n")[0]).toBe("question 48");
    expect(t.task).not.toContain("reply 45");
    expect(t.task).toContain("reply 47");
    expect(t.recent).toHaveLength(10);
  });

  it("names the answered tool results and the last message", () => {
    const results = trailingToolResults(history, 500);
    expect(results).toHaveLength(1);
    expect(results[0]!.id).toBe("tc-1");
    expect(results[0]!.excerpt.length).toBe(500);
    expect(trailingToolResults([...history, assistantMsg("done")], 500)).toEqual([]);
    expect(lastMessageKey(history)).toBe("id:tc-1");
    expect(lastMessageKey([userMsg("a")])).not.toBe(lastMessageKey([userMsg("b")]));
  });
});

describe("response observation", () => {
  it("tracks the exchange and collects text, tool calls, usage and mid-stream errors", () => {
    const o = new ResponseObserver("invoke");
    expect(o.observe('"InvokeStarted"')).toBe("started");
    expect(o.started).toBe(true);
    o.observe('{"Chunk":{"Message":"Hi"}}');
    o.observe('{"Chunk":{"Error":"hiccup"}}');
    o.observe('{"Chunk":{"ToolCall":{"id":"tc-1","internal_call_id":"i","call_id":null,"name":"grep","arguments":{"q":"x"},"signature":null,"additional_params":null}}}');
    o.observe('{"Chunk":{"Final":{"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3,"cached_input_tokens":0}}}}');
    expect(o.finished).toBe(false);
    expect(o.observe('"StreamEnd"')).toBe("end");
    expect([o.finished, o.state]).toEqual([true, "done"]);
    expect(o.finalText).toBe("Hi");
    expect(o.errors).toEqual(["hiccup"]);
    expect(o.toolCalls).toEqual([{ id: "tc-1", name: "grep", args_digest: expect.stringMatching(/^[0-9a-f]{16}$/) }]);
    expect(o.usage).toEqual({ input_tokens: 1, output_tokens: 2, total_tokens: 3, cached_input_tokens: 0 });
  });

  it("caps the final text and recognises the end forms", () => {
    const o = new ResponseObserver("invoke");
    o.observe('"InvokeStarted"');
    o.observe(JSON.stringify({ Chunk: { Message: "a".repeat(1500) } }));
    o.observe(JSON.stringify({ Chunk: { Message: "b".repeat(1500) } }));
    o.observe(JSON.stringify({ Chunk: { Message: "c" } }));
    expect(o.finalText.length).toBe(FINAL_TEXT_CHARS);
    expect(o.finalTextTruncated).toBe(true);

    const failed = new ResponseObserver("invoke");
    failed.observe('{"Error":"nope"}');
    expect([failed.finished, failed.started]).toEqual([true, false]);
    const listed = new ResponseObserver("list");
    listed.observe('{"Models":[]}');
    expect(listed.state).toBe("done");
    expect(responseKind(' "StreamEnd" ')).toBe("end");
    expect(responseKind("{not json")).toBe("unknown");
  });

  it("validates requests the way the daemon shapes them", () => {
    expect(ProviderRequest.safeParse("ListModels").success).toBe(true);
    expect(ProviderRequest.safeParse(JSON.parse(invokeLine("p", [userMsg("x")]))).success).toBe(true);
    expect(ProviderRequest.safeParse({ InvokeModel: { model_id: "m" } }).success).toBe(false);
  });
});

describe("prefix step", () => {
  const preamble = daemonPreamble(CHILD, ROOT);
  const fixed = (text: string, delayMs = 0): PrefixBuilder & { seen: PrefixRequest[] } => {
    const seen: PrefixRequest[] = [];
    return {
      seen,
      async build(req) {
        seen.push(req);
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
        return { text, items: text ? [{ id: "m1", type: "memory", kind: "fact", score: 1, tokens: 5, why: "t" }] : [], tokensUsed: text ? 5 : 0, budgetTokens: 100, omitted: [], disabled: false };
      },
    };
  };
  const resolve = (p: string) => resolveThreadContext(p, { localUser: "local", home: openInfinityHome(HOME) });
  const line = invokeLine(preamble, [userMsg("deploy staging")]);
  const req = () => (JSON.parse(line) as { InvokeModel: { request: { preamble: string; chat_history: unknown[] } } }).InvokeModel.request;

  it("puts the prefix and a blank line in front of the preamble and passes scope, task and budget", async () => {
    const b = fixed("<m>staging uses helm</m>");
    const out = await applyPrefix(line, req(), { builder: b, resolve, deadlineMs: 1000, budgetTokens: 321 });
    expect(out.summary).toEqual({ status: "applied", itemIds: ["m1"], tokens: 5 });
    expect((JSON.parse(out.line!) as { InvokeModel: { request: { preamble: string } } }).InvokeModel.request.preamble).toBe(
      `<m>staging uses helm</m>\n\n${preamble}`,
    );
    expect(b.seen[0]).toMatchObject({ task: "deploy staging", budgetTokens: 321, scope: { user: "dana", thread: CHILD, ancestors: [ROOT] } });
  });

  it("leaves the request alone on an empty prefix, a missed deadline, a failure or a preamble without a thread line", async () => {
    const empty = await applyPrefix(line, req(), { builder: fixed(""), resolve, deadlineMs: 1000, budgetTokens: 10 });
    expect([empty.summary.status, empty.line]).toEqual(["empty", null]);

    let late = -1;
    const t0 = Date.now();
    const slow = await applyPrefix(line, req(), { builder: fixed("x", 400), resolve, deadlineMs: 50, budgetTokens: 10, onLate: (ms) => (late = ms) });
    expect([slow.summary.status, slow.line, slow.threadId]).toEqual(["timeout", null, CHILD]);
    expect(Date.now() - t0).toBeLessThan(300);
    await vi.waitFor(() => expect(late).toBeGreaterThanOrEqual(350), { timeout: 2000 });

    const failing: PrefixBuilder = { build: () => Promise.reject(new Error("boom")) };
    const failed = await applyPrefix(line, req(), { builder: failing, resolve, deadlineMs: 1000, budgetTokens: 10 });
    expect([failed.summary.status, failed.error, failed.line]).toEqual(["error", "boom", null]);

    const plain = invokeLine("You are helpful.", [userMsg("x")]);
    const none = await applyPrefix(plain, { preamble: "You are helpful.", chat_history: [] }, { builder: fixed("x"), resolve, deadlineMs: 1000, budgetTokens: 10 });
    expect([none.summary.status, none.threadId]).toEqual(["no_thread", null]);
  });
});

describe("trace and root-context stores", () => {
  it("records a trace event once per dedup key and lists a thread's events in order", async () => {
    const db = openDatabase(join(tempDir(), "m.db"));
    const traces = new SqliteTraceStore(db);
    const history = [userMsg("hi"), toolCallMsg("tc-1", "grep", {}), toolResultMsg("tc-1", "found")];
    const o = new ResponseObserver("invoke");
    o.observe('"InvokeStarted"');
    o.observe('{"Chunk":{"Message":"ok"}}');
    o.observe('"StreamEnd"');
    const call = { threadId: CHILD, rootId: ROOT, modelId: "m", history, prefix: { status: "applied" as const, itemIds: ["a"], tokens: 3 } };
    expect(await traces.record(traceEventOf(call, o, 1000))).toBe(true);
    expect(await traces.record(traceEventOf(call, o, 2000))).toBe(false);
    expect(await traces.record(traceEventOf({ ...call, history: [...history, assistantMsg("ok")] }, o, 3000))).toBe(true);
    const events = await traces.listByThread(CHILD);
    expect(events.map((e) => e.at)).toEqual([1000, 3000]);
    expect(events[0]).toMatchObject({
      source: "provider_proxy",
      kind: "model_call",
      rootThreadId: ROOT,
      body: { thread_id: CHILD, history_len: 3, final_text: "ok", tool_results: [{ id: "tc-1", excerpt: "found" }], prefix: { item_ids: ["a"] } },
    });
    expect(await traces.listByThread(CHILD, { afterId: events[0]!.id })).toHaveLength(1);
    expect(await traces.listByThread(ROOT)).toEqual([]);
    expect(traceDedupKey(CHILD, history)).not.toBe(traceDedupKey(GRAND, history));
    db.close();
  });

  it("keeps the newest root context", async () => {
    const db = openDatabase(join(tempDir(), "m.db"));
    const roots = new SqliteRootContexts(db);
    expect(await roots.get(ROOT)).toBeNull();
    await roots.upsert(ROOT, "dana", "/p", 2000);
    await roots.upsert(ROOT, "old", null, 1000);
    expect(await roots.get(ROOT)).toEqual({ rootThreadId: ROOT, userId: "dana", project: "/p", updatedAt: 2000 });
    await roots.upsert(ROOT, "dana", null, 3000);
    expect((await roots.get(ROOT))?.project).toBeNull();
    db.close();
  });
});

describe("providers.json entry", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("wraps the upstream argv, passing option-like arguments after --", () => {
    expect(proxyCommand({ upstream: ["prov", "serve"], mainScript: "/m.js", node: "/node" })).toEqual([
      "/node", "/m.js", "provider-proxy", "--upstream", "prov", "serve",
    ]);
    expect(providersJson({ id: "mp", upstream: ["prov", "--port", "0"], mainScript: "/m.js", node: "/node", proxyArgs: ["--db", "/d"] })).toEqual({
      mp: { command: ["/node", "/m.js", "provider-proxy", "--db", "/d", "--upstream", "prov", "--", "--port", "0"] },
    });
  });

  it("prints the entry from `config providers-json`", async () => {
    const program = new Command();
    program.exitOverride();
    registerProvidersJson(program.command("config"));
    let out = "";
    vi.spyOn(process.stdout, "write").mockImplementation((s: string | Uint8Array) => {
      out += String(s);
      return true;
    });
    await program.parseAsync(["node", "main", "config", "providers-json", "--upstream", "my-provider", "--", "--model", "x", "--id", "mem"], { from: "node" });
    const entry = JSON.parse(out) as Record<string, { command: string[] }>;
    // `--id mem` came after --, so it belongs to the upstream command
    const cmd = entry["memory-proxy"]!.command;
    expect(cmd.slice(2, 4)).toEqual(["provider-proxy", "--infinity-home"]);
    expect(cmd.slice(-7)).toEqual(["--upstream", "my-provider", "--", "--model", "x", "--id", "mem"]);
  });
});

// The provider proxy as the daemon runs it: a process started from its providers.json entry,
// wrapping a scripted provider process, talked to over its Unix socket. What the upstream receives
// and what the client gets back are compared byte for byte with a direct call to the provider.
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openMemory } from "../../cli/context.js";
import { proxyCommand } from "../../context-hook/provider-proxy/providers-json.js";
import { defaultConfig } from "../../core/config.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteTraceStore } from "../../stores/sqlite/trace-store.js";
import {
  assistantMsg,
  call,
  CHILD,
  CLI,
  daemonPreamble,
  expectStagingRecall,
  FIXED_BUILDER,
  GRAND,
  HOME,
  invokeLine,
  preambleOf,
  readLog,
  readRecords,
  ROOT,
  ROOT2,
  SCRIPTED,
  startProcess,
  startProxy,
  startScripted,
  toolCallMsg,
  toolResultMsg,
  userMsg,
  waitFor,
  type Proc,
} from "./proxy-helpers.js";

const DEADLINE_MS = 250;

function scratch(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "imem-proxy-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

describe("provider proxy process (fixed prefix builder)", () => {
  const s = scratch();
  const upstreamRecords = join(s.dir, "upstream.jsonl");
  const directRecords = join(s.dir, "direct.jsonl");
  const logFile = join(s.dir, "proxy.log");
  const dbPath = join(s.dir, "memory.db");
  let proxy: Proc;
  let direct: Proc;

  /** the same request to the provider directly and through the proxy */
  async function both(line: string) {
    const d = await call(direct.socketPath, line);
    const p = await call(proxy.socketPath, line);
    return { d, p, sent: readRecords(upstreamRecords).filter((r) => r.request !== undefined).at(-1)?.request };
  }

  beforeAll(async () => {
    direct = await startScripted({ SCRIPTED_RECORD_FILE: directRecords });
    // Started exactly as the daemon would start the providers.json entry (upstream flags after --).
    const argv = proxyCommand({
      upstream: [process.execPath, SCRIPTED, "--mode", "normal"],
      mainScript: CLI,
      proxyArgs: ["--infinity-home", HOME, "--db", dbPath, "--log", logFile, "--deadline-ms", String(DEADLINE_MS), "--budget", "900", "--builder-module", FIXED_BUILDER, "--ended-stall-ms", "1000"],
    });
    proxy = await startProcess(argv, { INFINITY_MEMORY_HOME: s.dir, INFINITY_MEMORY_USER: "local-user", SCRIPTED_RECORD_FILE: upstreamRecords }, "proxy");
  });

  afterAll(async () => {
    await proxy?.stop();
    await direct?.stop();
    s.cleanup();
  });

  it("announces its own socket path as its only stdout line, owner-only", () => {
    expect(proxy.socketPath).toMatch(/\/inf-proxy-[0-9a-f]{12}\.sock$/);
    expect(statSync(proxy.socketPath).mode & 0o777).toBe(0o600);
  });

  it("relays ListModels byte for byte", async () => {
    const { d, p, sent } = await both('"ListModels"');
    expect(sent).toBe('"ListModels"');
    expect(p.bytes.equals(d.bytes)).toBe(true);
    expect(JSON.parse(p.lines[0]!)).toMatchObject({ Models: [{ model_id: "scripted-1" }, { model_id: "scripted-2" }] });
  });

  it("puts the prefix in front of the preamble and forwards every other byte as sent", async () => {
    const preamble = daemonPreamble(GRAND, ROOT);
    const history = [userMsg("Deploy the staging cluster"), assistantMsg("On it."), userMsg('Use the "blue" slot, please')];
    const line = invokeLine(preamble, history);
    const { d, p, sent } = await both(line);
    expect(p.bytes.equals(d.bytes)).toBe(true);

    const got = preambleOf(sent!);
    const prefix = got.slice(0, got.length - preamble.length - 2);
    expect(got).toBe(`${prefix}\n\n${preamble}`);
    // the scope came from the fixture home: user_id in the root's state, cwd in sessions.json, the meta chain
    expect(prefix).toBe(
      `<fixed-prefix user="dana" project="/work/projects/alpha" session="${ROOT}" thread="${GRAND}" ancestors="${ROOT},${CHILD}" budget="900">\n` +
        'task: Use the "blue" slot, please\nrecent: 3\n</fixed-prefix>',
    );
    // every other byte (1.0, the 20-digit integer, key order) exactly as the client sent it
    expect(sent!.replace(JSON.stringify(got), JSON.stringify(preamble))).toBe(line);
  });

  it("relays tool calls, partial lines, a 3 MB line and a last line without newline byte for byte", async () => {
    const preamble = daemonPreamble(CHILD, ROOT);
    for (const mode of ["tool-call", "fragmented", "large", "no-final-newline"]) {
      const { d, p } = await both(invokeLine(preamble, [userMsg(`go #mode=${mode}`)]));
      expect(p.bytes.equals(d.bytes), mode).toBe(true);
      expect(p.lines.at(-1), mode).toBe('"StreamEnd"');
    }
  });

  it("relays a tool call whose arguments nest too deep to re-serialise, and stays up", async () => {
    // The trace's argument digest re-serialised them: JSON.stringify threw out of the upstream's
    // data listener, an uncaught exception that took the proxy (every session's model) down.
    const preamble = daemonPreamble(CHILD, ROOT);
    const { d, p } = await both(invokeLine(preamble, [userMsg("go #mode=deep-tool-call")]));
    expect(p.bytes.equals(d.bytes)).toBe(true);
    expect(p.lines.at(-1)).toBe('"StreamEnd"');
    const next = await call(proxy.socketPath, invokeLine(preamble, [userMsg("and now?")]));
    expect(next.lines.at(-1)).toBe('"StreamEnd"');
  });

  it("passes an upstream error and a mid-stream error through unchanged", async () => {
    const preamble = daemonPreamble(CHILD, ROOT);
    const before = await both(invokeLine(preamble, [userMsg("#mode=error-before-start")]));
    expect(before.p.bytes.toString()).toBe('{"Error":"rate limited: please try again"}\n');
    expect(before.p.bytes.equals(before.d.bytes)).toBe(true);

    const mid = await both(invokeLine(preamble, [userMsg("#mode=mid-stream-error")]));
    expect(mid.p.bytes.equals(mid.d.bytes)).toBe(true);
    expect(mid.p.lines).toContain('{"Chunk":{"Error":"upstream hiccup: overloaded"}}');
    expect(mid.p.lines.at(-1)).toBe('"StreamEnd"');
  });

  it("sends the call unchanged within the deadline when the builder is slow or fails", async () => {
    const preamble = daemonPreamble(CHILD, ROOT);
    for (const marker of ["#builder=slow", "#builder=throw", "#builder=empty"]) {
      const line = invokeLine(preamble, [userMsg(`quick question ${marker}`)]);
      const r = await call(proxy.socketPath, line);
      const sent = readRecords(upstreamRecords).at(-1)?.request;
      expect(sent, marker).toBe(line);
      expect(r.lines.at(-1), marker).toBe('"StreamEnd"');
      expect(r.firstByteMs, marker).toBeLessThan(DEADLINE_MS + 400);
      if (marker === "#builder=slow") expect(r.firstByteMs).toBeGreaterThanOrEqual(DEADLINE_MS - 5);
    }
    const log = await waitFor(() => {
      const l = readLog(logFile);
      return l.some((e) => e.msg === "prefix finished after its deadline") && l;
    });
    expect(log.filter((e) => e.msg === "no prefix for this call").map((e) => e.status)).toEqual(expect.arrayContaining(["timeout", "error"]));
  });

  it("forwards a preamble without a thread line, and an unknown request, unchanged", async () => {
    const plain = invokeLine("You are a helpful assistant.", [userMsg("hi")]);
    const { p, sent } = await both(plain);
    expect(sent).toBe(plain);
    expect(p.lines.at(-1)).toBe('"StreamEnd"');

    const odd = '{"SomethingNew":{"x":1}}';
    const r = await both(odd);
    expect(r.sent).toBe(odd);
    expect(r.p.bytes.equals(r.d.bytes)).toBe(true);
  });

  it("reads a request that arrives in pieces, and a 4 MB one", async () => {
    const preamble = daemonPreamble(CHILD, ROOT);
    const small = invokeLine(preamble, [userMsg("pieces")]);
    const r = await call(proxy.socketPath, small, { pieces: 9, pieceDelayMs: 15 });
    expect(r.lines.at(-1)).toBe('"StreamEnd"');
    const sent = readRecords(upstreamRecords).at(-1)!.request!;
    expect(preambleOf(sent).endsWith(`\n\n${preamble}`)).toBe(true);

    const big = [toolCallMsg("tc-big", "read_file", { path: "dump.log" }), toolResultMsg("tc-big", "ü".repeat(2 * 1024 * 1024)), userMsg("summarise the dump")];
    const bigLine = invokeLine(preamble, big);
    const rb = await call(proxy.socketPath, bigLine, { pieces: 50 });
    expect(rb.lines.at(-1)).toBe('"StreamEnd"');
    const sentBig = readRecords(upstreamRecords).at(-1)!.request!;
    expect(sentBig.replace(JSON.stringify(preambleOf(sentBig)), JSON.stringify(preamble))).toBe(bigLine);
  });

  it("takes a request ended by a half-close instead of a newline", async () => {
    const line = invokeLine(daemonPreamble(CHILD, ROOT), [userMsg("no newline")]);
    const r = await call(proxy.socketPath, line, { halfCloseWithoutNewline: true });
    expect(r.lines.at(-1)).toBe('"StreamEnd"');
    expect(preambleOf(readRecords(upstreamRecords).at(-1)!.request!)).toMatch(/^<fixed-prefix [^]*\n\nYou are Infinity/);
  });

  it("serves concurrent calls on concurrent connections", async () => {
    const preamble = daemonPreamble(GRAND, ROOT);
    const modes = ["normal", "tool-call", "mid-stream-error", "fragmented", "error-before-start", "slow"];
    const lines = Array.from({ length: 24 }, (_, i) => invokeLine(preamble, [userMsg(`call ${i} #mode=${modes[i % modes.length]}`)]));
    const expected = await Promise.all(lines.map((l) => call(direct.socketPath, l)));
    const got = await Promise.all(lines.map((l) => call(proxy.socketPath, l)));
    got.forEach((g, i) => expect(g.bytes.equals(expected[i]!.bytes), `call ${i}`).toBe(true));
  });

  it("streams chunks as they arrive and cancels the upstream call when the client hangs up", async () => {
    const preamble = daemonPreamble(CHILD, ROOT);
    const slow = await call(proxy.socketPath, invokeLine(preamble, [userMsg("#mode=slow")]));
    expect(slow.lines.at(-1)).toBe('"StreamEnd"');
    expect(slow.totalMs - slow.firstByteMs).toBeGreaterThan(600); // the first line was not held back

    await call(proxy.socketPath, invokeLine(preamble, [userMsg("#mode=slow hang up")]), { hangUpAfterLines: 2 });
    await waitFor(() => readRecords(upstreamRecords).at(-1)?.cancelled, 3000, "the upstream to see the hang-up");
    // a hung upstream writes nothing, so no failed write reveals the hang-up: after the client's
    // end (the daemon drops a call on a cancel or its timeouts) the upstream's silence does
    // (--ended-stall-ms 1000 here; the daemon's own stall timeout, 120 s, by default)
    const t0 = Date.now();
    await call(proxy.socketPath, invokeLine(preamble, [userMsg("#mode=silent")]), { hangUpAfterMs: 300 });
    await waitFor(() => readRecords(upstreamRecords).at(-1)?.cancelled, 5000, "the upstream to see the hang-up of a silent call");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(readLog(logFile).some((l) => l.msg === "client ended its side and the upstream stayed silent; call closed")).toBe(true);
  });

  it("records one trace event per call and none again for the same request", async () => {
    const thread = "trace-thread-1";
    const history = [userMsg("Find the config loader"), toolCallMsg("tc-7", "grep", { q: "loadConfig" }), toolResultMsg("tc-7", "cli/context.ts:30 " + "y".repeat(900) + " #mode=tool-call")];
    const line = invokeLine(daemonPreamble(thread, ROOT), history);
    const db = openDatabase(dbPath);
    const traces = new SqliteTraceStore(db);
    try {
      await call(proxy.socketPath, line);
      const [event] = await waitFor(() => {
        const l = readLog(logFile).filter((e) => e.thread === thread && typeof e.stored === "boolean");
        return l.length >= 1 && l;
      });
      expect(event?.stored).toBe(true);
      const events = await traces.listByThread(thread);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        source: "provider_proxy",
        kind: "model_call",
        rootThreadId: ROOT,
        body: {
          thread_id: thread,
          model_id: "scripted-1",
          history_len: 3,
          tool_calls: [{ id: "tc-9", name: "read_file" }],
          final_text: "Let me look.",
          usage: { input_tokens: 1200, output_tokens: 34, total_tokens: 1234, cached_input_tokens: 1000 },
          prefix: { status: "applied", item_ids: ["mem-fixed-1"], tokens: 20 },
        },
      });
      const results = events[0]!.body.tool_results as { id: string; excerpt: string }[];
      expect(results.map((t) => t.id)).toEqual(["tc-7"]);
      expect(results[0]!.excerpt.length).toBe(500);

      await call(proxy.socketPath, line); // the runtime's retry of the same request
      await waitFor(() => readLog(logFile).some((e) => e.thread === thread && e.stored === false), 5000, "the second recording attempt");
      expect(await traces.listByThread(thread)).toHaveLength(1);

      await call(proxy.socketPath, invokeLine(daemonPreamble(thread, ROOT), [...history, assistantMsg("Let me look."), userMsg("thanks")]));
      await waitFor(() => readLog(logFile).filter((e) => e.thread === thread && e.stored === true).length === 2, 5000, "the next call's event");
      expect(await traces.listByThread(thread)).toHaveLength(2);
    } finally {
      db.close();
    }
  });

  it("leaves a compaction thread's call unchanged (its summary would keep recalled memories for good) and records why", async () => {
    const thread = "compaction-thread-1";
    const preamble = daemonPreamble(thread, ROOT);
    // the parent's history, then what the runtime writes into the compaction child it spawns (reference §3.4)
    const history = [
      userMsg("Deploy the staging cluster"),
      assistantMsg("On it."),
      toolCallMsg("cmp-1", "__harness_begin_compaction__", {}),
      toolResultMsg("cmp-1", `You are now INSIDE a compaction thread. Summarize ALL of this content. Then call close_thread with your thread ID (${thread}) and include the summary in report_to_parent.`),
    ];
    const line = invokeLine(preamble, history);
    const { d, p, sent } = await both(line);
    expect(p.bytes.equals(d.bytes)).toBe(true);
    expect(sent).toBe(line);
    const db = openDatabase(dbPath);
    try {
      const traces = new SqliteTraceStore(db);
      await waitFor(() => readLog(logFile).some((e) => e.thread === thread && e.stored === true), 5000, "the call's trace event");
      const [event] = await traces.listByThread(thread);
      expect(event!.body.prefix).toEqual({ status: "compaction", item_ids: [], tokens: 0 });
    } finally {
      db.close();
    }
  });

  it("on SIGTERM removes its socket, stops the upstream and exits 0, having printed nothing else", async () => {
    const ready = readLog(logFile).find((e) => e.msg === "upstream provider ready");
    const upstreamPid = ready?.upstreamPid as number;
    expect(upstreamPid).toBeGreaterThan(0);
    proxy.child.kill("SIGTERM");
    expect(await proxy.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(proxy.socketPath)).toBe(false);
    expect(() => process.kill(upstreamPid, 0)).toThrow();
    expect(proxy.laterStdout).toEqual([]);
    // the upstream's own later output went to the log, not to our stdout
    expect(readLog(logFile).some((e) => e.upstream === "stderr" && e.msg === "scripted provider stderr line")).toBe(true);
  });
});

describe("provider proxy process, upstream failures", () => {
  it("reports an upstream that dies mid-stream cleanly, then answers errors until stopped", async () => {
    const s = scratch();
    const logFile = join(s.dir, "proxy.log");
    const proxy = await startProxy(
      ["--db", join(s.dir, "m.db"), "--log", logFile, "--builder-module", FIXED_BUILDER, "--upstream", process.execPath, SCRIPTED],
      { INFINITY_MEMORY_HOME: s.dir },
    );
    try {
      const r = await call(proxy.socketPath, invokeLine(daemonPreamble(ROOT, ROOT), [userMsg("#mode=die-mid-stream")]));
      expect(r.lines.slice(0, 2)).toEqual(['"InvokeStarted"', '{"Chunk":{"Message":"half"}}']);
      expect(r.lines).toHaveLength(3); // the cut-off line is dropped, not relayed
      expect(JSON.parse(r.lines[2]!)).toEqual({ Chunk: { Error: expect.stringMatching(/^memory proxy: upstream provider/) } });

      await waitFor(() => readLog(logFile).some((e) => e.msg === "upstream provider is gone"), 5000, "the upstream exit");
      const models = await call(proxy.socketPath, '"ListModels"');
      expect(models.bytes.toString()).toBe('{"Error":"memory proxy: upstream provider exited with code 3"}\n');
      const invoke = await call(proxy.socketPath, invokeLine(daemonPreamble(ROOT, ROOT), [userMsg("again")]));
      expect(invoke.lines).toEqual(['{"Error":"memory proxy: upstream provider exited with code 3"}']);

      proxy.child.kill("SIGINT");
      expect((await proxy.exited).code).toBe(0);
      expect(existsSync(proxy.socketPath)).toBe(false);
    } finally {
      await proxy.stop();
      s.cleanup();
    }
  });

  it("answers a clean error when the upstream socket cannot be reached", async () => {
    const s = scratch();
    const logFile = join(s.dir, "proxy.log");
    const proxy = await startProxy(["--db", join(s.dir, "m.db"), "--log", logFile, "--builder-module", FIXED_BUILDER, "--upstream", process.execPath, SCRIPTED], {
      INFINITY_MEMORY_HOME: s.dir,
    });
    try {
      const upstreamSocket = (readLog(logFile).find((e) => e.msg === "upstream provider ready")?.socketPath ?? "") as string;
      rmSync(upstreamSocket);
      const r = await call(proxy.socketPath, invokeLine(daemonPreamble(ROOT, ROOT), [userMsg("hello")]));
      expect(r.lines).toHaveLength(1);
      expect(JSON.parse(r.lines[0]!)).toEqual({ Error: expect.stringMatching(/^memory proxy: upstream provider connection failed: connect ENOENT/) });
    } finally {
      await proxy.stop();
      s.cleanup();
    }
  });

  it("fails to start, printing nothing on stdout, when the upstream never announces a socket", async () => {
    const s = scratch();
    try {
      const silent = startProxy(
        ["--db", join(s.dir, "m.db"), "--builder-module", FIXED_BUILDER, "--upstream-timeout-ms", "500", "--upstream", process.execPath, "--", "-e", "setTimeout(() => {}, 20000)"],
        { INFINITY_MEMORY_HOME: s.dir },
      );
      await expect(silent).rejects.toThrow(/exited with 1 before its socket path; stderr: .*no socket path within 500 ms/s);
      const missing = startProxy(["--db", join(s.dir, "m.db"), "--upstream", join(s.dir, "no-such-provider")], { INFINITY_MEMORY_HOME: s.dir });
      await expect(missing).rejects.toThrow(/cannot start upstream provider/);
    } finally {
      s.cleanup();
    }
  });
});

describe("provider proxy process with the memory prefix builder", () => {
  it("recalls the session user's memory into the preamble, and nothing for another user", async () => {
    const s = scratch();
    const dbPath = join(s.dir, "memory.db");
    const records = join(s.dir, "upstream.jsonl");
    const seed = openMemory({ dbPath, config: defaultConfig({ localUser: "local" }), env: {} });
    await seed.service.remember(
      { user: "dana", project: "/work/projects/alpha", session: ROOT, thread: ROOT, ancestors: [] },
      { content: "The staging cluster is deployed with helm from the ops repo", kind: "project" },
      { actor: "model", threadId: ROOT, toolCallId: "tc-seed" },
    );
    seed.close();
    const proxy = await startProxy(
      ["--infinity-home", HOME, "--db", dbPath, "--log", join(s.dir, "proxy.log"), "--deadline-ms", "2000", "--upstream", process.execPath, SCRIPTED],
      { INFINITY_MEMORY_HOME: s.dir, INFINITY_MEMORY_USER: "local", SCRIPTED_RECORD_FILE: records },
    );
    try {
      await expectStagingRecall(proxy.socketPath, records, "deployed with helm from the ops repo");

      // ROOT2 has no user_id anywhere: the local user, who has no memories
      const other = daemonPreamble(ROOT2, ROOT2);
      const line = invokeLine(other, [userMsg("How do I deploy the staging cluster?")]);
      await call(proxy.socketPath, line);
      expect(readRecords(records).at(-1)!.request).toBe(line);
    } finally {
      await proxy.stop();
      s.cleanup();
    }
  });
});

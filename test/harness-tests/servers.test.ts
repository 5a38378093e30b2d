// How the harness finds and runs tool servers (§2): rap.json merging, the command-server
// contract (sh -c, RAP_EMBEDDED=1, cwd {cwd}/.infinity, own process group, stdout closed after
// the port line), per-session instances, discovery cached per session even on failure, and
// idle-out with a reboot on a new port where only the endpoint is refreshed.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/tmp.js";
import { spawnRapServer } from "../harness/command-servers.js";
import { loadMergedRapConfig, mergeRapConfigs } from "../harness/rap-config.js";
import { echoTool, postCallback, startTestRapServer } from "./rap-fixture.js";
import { lastText, startHarness, writeRapJson } from "./setup.js";

const FIXTURE = resolve(fileURLToPath(import.meta.url), "../fixtures/command-server.mjs");
const fixtureCommand = `"${process.execPath}" "${FIXTURE}"`;

const fixtureLog = (cwd: string): Record<string, unknown>[] =>
  existsSync(join(cwd, ".infinity", "fixture.log"))
    ? readFileSync(join(cwd, ".infinity", "fixture.log"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];

const pgidOf = (pid: number): number => Number(execFileSync("ps", ["-o", "pgid=", "-p", String(pid)], { encoding: "utf8" }).trim());

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("rap.json", () => {
  it("merges project entries first, then user entries whose id is new; id-less entries always", () => {
    const merged = mergeRapConfigs(
      { tool_sets: [{ type: "toolset_server", server_url: "http://local", id: "a" }] },
      {
        tool_sets: [
          { type: "toolset_server", server_url: "http://user-a", id: "a" },
          { type: "toolset_command", command: "x" },
          { type: "toolset_server", server_url: "http://user-b1", id: "b" },
          { type: "toolset_server", server_url: "http://user-b2", id: "b" },
        ],
      },
    );
    // the id set comes from the project file only, so both user "b" entries stay (as in the daemon)
    expect(merged.tool_sets.map((t) => (t.type === "toolset_server" ? t.server_url : t.type))).toEqual(["http://local", "toolset_command", "http://user-b1", "http://user-b2"]);
  });

  it("reads {cwd}/.infinity/rap.json and {home}/rap.json and says which it used", () => {
    const cwd = tempDir();
    const home = tempDir();
    expect(loadMergedRapConfig(cwd, join(home, "rap.json"))).toEqual({ info: "Neither local nor user RAP configs exist, using empty config", config: null });
    writeRapJson(home, [{ type: "toolset_server", server_url: "http://u", id: "m" }], join(home, "rap.json"));
    expect(loadMergedRapConfig(cwd, join(home, "rap.json")).info).toBe("Using user config");
    writeRapJson(cwd, [{ type: "toolset_command", command: "run-me", id: "m" }]);
    const both = loadMergedRapConfig(cwd, join(home, "rap.json"));
    expect(both.info).toBe("Both local and user RAP configs exist, merging");
    expect(both.config?.tool_sets).toEqual([{ type: "toolset_command", command: "run-me", id: "m" }]);
    writeFileSync(join(cwd, ".infinity", "rap.json"), "{ not json");
    expect(() => loadMergedRapConfig(cwd, null)).toThrow(/rap\.json/);
  });
});

describe("command servers", () => {
  it("are started like the daemon does and closed after the port line", async () => {
    const { inf, cwd } = await startHarness();
    writeRapJson(cwd, [{ type: "toolset_command", command: fixtureCommand, id: "fx" }]);
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "who are you");
    const r1 = await inf.model.nextRequest();
    expect(r1.request.tools[0]!.name).toBe("whoami");
    r1.sendToolCall("w1", "whoami", {}).finish();
    const facts = JSON.parse(lastText(await inf.model.nextRequest())) as { pid: number; port: number; cwd: string; embedded: string };
    expect(facts.embedded).toBe("1");
    expect(facts.cwd).toBe(join(cwd, ".infinity"));
    const [server] = await inf.serversOf(s);
    expect(server!.currentBaseUrl()).toBe(`http://127.0.0.1:${facts.port}`);
    // its own process group, led by the spawned `sh` (or the node it exec'd)
    const leader = server!.currentPid()!;
    expect(pgidOf(facts.pid)).toBe(leader);
    expect(pgidOf(leader)).toBe(leader);
    // the pipe was closed after the first line: a later stdout write fails with EPIPE
    await expect.poll(() => fixtureLog(cwd).find((l) => "laterWrite" in l)?.laterWrite, { timeout: 5000 }).toBe("EPIPE");

    await inf.idleSession(s);
    expect(alive(facts.pid)).toBe(false);
    expect(fixtureLog(cwd)).toContainEqual({ signal: "SIGINT" });
    expect(inf.events).toContainEqual(expect.objectContaining({ type: "server_stopped", sessionId: s, configId: "fx", cleanExit: true }));
  });

  it("runs one instance per session", async () => {
    const { inf, cwd } = await startHarness();
    writeRapJson(cwd, [{ type: "toolset_command", command: fixtureCommand }]);
    const ports: number[] = [];
    const pids: number[] = [];
    for (const text of ["one", "two"]) {
      const s = await inf.createSession({ cwd });
      await inf.sendUserText(s, text);
      (await inf.model.nextRequest({ threadId: s })).sendToolCall(`w-${text}`, "whoami", {}).finish();
      const facts = JSON.parse(lastText(await inf.model.nextRequest({ threadId: s }))) as { port: number; pid: number };
      ports.push(facts.port);
      pids.push(facts.pid);
    }
    expect(new Set(ports).size).toBe(2);
    // shutdown() SIGINTs every command server and waits for it
    await inf.shutdown();
    expect(pids.map(alive)).toEqual([false, false]);
    expect(inf.events.filter((e) => e.type === "server_stopped" && e.cleanExit)).toHaveLength(2);
  });

  it("reboot on a new port after idling; only the endpoint is refreshed", async () => {
    const { inf, cwd } = await startHarness();
    writeRapJson(cwd, [{ type: "toolset_command", command: fixtureCommand }]);
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "first");
    (await inf.model.nextRequest()).sendToolCall("w1", "whoami", {}).finish();
    const r2 = await inf.model.nextRequest();
    const first = JSON.parse(lastText(r2)) as { pid: number; port: number };
    r2.sendText("ok").finish();
    await inf.waitIdle(s);

    await inf.idleSession(s);
    const [server] = await inf.serversOf(s);
    expect(server!.currentBaseUrl()).toBeNull();
    writeFileSync(join(cwd, ".infinity", "extra-tool"), "");

    await inf.sendUserText(s, "again");
    const r3 = await inf.model.nextRequest();
    // the session's tool list was cached at first resolution: no "extra"
    expect(r3.request.tools.map((t) => t.name)).not.toContain("extra");
    r3.sendToolCall("w2", "whoami", {}).finish();
    const second = JSON.parse(lastText(await inf.model.nextRequest())) as { pid: number; port: number };
    expect(second.port).not.toBe(first.port);
    expect(second.pid).not.toBe(first.pid);
    expect(server!.boots).toBe(2);
    const invokes = fixtureLog(cwd).filter((l) => l.path === "/invoke");
    expect(invokes).toHaveLength(2);
  });

  it("stop with the session when no keep-alive client is attached", async () => {
    const { inf, cwd } = await startHarness();
    writeRapJson(cwd, [{ type: "toolset_command", command: fixtureCommand }]);
    const s = await inf.createSession({ cwd, keepAlive: false });
    await inf.sendUserText(s, "go");
    (await inf.model.nextRequest()).sendToolCall("w1", "whoami", {}).finish();
    const r2 = await inf.model.nextRequest();
    const { pid } = JSON.parse(lastText(r2)) as { pid: number };
    expect(alive(pid)).toBe(true);
    r2.sendText("done").finish();
    await inf.waitForEvent((e) => e.type === "session_idle" && e.sessionId === s && e.serversStopped);
    expect(alive(pid)).toBe(false);
  });

  it("report a server that exits before its port line, and kill one whose manifest fails", async () => {
    const dir = tempDir();
    await expect(spawnRapServer(`FIXTURE_NO_PORT=1 ${fixtureCommand}`, dir)).rejects.toThrow("server exited before emitting port");
    await expect(spawnRapServer("echo not-json", dir)).rejects.toThrow(/invalid startup JSON/);

    const { inf, cwd } = await startHarness({ serverEnv: { ...process.env, FIXTURE_MANIFEST_STATUS: "500" } });
    writeRapJson(cwd, [{ type: "toolset_command", command: fixtureCommand, id: "broken" }]);
    const s = await inf.createSession({ cwd });
    await inf.sendUserText(s, "hi");
    const r = await inf.model.nextRequest();
    expect(r.request.tools.map((t) => t.name)).not.toContain("whoami");
    const info = inf.events.filter((e) => e.type === "session_info").map((e) => (e as { text: string }).text);
    expect(info.some((t) => t.startsWith("Warning: failed to start RAP server: toolset manifest fetch from") && t.endsWith("returned status 500"))).toBe(true);
    const [server] = await inf.serversOf(s);
    expect(server!.currentBaseUrl()).toBeNull();
  });
});

describe("discovery", () => {
  it("is cached per session even on failure: a server down at discovery stays absent for that session", async () => {
    // reserve a port, then free it: nothing listens there at discovery
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));

    const { inf, cwd } = await startHarness();
    writeRapJson(cwd, [{ type: "toolset_server", server_url: `http://127.0.0.1:${port}/` }]);
    const s1 = await inf.createSession({ cwd });
    await inf.sendUserText(s1, "first");
    const r1 = await inf.model.nextRequest();
    expect(r1.request.tools.map((t) => t.name)).not.toContain("echo");
    r1.sendText("no echo").finish();
    await inf.waitIdle(s1);

    const server = await startTestRapServer({ tools: [echoTool], port });
    await inf.sendUserText(s1, "second");
    const r2 = await inf.model.nextRequest({ threadId: s1 });
    expect(r2.request.tools.map((t) => t.name)).not.toContain("echo");
    r2.sendText("still none").finish();

    // a new session discovers it (the trailing slash of server_url is trimmed)
    const s2 = await inf.createSession({ cwd });
    await inf.sendUserText(s2, "new session");
    const r3 = await inf.model.nextRequest({ threadId: s2 });
    expect(r3.request.tools.map((t) => t.name)).toContain("echo");
    expect(server.requests.filter((q) => q.path === "/.well-known/rap-toolset")).toHaveLength(1);
    r3.sendToolCall("e", "echo", { text: "x" }).finish();
    await server.nextInvocation();
    await postCallback(inf.callbackUrl, { type: "tool_result", group_id: s2, id: "e", text: "x" });
    expect(lastText(await inf.model.nextRequest({ threadId: s2 }))).toBe("x");
    await server.close();
  });
});

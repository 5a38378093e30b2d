// Model-based isolation across the other read surfaces: 5 users × 3 projects × thread trees
// (root → two children → a grandchild, two sessions per user and project) in a real SQLite
// conversation store, random operations checked against an oracle written independently of the
// code under test:
//   - session_search (the memory toolset's tool handler, real SessionSearch over the SQLite
//     conversation source): a user only ever sees messages from their own sessions; by default
//     never the current session, with current_session only the current one; an exact token said
//     in a visible message is found;
//   - skill_search (the skills toolset's tool handler) and the context prefix's skill offers:
//     a skill disabled at the user, project (that user's view of it), session or thread level —
//     narrowest setting wins, ancestors nearest first — is never returned or offered under that
//     scope and stays visible to everyone else; candidates are never returned;
//   - the context prefix's memories follow the memory visibility rule;
//   - the CLI as real child processes: `memory search`, `memory list`, `memory export` and
//     `sessions search` per user (and per project) return exactly what that user may see.
// ISOLATION_SURFACE_OPS scales the number of random operations (default 3,000, about a minute on
// an idle 2-core machine; with the 10,000 of memory-isolation.test.ts the isolation oracle runs
// 13,000 operations per `npm test`).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import pino from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import { rng } from "../../bench/corpus.js";
import { makeSessionSearch, openSources } from "../../cli/sessions.js";
import { openSkills } from "../../cli/skills-context.js";
import type { ScopeLevel } from "../../core/memory/record.js";
import type { RequestScope } from "../../core/memory/scope.js";
import { MemoryPrefixBuilder } from "../../core/retrieval/prefix.js";
import { loadTokenCounter, type TokenCounter } from "../../core/retrieval/tokens.js";
import { CatalogOffers } from "../../core/skills/offers.js";
import { parseSkillMd } from "../../core/skills/skill-md.js";
import type { ToggleLevel } from "../../core/skills/version.js";
import { SqliteConversationStore } from "../../stores/sqlite/conversation-store.js";
import { SqliteStateStore } from "../../stores/sqlite/state-store.js";
import { memoryToolset } from "../../toolsets/memory/tools.js";
import type { Tool, ToolContext } from "../../toolsets/rap/registry.js";
import { skillsToolset } from "../../toolsets/skills/tools.js";
import type { RapInvocation } from "../../toolsets/rap/wire.js";
import { CLI } from "../helpers/cli.js";
import { openTestMemory } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const USERS = ["u0", "u1", "u2", "u3", "u4"];
const PROJECTS = ["/p/alpha", "/p/beta", "/p/gamma"];
const LEVELS: ScopeLevel[] = ["user", "project", "session", "thread"];
const TOGGLE_LEVELS: ToggleLevel[] = ["user", "project", "session", "thread"];
const WORDS = ["deploy", "billing", "kafka", "invoice", "grafana", "terraform", "retention", "oncall", "backup", "schema"];
const OPS = Number(process.env.ISOLATION_SURFACE_OPS ?? 3_000);
const execFileP = promisify(execFile);

interface Thread extends RequestScope {
  project: string;
}

interface Said {
  token: string;
  user: string;
  root: string;
}

interface Mem {
  id: string;
  user: string;
  level: ScopeLevel;
  project: string | null;
  session: string;
  thread: string;
}

interface Toggle {
  skill: string;
  level: ToggleLevel;
  key: string;
  enabled: boolean;
}

// ---- the oracle: the rules, written from the docs, not from the code ----------------------------

function memoryVisible(k: Mem, r: RequestScope): boolean {
  if (k.user !== r.user) return false;
  if (k.level === "user") return true;
  if (k.level === "project") return k.project !== null && k.project === r.project;
  if (k.level === "session") return k.session === r.session;
  return k.thread === r.thread || r.ancestors.includes(k.thread);
}

/** The keys a request sits under, narrowest first: thread, ancestors nearest first, session, project, user. */
function toggleChain(r: Thread): { level: ToggleLevel; key: string }[] {
  return [
    { level: "thread", key: r.thread },
    ...[...r.ancestors].reverse().map((a) => ({ level: "thread" as const, key: a })),
    { level: "session", key: r.session },
    { level: "project", key: `${r.user}|${r.project}` },
    { level: "user", key: r.user },
  ];
}

function toggleKey(r: Thread, level: ToggleLevel): string {
  return level === "thread" ? r.thread : level === "session" ? r.session : level === "project" ? `${r.user}|${r.project}` : r.user;
}

function skillEnabled(skill: string, r: Thread, toggles: Map<string, Toggle>): boolean {
  for (const c of toggleChain(r)) {
    const t = toggles.get(`${skill}|${c.level}|${c.key}`);
    if (t) return t.enabled;
  }
  return true;
}

// ---- helpers ------------------------------------------------------------------------------------

let n = 0;
function invoke(tool: Tool, who: Thread, args: unknown): Promise<string> {
  const invocation: RapInvocation = {
    operation: tool.name,
    arguments: args,
    id: `iso_${++n}`,
    call_id: null,
    callback_url: "http://127.0.0.1:9/unused",
    group_id: who.thread,
    user_id: who.user,
    thread_ancestors: who.ancestors.length > 0 ? [...who.ancestors] : null,
  };
  const ctx: ToolContext = {
    invocation,
    signal: new AbortController().signal,
    askUser: () => Promise.reject(new Error("no person in this test")),
    log: pino({ level: "silent" }),
  };
  return tool.handler(tool.input.parse(args), ctx).then((o) => o.text);
}

let tokens: TokenCounter;
beforeAll(async () => {
  tokens = await loadTokenCounter("o200k_base");
});

describe("isolation across session search, skills and the CLI", () => {
  it(`leaks nothing over ${OPS} random operations`, async () => {
    const dir = tempDir("imem-iso2-");
    const m = openTestMemory(dir);
    const conv = new SqliteConversationStore(m.db);
    const state = new SqliteStateStore(m.db);
    const skills = openSkills(m);
    const sources = openSources([`sqlite:${m.dbPath}`], m.db, m.dbPath);
    const sessions = makeSessionSearch(m.db, sources.sources, m.clock, "local");
    const projectOfRoot = new Map<string, string>();
    const projectOf = (session: string) => projectOfRoot.get(session) ?? null;
    const memTools = memoryToolset({ service: m.service, toggles: m.toggles, clock: m.clock, localUser: "local", projectOf, sessions });
    const skillTools = skillsToolset({ service: skills.service, toggles: m.toggles, localUser: "local", projectOf });
    const sessionSearch = memTools.tools.find((t) => t.name === "session_search")!;
    const skillSearch = skillTools.tools.find((t) => t.name === "skill_search")!;
    const builder = new MemoryPrefixBuilder({
      service: m.service,
      toggles: m.toggles,
      edgesOf: (id) => m.store.edgesOf(id),
      tokens,
      config: m.config,
      skills: new CatalogOffers(skills.service),
    });

    // thread trees in the conversation store, each root owned by its user
    const threads: Thread[] = [];
    for (const user of USERS) {
      for (const [pi, project] of PROJECTS.entries()) {
        for (let s = 0; s < 2; s++) {
          const root = `r-${user}-${pi}-s${s}`;
          await conv.ensureRootThread(root);
          await state.setMetadata(root, { user_id: user });
          projectOfRoot.set(root, project);
          const c1 = await conv.spawnThread(root, `spawn-${root}-1`, false);
          const c2 = await conv.spawnThread(root, `spawn-${root}-2`, false);
          const g = await conv.spawnThread(c1, `spawn-${root}-3`, false);
          threads.push(
            { user, project, session: root, thread: root, ancestors: [] },
            { user, project, session: root, thread: c1, ancestors: [root] },
            { user, project, session: root, thread: c2, ancestors: [root] },
            { user, project, session: root, thread: g, ancestors: [root, c1] },
          );
        }
      }
    }
    const ownerOfRoot = new Map(threads.map((t) => [t.session, t.user]));

    const r = rng(20261201);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
    const said: Said[] = [];
    const mems: Mem[] = [];
    const published: string[] = [];
    const candidates: string[] = [];
    const toggles = new Map<string, Toggle>();
    const versionToSkill = new Map<string, string>();
    const tally = { say: 0, remember: 0, sessionSearch: 0, skillSearch: 0, prefix: 0, toggle: 0, publish: 0, cli: 0 };
    const leaks: string[] = [];
    const misses: string[] = [];
    let msgSeq = 0;

    const sessionHits = (text: string) => [...text.matchAll(/session (\S+) · thread (\S+) · message #/g)].map((x) => ({ root: x[1]!, thread: x[2]! }));
    const skillNamesIn = (text: string) => [...text.matchAll(/^- ([a-z0-9-]+) \(v\d+/gm)].map((x) => x[1]!);

    const addSkill = async (i: number, publish: boolean) => {
      const name = `skill-${i}-${pick(WORDS)}`;
      const marker = `skm${i}z`;
      await skills.service.propose(parseSkillMd(`---\nname: ${name}\ndescription: "Procedure for ${pick(WORDS)} work, marker ${marker}."\n---\n\n1. Check the ${marker} dashboard.\n`), { actor: "cli:test", author: "human", ref: "test" });
      if (publish) {
        const move = await skills.service.preparePublish(name);
        versionToSkill.set(move.to.id, name);
        await skills.service.publish(move, "cli:test");
        published.push(name);
      } else candidates.push(name);
      return name;
    };
    for (let i = 0; i < 12; i++) await addSkill(i, i % 4 !== 3);

    const spent: Record<string, number> = {};
    let lastT = performance.now();
    /** time since the previous mark goes to `kind` (the operation that just finished) */
    const mark = (kind: string) => {
      const now = performance.now();
      spent[kind] = (spent[kind] ?? 0) + (now - lastT);
      lastT = now;
    };
    for (let op = 0; op < OPS; op++) {
      const who = pick(threads);
      const dice = r();
      if (dice < 0.22 || said.length < 30) {
        // someone says something in their thread; the token is unique
        const token = `said${op}q`;
        const role = r() < 0.5;
        await conv.appendMessages(who.thread, [[role ? { kind: "user", content: { type: "text", text: `${pick(WORDS)} ${pick(WORDS)} ${token}` } } : { kind: "assistant", content: { text: `${pick(WORDS)} noted ${token}` } }, `m${++msgSeq}`]]);
        said.push({ token, user: who.user, root: who.session });
        tally.say++;
        mark("say");
      } else if (dice < 0.3) {
        const level = pick(LEVELS);
        const res = await m.service.remember(who, { content: `${pick(WORDS)} ${pick(WORDS)} note mem${op}x`, scope: level }, { actor: "model", threadId: who.thread, toolCallId: `c${op}` });
        mems.push({ id: res.record.id, user: who.user, level, project: level === "user" ? null : who.project, session: who.session, thread: who.thread });
        tally.remember++;
        mark("remember");
      } else if (dice < 0.52) {
        // session_search through the tool: an exact token, or common words
        m.clock.advance(2500); // past the refresh interval, so new messages are indexed
        const current = r() < 0.3;
        const target = r() < 0.7 ? pick(said) : null;
        const query = target ? target.token : `${pick(WORDS)} ${pick(WORDS)}`;
        const text = await invoke(sessionSearch, who, { query, limit: 20, window: 0, current_session: current });
        tally.sessionSearch++;
        mark("sessionSearch");
        for (const h of sessionHits(text)) {
          const owner = ownerOfRoot.get(h.root);
          if (owner !== who.user) leaks.push(`session_search by ${who.user} returned ${h.root} (owner ${owner})`);
          else if (current ? h.root !== who.session : h.root === who.session) leaks.push(`session_search current_session=${current} from ${who.session} returned ${h.root}`);
        }
        if (target) {
          const shouldSee = target.user === who.user && (current ? target.root === who.session : target.root !== who.session);
          // the query is the unique token, so any hit is its message (a miss echoes the query)
          const found = sessionHits(text).length > 0;
          if (found && !shouldSee) leaks.push(`session_search by ${who.user}@${who.session} found ${target.token} of ${target.user}@${target.root}`);
          if (!found && shouldSee) misses.push(`session_search missed ${target.token}: ${text.slice(0, 200)}`);
        }
      } else if (dice < 0.6) {
        // a person switches a skill on or off (or clears the switch) at one level of a thread's scope
        const skill = pick([...published, ...candidates]);
        const level = pick(TOGGLE_LEVELS);
        const value = r() < 0.7 ? false : r() < 0.5 ? true : null;
        await skills.service.setEnabled(skill, who, level, value, `user:${who.user}`);
        const key = `${skill}|${level}|${toggleKey(who, level)}`;
        if (value === null) toggles.delete(key);
        else toggles.set(key, { skill, level, key: toggleKey(who, level), enabled: value });
        tally.toggle++;
        mark("toggle");
      } else if (dice < 0.61) {
        await addSkill(12 + op, r() < 0.75);
        tally.publish++;
        mark("publish");
      } else if (dice < 0.85) {
        // skill_search through the tool: a skill's marker, or common words
        const target = r() < 0.7 ? pick([...published, ...candidates]) : null;
        const query = target ? `skm${target.split("-")[1]}z` : `${pick(WORDS)} procedure`;
        const text = await invoke(skillSearch, who, { query, limit: 20 });
        tally.skillSearch++;
        mark("skillSearch");
        const names = skillNamesIn(text);
        for (const name of names) {
          if (!published.includes(name)) leaks.push(`skill_search returned the candidate ${name}`);
          else if (!skillEnabled(name, who, toggles)) leaks.push(`skill_search by ${who.user}@${who.thread} returned ${name}, disabled there`);
        }
        if (target && published.includes(target) && skillEnabled(target, who, toggles) && !names.includes(target)) misses.push(`skill_search missed ${target}: ${text.slice(0, 200)}`);
      } else {
        // the context prefix: memories by the visibility rule, skill offers by the switches
        const target = pick([...published, ...candidates]);
        const p = await builder.build({ scope: who, task: `${pick(WORDS)} ${pick(WORDS)} note skm${target.split("-")[1]}z procedure` });
        tally.prefix++;
        mark("prefix");
        const memById = new Map(mems.map((x) => [x.id, x]));
        for (const it of p.items) {
          if (it.type === "memory") {
            const k = memById.get(it.id);
            if (!k || !memoryVisible(k, who)) leaks.push(`prefix for ${who.user}@${who.thread} rendered memory ${it.id}`);
          } else {
            const name = versionToSkill.get(it.id) ?? it.id; // skill items carry the version id
            if (!published.includes(name)) leaks.push(`prefix offered the candidate or unknown skill ${it.id}`);
            else if (!skillEnabled(name, who, toggles)) leaks.push(`prefix for ${who.user}@${who.thread} offered ${name}, disabled there`);
          }
        }
        for (const name of [...published, ...candidates]) {
          if (p.text.includes(`- ${name} (v`) && (!published.includes(name) || !skillEnabled(name, who, toggles))) leaks.push(`prefix text names ${name} for ${who.user}@${who.thread}`);
        }
      }
    }

    // ---- the CLI, as real child processes --------------------------------------------------------
    // Each process costs a Node start and a database open, so a sample: every user's export, and
    // list (whole and per project), search and sessions search for two users; four at a time.
    const env = { ...process.env, INFINITY_MEMORY_HOME: dir, INFINITY_MEMORY_USER: "local" };
    const db = ["--db", m.dbPath];
    m.db.pragma("wal_checkpoint(PASSIVE)");
    const contentOf = (id: string) => (m.db.prepare("SELECT content FROM memories WHERE id = ?").get(id) as { content: string }).content;
    const tokenOf = (id: string) => /mem\d+x/.exec(contentOf(id))![0];
    type Check = { args: string[]; check(rows: Record<string, unknown>[]): void };
    const checks: Check[] = [];
    for (const user of USERS) {
      const mine = mems.filter((k) => k.user === user);
      checks.push({
        args: ["memory", "export", "--user", user, ...db],
        check: (rows) => expect(new Set(rows.map((x) => x.id)), `memory export --user ${user}`).toEqual(new Set(mine.map((k) => k.id))),
      });
    }
    for (const user of USERS.slice(0, 2)) {
      const mine = mems.filter((k) => k.user === user);
      const project = pick(PROJECTS);
      checks.push({
        args: ["memory", "list", "--user", user, "--limit", "1000", "--json", ...db],
        // one page (capped at config list.maxLimit; `--json` prints no cursor): only this user's, and full
        check: (rows) => {
          const ids = new Set(mine.map((k) => k.id));
          for (const row of rows) if (!ids.has(row.id as string)) leaks.push(`memory list --user ${user} returned ${String(row.id)}`);
          expect(rows.length, `memory list --user ${user}`).toBe(Math.min(ids.size, m.config.list.maxLimit));
        },
      });
      checks.push({
        args: ["memory", "list", "--user", user, "--project", project, "--limit", "1000", "--json", ...db],
        check: (rows) => {
          for (const row of rows) {
            const k = mems.find((x) => x.id === row.id);
            if (!k || k.user !== user || (k.level !== "user" && k.project !== project)) leaks.push(`memory list --user ${user} --project ${project} returned ${String(row.id)}`);
          }
        },
      });
      // another user's exact token finds nothing of theirs; one's own token is found
      const other = mems.find((k) => k.user !== user);
      const own = mine[0];
      const query = `${other ? tokenOf(other.id) : "deploy"} ${own ? tokenOf(own.id) : ""} note`;
      checks.push({
        args: ["memory", "search", ...query.split(" ").filter(Boolean), "--user", user, "--limit", "50", "--json", ...db],
        check: (rows) => {
          for (const h of rows) if (mems.find((k) => k.id === h.id)?.user !== user) leaks.push(`memory search --user ${user} "${query}" returned ${String(h.id)}`);
          if (own && !rows.some((h) => h.id === own.id)) misses.push(`memory search --user ${user} missed ${own.id}`);
        },
      });
      const theirs = said.find((x) => x.user !== user)!;
      const ownSaid = said.find((x) => x.user === user);
      checks.push({
        args: ["sessions", "search", theirs.token, ...(ownSaid ? [ownSaid.token] : []), "--from", `sqlite:${m.dbPath}`, "--user", user, "--limit", "50", "--window", "0", "--json", ...db],
        check: (rows) => {
          for (const h of rows) if (ownerOfRoot.get(h.session_id as string) !== user) leaks.push(`sessions search --user ${user} returned session ${String(h.session_id)}`);
          if (ownSaid && !rows.some((h) => String(h.text).includes(ownSaid.token))) misses.push(`sessions search --user ${user} missed ${ownSaid.token}`);
        },
      });
    }
    const runOne = async (c: Check) => {
      const res = await execFileP(process.execPath, [CLI, ...c.args], { env, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 });
      tally.cli++;
      c.check(res.stdout.split("\n").filter((l) => l.trim().length > 0).map((l) => JSON.parse(l) as Record<string, unknown>));
    };
    for (let i = 0; i < checks.length; i += 4) await Promise.all(checks.slice(i, i + 4).map(runOne));

    mark("cli");
    const total = Object.values(tally).reduce((a, b) => a + b, 0);
    console.log("surface isolation ms " + JSON.stringify(Object.fromEntries(Object.entries(spent).map(([k, v]) => [k, Math.round(v)]))));
    console.log("surface isolation " + JSON.stringify({ ops: OPS, ...tally, total, leaks: leaks.length, misses: misses.length }));
    expect(leaks.slice(0, 10)).toEqual([]);
    expect(misses.slice(0, 10)).toEqual([]);
    expect(tally.sessionSearch + tally.skillSearch + tally.prefix).toBeGreaterThan(OPS / 2);
    sources.close();
    m.close();
  }, 600_000);
});

// Model-based isolation test: random operations by 5 users × 3 projects × thread trees against an
// oracle of who may see what, checked on search (no leak, nothing visible missed), list, export
// and the context prefix.
import { beforeAll, describe, expect, it } from "vitest";
import { rng } from "../../bench/corpus.js";
import type { ScopeLevel } from "../../core/memory/record.js";
import type { RequestScope } from "../../core/memory/scope.js";
import { MemoryPrefixBuilder } from "../../core/retrieval/prefix.js";
import { loadTokenCounter, type TokenCounter } from "../../core/retrieval/tokens.js";
import { openTestMemory } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";

const USERS = ["u0", "u1", "u2", "u3", "u4"];
const PROJECTS = ["/p/alpha", "/p/beta", "/p/gamma"];
const LEVELS: ScopeLevel[] = ["user", "project", "session", "thread"];
const WORDS = ["deploy", "billing", "kafka", "invoice", "grafana", "terraform", "retention", "oncall", "backup", "schema"];
const OPS = Number(process.env.ISOLATION_OPS ?? 10_000);

interface Known {
  id: string;
  token: string;
  user: string;
  level: ScopeLevel;
  project: string | null;
  session: string;
  thread: string;
}

/** The rule, written independently of the code under test. */
function visible(k: Known, r: RequestScope): boolean {
  if (k.user !== r.user) return false;
  switch (k.level) {
    case "user":
      return true;
    case "project":
      return k.project !== null && k.project === r.project;
    case "session":
      return k.session === r.session;
    case "thread":
      return k.thread === r.thread || r.ancestors.includes(k.thread);
  }
}

let tokens: TokenCounter;
beforeAll(async () => {
  tokens = await loadTokenCounter("o200k_base");
});

describe("isolation", () => {
  it(`leaks nothing over ${OPS} random operations`, async () => {
    const m = openTestMemory(tempDir());
    const builder = new MemoryPrefixBuilder({ service: m.service, toggles: m.toggles, edgesOf: (id) => m.store.edgesOf(id), tokens, config: m.config });
    const r = rng(20261130);
    const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
    // thread trees: sessions per user and project, each with a root, children and grandchildren
    const threads: RequestScope[] = [];
    for (const user of USERS) {
      for (const project of PROJECTS) {
        for (let s = 0; s < 2; s++) {
          const root = `${user}-${project.slice(3)}-s${s}`;
          const c1 = `${root}-c1`;
          const c2 = `${root}-c2`;
          threads.push(
            { user, project, session: root, thread: root, ancestors: [] },
            { user, project, session: root, thread: c1, ancestors: [root] },
            { user, project, session: root, thread: c2, ancestors: [root] },
            { user, project, session: root, thread: `${c1}-g`, ancestors: [root, c1] },
          );
        }
      }
    }
    const known: Known[] = [];
    let leaks = 0;
    let misses = 0;
    let checks = 0;
    for (let op = 0; op < OPS; op++) {
      const who = pick(threads);
      const dice = r();
      if (dice < 0.3 || known.length < 20) {
        const token = `tok${op}x`;
        const level = pick(LEVELS);
        const res = await m.service.remember(who, { content: `${pick(WORDS)} ${pick(WORDS)} note ${token}`, scope: level }, { actor: "model", threadId: who.thread, toolCallId: `c${op}` });
        known.push({ id: res.record.id, token, user: who.user, level, project: level === "user" ? null : who.project, session: who.session, thread: who.thread });
      } else if (dice < 0.35) {
        const mine = known.filter((k) => visible(k, who));
        if (mine.length === 0) continue;
        const k = pick(mine);
        await m.service.forget({ thread: who }, [k.id], { actor: "model", threadId: who.thread, toolCallId: `f${op}` });
        known.splice(known.indexOf(k), 1);
      } else if (dice < 0.38) {
        // forgetting someone else's memory must fail without effect
        const theirs = known.filter((k) => !visible(k, who));
        if (theirs.length === 0) continue;
        await expect(m.service.forget({ thread: who }, [pick(theirs).id], { actor: "model", threadId: who.thread, toolCallId: `x${op}` })).rejects.toMatchObject({ code: "not_found" });
      } else if (dice < 0.8) {
        // an exact token: visible → found; not visible → never returned
        const k = pick(known);
        const hits = await m.service.search({ thread: who }, { query: k.token, limit: 50 });
        checks++;
        const byId = new Map(known.map((x) => [x.id, x]));
        for (const h of hits) if (!byId.has(h.record.id) || !visible(byId.get(h.record.id)!, who)) leaks++;
        if (visible(k, who) && !hits.some((h) => h.record.id === k.id)) misses++;
      } else if (dice < 0.9) {
        const hits = await m.service.search({ thread: who }, { query: `${pick(WORDS)} ${pick(WORDS)} note`, limit: 50 });
        const byId = new Map(known.map((x) => [x.id, x]));
        checks++;
        for (const h of hits) if (!byId.has(h.record.id) || !visible(byId.get(h.record.id)!, who)) leaks++;
      } else if (dice < 0.95) {
        const page = await m.service.list({ thread: who }, { limit: 100 });
        const expected = known.filter((k) => visible(k, who)).length;
        checks++;
        if (page.total !== expected) misses++;
        const byId = new Map(known.map((x) => [x.id, x]));
        for (const rec of page.items) if (!visible(byId.get(rec.id)!, who)) leaks++;
      } else {
        const p = await builder.build({ scope: who, task: `${pick(WORDS)} ${pick(WORDS)} note` });
        const byId = new Map(known.map((x) => [x.id, x]));
        checks++;
        for (const it of p.items) if (!visible(byId.get(it.id)!, who)) leaks++;
      }
    }
    // the owner's export holds exactly their live memories
    for (const user of USERS) {
      const ids: string[] = [];
      for await (const rec of m.service.exportAll({ owner: user })) ids.push(rec.id);
      expect(ids.sort()).toEqual(known.filter((k) => k.user === user).map((k) => k.id).sort());
    }
    expect({ leaks, misses }).toEqual({ leaks: 0, misses: 0 });
    expect(checks).toBeGreaterThan(OPS / 2);
    m.close();
  }, 300_000);
});

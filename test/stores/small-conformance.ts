// Behaviour suites for the small stores every backend provides: toolset toggles, root contexts,
// the LLM call budget and the session index. Run on SQLite (small-conformance.test.ts) and on
// PostgreSQL (test/postgres/small.test.ts).
import { describe, expect, it } from "vitest";
import type { LlmBudgetStore } from "../../core/llm/budget.js";
import { analyzeQuery } from "../../core/retrieval/analyze.js";
import type { AuditEntry, MemoryStore, RootContextStore, SessionIndexStore, ToggleStore } from "../../stores/traits.js";

export interface SmallStores {
  toggles: ToggleStore;
  roots: RootContextStore;
  budget: LlmBudgetStore;
  sessions: SessionIndexStore;
  /** audit rows of the toggle store land in the memory store's audit log */
  memory: MemoryStore;
}

const audit = (targetId: string): AuditEntry => ({ at: 1, actor: "tester", action: "toggle", targetKind: "toolset", targetId, detail: { on: true } });

export function smallStoreConformance(name: string, make: () => Promise<SmallStores>, opts: { stemming?: boolean } = {}): void {
  describe(`${name}: toggle, root context, budget and session index conformance`, () => {
    it("toggles resolve to the nearest explicit setting along the chain, null clears, and each change is audited", async () => {
      const { toggles, memory } = await make();
      expect(await toggles.resolve("memory", [])).toBeNull();
      expect(await toggles.resolve("memory", ["child", "root"])).toBeNull();
      await toggles.set("memory", "root", false, audit("memory"));
      expect(await toggles.resolve("memory", ["child", "root"])).toBe(false);
      await toggles.set("memory", "child", true, audit("memory"));
      expect(await toggles.resolve("memory", ["child", "root"])).toBe(true);
      expect(await toggles.resolve("skills", ["child", "root"])).toBeNull();
      await toggles.set("memory", "child", null, audit("memory"));
      expect(await toggles.resolve("memory", ["child", "root"])).toBe(false);
      const trail = await memory.audit("memory", 10);
      expect(trail.map((a) => a.action)).toEqual(["toggle", "toggle", "toggle"]);
      expect(trail[0]).toMatchObject({ targetKind: "toolset", detail: { on: true } });
    });

    it("root contexts keep the newest observation", async () => {
      const { roots } = await make();
      expect(await roots.get("r1")).toBeNull();
      await roots.upsert("r1", "alice", "/p", 10);
      await roots.upsert("r1", "alice", "/older", 5);
      expect(await roots.get("r1")).toEqual({ rootThreadId: "r1", userId: "alice", project: "/p", updatedAt: 10 });
      await roots.upsert("r1", "alice", null, 20);
      expect(await roots.get("r1")).toEqual({ rootThreadId: "r1", userId: "alice", project: null, updatedAt: 20 });
    });

    it("the budget grants exactly `limit` calls a day, none with a zero limit, even when taken concurrently", async () => {
      const { budget } = await make();
      expect(await budget.tryTake("2026-11-01", 0)).toBe(false);
      expect(await budget.used("2026-11-01")).toBe(0);
      const grants = await Promise.all(Array.from({ length: 12 }, () => budget.tryTake("2026-11-01", 5)));
      expect(grants.filter(Boolean)).toHaveLength(5);
      expect(await budget.used("2026-11-01")).toBe(5);
      expect(await budget.tryTake("2026-11-02", 5)).toBe(true);
      expect(await budget.used("2026-11-02")).toBe(1);
    });

    it("the session index appends incrementally, searches one user's messages only, and purges what a forget names", async () => {
      const { sessions } = await make();
      const src = await sessions.sourceId("infinity-files", "/home/a/.infinity");
      expect(await sessions.sourceId("infinity-files", "/home/a/.infinity")).toBe(src);
      expect(await sessions.sourceId("sqlite", "/other.db")).not.toBe(src);
      expect(await sessions.threadState(src, "t1")).toBeNull();
      const t1 = { threadId: "t1", rootThreadId: "t1", user: "alice", cwd: "/p" };
      const added = await sessions.append(
        src,
        t1,
        [
          { ord: 0, messageId: "m0", role: "user", text: "Remember that my locker code is 4417 and the harbour is north" },
          { ord: 1, messageId: "m1", role: "tool_call", text: "remember: locker code is 4417" },
          { ord: 2, messageId: "m2", role: "assistant", text: "Saved. The harbour trip is on Friday." },
          { ord: 3, messageId: "m3", role: "assistant", text: "   " },
        ],
        4,
        "fp1",
        100,
      );
      expect(added).toBe(3);
      expect(await sessions.threadState(src, "t1")).toEqual({ indexedCount: 4, fingerprint: "fp1", user: "alice", skipped: null });
      // messages left out as kinds the reader did not know: where, and by which message format
      await sessions.append(src, { ...t1, skipped: { from: 1, format: "f1" } }, [], 4, "fp1", 100);
      expect((await sessions.threadState(src, "t1"))?.skipped).toEqual({ from: 1, format: "f1" });
      await sessions.append(src, { ...t1, skipped: null }, [], 4, "fp1", 100);
      expect((await sessions.threadState(src, "t1"))?.skipped).toBeNull();
      // appending the same messages again adds nothing
      expect(await sessions.append(src, t1, [{ ord: 2, messageId: "m2", role: "assistant", text: "Saved. The harbour trip is on Friday." }], 4, "fp1", 101)).toBe(0);
      await sessions.append(src, { threadId: "b1", rootThreadId: "b1", user: "bob", cwd: null }, [{ ord: 0, messageId: "x", role: "user", text: "Bob's harbour notes" }], 1, null, 100);

      const hits = await sessions.search({ user: "alice", query: analyzeQuery("harbour"), limit: 10 });
      expect(hits.map((h) => h.messageId).sort()).toEqual(["m0", "m2"]);
      expect(hits.every((h) => h.threadId === "t1" && h.sourceId === src)).toBe(true);
      expect((await sessions.search({ user: "bob", query: analyzeQuery("harbour"), limit: 10 })).map((h) => h.messageId)).toEqual(["x"]);
      expect(await sessions.search({ user: "carol", query: analyzeQuery("harbour"), limit: 10 })).toEqual([]);
      expect(await sessions.search({ user: "alice", query: analyzeQuery("harbour"), excludeRootThreadId: "t1", limit: 10 })).toEqual([]);
      expect((await sessions.search({ user: "alice", query: analyzeQuery("harbour"), rootThreadId: "t1", limit: 1 }))).toHaveLength(1);
      if (opts.stemming ?? true) {
        expect((await sessions.search({ user: "alice", query: analyzeQuery("trips"), limit: 10 })).map((h) => h.messageId)).toEqual(["m2"]);
      }

      expect((await sessions.window(src, "t1", 1, 2)).map((h) => h.ord)).toEqual([1, 2]);
      expect((await sessions.find(src, "t1", { ord: 2 }, "alice"))?.messageId).toBe("m2");
      expect((await sessions.find(null, "t1", { messageId: "m0" }, "alice"))?.ord).toBe(0);
      expect(await sessions.find(src, "t1", { ord: 2 }, "bob")).toBeNull();
      expect(await sessions.counts()).toEqual({ threads: 2, messages: 4 });

      // forgetting "locker code is 4417": the call, the user turn before it, never indexed again
      expect(await sessions.purgeContaining("bob", ["locker code is 4417"])).toBe(0);
      expect(await sessions.purgeContaining("alice", ["locker code is 4417"])).toBe(2);
      expect(await sessions.search({ user: "alice", query: analyzeQuery("locker 4417"), limit: 10 })).toEqual([]);
      await sessions.append(src, t1, [{ ord: 0, messageId: "m0", role: "user", text: "Remember that my locker code is 4417 and the harbour is north" }], 4, "fp2", 102);
      expect(await sessions.search({ user: "alice", query: analyzeQuery("locker"), limit: 10 })).toEqual([]);

      // the remember call as the indexer keeps it: JSON arguments (escaped), cut at 1,000 characters
      const quoted = 'My gate code is 9931 and the "spare" key is\nunder the blue mat';
      const long = `The release checklist for the harbour project: ${"verify the signed tarball, ".repeat(60)}then tag it.`;
      const callText = (content: string) => `memory_remember ${JSON.stringify({ content, kind: "fact" }).slice(0, 1000)}…`;
      await sessions.append(
        src,
        { threadId: "t2", rootThreadId: "t2", user: "alice", cwd: "/p" },
        [
          { ord: 0, messageId: "q0", role: "user", text: "Please keep my gate code handy" },
          { ord: 1, messageId: "q1", role: "tool_call", text: callText(quoted) },
          { ord: 2, messageId: "q2", role: "user", text: "And the release checklist too" },
          { ord: 3, messageId: "q3", role: "tool_call", text: callText(long) },
          { ord: 4, messageId: "q4", role: "assistant", text: "Both are saved." },
        ],
        5,
        "fp-t2",
        103,
      );
      expect(await sessions.purgeContaining("alice", [quoted])).toBe(2);
      expect(await sessions.purgeContaining("alice", [long])).toBe(2);
      expect((await sessions.window(src, "t2", 0, 4)).map((h) => h.messageId)).toEqual(["q4"]);
      // what the learning loop is told not to read as said
      expect([...(await sessions.forgottenMessages("t2"))].sort()).toEqual(["q0", "q1", "q2", "q3"]);
      expect(await sessions.forgottenMessages("nowhere")).toEqual(new Set());
      // the message a memory was made from goes by its id, with no text to match (only the user's own)
      expect(await sessions.purgeContaining("bob", [], [{ threadId: "t2", messageId: "q4" }])).toBe(0);
      expect(await sessions.purgeContaining("alice", [], [{ threadId: "t2", messageId: "q4" }, { threadId: "t2", messageId: "gone" }])).toBe(1);
      expect(await sessions.window(src, "t2", 0, 4)).toEqual([]);
      expect(await sessions.forgottenMessages("t2")).toContain("q4");

      expect((await sessions.indexedThreads(src)).sort()).toEqual(["b1", "t1", "t2"]);
      expect(await sessions.indexedThreads(await sessions.sourceId("sqlite", "/other.db"))).toEqual([]);
      await sessions.resetThread(src, "t1");
      expect(await sessions.threadState(src, "t1")).toBeNull();
      expect((await sessions.indexedThreads(src)).sort()).toEqual(["b1", "t2"]);

      // a source an earlier version keyed by another spelling of its path keeps its id and rows
      expect(await sessions.sourceId("infinity-files", "/data/a-infinity", "/home/a/.infinity")).toBe(src);
      expect(await sessions.sourceId("infinity-files", "/data/a-infinity")).toBe(src);
      expect(await sessions.sourceId("infinity-files", "/data/a-infinity", "/nowhere")).toBe(src);
      expect((await sessions.indexedThreads(src)).sort()).toEqual(["b1", "t2"]);
      expect(await sessions.counts()).toEqual({ threads: 2, messages: 1 });
    });

    it("a source merged into the one it moved to: its threads go, its forgets apply to the new one and stay its own", async () => {
      const { sessions } = await make();
      const old = await sessions.sourceId("infinity-files", "/old/.infinity");
      const moved = await sessions.sourceId("infinity-files", "/new/.infinity");
      const t = { threadId: "t", rootThreadId: "t", user: "alice", cwd: null };
      const said = [
        { ord: 0, messageId: "m0", role: "user", text: "My locker code is 4417" },
        { ord: 1, messageId: "m1", role: "assistant", text: "Noted, the harbour locker" },
      ];
      await sessions.append(old, t, said, 2, "m1", 100);
      expect(await sessions.purgeContaining("alice", ["locker code is 4417"])).toBe(1);
      await sessions.append(moved, t, said, 2, "m1", 100);
      expect((await sessions.sources("infinity-files")).map((x) => [String(x.id), x.location]).sort()).toEqual(
        [[String(old), "/old/.infinity"], [String(moved), "/new/.infinity"]].sort(),
      );
      await sessions.mergeSource(old, moved);
      expect(await sessions.indexedThreads(old)).toEqual([]);
      expect((await sessions.search({ user: "alice", query: analyzeQuery("locker"), limit: 10 })).map((h) => [String(h.sourceId), h.messageId])).toEqual([[String(moved), "m1"]]);
      // indexed again from the new place: the forgotten message stays out
      await sessions.resetThread(moved, "t");
      expect(await sessions.append(moved, t, said, 2, "m1", 101)).toBe(1);
      // and the old place, were it back, keeps its own
      expect(await sessions.append(old, t, said, 2, "m1", 101)).toBe(1);
    });

    it("a forget of what a child thread remembered purges the user's turn in the parent that led to it", async () => {
      const { sessions } = await make();
      const src = await sessions.sourceId("infinity-files", "/home/a/.infinity");
      await sessions.append(src, { threadId: "r", rootThreadId: "r", user: "alice", cwd: null }, [
        { ord: 0, messageId: "r0", role: "user", text: "What time is standup?" },
        { ord: 1, messageId: "r1", role: "assistant", text: "Ten o'clock." },
        { ord: 2, messageId: "r2", role: "user", text: "Please note that the vault passphrase is cobalt heron, then tidy the repo" },
        { ord: 3, messageId: "r3", role: "tool_call", text: "spawn_thread {\"instructions\":\"tidy\"}" },
        { ord: 4, messageId: "r4", role: "user", text: "Later: book the dentist" },
      ], 5, "r4", 100);
      // spawned after r3 (4 inherited messages), then a grandchild under it with no user turn either
      await sessions.append(src, { threadId: "c", rootThreadId: "r", user: "alice", cwd: null, parent: { threadId: "r", spawnOrder: 4 } }, [
        { ord: 0, messageId: "c0", role: "tool_result", text: "You are now INSIDE the thread that you requested to create." },
      ], 1, "c0", 101);
      await sessions.append(src, { threadId: "g", rootThreadId: "r", user: "alice", cwd: null, parent: { threadId: "c", spawnOrder: 1 } }, [
        { ord: 0, messageId: "g0", role: "tool_result", text: "You are now INSIDE the thread that you requested to create." },
        { ord: 1, messageId: "g1", role: "tool_call", text: 'memory_remember {"content":"Vault passphrase: cobalt heron"}' },
      ], 2, "g1", 102);
      expect(await sessions.purgeContaining("alice", ["Vault passphrase: cobalt heron"])).toBe(2);
      expect((await sessions.window(src, "r", 0, 4)).map((h) => h.messageId)).toEqual(["r0", "r1", "r3", "r4"]);
      expect([...(await sessions.forgottenMessages("r"))]).toEqual(["r2"]);
      expect((await sessions.window(src, "g", 0, 1)).map((h) => h.messageId)).toEqual(["g0"]);
    });

    it("a lone CJK character finds the user's messages holding it anywhere in a run, not only where it stands alone", async () => {
      const { sessions } = await make();
      const src = await sessions.sourceId("infinity-files", "/home/a/.infinity");
      const said = ["我有一只猫。", "猫很可爱", "我喜欢狗", "猫"];
      await sessions.append(
        src,
        { threadId: "c1", rootThreadId: "c1", user: "alice", cwd: null },
        said.map((text, i) => ({ ord: i, messageId: `c${i}`, role: "user", text })),
        said.length,
        `c${said.length - 1}`,
        100,
      );
      await sessions.append(src, { threadId: "b2", rootThreadId: "b2", user: "bob", cwd: null }, [{ ord: 0, messageId: "bc", role: "user", text: "鲍勃的猫" }], 1, "bc", 100);
      expect((await sessions.search({ user: "alice", query: analyzeQuery("猫"), limit: 10 })).map((h) => h.messageId).sort()).toEqual(["c0", "c1", "c3"]);
      expect(await sessions.search({ user: "alice", query: analyzeQuery("猫"), limit: 2 })).toHaveLength(2);
      expect(await sessions.search({ user: "alice", query: analyzeQuery("猫"), excludeRootThreadId: "c1", limit: 10 })).toEqual([]);
      expect((await sessions.search({ user: "alice", query: analyzeQuery("猫"), rootThreadId: "c1", limit: 10 })).map((h) => h.messageId).sort()).toEqual(["c0", "c1", "c3"]);
      expect((await sessions.search({ user: "bob", query: analyzeQuery("猫"), limit: 10 })).map((h) => h.messageId)).toEqual(["bc"]);
      expect(await sessions.search({ user: "carol", query: analyzeQuery("猫"), limit: 10 })).toEqual([]);
    });

    it("words inside addresses, host names, paths and dashed numbers are found, and a forget of such a text purges it", async () => {
      const { sessions } = await make();
      const src = await sessions.sourceId("infinity-files", "/home/a/.infinity");
      const secrets = [
        "my email is alice.smith@corp.example.com",
        "the vpn host is vpn.acme-corp.io on port 4443",
        "the backup key is in /home/alice/keys/backup.pem",
        "the gate pin is 4417-9921",
      ];
      await sessions.append(
        src,
        { threadId: "t3", rootThreadId: "t3", user: "alice", cwd: null },
        secrets.map((s, i) => ({ ord: i, messageId: `s${i}`, role: "user", text: `Please remember: ${s}.` })),
        secrets.length,
        `s${secrets.length - 1}`,
        100,
      );
      for (const [word, id] of [["smith", "s0"], ["acme", "s1"], ["keys", "s2"], ["9921", "s3"]] as const) {
        expect((await sessions.search({ user: "alice", query: analyzeQuery(word), limit: 10 })).map((h) => h.messageId), word).toEqual([id]);
      }
      for (const s of secrets) expect(await sessions.purgeContaining("alice", [s]), s).toBe(1);
      expect(await sessions.window(src, "t3", 0, secrets.length)).toEqual([]);
    });

    it("a forget purges text with capital letters outside ASCII, whatever the database's locale folds", async () => {
      const { sessions } = await make();
      const src = await sessions.sourceId("infinity-files", "/home/a/.infinity");
      const secrets = ["Mein Übungsraum ist Zimmer 12 im Ölhafen", "Мой пароль от почты лежит в сейфе", "Ο κωδικός είναι στο ΣΥΡΤΆΡΙ", "ÉTÉ 2026: clé sous le paillasson"];
      await sessions.append(
        src,
        { threadId: "t4", rootThreadId: "t4", user: "alice", cwd: null },
        secrets.map((s, i) => ({ ord: i, messageId: `u${i}`, role: "user", text: `Note this: ${s}` })),
        secrets.length,
        `u${secrets.length - 1}`,
        100,
      );
      for (const s of secrets) expect(await sessions.purgeContaining("alice", [s]), s).toBe(1);
      expect(await sessions.window(src, "t4", 0, secrets.length)).toEqual([]);
    });

    it("a forget purges a very short text: words under three letters, a lone CJK character", async () => {
      const { sessions } = await make();
      const src = await sessions.sourceId("infinity-files", "/home/a/.infinity");
      const secrets = ["Go 1.22", "C#", "OK", "猫"];
      const texts = ["We settled on Go 1.22 for the build", "my favourite is C# on weekends", "Fine, OK then", "我的猫叫小白", "Nothing to see in this one"];
      await sessions.append(
        src,
        { threadId: "t8", rootThreadId: "t8", user: "alice", cwd: null },
        texts.map((s, i) => ({ ord: i, messageId: `k${i}`, role: "user", text: s })),
        texts.length,
        `k${texts.length - 1}`,
        100,
      );
      // another user's copy stays
      await sessions.append(src, { threadId: "t9", rootThreadId: "t9", user: "bob", cwd: null }, [{ ord: 0, messageId: "b0", role: "user", text: "我的猫 and Go 1.22" }], 1, "b0", 100);
      for (const s of secrets) expect(await sessions.purgeContaining("alice", [s]), s).toBe(1);
      expect((await sessions.window(src, "t8", 0, texts.length)).map((h) => h.messageId)).toEqual([`k${texts.length - 1}`]);
      expect(await sessions.window(src, "t9", 0, 1)).toHaveLength(1);
    });

    it("a forget purges a text made only of common words (stop words to a text search parser)", async () => {
      const { sessions } = await make();
      const src = await sessions.sourceId("infinity-files", "/home/a/.infinity");
      const secrets = ["It was not them, it was you", "Where were you when they did that?", "我们 were there before you"];
      await sessions.append(
        src,
        { threadId: "t6", rootThreadId: "t6", user: "alice", cwd: null },
        [...secrets, "Nothing to see in this one"].map((s, i) => ({ ord: i, messageId: `c${i}`, role: "user", text: `Remember: ${s}` })),
        secrets.length + 1,
        `c${secrets.length}`,
        100,
      );
      for (const s of secrets) expect(await sessions.purgeContaining("alice", [s]), s).toBe(1);
      expect((await sessions.window(src, "t6", 0, secrets.length)).map((h) => h.messageId)).toEqual([`c${secrets.length}`]);
    });

    it("session search finds a word beside typographic punctuation, symbols, emoji or a no-break space, whatever the database's locale reads as a letter", async () => {
      const { sessions } = await make();
      const src = await sessions.sourceId("infinity-files", "/home/a/.infinity");
      const texts = ["The meeting room is “Atlas” now", "Deploy—tomorrow at nine…", "Alice’s favourite colour is teal", "Budget:\u00a0500\u00a0euros", "ship it 🚀today", "arrow→keys"];
      await sessions.append(
        src,
        { threadId: "t7", rootThreadId: "t7", user: "alice", cwd: null },
        texts.map((text, i) => ({ ord: i, messageId: `p${i}`, role: "user", text })),
        texts.length,
        `p${texts.length - 1}`,
        100,
      );
      const words = [["atlas", "p0"], ["deploy", "p1"], ["tomorrow", "p1"], ["alice", "p2"], ["500", "p3"], ["euros", "p3"], ["today", "p4"], ["arrow", "p5"], ["keys", "p5"]] as const;
      for (const [word, id] of words) {
        expect((await sessions.search({ user: "alice", query: analyzeQuery(word), limit: 10 })).map((h) => h.messageId), word).toEqual([id]);
      }
    });

    // a word index (SQLite's, PostgreSQL's tsvector) and the DSQL profile's substring scan alike
    it("session search folds a Latin letter's diacritics: 'zurich' finds 'Zürich', 'café' finds 'cafe'", async () => {
      const { sessions } = await make();
      const src = await sessions.sourceId("infinity-files", "/home/a/.infinity");
      const texts = ["The Zürich office opens at eight", "We ordered cafe supplies", "São Paulo trip next month"];
      await sessions.append(
        src,
        { threadId: "t8", rootThreadId: "t8", user: "alice", cwd: null },
        texts.map((text, i) => ({ ord: i, messageId: `d${i}`, role: "user", text })),
        texts.length,
        `d${texts.length - 1}`,
        100,
      );
      for (const [word, id] of [["zurich", "d0"], ["zürich", "d0"], ["café", "d1"], ["sao", "d2"]] as const) {
        expect((await sessions.search({ user: "alice", query: analyzeQuery(word), limit: 10 })).map((h) => h.messageId), word).toEqual([id]);
      }
    });

    it("session search finds a word written with capitals outside ASCII by its lower-case form, whatever the database's locale folds", async () => {
      const { sessions } = await make();
      const src = await sessions.sourceId("infinity-files", "/home/a/.infinity");
      const texts = ["Der Übungsraum ist im Keller", "ПАРОЛЬ лежит в сейфе", "The weekly meeting moved"];
      await sessions.append(
        src,
        { threadId: "t5", rootThreadId: "t5", user: "alice", cwd: null },
        texts.map((text, i) => ({ ord: i, messageId: `w${i}`, role: "user", text })),
        texts.length,
        `w${texts.length - 1}`,
        100,
      );
      for (const [word, id] of [["übungsraum", "w0"], ["пароль", "w1"]] as const) {
        expect((await sessions.search({ user: "alice", query: analyzeQuery(word), limit: 10 })).map((h) => h.messageId), word).toEqual([id]);
      }
    });

    it("a pasted log of a million distinct words is indexed with its thread, and a forget finds text at its end", async () => {
      const { sessions } = await make();
      const src = await sessions.sourceId("infinity-files", "/home/a/.infinity");
      // ~1.7 MB: its distinct words alone are more than a PostgreSQL tsvector holds (1 MB)
      const lines = Array.from({ length: 80_000 }, (_, i) => `req${i.toString(36)}x${((i * 2654435761) >>> 0).toString(36)} ok`);
      const secret = "the vault passphrase is marmalade-quokka-41";
      const log = `Here is the deploy log\n${lines.join("\n")}\n${secret}`;
      const thread = { threadId: "big", rootThreadId: "big", user: "alice", cwd: null };
      const added = await sessions.append(
        src,
        thread,
        [
          { ord: 0, messageId: "b0", role: "user", text: log },
          { ord: 1, messageId: "b1", role: "assistant", text: "The deploy log shows the harbour job timing out." },
        ],
        2,
        "b1",
        100,
      );
      expect(added).toBe(2);
      expect(await sessions.threadState(src, "big")).toEqual({ indexedCount: 2, fingerprint: "b1", user: "alice", skipped: null });
      expect((await sessions.search({ user: "alice", query: analyzeQuery("deploy log"), limit: 10 })).map((h) => h.messageId).sort()).toEqual(["b0", "b1"]);
      expect(await sessions.purgeContaining("alice", [secret])).toBe(1);
      expect((await sessions.window(src, "big", 0, 1)).map((h) => h.messageId)).toEqual(["b1"]);
    });
  });
}

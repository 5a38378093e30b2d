// Neighbour spreading knows questions: a word hit that asks something passes a large share of its
// score to the turn after it (most often the answer), a plain statement only a small one, and the
// question itself keeps only part of its own score.
import { describe, expect, it } from "vitest";
import { analyzeQuery } from "../../core/retrieval/analyze.js";
import { visibilityKey } from "../../core/memory/scope.js";
import type { NewMemory, RecordScope } from "../../core/memory/record.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteMemoryStore } from "../../stores/sqlite/memory-store.js";
import { NeighbourSpread, SPREAD_SHARES } from "../../stores/sqlite/neighbour-spread.js";
import { mem } from "../stores/memory-conformance.js";

const NOW = Date.UTC(2026, 0, 20);
const scope: RecordScope = { level: "user", user: "joanna", project: null, session: null, thread: null };
let seq = 0;
// one turn of a conversation: the thread makes its neighbours
const turn = (content: string, thread: string): NewMemory =>
  mem(content, { scope, kind: "note", source: { threadId: thread, messageIds: [`m${++seq}`], toolCallId: null, actor: "user", at: NOW } });

describe("reply-aware neighbour spreading", () => {
  it("the answer after a matching question outranks the turn after a matching statement", async () => {
    const db = openDatabase(":memory:");
    const store = new SqliteMemoryStore(db);
    const asked = turn("Nate: what are your hobbies these days?", "a");
    const answer = turn("Joanna: writing and hanging out with friends", "a");
    const stated = turn("Joanna: hobbies cost money", "b");
    const after = turn("Nate: true enough", "b");
    const filler = ["Nate: the turtles are fine", "Joanna: the screenplay is done", "Nate: I won the tournament", "Joanna: my laptop crashed"];
    for (const m of [asked, answer, stated, after, ...filler.map((t, i) => turn(t, `f${i}`))]) {
      await store.insert(m, { at: NOW, actor: "t", action: "create", targetKind: "memory", targetId: m.id, detail: {} });
    }
    const ids = (
      await store.search({
        visibility: { keys: [visibilityKey(scope)] },
        query: analyzeQuery("hobbies"),
        text: "hobbies",
        statuses: ["active"],
        includeFlagged: false,
        now: NOW,
        limit: 10,
      })
    ).map((h) => h.record.id);
    // The statement is the better word hit (shorter), yet the question's answer comes before its follower.
    expect(ids.indexOf(stated.id)).toBeLessThan(ids.indexOf(asked.id));
    expect(ids.indexOf(answer.id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(answer.id)).toBeLessThan(ids.indexOf(after.id));

    // The same hits spread without the question mark give the follower the larger share.
    const rowid = (id: string) => (db.prepare(`SELECT rowid FROM memories WHERE id = ?`).get(id) as { rowid: number }).rowid;
    const spread = new NeighbourSpread(db);
    const hits = [
      { rowid: rowid(stated.id), score: 2 },
      { rowid: rowid(asked.id), score: 1 },
    ];
    const score = (out: { rowid: number; score: number }[], id: string) => out.find((h) => h.rowid === rowid(id))?.score ?? 0;
    const plain = spread.spread(hits);
    expect(score(plain, answer.id)).toBeCloseTo(SPREAD_SHARES.prev1 * 1);
    expect(score(plain, answer.id)).toBeLessThan(score(plain, after.id));
    const asking = spread.spread(hits.map((h) => ({ ...h, asks: h.rowid === rowid(asked.id) })));
    expect(score(asking, answer.id)).toBeCloseTo(SPREAD_SHARES.reply * 1);
    expect(score(asking, answer.id)).toBeGreaterThan(score(asking, after.id));
    // and the question itself keeps only part of its own score
    expect(score(plain, asked.id)).toBeCloseTo(1);
    expect(score(asking, asked.id)).toBeCloseTo(SPREAD_SHARES.asker * 1);
    store.close();
  });
});

import { describe, expect, it } from "vitest";
import { splitConversations } from "../../bench/locomo.js";

describe("LoCoMo tune/holdout split", () => {
  const convs = ["conv-44", "conv-26", "conv-42", "conv-30", "conv-43", "conv-41"].map((sample_id) => ({ sample_id }));
  const ids = (xs: { sample_id: string }[]) => xs.map((c) => c.sample_id);

  it("alternates by sorted sample id, whatever order the file lists them in", () => {
    expect(ids(splitConversations(convs, "tune"))).toEqual(["conv-26", "conv-41", "conv-43"]);
    expect(ids(splitConversations(convs, "holdout"))).toEqual(["conv-30", "conv-42", "conv-44"]);
    expect(ids(splitConversations([...convs].reverse(), "tune"))).toEqual(["conv-26", "conv-41", "conv-43"]);
  });

  it("the halves are disjoint and make up all; --conversations narrows within a split", () => {
    const t = new Set(ids(splitConversations(convs, "tune")));
    const h = ids(splitConversations(convs, "holdout"));
    expect(h.some((x) => t.has(x))).toBe(false);
    expect([...t, ...h].sort()).toEqual(ids(splitConversations(convs, "all")));
    expect(ids(splitConversations(convs, "holdout", ["conv-42", "conv-26"]))).toEqual(["conv-42"]);
  });
});

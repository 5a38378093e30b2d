// Irregular verbs: "When did she go…" reaches "I went…", a word the stemmer never joins to "go".
import { describe, expect, it } from "vitest";
import { otherVerbForms } from "../../core/retrieval/verb-forms.js";
import { ADDED_POSTINGS_BUDGET, ADDED_WORD_WEIGHT, RELATED_WORD_WEIGHT, addedWords } from "../../core/retrieval/added-words.js";
import { analyzeQuery } from "../../core/retrieval/analyze.js";
import { openTestMemory, req, T0 } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";
import { seedMemories } from "../../bench/seed.js";

describe("irregular verb forms (pure)", () => {
  it("adds the other forms of any form, once, after the query's own words", () => {
    expect(otherVerbForms(["go", "lisbon"])).toEqual(["went", "gone"]);
    expect(otherVerbForms(["bought", "bicycle"])).toEqual(["buy"]);
    expect(otherVerbForms(["swim", "swam"])).toEqual(["swum"]);
    expect(otherVerbForms(["painted", "garden"])).toEqual([]);
  });

  it("reads a regular ending of an irregular verb's base, adding only the forms the stemmer cannot join", () => {
    // "drawing" is "draw" to the stemmer already: "drew" and "drawn" are added, "draw" is not
    expect(otherVerbForms(["drawing"])).toEqual(["drew", "drawn"]);
    expect(otherVerbForms(["running"])).toEqual(["ran"]);
    expect(otherVerbForms(["rides"])).toEqual(["rode", "ridden"]);
    expect(otherVerbForms(["goes"])).toEqual(["went", "gone"]);
    // an ending on a past form makes no word, and a word that merely ends in -ing is no verb form
    expect(otherVerbForms(["wrotes", "ring", "things"])).toEqual(["rang", "rung"]);
  });

  it("leaves out forms that are everyday nouns or chat filler", () => {
    // "saw" (the tool), "left" (the side), "thought" (the noun) would match turns about other things
    expect(otherVerbForms(["see"])).toEqual(["seen"]);
    expect(otherVerbForms(["leave", "think", "rise", "find"])).toEqual([]);
  });

  it("joins category members in the added words, members first, nothing twice", () => {
    const q = "Which instruments did Melanie buy?";
    const [first, ...rest] = addedWords(q, analyzeQuery(q).terms, true);
    expect(first!.weight).toBe(ADDED_WORD_WEIGHT);
    expect(first!.words).toContain("violin");
    expect(first!.words.at(-1)).toBe("bought");
    // near-synonyms follow at their own, lower weight, none repeated from the first pass
    expect(rest.map((p) => p.weight)).toEqual([RELATED_WORD_WEIGHT]);
    expect(rest[0]!.words).toContain("purchase");
    const all = [first!, ...rest].flatMap((p) => p.words);
    expect(new Set(all).size).toBe(all.length);
    // with the category channel off the verb forms stay
    expect(addedWords(q, analyzeQuery(q).terms, false)).toEqual([{ words: ["bought"], weight: ADDED_WORD_WEIGHT, budget: ADDED_POSTINGS_BUDGET }]);
  });
});

describe("irregular verb forms in search", () => {
  it("the turn that tells it in the past outranks one that only shares the nouns", async () => {
    const dir = tempDir();
    const texts = [
      "Caroline: I ran the Boston marathon with my cousin, and we stopped for pancakes on the way home",
      "Caroline: the Boston marathon",
      ...Array.from({ length: 40 }, (_, i) => `Caroline: note ${i} about the garden and the weather`),
    ];
    const m = openTestMemory(dir, "verbs.db");
    await seedMemories(m, texts.length, (i) => ({ scope: req(), level: "user", kind: "note", content: texts[i]!, at: T0 + i }));
    const hits = await m.service.search({ thread: req() }, { query: "Did Caroline run the Boston marathon?", limit: 5 });
    expect(hits[0]?.record.content).toContain("I ran the Boston marathon");
    m.close();
  });
});

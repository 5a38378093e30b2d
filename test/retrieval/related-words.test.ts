// Near-synonyms: a query word in a lexicon group also searches the group's other words.
import { describe, expect, it } from "vitest";
import { relatedWords } from "../../core/retrieval/related-words.js";
import { analyzeQuery } from "../../core/retrieval/analyze.js";
import { categoryMembers } from "../../core/retrieval/categories.js";

const related = (q: string) => relatedWords(analyzeQuery(q).terms);

describe("related words (pure)", () => {
  it("maps casual synonyms both ways, from plural and singular alike", () => {
    expect(related("What does Andrew do with his girlfriend?")).toContain("gf");
    expect(related("my gf")).toContain("girlfriend");
    expect(related("What classes has Audrey taken?")).toEqual(expect.arrayContaining(["course", "workshop"]));
    expect(related("How many dogs does Andrew have?")).toEqual(expect.arrayContaining(["puppy", "pup", "mutt"]));
    expect(related("How do they destress?")).toContain("unwind");
  });

  it("splits a phrase into its content words, drops stop words and the query's own terms", () => {
    const w = related("What are the names of the dogs?");
    expect(w).toContain("called");
    // "fur baby" is searched as its words
    expect(w).toEqual(expect.arrayContaining(["fur", "baby"]));
    expect(related("Where is the indoor pool?")).not.toContain("at");
    expect(related("a dog and a puppy")).not.toContain("dog");
    expect(related("a dog and a puppy")).not.toContain("puppy");
  });

  it("adds nothing for words outside the lexicon, names or an empty query", () => {
    expect(related("Xenoblade Chronicles")).toEqual([]);
    expect(relatedWords([])).toEqual([]);
    const w = related("dog puppy pup");
    expect(new Set(w).size).toBe(w.length);
  });

  it("a question asking for some of a kind of thing names the category too", () => {
    expect(categoryMembers("What are some foods that Audrey likes eating?")).toContain("sushi");
    expect(categoryMembers("What are some of the activities he likes?")).toContain("hiking");
    expect(categoryMembers("What are the names of Audrey's dogs?")).toEqual([]);
  });
});

// Category words: the question must ask for the kind of thing; members then reach the word pool.
import { describe, expect, it } from "vitest";
import { categoryMembers } from "../../core/retrieval/categories.js";
import { addRanks } from "../../core/retrieval/fusion.js";
import { DEFAULT_CHANNELS } from "../../core/retrieval/channels.js";
import { openTestMemory, req, T0 } from "../helpers/memory.js";
import { tempDir } from "../helpers/tmp.js";
import { seedMemories } from "../../bench/seed.js";

describe("category members (pure)", () => {
  it("reads the kind of thing a question asks for, qualified or not", () => {
    expect(categoryMembers("What instruments does Melanie play?")).toContain("violin");
    expect(categoryMembers("Which European countries has Maria been to?")).toContain("portugal");
    expect(categoryMembers("What kind of art does Caroline make?")).toContain("pottery");
    expect(categoryMembers("What LGBTQ+ events has Caroline attended?")).toContain("parade");
    // places: countries, states and cities alike
    const places = categoryMembers("Which geographical locations has Tim been to?");
    expect(places).toEqual(expect.arrayContaining(["london", "california", "uk"]));
  });

  it("a longer name wins (martial arts, not arts); a passing mention or another question asks for none", () => {
    const martial = categoryMembers("What martial arts has John done?");
    expect(martial).toContain("karate");
    expect(martial).not.toContain("pottery");
    expect(categoryMembers("Did Melanie go to the art show?")).toEqual([]);
    expect(categoryMembers("What did Melanie show her kids?")).toEqual([]);
    expect(categoryMembers("What is Caroline's identity?")).toEqual([]);
    expect(categoryMembers("")).toEqual([]);
  });

  it("leaves out members the question already says", () => {
    const m = categoryMembers("What instruments besides the piano does she play?");
    expect(m).toContain("violin");
    expect(m).not.toContain("piano");
  });

  it("adds a weighted second list to the first, per item", () => {
    const h = (rowid: number, rank: number) => ({ row: { rowid }, rank });
    expect(addRanks([h(1, -4), h(2, -3)], [h(2, -4), h(3, -1)], 0.5, "lower")).toEqual([h(2, -5), h(1, -4), h(3, -0.5)]);
    expect(addRanks([h(1, 4), h(2, 3)], [h(2, 4)], 0.5, "higher")).toEqual([h(2, 5), h(1, 4)]);
  });
});

describe("category channel in search", () => {
  it("brings the member turn into the results, and only with the channel on", async () => {
    const dir = tempDir();
    const texts = [
      "Melanie: I have been practising the violin every evening",
      ...Array.from({ length: 60 }, (_, i) => `Melanie: note ${i} about the garden and the weather`),
      "Caroline: which song do you play for the kids?",
    ];
    const seed = async (m: ReturnType<typeof openTestMemory>) =>
      seedMemories(m, texts.length, (i) => ({ scope: req(), level: "user", kind: "note", content: texts[i]!, at: T0 + i }));
    const on = openTestMemory(dir, "on.db");
    const off = openTestMemory(dir, "off.db", { ...DEFAULT_CHANNELS, categories: false });
    await seed(on);
    await seed(off);
    const question = "What instruments does Melanie play?";
    const found = async (m: ReturnType<typeof openTestMemory>) =>
      (await m.service.search({ thread: req() }, { query: question, limit: 10 })).some((h) => h.record.content.includes("violin"));
    expect(await found(on)).toBe(true);
    expect(await found(off)).toBe(false);
    on.close();
    off.close();
  });
});

// Behaviour every RapUserChoiceStore must have (stores/sqlite/rap-user-choices.ts is the reference).
import { describe, expect, it } from "vitest";
import { useCatalog, type CatalogFactory } from "./catalog-harness.js";

const q = (choiceId: string, prompt = "Publish?") => ({ toolset: "skills", choiceId, groupId: "g1", prompt, choices: ["Yes", "No"] });

export function userChoicesConformance(name: string, factory: CatalogFactory): void {
  describe(`${name}: RAP user choices conformance`, () => {
    const c = useCatalog(factory);

    it("asks, answers once, and keeps the answer", async () => {
      const s = await c.fresh();
      expect(await s.userChoices.get("skills", "c1")).toBeNull();
      await s.userChoices.ask(q("c1"), 100);
      expect(await s.userChoices.get("skills", "c1")).toEqual({
        ...q("c1"),
        status: "waiting",
        selected: null,
        createdAt: 100,
        answeredAt: null,
      });
      expect(await s.userChoices.answer("skills", "c1", 1, 200)).toBe(true);
      expect(await s.userChoices.answer("skills", "c1", 0, 300)).toBe(false);
      expect(await s.userChoices.get("skills", "c1")).toMatchObject({ status: "answered", selected: 1, answeredAt: 200 });
      expect(await s.userChoices.answer("skills", "nope", 0, 300)).toBe(false);
      expect(await s.userChoices.get("other", "c1")).toBeNull();
    });

    it("asking again under the same id replaces the question and clears the answer", async () => {
      const s = await c.fresh();
      await s.userChoices.ask(q("c1"), 100);
      await s.userChoices.answer("skills", "c1", 0, 150);
      await s.userChoices.ask({ ...q("c1", "Really publish?"), choices: ["A", "B", "C"] }, 200);
      expect(await s.userChoices.get("skills", "c1")).toMatchObject({ prompt: "Really publish?", choices: ["A", "B", "C"], status: "waiting", selected: null, createdAt: 200, answeredAt: null });
    });

    it("dismisses only a waiting question, and removes it", async () => {
      const s = await c.fresh();
      await s.userChoices.ask(q("d"), 1);
      await s.userChoices.dismiss("skills", "d", 2);
      expect(await s.userChoices.get("skills", "d")).toMatchObject({ status: "dismissed", answeredAt: 2 });
      expect(await s.userChoices.answer("skills", "d", 0, 3)).toBe(false);
      await s.userChoices.ask(q("a"), 1);
      await s.userChoices.answer("skills", "a", 1, 2);
      await s.userChoices.dismiss("skills", "a", 3);
      expect(await s.userChoices.get("skills", "a")).toMatchObject({ status: "answered", selected: 1 });
      await s.userChoices.remove("skills", "a");
      expect(await s.userChoices.get("skills", "a")).toBeNull();
      await s.userChoices.remove("skills", "never");
    });

    it("finds questions by their prompt's text and replaces a prompt, keeping choices, status and answer", async () => {
      const s = await c.fresh();
      await s.userChoices.ask({ ...q("f", "Forget 1 memory?\n• The Vault code is QUOKKA-1"), toolset: "memory" }, 1);
      await s.userChoices.ask(q("p"), 1);
      await s.userChoices.answer("memory", "f", 0, 2);
      expect(await s.userChoices.promptsMentioning(["absent", "quokka"])).toEqual([{ toolset: "memory", choiceId: "f", prompt: "Forget 1 memory?\n• The Vault code is QUOKKA-1" }]);
      expect(await s.userChoices.promptsMentioning([""])).toHaveLength(2);
      await s.userChoices.replacePrompt("memory", "f", "(withheld)");
      expect(await s.userChoices.get("memory", "f")).toMatchObject({ prompt: "(withheld)", choices: ["Yes", "No"], status: "answered", selected: 0, answeredAt: 2 });
      expect(await s.userChoices.promptsMentioning(["quokka"])).toEqual([]);
    });

    it("an answer written through one handle is seen through another (another process)", async () => {
      const [a, b] = await c.freshPair(2);
      await a!.userChoices.ask(q("x"), 1);
      expect(await b!.userChoices.answer("skills", "x", 0, 2)).toBe(true);
      expect(await a!.userChoices.get("skills", "x")).toMatchObject({ status: "answered", selected: 0 });
    });
  });
}

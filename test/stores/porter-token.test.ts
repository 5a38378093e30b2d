// The planner's fast path (stores/sqlite/porter-token.ts) must give exactly the token FTS5's
// `porter unicode61` tokenizer gives, or a query word's document frequency would be read for the
// wrong token and the word dropped from the plan as absent.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { plainWordToken } from "../../stores/sqlite/porter-token.js";
import { FtsPlanner } from "../../stores/sqlite/fts-planner.js";
import { openDatabase } from "../../stores/sqlite/database.js";

const ROOT = join(import.meta.dirname, "..", "..");

/** Every word of the project's own prose and code (tens of thousands of distinct English words and identifiers). */
function projectWords(): string[] {
  const words = new Set<string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === "node_modules" || name === "dist" || name.startsWith(".")) continue;
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|md)$/u.test(name)) for (const w of readFileSync(p, "utf8").match(/[A-Za-z0-9]+/gu) ?? []) words.add(w);
    }
  };
  for (const d of ["core", "stores", "docs", "toolsets", "context-hook", "cli", "test"]) walk(join(ROOT, d));
  words.add("README");
  return [...words];
}

/** English endings the Porter steps handle, on a spread of stems. */
function inflections(): string[] {
  const stems = ["relate", "condition", "hope", "happy", "run", "fall", "agree", "cry", "generous", "formal", "sensitive", "adopt", "control", "roll", "feed", "sky", "motor", "electric", "hope", "rational", "valence", "digit", "conform", "radical", "different", "vile", "analog", "vietnam", "predicate", "operate", "homolog", "effect", "bowdler", "adjust", "depend", "irritant", "replace", "adopt", "communism", "activate", "angular", "homologous", "effective", "bowdlerize", "probate", "rate", "cease", "controll", "roll", "gener", "ski", "news", "sing", "tie", "die"];
  const ends = ["", "s", "es", "ies", "ss", "ed", "ing", "ational", "tional", "enci", "anci", "izer", "bli", "alli", "entli", "eli", "ousli", "ization", "ation", "ator", "alism", "iveness", "fulness", "ousness", "aliti", "iviti", "biliti", "logi", "icate", "ative", "alize", "iciti", "ical", "ful", "ness", "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize", "e", "ll", "y", "ly", "eed", "edly", "ingly"];
  return stems.flatMap((s) => ends.map((e) => s + e));
}

describe("plain word tokens", () => {
  it("equal FTS5's porter unicode61 token for every word of the project and a sweep of English endings", () => {
    const words = [...new Set([...projectWords(), ...inflections(), "A", "I", "x1", "2024", "3rd", "mp3s", "COVID19", "a".repeat(40)])];
    expect(words.length).toBeGreaterThan(5000);
    const db = new Database(":memory:");
    db.exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61 remove_diacritics 2');
      CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');`);
    const ins = db.prepare(`INSERT INTO t (rowid, x) VALUES (?, ?)`);
    db.transaction(() => words.forEach((w, i) => ins.run(i + 1, w)))();
    const fts = new Map<number, string[]>();
    for (const r of db.prepare(`SELECT doc, term FROM v`).all() as { doc: number; term: string }[]) (fts.get(r.doc) ?? fts.set(r.doc, []).get(r.doc)!).push(r.term);
    const differ: string[] = [];
    let fast = 0;
    words.forEach((w, i) => {
      const tok = plainWordToken(w);
      if (tok === null) return;
      fast++;
      const want = fts.get(i + 1) ?? [];
      if (want.length !== 1 || want[0] !== tok) differ.push(`${w}: fts ${want.join(",")} / fast ${tok}`);
    });
    expect(differ).toEqual([]);
    // only words past the fast path's length go to the scratch table
    expect(fast).toBe(words.filter((w) => w.length <= 40).length);
    db.close();
  });

  it("leave everything but plain ASCII words to the real tokenizer", () => {
    for (const w of ["café", "naïve", "don't", "e-mail", "日本語", "", " ", "a b", "\u212A" /* Kelvin sign: lower-cases to an ASCII k */, "x".repeat(41)]) expect(plainWordToken(w)).toBeNull();
    expect(plainWordToken("Running")).toBe("run");
  });

  it("give the planner the same tokens as its scratch table, with or without the fast path", () => {
    const db = openDatabase(":memory:");
    const planner = new FtsPlanner(db);
    const texts = ["Running", "café", "generously", "don't", "Tokyo2024", "naïvely"];
    expect(planner.tokenize(texts)).toEqual([["run"], ["cafe"], ["gener"], ["don", "t"], ["tokyo2024"], ["naiv"]]);
    db.close();
  });
});

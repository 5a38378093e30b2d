// Question cues: the speaker a question names, the period it names and the kind of answer it
// wants, each parsed purely and then applied by the SQLite store to the word hits.
import { describe, expect, it } from "vitest";
import { answerKind, holdsAnswer } from "../../core/retrieval/answer-type.js";
import { analyzeQuery } from "../../core/retrieval/analyze.js";
import { applyCues, cueFactors, DEFAULT_CUES, queryCues } from "../../core/retrieval/cues.js";
import { DATE_GRACE_DAYS, inWindows, queryDateWindows } from "../../core/retrieval/dates.js";
import { askedSpeaker, speakerOf } from "../../core/retrieval/speaker.js";
import { visibilityKey } from "../../core/memory/scope.js";
import type { NewMemory, RecordScope } from "../../core/memory/record.js";
import { openDatabase } from "../../stores/sqlite/database.js";
import { SqliteMemoryStore } from "../../stores/sqlite/memory-store.js";
import { mem as record } from "../stores/memory-conformance.js";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 20);

describe("speaker cue", () => {
  it("reads the speaker a transcript line opens with, and only there", () => {
    expect(speakerOf("Jon: I lost my job")).toBe("jon");
    expect(speakerOf("Mary Ann: hello")).toBe("mary");
    expect(speakerOf("  Zoë: salut")).toBe("zoë");
    expect(speakerOf("I told Jon: no")).toBeNull();
    expect(speakerOf("jon: lower-case is not a name")).toBeNull();
    expect(speakerOf("Note:missing space")).toBeNull();
  });

  it("asks about a speaker only when the question names exactly one of the candidates' speakers", () => {
    const speakers = ["jon", "gina", null, "jon"];
    expect(askedSpeaker(["jon", "studio"], speakers)).toBe("jon");
    expect(askedSpeaker(["jon", "gina", "share"], speakers)).toBeNull();
    expect(askedSpeaker(["paris"], speakers)).toBeNull();
    // a name that is no candidate's speaker is just a word
    expect(askedSpeaker(["maria"], speakers)).toBeNull();
  });

  it("of two named speakers asks about the one named first, unless the question joins them", () => {
    const speakers = ["jon", "gina"];
    const asked = (q: string) => askedSpeaker(analyzeQuery(q).terms, speakers, q);
    expect(asked("What does Gina think about Jon's decision to adopt?")).toBe("gina");
    expect(asked("Which cities does Jon mention visiting to Gina?")).toBe("jon");
    expect(asked("What do Jon and Gina both like?")).toBeNull();
    expect(asked("Who is Gina and Jon's favourite player?")).toBeNull();
    expect(asked("Did Jon, Gina or Ana go?")).toBeNull();
    // a name inside a longer word is not the name
    expect(asked("What did Jonathan tell Gina about Jon?")).toBe("gina");
  });

  it("the cue factors use the question's subject when it names both speakers", () => {
    const q = "What does Gina think about Jon's new studio?";
    const f = cueFactors(queryCues(q, analyzeQuery(q).terms, NOW), [
      { content: "Gina: the studio looks great", validFrom: null },
      { content: "Jon: my new studio opens soon", validFrom: null },
    ]);
    expect(f).toEqual([1 + DEFAULT_CUES.speaker, 1]);
  });
});

describe("date cue", () => {
  it("parses day, month-year and ISO dates into windows that reach past the period by the grace", () => {
    const [d] = queryDateWindows("What did Maria do on 3 June, 2023?", NOW);
    expect(d).toEqual({ from: Date.UTC(2023, 5, 3) - DAY, to: Date.UTC(2023, 5, 3) + (DATE_GRACE_DAYS + 1) * DAY });
    expect(queryDateWindows("Who called on May 23, 2023?", NOW)[0]!.from).toBe(Date.UTC(2023, 4, 22));
    expect(queryDateWindows("the 2023-10-13 meeting", NOW)[0]!.from).toBe(Date.UTC(2023, 9, 12));
    const [m] = queryDateWindows("What setback came in October 2023?", NOW);
    expect(m).toEqual({ from: Date.UTC(2023, 9, 1), to: Date.UTC(2023, 10, 1) + DATE_GRACE_DAYS * DAY });
    // one window per phrase: "3 June, 2023" is not also read as "June, 2023"
    expect(queryDateWindows("on 3 June, 2023", NOW)).toHaveLength(1);
  });

  it("reads a bare month only after a preposition, in this year and the last", () => {
    const w = queryDateWindows("When did Melanie go camping in June?", NOW);
    expect(w.map((x) => new Date(x.from).toISOString().slice(0, 7))).toEqual(["2026-06", "2025-06"]);
    expect(queryDateWindows("May I ask what Jon said?", NOW)).toEqual([]);
    expect(queryDateWindows("What did April say about March madness?", NOW)).toEqual([]);
    expect(queryDateWindows("Which year was it? 2023", NOW)).toEqual([]);
  });

  it("names no window for a running total up to a date ('as of', 'by', 'until')", () => {
    expect(queryDateWindows("How many pets will Andrew have, as of December 2023?", NOW)).toEqual([]);
    expect(queryDateWindows("How many tournaments has Nate won by July 10, 2022?", NOW)).toEqual([]);
    expect(queryDateWindows("What had she finished until 3 June 2023?", NOW)).toEqual([]);
    expect(queryDateWindows("What will be done by March?", NOW)).toEqual([]);
    // the date on its own, and a period the question is in, still name one
    expect(queryDateWindows("What did Andrew do in December 2023?", NOW)).toHaveLength(1);
    expect(queryDateWindows("What did he buy by the lake on 3 June 2023?", NOW)).toHaveLength(1);
  });

  it("measures relative phrases back from now", () => {
    const [w] = queryDateWindows("what did I decide yesterday", NOW);
    expect(inWindows(NOW - DAY, [w!])).toBe(true);
    expect(inWindows(NOW - 5 * DAY, [w!])).toBe(false);
    expect(inWindows(null, [w!])).toBe(false);
    expect(queryDateWindows("what happened last weekend", NOW)).toEqual([]);
  });
});

describe("answer-kind cue", () => {
  it("knows when and how-many questions, and which texts answer them", () => {
    expect(answerKind("When did Jon open his studio?")).toBe("time");
    expect(answerKind("What year did she move?")).toBe("time");
    expect(answerKind("How often does Audrey go to the park?")).toBe("amount");
    expect(answerKind("Why did Gina start a store?")).toBeNull();
    expect(holdsAnswer("time", "I went there yesterday")).toBe(true);
    expect(holdsAnswer("time", "We met last Friday")).toBe(true);
    expect(holdsAnswer("time", "I've had them for 3 years")).toBe(true);
    expect(holdsAnswer("time", "The studio looks great")).toBe(false);
    expect(holdsAnswer("time", "I met back up with my teammates on the 15th")).toBe(true);
    expect(holdsAnswer("time", "I joined a new group last Tues")).toBe(true);
    expect(holdsAnswer("time", "We moved here a few years back")).toBe(true);
    expect(holdsAnswer("time", "I sat in the sun")).toBe(false);
    expect(holdsAnswer("amount", "twice a week")).toBe(true);
    expect(holdsAnswer("amount", "I have 4 dogs")).toBe(true);
    expect(holdsAnswer("amount", "they are cute")).toBe(false);
    expect(answerKind("Which cities has Jon visited?")).toBe("place");
    expect(answerKind("Where did Joanna travel in July?")).toBe("place");
    expect(holdsAnswer("place", "Took a short trip last week to Rome")).toBe(true);
    expect(holdsAnswer("place", "I went to the gym")).toBe(false);
  });

  it("knows a when-question about the future, and answers it with a future time expression", () => {
    expect(answerKind("When is Andrew going to go hiking with Audrey?")).toBe("plan");
    expect(answerKind("When does John plan on traveling with his team?")).toBe("plan");
    expect(answerKind("When did Joanna plan to visit Nate?")).toBe("plan");
    expect(answerKind("When will Tim leave for Ireland?")).toBe("plan");
    expect(answerKind("When is Nate hosting a gaming party?")).toBe("plan");
    // the past, and "when is" without a verb in -ing, stay time questions
    expect(answerKind("When did Andrew go hiking?")).toBe("time");
    expect(answerKind("When is Melanie's daughter's birthday?")).toBe("time");
    expect(answerKind("When was Jon planning his trip?")).toBe("time");
    expect(holdsAnswer("plan", "Let's do it next month when the weather is nicer")).toBe(true);
    expect(holdsAnswer("plan", "Alright, see you tomorrow!")).toBe(true);
    expect(holdsAnswer("plan", "We're heading there in a few weeks")).toBe(true);
    expect(holdsAnswer("plan", "I'll be there on Saturday")).toBe(true);
    // a past time is no answer to when something will be
    expect(holdsAnswer("plan", "We went hiking last month")).toBe(false);
    expect(holdsAnswer("plan", "I adopted him 3 years ago")).toBe(false);
  });

  it("reads a place question whose place noun is qualified, and an acronym as a place", () => {
    expect(answerKind("What European countries has Maria been to?")).toBe("place");
    expect(answerKind("Which US cities does John mention visiting?")).toBe("place");
    expect(answerKind("What areas of the U.S. has John been to?")).toBe("place");
    expect(answerKind("What books has Tim read?")).not.toBe("place");
    expect(holdsAnswer("place", "I went to a castle during my trip to the UK last Friday")).toBe(true);
    // one capital letter is a word ("I"), not a place
    expect(holdsAnswer("place", "When I went in I saw it")).toBe(false);
  });

  it("a country, state or city it knows is a place wherever it stands, when written as a name", () => {
    expect(holdsAnswer("place", "a gift from my grandma in my home country, Sweden")).toBe(true);
    expect(holdsAnswer("place", "Florida was warm and the beach was lovely")).toBe(true);
    // lower case it is another word ("turkey" for dinner), and an unknown capitalised word is no place
    expect(holdsAnswer("place", "we had turkey and pie")).toBe(false);
    expect(holdsAnswer("place", "Grandma made pie")).toBe(false);
  });

  it("knows a question asking for a book, film, game or song, and a text naming a title", () => {
    expect(answerKind("What books has Tim read?")).toBe("title");
    expect(answerKind("Which two fantasy novels does Tim particularly enjoy writing about?")).toBe("title");
    expect(answerKind("What video games does Nate play?")).toBe("title");
    expect(answerKind("What kind of films does Joanna enjoy?")).toBe("title");
    expect(answerKind("What is Nate's favorite movie trilogy?")).toBe("title");
    // a verb is no qualifier, "play" is no work, and a work in passing asks for no title
    expect(answerKind("What instruments does Melanie play?")).toBeNull();
    expect(answerKind("What did Melanie do after the movie?")).toBeNull();
    expect(answerKind("Did she read a book?")).toBeNull();
    expect(holdsAnswer("title", "Tim: For sure! Harry Potter and Game of Thrones are amazing")).toBe(true);
    expect(holdsAnswer("title", 'Nate: I watched "Little Women" recently')).toBe(true);
    expect(holdsAnswer("title", "Nate: I watched “The Lord of the Rings” last night")).toBe(true);
    // a greeting in front of a name, a single capitalised word, a sentence start: no title
    expect(holdsAnswer("title", "Joanna: Hey Nate! Thanks Nate, How are you?")).toBe(false);
    expect(holdsAnswer("title", "Nate: I love this series. It has adventures and Magic")).toBe(false);
  });
});

describe("cue factors", () => {
  it("adds one weight per cue a candidate fits, and nothing for a question without cues", () => {
    const question = "When did Jon open the studio in May 2023?";
    const cues = queryCues(question, analyzeQuery(question).terms, NOW);
    const may = Date.UTC(2023, 4, 12);
    const f = cueFactors(cues, [
      { content: "Jon: opened it last week", validFrom: may },
      { content: "Gina: Jon, the studio!", validFrom: may },
      { content: "Jon: the studio", validFrom: null },
    ]);
    expect(f[0]).toBeCloseTo(1 + DEFAULT_CUES.speaker + DEFAULT_CUES.date + DEFAULT_CUES.time);
    expect(f[1]).toBeCloseTo(1 + DEFAULT_CUES.date);
    expect(f[2]).toBeCloseTo(1 + DEFAULT_CUES.speaker);
    const plain = queryCues("studio plans", ["studio", "plans"], NOW);
    expect(cueFactors(plain, [{ content: "Jon: studio plans", validFrom: may }])).toEqual([1]);
  });

  it("re-sorts in the store's score direction with a deterministic tie order", () => {
    const cues = queryCues("When?", [], NOW);
    const row = (rowid: number, content: string) => ({ rowid, content, valid_from: null });
    const hits = [
      { rank: -2, row: row(1, "no time here") },
      { rank: -1.7, row: row(2, "done yesterday") },
      { rank: -1.7, row: row(3, "also yesterday") },
    ];
    expect(applyCues(hits, cues, "lower").map((h) => h.row.rowid)).toEqual([2, 3, 1]);
    const up = hits.map((h) => ({ ...h, rank: -h.rank }));
    expect(applyCues(up, cues, "higher").map((h) => h.row.rowid)).toEqual([2, 3, 1]);
  });
});

describe("cues in the SQLite store", () => {
  const scope: RecordScope = { level: "user", user: "alice", project: null, session: null, thread: null };
  const mem = (content: string, validFrom: number | null, s: RecordScope = scope): NewMemory => record(content, { scope: s, kind: "note", validFrom });

  it("the cues channel turns the order; off, the word scores decide", async () => {
    const question = "When did Jon open the dance studio in May 2023?";
    const order = async (cues: boolean) => {
      const db = openDatabase(":memory:");
      // semantic off: the cue alone decides the order
      const store = new SqliteMemoryStore(db, { cues, semantic: false });
      const addressing = mem("Gina: Jon, dance studio open?", Date.UTC(2023, 1, 10));
      // long enough that its word score alone ranks it second (bm25 favours the short turn)
      const answer = mem("Jon: our dance studio open day was last week, finally, after months of paperwork", Date.UTC(2023, 4, 12));
      const filler = ["Gina: the store sells hoodies", "Jon: I lost my job as a banker", "Gina: never give up", "Jon: Paris was lovely"];
      for (const r of [addressing, answer, ...filler.map((t) => mem(t, null))]) {
        await store.insert(r, { at: NOW, actor: "t", action: "create", targetKind: "memory", targetId: r.id, detail: {} });
      }
      const hits = await store.search({
        visibility: { keys: [visibilityKey(scope)] },
        query: analyzeQuery(question),
        text: question,
        statuses: ["active"],
        includeFlagged: false,
        now: NOW,
        limit: 2,
      });
      store.close();
      const names = new Map([[addressing.id, "addressing"], [answer.id, "answer"]]);
      return hits.map((h) => names.get(h.record.id));
    };
    expect(await order(true)).toEqual(["answer", "addressing"]);
    expect(await order(false)).toEqual(["addressing", "answer"]);
  });

  it("a question about a plan prefers the turn that says when it will be, over one that says when it was", async () => {
    const question = "When is Andrew going to go hiking with Audrey?";
    const db = openDatabase(":memory:");
    const store = new SqliteMemoryStore(db, { semantic: false });
    const past = mem("Andrew: Audrey, hiking with you last month was great, that view was hiking heaven", null);
    const plan = mem("Andrew: I'm down for a hike with you, Audrey. Let's do it next month", null);
    const filler = ["Audrey: my dogs love the park", "Andrew: the city is loud", "Audrey: new collars for the pups", "Andrew: I tried a new recipe"];
    for (const r of [past, plan, ...filler.map((t) => mem(t, null))]) {
      await store.insert(r, { at: NOW, actor: "t", action: "create", targetKind: "memory", targetId: r.id, detail: {} });
    }
    const search = (text: string) =>
      store.search({ visibility: { keys: [visibilityKey(scope)] }, query: analyzeQuery(text), text, statuses: ["active"], includeFlagged: false, now: NOW, limit: 2 });
    const names = new Map([[past.id, "past"], [plan.id, "plan"]]);
    expect((await search(question)).map((h) => names.get(h.record.id))).toEqual(["plan", "past"]);
    // asked about the past, the turn that says when it was comes first
    expect((await search("When did Andrew go hiking with Audrey?")).map((h) => names.get(h.record.id))).toEqual(["past", "plan"]);
    store.close();
  });

  it("a question asking for a book prefers the turn that names one", async () => {
    const question = "What fantasy books does Tim like?";
    const order = async (cues: boolean) => {
      const db = openDatabase(":memory:");
      const store = new SqliteMemoryStore(db, { cues, semantic: false });
      const talk = mem("Tim: fantasy books are my thing, I like fantasy a lot", null);
      const answer = mem("Tim: Harry Potter and Game of Thrones are the fantasy books I like", null);
      const filler = ["John: basketball practice today", "Tim: my English class was hard", "John: we won the game", "Tim: I visited a travel agency"];
      for (const r of [talk, answer, ...filler.map((t) => mem(t, null))]) {
        await store.insert(r, { at: NOW, actor: "t", action: "create", targetKind: "memory", targetId: r.id, detail: {} });
      }
      const hits = await store.search({ visibility: { keys: [visibilityKey(scope)] }, query: analyzeQuery(question), text: question, statuses: ["active"], includeFlagged: false, now: NOW, limit: 2 });
      store.close();
      const names = new Map([[talk.id, "talk"], [answer.id, "answer"]]);
      return hits.map((h) => names.get(h.record.id));
    };
    expect(await order(true)).toEqual(["answer", "talk"]);
    expect(await order(false)).toEqual(["talk", "answer"]);
  });
});

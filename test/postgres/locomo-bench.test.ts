// `bench locomo --pg URL`: the same benchmark on PostgreSQL, in a database of its own that is
// dropped afterwards. The conversation is a small made-up one in LoCoMo's format.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { expect, it } from "vitest";
import { runLocomo } from "../../bench/locomo.js";
import { describePg } from "../helpers/postgres.js";
import { tempDir } from "../helpers/tmp.js";

function tinyLocomo(): string {
  const turns = (n: number, lines: [string, string][]) => lines.map(([speaker, text], i) => ({ speaker, dia_id: `D${n}:${i + 1}`, text }));
  const conv = {
    sample_id: "conv-x",
    conversation: {
      speaker_a: "Mia",
      speaker_b: "Leo",
      session_1_date_time: "3:00 pm on 4 March, 2024",
      session_1: turns(1, [
        ["Mia", "Hi Leo! I finally adopted a grey cat from the shelter."],
        ["Leo", "Great news! What did you name her?"],
        ["Mia", "Her name is Pebble, she loves the windowsill."],
        ["Leo", "I spent the weekend repairing my old bicycle."],
      ]),
      session_2_date_time: "10:00 am on 9 April, 2024",
      session_2: turns(2, [
        ["Leo", "The bicycle works again, I rode it to the lake."],
        ["Mia", "Pebble knocked a plant off the shelf this morning."],
        ["Leo", "Cats do that. Did the plant survive?"],
        ["Mia", "Barely, I repotted it in a bigger clay pot."],
      ]),
    },
    qa: [
      { question: "What is the name of Mia's cat?", evidence: ["D1:3"], category: 4 },
      { question: "Where did Leo ride his bicycle?", evidence: ["D2:1"], category: 4 },
      { question: "When did Mia adopt a cat?", evidence: ["D1:1"], category: 2 },
    ],
  };
  const file = join(tempDir(), "tiny-locomo.json");
  writeFileSync(file, JSON.stringify([conv]));
  return file;
}

describePg("bench locomo on PostgreSQL", (url) => {
  it("scores the same questions as on SQLite, says which engine ran, and drops its database", async () => {
    const data = tinyLocomo();
    const onPg = await runLocomo({ data, ks: [1, 5], pgUrl: url() });
    const onSqlite = await runLocomo({ data, ks: [1, 5] });
    expect(onPg.engine).toBe("postgres");
    expect(onSqlite.engine).toBe("sqlite");
    expect(onPg.questions).toBe(3);
    expect(onPg.ingest.memories).toBe(8);
    expect(onPg.recall[5]).toBe(100);
    expect(onSqlite.recall[5]).toBe(100);
    const admin = new pg.Client({ connectionString: url() });
    await admin.connect();
    try {
      const left = await admin.query(`SELECT datname FROM pg_database WHERE datname LIKE 'locomo_%'`);
      expect(left.rows).toEqual([]);
    } finally {
      await admin.end();
    }
  });

  it("refuses a context-prefix run on PostgreSQL before creating anything", async () => {
    await expect(runLocomo({ data: tinyLocomo(), ks: [5], pgUrl: url(), prefixBudget: 500 })).rejects.toThrow(/SQLite only/);
  });
});

// A small made-up conversation in LoCoMo's format (two sessions, three questions), written to a
// temporary file: the benchmark's tests never read the real data set.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./tmp.js";

export function tinyLocomo(): string {
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

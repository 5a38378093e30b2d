// SQLite store of questions asked through RAP `user_choice` (table rap_user_choices). An answer
// outlives a crash of the asking process: the re-run call finds it and does not ask twice.
import type Database from "better-sqlite3";
import type { RapUserChoiceRecord, RapUserChoiceStatus, RapUserChoiceStore } from "../traits.js";
import type { Db } from "./database.js";

interface Row {
  choice_id: string;
  toolset: string;
  group_id: string;
  prompt: string;
  choices: string;
  status: RapUserChoiceStatus;
  selected: number | null;
  created_at: number;
  answered_at: number | null;
}

export class SqliteRapUserChoices implements RapUserChoiceStore {
  private readonly upsert: Database.Statement;
  private readonly select: Database.Statement;
  private readonly answered: Database.Statement;
  private readonly dismissed: Database.Statement;
  private readonly del: Database.Statement;
  private readonly mentioning: Database.Statement;
  private readonly reprompt: Database.Statement;

  constructor(db: Db) {
    this.upsert = db.prepare(
      `INSERT INTO rap_user_choices (choice_id, toolset, group_id, prompt, choices, status, created_at)
       VALUES (@choiceId, @toolset, @groupId, @prompt, @choices, 'waiting', @at)
       ON CONFLICT (toolset, choice_id) DO UPDATE SET
         group_id = excluded.group_id, prompt = excluded.prompt, choices = excluded.choices,
         status = 'waiting', selected = NULL, created_at = excluded.created_at, answered_at = NULL`,
    );
    this.select = db.prepare(`SELECT * FROM rap_user_choices WHERE toolset = ? AND choice_id = ?`);
    this.answered = db.prepare(
      `UPDATE rap_user_choices SET status = 'answered', selected = @selected, answered_at = @at
       WHERE toolset = @toolset AND choice_id = @choiceId AND status = 'waiting'`,
    );
    this.dismissed = db.prepare(
      `UPDATE rap_user_choices SET status = 'dismissed', answered_at = @at
       WHERE toolset = @toolset AND choice_id = @choiceId AND status = 'waiting'`,
    );
    this.del = db.prepare(`DELETE FROM rap_user_choices WHERE toolset = ? AND choice_id = ?`);
    // a handful of rows (questions of calls still running); LIKE ignores ASCII case, and a probe
    // is ASCII letters and digits: nothing to escape
    this.mentioning = db.prepare(
      `SELECT toolset, choice_id, prompt FROM rap_user_choices WHERE EXISTS (SELECT 1 FROM json_each(@likes) WHERE prompt LIKE value)`,
    );
    this.reprompt = db.prepare(`UPDATE rap_user_choices SET prompt = @prompt WHERE toolset = @toolset AND choice_id = @choiceId`);
  }

  async ask(
    c: { toolset: string; choiceId: string; groupId: string; prompt: string; choices: string[] },
    at: number,
  ): Promise<void> {
    const { toolset, choiceId, groupId, prompt } = c;
    this.upsert.run({ toolset, choiceId, groupId, prompt, choices: JSON.stringify(c.choices), at });
  }

  async get(toolset: string, choiceId: string): Promise<RapUserChoiceRecord | null> {
    const r = this.select.get(toolset, choiceId) as Row | undefined;
    if (!r) return null;
    return {
      toolset: r.toolset,
      choiceId: r.choice_id,
      groupId: r.group_id,
      prompt: r.prompt,
      choices: JSON.parse(r.choices) as string[],
      status: r.status,
      selected: r.selected,
      createdAt: r.created_at,
      answeredAt: r.answered_at,
    };
  }

  async answer(toolset: string, choiceId: string, selected: number, at: number): Promise<boolean> {
    return this.answered.run({ toolset, choiceId, selected, at }).changes === 1;
  }

  async dismiss(toolset: string, choiceId: string, at: number): Promise<void> {
    this.dismissed.run({ toolset, choiceId, at });
  }

  async remove(toolset: string, choiceId: string): Promise<void> {
    this.del.run(toolset, choiceId);
  }

  async promptsMentioning(probes: string[]): Promise<{ toolset: string; choiceId: string; prompt: string }[]> {
    const rows = this.mentioning.all({ likes: JSON.stringify(probes.map((p) => `%${p}%`)) }) as Pick<Row, "toolset" | "choice_id" | "prompt">[];
    return rows.map((r) => ({ toolset: r.toolset, choiceId: r.choice_id, prompt: r.prompt }));
  }

  async replacePrompt(toolset: string, choiceId: string, prompt: string): Promise<void> {
    this.reprompt.run({ toolset, choiceId, prompt });
  }
}

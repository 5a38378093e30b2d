// PostgreSQL store of questions asked through RAP `user_choice` (table rap_user_choices).
import type { Pool } from "pg";
import type { RapUserChoiceRecord, RapUserChoiceStatus, RapUserChoiceStore } from "../traits.js";
import { num, numOrNull } from "./rows.js";

interface Row {
  choice_id: string;
  toolset: string;
  group_id: string;
  prompt: string;
  choices: string;
  status: RapUserChoiceStatus;
  selected: number | null;
  created_at: string | number;
  answered_at: string | number | null;
}

export class PgRapUserChoices implements RapUserChoiceStore {
  constructor(private readonly pool: Pool) {}

  async ask(c: { toolset: string; choiceId: string; groupId: string; prompt: string; choices: string[] }, at: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO rap_user_choices (choice_id, toolset, group_id, prompt, choices, status, created_at)
       VALUES ($1, $2, $3, $4, $5, 'waiting', $6)
       ON CONFLICT (toolset, choice_id) DO UPDATE SET
         group_id = excluded.group_id, prompt = excluded.prompt, choices = excluded.choices,
         status = 'waiting', selected = NULL, created_at = excluded.created_at, answered_at = NULL`,
      [c.choiceId, c.toolset, c.groupId, c.prompt, JSON.stringify(c.choices), at],
    );
  }

  async get(toolset: string, choiceId: string): Promise<RapUserChoiceRecord | null> {
    const r = (await this.pool.query<Row>(`SELECT * FROM rap_user_choices WHERE toolset = $1 AND choice_id = $2`, [toolset, choiceId])).rows[0];
    if (!r) return null;
    return {
      toolset: r.toolset,
      choiceId: r.choice_id,
      groupId: r.group_id,
      prompt: r.prompt,
      choices: JSON.parse(r.choices) as string[],
      status: r.status,
      selected: r.selected,
      createdAt: num(r.created_at),
      answeredAt: numOrNull(r.answered_at),
    };
  }

  async answer(toolset: string, choiceId: string, selected: number, at: number): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE rap_user_choices SET status = 'answered', selected = $3, answered_at = $4
       WHERE toolset = $1 AND choice_id = $2 AND status = 'waiting'`,
      [toolset, choiceId, selected, at],
    );
    return r.rowCount === 1;
  }

  async dismiss(toolset: string, choiceId: string, at: number): Promise<void> {
    await this.pool.query(
      `UPDATE rap_user_choices SET status = 'dismissed', answered_at = $3
       WHERE toolset = $1 AND choice_id = $2 AND status = 'waiting'`,
      [toolset, choiceId, at],
    );
  }

  async remove(toolset: string, choiceId: string): Promise<void> {
    await this.pool.query(`DELETE FROM rap_user_choices WHERE toolset = $1 AND choice_id = $2`, [toolset, choiceId]);
  }

  async promptsMentioning(probes: string[]): Promise<{ toolset: string; choiceId: string; prompt: string }[]> {
    const r = await this.pool.query<Pick<Row, "toolset" | "choice_id" | "prompt">>(
      `SELECT toolset, choice_id, prompt FROM rap_user_choices
       WHERE EXISTS (SELECT 1 FROM unnest($1::text[]) AS p WHERE strpos(lower(prompt), p) > 0)`,
      [probes],
    );
    return r.rows.map((x) => ({ toolset: x.toolset, choiceId: x.choice_id, prompt: x.prompt }));
  }

  async replacePrompt(toolset: string, choiceId: string, prompt: string): Promise<void> {
    await this.pool.query(`UPDATE rap_user_choices SET prompt = $3 WHERE toolset = $1 AND choice_id = $2`, [toolset, choiceId, prompt]);
  }
}

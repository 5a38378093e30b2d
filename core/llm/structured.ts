// Structured output: find the JSON in a model's answer, validate it, and build the one repair
// prompt. Models wrap JSON in prose or code fences, so extraction is lenient and validation strict.
import { z } from "zod";

export type Extracted = { ok: true; value: unknown } | { ok: false; reason: string };

const FENCE = /```[ \t]*([A-Za-z0-9_-]*)[^\n]*\n([\s\S]*?)```/g;

/**
 * Reasoning models behind OpenAI-compatible servers (DeepSeek-R1 on Ollama, LM Studio, vLLM
 * without a reasoning parser) write their reasoning into the answer first, as <think>…</think>:
 * a JSON-looking draft in it was taken as the answer. Only leading, closed blocks are dropped.
 */
const LEADING_REASONING = /^\s*(?:<(think|thinking|reasoning)>[\s\S]*?<\/\1>\s*)+/iu;

/** the JSON value in `text`: a fenced ```json (or bare ```) block, else the first balanced object or array */
export function extractJson(answer: string): Extracted {
  const text = answer.replace(LEADING_REASONING, "");
  for (const m of text.matchAll(FENCE)) {
    const lang = (m[1] ?? "").toLowerCase();
    if (lang !== "" && lang !== "json") continue;
    const parsed = tryParse((m[2] ?? "").trim());
    if (parsed.ok) return parsed;
  }
  for (let start = firstOpener(text, 0); start >= 0; start = firstOpener(text, start + 1)) {
    const end = balancedEnd(text, start);
    if (end < 0) continue;
    const parsed = tryParse(text.slice(start, end + 1));
    if (parsed.ok) return parsed;
  }
  return { ok: false, reason: "the answer contains no JSON object or array" };
}

function tryParse(s: string): Extracted {
  try {
    return { ok: true, value: JSON.parse(s) as unknown };
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message : String(e) };
  }
}

function firstOpener(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === "{" || c === "[") return i;
  }
  return -1;
}

/** index of the bracket closing the one at `start`, skipping strings; -1 when unbalanced */
function balancedEnd(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{") stack.push("}");
    else if (c === "[") stack.push("]");
    else if (c === "}" || c === "]") {
      if (stack.pop() !== c) return -1;
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; issues: z.core.$ZodIssue[]; summary: string };

/** extraction + zod validation; a missing or unparsable JSON value is reported as one issue */
export function parseStructured<T>(text: string, schema: z.ZodType<T>): Validated<T> {
  const extracted = extractJson(text);
  if (!extracted.ok) {
    const issue: z.core.$ZodIssue = { code: "custom", path: [], message: extracted.reason, input: text };
    return { ok: false, issues: [issue], summary: extracted.reason };
  }
  const r = schema.safeParse(extracted.value);
  if (r.success) return { ok: true, value: r.data };
  return { ok: false, issues: r.error.issues, summary: z.prettifyError(r.error) };
}

/** the schema as JSON Schema for the prompt; null when zod cannot express it */
export function schemaHint<T>(schema: z.ZodType<T>): string | null {
  try {
    return JSON.stringify(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }));
  } catch {
    return null;
  }
}

/** the prompt of the first call: the caller's prompt plus the output contract */
export function structuredPrompt<T>(prompt: string, schema: z.ZodType<T>): string {
  const hint = schemaHint(schema);
  return (
    `${prompt}\n\nAnswer with a single JSON value and nothing else` +
    (hint ? `, matching this JSON Schema:\n${hint}` : ".")
  );
}

/** the prompt of the repair call: what was asked, what came back, and why it was rejected */
export function repairPrompt(firstPrompt: string, answer: string, summary: string): string {
  return (
    `${firstPrompt}\n\nYour previous answer was:\n${answer}\n\n` +
    `It was rejected for these reasons:\n${summary}\n\n` +
    "Reply with the corrected JSON only: no prose, no code fences."
  );
}

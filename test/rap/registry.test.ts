// Tool dispatch without HTTP: argument errors phrased for the model, gates, error mapping and
// toolset checks.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CoreError } from "../../core/errors.js";
import { checkToolset, defineTool, dispatch, toolsetManifest, type ToolContext, type Toolset } from "../../toolsets/rap/registry.js";
import { RapInvocation } from "../../toolsets/rap/wire.js";
import { silentLogger } from "./helpers.js";

const remember = defineTool({
  name: "memory_remember",
  description: "Save a note.",
  input: z.strictObject({
    content: z.string().min(1).max(20),
    kind: z.enum(["fact", "note"]).optional(),
    tags: z.array(z.string()).max(2).optional(),
    confidence: z.number().min(0).max(1).optional(),
    limit: z.int().min(1).optional(),
    id: z.union([z.string(), z.number()]).optional(),
  }),
  handler: async (a) => ({ text: `saved ${a.content}` }),
});

const review = defineTool({
  name: "memory_review",
  description: "Review.",
  input: z
    .strictObject({ action: z.enum(["list", "confirm"]), ids: z.array(z.string()).optional() })
    .refine((a) => a.action === "list" || a.ids !== undefined, { message: '"ids" is required for confirm', path: ["ids"] }),
  handler: async () => ({ text: "ok" }),
});

const forget = defineTool({
  name: "memory_forget",
  description: "Forget.",
  input: z.strictObject({ id: z.string().optional(), query: z.string().optional() }).refine((a) => (a.id === undefined) !== (a.query === undefined), {
    message: 'give exactly one of "id" or "query"',
  }),
  handler: async () => ({ text: "forgotten" }),
});

function toolset(over: Partial<Toolset> = {}): Toolset {
  return { name: "memory", tools: [remember, review, forget], ...over };
}

function ctx(operation: string, args: unknown): ToolContext {
  return {
    invocation: RapInvocation.parse({ operation, arguments: args, id: "t1", callback_url: "http://x", group_id: "g" }),
    signal: new AbortController().signal,
    askUser: async () => 0,
    log: silentLogger,
  };
}

async function text(operation: string, args: unknown, ts = toolset()): Promise<string> {
  return (await dispatch(ts, ctx(operation, args))).text;
}

describe("argument errors", () => {
  it("matches the documented phrasing for a missing field", async () => {
    expect(await text("memory_remember", {})).toBe(
      'Error: invalid arguments for memory_remember: "content" is required (expected a string). Fix the arguments and call memory_remember again.',
    );
  });

  it.each([
    [{ content: "" }, '"content" must not be empty'],
    [{ content: "x".repeat(21) }, '"content" must be at most 20 characters long'],
    [{ content: "x", kind: "opinion" }, '"kind" must be one of "fact", "note"'],
    [{ content: "x", tags: ["a", "b", "c"] }, '"tags" must have at most 2 items'],
    [{ content: "x", tags: ["a", 1] }, '"tags[1]" must be a string (got number 1)'],
    [{ content: "x", confidence: 2 }, '"confidence" must be at most 1'],
    [{ content: "x", limit: 1.5 }, '"limit" must be an integer (got the number 1.5)'],
    [{ content: "x", id: true }, '"id" must be a string or a number (got boolean true)'],
    [{ content: "x", colour: "red" }, 'unknown argument "colour" (allowed: content, kind, tags, confidence, limit, id)'],
    ["just text", "arguments must be an object (got the string \"just text\")"],
  ])("explains %j", async (args, expected) => {
    const t = await text("memory_remember", args);
    expect(t.startsWith("Error: invalid arguments for memory_remember: ")).toBe(true);
    expect(t).toContain(expected);
    expect(t.endsWith("Fix the arguments and call memory_remember again.")).toBe(true);
  });

  it("uses a refinement's own message when it names the field", async () => {
    expect(await text("memory_review", { action: "confirm" })).toContain(': "ids" is required for confirm. Fix');
    expect(await text("memory_forget", {})).toContain(': give exactly one of "id" or "query". Fix');
    expect(await text("memory_review", { action: "list" })).toBe("ok");
  });

  it("refuses a NUL in any string argument before the handler, with the field and where", async () => {
    expect(await text("memory_remember", { content: "ab\u0000c" })).toBe(
      'Error: invalid arguments for memory_remember: "content" holds a NUL character (U+0000) at character 3; remove it and call memory_remember again.',
    );
    expect(await text("memory_remember", { content: "x", tags: ["ok", "b\u0000"] })).toContain('"tags[1]" holds a NUL character (U+0000) at character 2;');
    expect(await text("memory_remember", { content: "line one\nline\u0000" })).toContain("at line 2, character 14;");
    expect(await text("memory_forget", { id: "\u0000" })).toContain('"id" holds a NUL');
    // a schema error is reported first; a clean call still runs
    expect(await text("memory_remember", { content: "\u0000", kind: "x" })).toContain('"kind" must be one of');
    expect(await text("memory_remember", { content: "fine" })).toBe("saved fine");
  });

  it("refuses an unpaired surrogate the same way; a whole character (a pair) is fine", async () => {
    expect(await text("memory_remember", { content: "tea \ud83d" })).toBe(
      'Error: invalid arguments for memory_remember: "content" holds an unpaired surrogate (U+D83D, half of a character) at character 5; remove it and call memory_remember again.',
    );
    expect(await text("memory_remember", { content: "x", tags: ["\udc00b"] })).toContain('"tags[0]" holds an unpaired surrogate (U+DC00, half of a character) at character 1;');
    expect(await text("memory_remember", { content: "tea \ud83c\udf75" })).toBe("saved tea \ud83c\udf75");
  });
});

describe("dispatch", () => {
  it("lets a gate answer instead of the handler", async () => {
    let gatedFor = "";
    const ts = toolset({
      gate: async (inv) => {
        gatedFor = inv.group_id;
        return "Error: the memory toolset is disabled for this thread";
      },
    });
    expect(await text("memory_remember", { content: "x" }, ts)).toBe("Error: the memory toolset is disabled for this thread");
    expect(gatedFor).toBe("g");
    expect(await text("memory_remember", { content: "x" }, toolset({ gate: async () => null }))).toBe("saved x");
  });

  it("maps errors: CoreError message, gate failures and missing text", async () => {
    const boom = defineTool({
      name: "boom",
      description: "d",
      input: z.object({}),
      handler: async () => {
        throw new CoreError("forbidden", "Error: that memory belongs to another user");
      },
    });
    const empty = defineTool({ name: "empty", description: "d", input: z.object({}), handler: async () => ({}) as { text: string } });
    const ts = toolset({ tools: [boom, empty] });
    expect(await text("boom", null, ts)).toBe("Error: that memory belongs to another user");
    expect(await text("empty", null, ts)).toBe("Error: empty failed: the handler returned no text");
    const broken = toolset({
      gate: async () => {
        throw new Error("toggle store offline");
      },
    });
    expect(await text("memory_remember", { content: "x" }, broken)).toBe("Error: memory_remember failed: toggle store offline");
  });
});

describe("toolset checks and manifest", () => {
  it("refuses duplicate, reserved and malformed tool names", () => {
    expect(() => checkToolset(toolset({ tools: [remember, remember] }))).toThrow(/duplicate tool name "memory_remember"/);
    expect(() => checkToolset(toolset({ tools: [{ ...remember, name: "spawn_thread" }] }))).toThrow(/reserved/);
    expect(() => checkToolset(toolset({ tools: [{ ...remember, name: "has space" }] }))).toThrow(/letters, digits/);
    expect(() => checkToolset(toolset())).not.toThrow();
  });

  it("generates input schemas from zod, without $schema", () => {
    const m = toolsetManifest(toolset({ needsMigration: true, description: "Memory" }), "http://h/invoke");
    expect(m.needsMigration).toBe(true);
    const schema = m.tools[0]!.inputSchema as Record<string, unknown>;
    expect(schema.$schema).toBeUndefined();
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(["content"]);
    expect(Object.keys(schema.properties as object)).toEqual(["content", "kind", "tags", "confidence", "limit", "id"]);
  });
});

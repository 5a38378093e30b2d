// The zod schemas against the daemon's exact JSON (reference §3.2): parse → stringify must give
// the same bytes for serde-ordered input, and never drop a field.
import { describe, expect, it } from "vitest";
import {
  AssistantContent,
  CompactionSummary,
  InfinityMessage,
  InputMessage,
  SyntheticKind,
  ThreadInfo,
  ThreadState,
  UserChoice,
  UserContent,
  isToolCallContent,
  messageText,
  TOOL_ARGS_TEXT_MAX,
} from "../../stores/infinity/messages.js";
import { ThreadMeta } from "../../stores/infinity-files/thread-file.js";

function roundTrip(schema: { parse(v: unknown): unknown }, json: string): string {
  return JSON.stringify(schema.parse(JSON.parse(json)));
}

// verbatim from the reference, §3.2 (snapshots of infinity-agent-core)
const HISTORY_EXAMPLES = [
  String.raw`{"kind":"user","content":{"type":"text","text":"do something"}}`,
  String.raw`{"kind":"assistant","content":{"text":"Hello, world"}}`,
  String.raw`{"kind":"tool_call","call":{"id":"tc-1","call_id":null,"function":{"name":"some_tool","arguments":{"x":1}},"signature":null,"additional_params":null}}`,
  String.raw`{"kind":"tool_result","result":{"id":"tc-1","content":[{"type":"text","text":"tool output"}]}}`,
  String.raw`{"kind":"subscription_event","result":{"id":"<uuid>","content":[{"type":"text","text":"build output chunk\n[exit code: 0]"}]},"tool_call_id":"tc-cmd","invocation":{"id":"<uuid>","call_id":null,"function":{"name":"receive_event__injected","arguments":{"original_args":{"command":"make build"},"original_tool_call_id":"tc-cmd","original_tool_name":"execute_command"}},"signature":null,"additional_params":null}}`,
];

const INPUT_EXAMPLES = [
  String.raw`{"content":{"type":"text","text":"hello"},"group_id":"t1","metadata":null,"synthetic":null,"display_as":null,"subscription":false}`,
  String.raw`{"content":{"type":"toolresult","id":"tc-sub","content":[{"type":"text","text":"tick"}]},"group_id":"t1","metadata":null,"synthetic":{"type":"subscription_event","tool_call_id":"tc-sub","associative":true,"final":false},"display_as":null,"subscription":false}`,
  String.raw`{"content":{"type":"oauth_required","id":"tc-1","call_id":null,"auth_url":"https://…"},"group_id":"t1","metadata":null,"synthetic":null,"display_as":null,"subscription":false}`,
];

describe("InfinityMessage", () => {
  it.each(HISTORY_EXAMPLES)("round-trips the reference example byte for byte: %s", (json) => {
    expect(roundTrip(InfinityMessage, json)).toBe(json);
  });

  it.each([
    // user media with rig's flattened additional_params and provider extras
    String.raw`{"kind":"user","content":{"type":"image","data":{"type":"base64","value":"iVBORw0KGgo="},"media_type":"png","detail":"auto","cache_control":{"type":"ephemeral"}}}`,
    String.raw`{"kind":"user","content":{"type":"audio","data":{"type":"url","value":"https://example.com/a.mp3"},"media_type":"mp3"}}`,
    String.raw`{"kind":"user","content":{"type":"video","data":{"type":"unknown"}}}`,
    String.raw`{"kind":"user","content":{"type":"document","data":{"type":"string","value":"# Notes"},"media_type":"markdown"}}`,
    String.raw`{"kind":"user","content":{"type":"toolresult","id":"tc-9","call_id":"call_abc","content":[{"type":"text","text":"ok"}]}}`,
    // reasoning: rig 0.31 shape and the older one
    String.raw`{"kind":"assistant","content":{"id":null,"content":[{"type":"text","content":{"text":"thinking","signature":"sig=="}}]}}`,
    String.raw`{"kind":"assistant","content":{"id":"rs_1","reasoning":["step one"],"signature":"abc"}}`,
    String.raw`{"kind":"assistant","content":{"data":{"type":"base64","value":"R0lGOD"},"media_type":"gif"}}`,
    String.raw`{"kind":"tool_call","call":{"id":"tc-2","call_id":"call_2","function":{"name":"edit_file","arguments":{"path":"a.ts"}},"signature":"s1","additional_params":{"cache":true}},"display_as":"Edit a.ts"}`,
    String.raw`{"kind":"tool_result","result":{"id":"tc-2","content":[{"type":"text","text":"done"},{"type":"image","data":{"type":"base64","value":"AAAA"},"media_type":"jpeg"}]},"display_segments":[{"type":"diff","content":{"path":"a.ts","patch":"@@ -1 +1 @@"}},{"type":"image","content":{"data":"AAAA","mediaType":"image/jpeg"}}]}`,
    String.raw`{"kind":"subscription_event","result":{"id":"ev-1","content":[{"type":"text","text":"Report from child thread: done"}]},"tool_call_id":"tc-spawn","child_thread_id":"child-1"}`,
    // fields this build does not know survive, at every level
    String.raw`{"kind":"tool_call","call":{"id":"tc-3","call_id":null,"function":{"name":"f","arguments":{},"strict":true},"signature":null,"additional_params":null,"index":0}}`,
    String.raw`{"kind":"tool_result","result":{"id":"tc-3","content":[{"type":"text","text":"x","annotations":[]}],"is_error":false}}`,
    String.raw`{"kind":"assistant","content":{"text":"hi"},"future_field":{"a":[1,2]}}`,
  ])("keeps every field of %s", (json) => {
    expect(roundTrip(InfinityMessage, json)).toBe(json);
  });

  it.each([
    String.raw`{"kind":"system","content":{"type":"text","text":"x"}}`,
    String.raw`{"kind":"user","content":{"type":"hologram","text":"x"}}`,
    String.raw`{"kind":"tool_call","call":{"id":"tc","call_id":null}}`,
    String.raw`{"kind":"tool_result","result":{"id":"tc","content":[{"type":"video","data":{"type":"unknown"}}]}}`,
    String.raw`{"kind":"subscription_event","result":{"id":"e","content":[]}}`,
    String.raw`{"kind":"assistant","content":{"id":null}}`,
  ])("rejects %s", (json) => {
    expect(InfinityMessage.safeParse(JSON.parse(json)).success).toBe(false);
  });

  it("reads untagged assistant content in serde's variant order", () => {
    const call = AssistantContent.parse({ id: "t", call_id: null, function: { name: "f", arguments: {} } });
    expect(isToolCallContent(call)).toBe(true);
    expect(isToolCallContent(AssistantContent.parse({ text: "hi" }))).toBe(false);
  });
});

describe("InputMessage", () => {
  it.each(INPUT_EXAMPLES)("round-trips the reference example byte for byte: %s", (json) => {
    expect(roundTrip(InputMessage, json)).toBe(json);
  });

  it("fills serde defaults the way the daemon writes them back", () => {
    const m = InputMessage.parse({ content: { type: "text", text: "hi" }, group_id: "t1" });
    expect(JSON.stringify(m)).toBe(INPUT_EXAMPLES[0]!.replace('"hello"', '"hi"'));
  });

  it("reads user choice content, thread reports, legacy bare synthetic strings and unit kinds", () => {
    const choice = InputMessage.parse({
      content: {
        type: "user_choice_required",
        id: "tc-7",
        call_id: null,
        prompt: "Publish skill v3?",
        choices: ["Approve", "Reject", "Show diff"],
        default: 1,
        response_url: "http://127.0.0.1:4000/choice",
      },
      group_id: "t1",
      synthetic: { type: "thread_report", tool_call_id: "tc-spawn", child_thread_id: "c1" },
      metadata: { user_id: "alice" },
    });
    expect(choice.content.type).toBe("user_choice_required");
    expect(choice.synthetic).toEqual({ type: "thread_report", tool_call_id: "tc-spawn", child_thread_id: "c1" });
    expect(choice.metadata).toEqual({ user_id: "alice" });
    expect(SyntheticKind.parse("tc-legacy")).toBe("tc-legacy");
    expect(SyntheticKind.parse({ type: "subscription_event", tool_call_id: "x" })).toEqual({
      type: "subscription_event",
      tool_call_id: "x",
      associative: false,
      final: false,
    });
    for (const type of ["compaction", "compaction_complete"]) expect(SyntheticKind.parse({ type })).toEqual({ type });
    expect(SyntheticKind.parse({ type: "parent_message", tool_call_id: "p" })).toEqual({ type: "parent_message", tool_call_id: "p" });
    expect(SyntheticKind.safeParse({ type: "teleport" }).success).toBe(false);
  });

  it("rejects content that is none of the untagged variants", () => {
    expect(InputMessage.safeParse({ content: { type: "oauth_required", id: "x" }, group_id: "t" }).success).toBe(false);
    expect(InputMessage.safeParse({ content: { type: "text", text: "x" } }).success).toBe(false);
  });
});

describe("persisted state types", () => {
  it("round-trips the reference meta example field for field", () => {
    const json = String.raw`{"parent_thread_id":"p","root_thread_id":"r","spawn_message_order":3,"spawn_tool_call_id":"tc","closed":false,"is_subscription_event":false,"title":"t","is_compaction":false,"children":["c1"],"total_tokens_used":42,"last_updated":"2024","selected_model":{"provider_id":"prov","model_id":"m"}}`;
    expect(JSON.parse(roundTrip(ThreadMeta, json))).toEqual(JSON.parse(json));
  });

  it("reads ThreadInfo with serde's missing-Option and is_compaction defaults", () => {
    expect(ThreadInfo.parse({ root_thread_id: "r", closed: false, is_subscription_event: false })).toEqual({
      parent_thread_id: null,
      root_thread_id: "r",
      spawn_message_order: null,
      spawn_tool_call_id: null,
      closed: false,
      is_subscription_event: false,
      is_compaction: false,
    });
    expect(ThreadInfo.safeParse({ root_thread_id: "r", closed: "no", is_subscription_event: false }).success).toBe(false);
  });

  it("reads an empty ThreadState as all defaults and keeps choices intact", () => {
    expect(ThreadState.parse({})).toEqual({
      processed_message_ids: [],
      processed_tool_call_ids: [],
      metadata: null,
      subscriptions: [],
      pending_user_choices: [],
    });
    const c = { id: "c", prompt: "p", choices: ["a"], default: 0, response_url: "http://x" };
    expect(ThreadState.parse({ pending_user_choices: [c] }).pending_user_choices).toEqual([c]);
    expect(UserChoice.safeParse({ ...c, default: -1 }).success).toBe(false);
    expect(CompactionSummary.safeParse({ summary: "s", up_to_order: 1.5 }).success).toBe(false);
  });
});

describe("messageText", () => {
  const parse = (json: string) => InfinityMessage.parse(JSON.parse(json));

  it("extracts user, assistant, tool and event text", () => {
    const texts = HISTORY_EXAMPLES.map((j) => messageText(parse(j)));
    expect(texts).toEqual([
      "do something",
      "Hello, world",
      'some_tool {"x":1}',
      "tool output",
      "build output chunk\n[exit code: 0]",
    ]);
  });

  it("takes text documents and tool-result text, and nothing from media or reasoning", () => {
    expect(messageText(UserContentMessage({ type: "document", data: { type: "string", value: "# Notes" } }))).toBe("# Notes");
    expect(messageText(UserContentMessage({ type: "document", data: { type: "base64", value: "JVBERi0=" } }))).toBe("");
    expect(messageText(UserContentMessage({ type: "image", data: { type: "base64", value: "AAAA" } }))).toBe("");
    expect(
      messageText(
        UserContentMessage({
          type: "toolresult",
          id: "t",
          content: [
            { type: "text", text: "a" },
            { type: "image", data: { type: "base64", value: "AAAA" } },
            { type: "text", text: "b" },
          ],
        }),
      ),
    ).toBe("a\nb");
    expect(messageText(parse(String.raw`{"kind":"assistant","content":{"id":null,"content":[{"type":"text","content":{"text":"secret plan"}}]}}`))).toBe("");
    expect(
      messageText({ kind: "assistant", content: { id: "t", call_id: null, function: { name: "grep", arguments: { q: "x" } } } }),
    ).toBe('grep {"q":"x"}');
  });

  it("cuts long tool arguments", () => {
    const text = messageText(parse(JSON.stringify({
      kind: "tool_call",
      call: { id: "t", call_id: null, function: { name: "write_file", arguments: { content: "x".repeat(5000) } }, signature: null, additional_params: null },
    })));
    expect(text.startsWith('write_file {"content":"xxx')).toBe(true);
    expect(text.length).toBe("write_file ".length + TOOL_ARGS_TEXT_MAX + 1);
    expect(text.endsWith("…")).toBe(true);
  });
});

function UserContentMessage(content: unknown): InfinityMessage {
  return { kind: "user", content: UserContent.parse(content) };
}

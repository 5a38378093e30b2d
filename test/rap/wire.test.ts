// Wire schemas and JSON writers against the reference payloads (§1.8 of the runtime reference):
// everything the runtime accepts parses, what it rejects fails, and re-serialization matches
// serde byte for byte.
import { describe, expect, it } from "vitest";
import { callbackJson, invocationJson, manifestJson, sortKeysDeep } from "../../toolsets/rap/wire-json.js";
import {
  CancelToolCallRequest,
  CloseThreadRequest,
  MigrateRequest,
  RapCallback,
  RapInvocation,
  ToolsetManifest,
  UserChoiceResponse,
} from "../../toolsets/rap/wire.js";

const I1 = `{"operation":"subscribe_github_events","arguments":{"owner":"acme","repo":"api","event_type":"pull_request"},
 "id":"call_abc123","call_id":null,"callback_url":"https://agent.example.com/callback","group_id":"thread_xyz",
 "thread_ancestors":["thread_root","thread_parent"],"user_id":"user_42"}`;
const I2 = `{"operation":"memory_write","arguments":{"key":"build","text":"use cargo nextest"},"id":"tooluse_9aZk","call_id":null,"callback_url":"http://127.0.0.1:38521","group_id":"6f1c2c7e-5b7e-4d0b-9a57-2b0c1d7f9e11","thread_ancestors":null}`;
const I3 = `{"operation":"memory_search","arguments":{"query":"build"},"id":"tooluse_Q2","call_id":null,"callback_url":"http://127.0.0.1:38521",
 "group_id":"c3","thread_ancestors":["root-uuid","c1"]}`;
const I4 = `{"operation":"mock_list_tools","arguments":{},"id":"test-1","call_id":null,"callback_url":"http://127.0.0.1:PORT","group_id":"g1","thread_ancestors":null}`;

const callbacks: Record<string, string> = {
  T1: `{"type":"tool_result","group_id":"thread_xyz","id":"call_abc123","call_id":null,
 "text":"Deployment completed successfully. Instance i-0abc123 is running.",
 "display_as":[{"type":"text","content":"Deployed instance i-0abc123"}]}`,
  T2: `{"type":"tool_result","group_id":"thread_xyz","id":"call_abc123","text":"Error: API rate limit exceeded. Retry after 60 seconds."}`,
  T3: `{"type":"tool_result","group_id":"G","id":"ID",
 "content":[{"type":"text","text":"Read image file \\"a.png\\" (image/png). The image is attached."},
            {"type":"image","data":"iVBORw0KGgo…","mediaType":"image/png"}],
 "display_as":[{"type":"image","content":{"data":"iVBORw0KGgo…","mediaType":"image/png"}},
               {"type":"text","content":"Read image a.png (image/png)"}]}`,
  T4: `{"type":"tool_result","group_id":"G","id":"tooluse_sub1","text":"Subscribed to memory updates. Subscription ID: tooluse_sub1","subscription":true}`,
  T5: `{"type":"tool_result","group_id":"thread_xyz","id":"call_abc123","text":"Replaced text in src/main.rs",
 "display_as":[{"type":"diff","content":{"path":"src/main.rs","patch":"--- src/main.rs\\n+++ src/main.rs\\n@@ -1,3 +1,4 @@\\n fn main() {\\n+    println!(\\"hello\\");\\n }"}},
               {"type":"text","content":"edit_file src/main.rs: 1 insertion"}]}`,
  S1: `{"type":"subscription_event","group_id":"thread_xyz","tool_call_id":"call_abc123","text":"{\\"event_type\\": \\"pull_request\\", \\"action\\": \\"opened\\", \\"number\\": 42}"}`,
  S2: `{"type":"subscription_event","group_id":"thread_xyz","tool_call_id":"call_abc123","text":"build output line 1\\nbuild output line 2\\n[exit code: 0]","associative":true,"final":true}`,
  S3: `{"type":"subscription_event","group_id":"G","tool_call_id":"tooluse_sub1","text":"memory changed: build","associative":false}`,
  S4: `{"type":"subscription_event","group_id":"G","tool_call_id":"T","text":"…"}`,
  O1: `{"type":"oauth","group_id":"thread_xyz","id":"call_abc123","call_id":null,"auth_url":"https://github.com/login/oauth/authorize?client_id=abc&redirect_uri=..."}`,
  O2: `{"type":"oauth","group_id":"g","id":"auth","auth_url":"https://example.com"}`,
  O3: `{"type":"oauth","group_id":"G","id":"tooluse_7","call_id":"prov-1","auth_url":"https://auth.example.com/x?state=s"}`,
  U1: `{"type":"user_choice","group_id":"thread_xyz","id":"call_abc123","call_id":null,"prompt":"Allow writing to the original directory?",
 "choices":["Yes for session","Yes once","No"],"default":2,"response_url":"http://tool-server:PORT/user_choice_response"}`,
  U2: `{"type":"user_choice","group_id":"g","id":"choice","prompt":"pick","choices":["a"],"default":0,"response_url":"https://example.com"}`,
  U3: `{"type":"user_choice","group_id":"G","id":"tooluse_8","prompt":"Forget all memories?","choices":["Yes","No"],"response_url":"http://127.0.0.1:41234/user_choice_response"}`,
  V1: `{"type":"view_update","group_id":"thread_xyz","view_type":"diff","content":{"patch":"diff --git a/src/main.rs b/src/main.rs\\n..."}}`,
  V2: `{"type":"view_update","group_id":"<session_id>","view_type":"diff","content":{"lines":3}}`,
  V3: `{"type":"view_update","group_id":"G","view_type":"memory","content":{}}`,
};

const manifests: Record<string, string> = {
  M1: `{"name":"github-tools","description":"GitHub repository management and event subscription tools",
 "endpoint":"https://tool.example.com/invoke","needsMigration":false,
 "tools":[{"name":"get_pull_request","description":"Get details of a specific pull request",
   "inputSchema":{"type":"object","properties":{"owner":{"type":"string","description":"Repository owner"},
     "repo":{"type":"string","description":"Repository name"},"number":{"type":"integer","description":"Pull request number"}},
     "required":["owner","repo","number"]},
   "displayScript":"\\"PR #\\" + args.number + \\" on \\" + args.owner + \\"/\\" + args.repo"}]}`,
  M2: `{"name":"stub-diffs","endpoint":"http://127.0.0.1:PORT/invoke",
 "tools":[{"name":"edit_file","description":"Replace text in a file.","displayScript":"\\"Edit \\" + args.path",
   "inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}]}`,
  M4: `{"name":"skills","endpoint":"http://127.0.0.1:41235/invoke",
 "tools":[{"name":"list_skills","description":"List available skills.","inputSchema":{"type":"object","additionalProperties":false}}]}`,
};

describe("RapInvocation", () => {
  it("accepts the reference invocations with serde's defaults", () => {
    const i1 = RapInvocation.parse(JSON.parse(I1));
    expect(i1.user_id).toBe("user_42");
    expect(i1.thread_ancestors).toEqual(["thread_root", "thread_parent"]);
    const i2 = RapInvocation.parse(JSON.parse(I2));
    expect(i2).toMatchObject({ call_id: null, thread_ancestors: null, arguments: { key: "build", text: "use cargo nextest" } });
    expect(RapInvocation.parse(JSON.parse(I3)).thread_ancestors).toEqual(["root-uuid", "c1"]);
    expect(RapInvocation.parse(JSON.parse(I4)).arguments).toEqual({});
  });

  it("fills missing Option and default fields, keeps null arguments, ignores unknown fields", () => {
    const inv = RapInvocation.parse({ operation: "o", id: "i", callback_url: "u", group_id: "g", extra: 1 });
    expect(inv).toEqual({ operation: "o", arguments: null, id: "i", call_id: null, callback_url: "u", group_id: "g", thread_ancestors: null });
    expect(RapInvocation.parse({ ...inv, arguments: null }).arguments).toBeNull();
  });

  it.each([
    ["null operation", { operation: null }],
    ["numeric id", { id: 1 }],
    ["null group_id", { group_id: null }],
    ["missing callback_url", { callback_url: undefined }],
    ["string thread_ancestors", { thread_ancestors: "x" }],
    ["numeric call_id", { call_id: 3 }],
  ])("rejects %s", (_n, over) => {
    const base = JSON.parse(I2) as Record<string, unknown>;
    expect(RapInvocation.safeParse({ ...base, ...over }).success).toBe(false);
  });

  it("re-serializes I2 byte for byte, with argument keys sorted like serde_json", () => {
    expect(invocationJson(RapInvocation.parse(JSON.parse(I2)))).toBe(I2);
    const shuffled = RapInvocation.parse({ ...JSON.parse(I2), arguments: { text: "t", key: "k", nested: { b: 1, a: [{ d: 1, c: 2 }] } } });
    expect(invocationJson(shuffled)).toContain(`"arguments":{"key":"k","nested":{"a":[{"c":2,"d":1}],"b":1},"text":"t"}`);
    // the daemon writes user_id before thread_ancestors
    expect(invocationJson(RapInvocation.parse(JSON.parse(I1)))).toMatch(/"user_id":"user_42","thread_ancestors":\[/);
  });
});

describe("RapCallback", () => {
  it.each(Object.entries(callbacks))("accepts %s", (_name, json) => {
    expect(RapCallback.safeParse(JSON.parse(json)).success).toBe(true);
  });

  it("re-serializes T4 and S3 byte for byte", () => {
    expect(callbackJson(RapCallback.parse(JSON.parse(callbacks.T4!)))).toBe(callbacks.T4);
    expect(callbackJson(RapCallback.parse(JSON.parse(callbacks.S3!)))).toBe(callbacks.S3);
  });

  it("writes serde's defaults and skips None options", () => {
    // U3 omits `default`; serde writes it back as 0
    expect(callbackJson(RapCallback.parse(JSON.parse(callbacks.U3!)))).toBe(
      `{"type":"user_choice","group_id":"G","id":"tooluse_8","prompt":"Forget all memories?","choices":["Yes","No"],"default":0,"response_url":"http://127.0.0.1:41234/user_choice_response"}`,
    );
    // S4 gains associative:false; T1's null call_id is dropped
    expect(callbackJson(RapCallback.parse(JSON.parse(callbacks.S4!)))).toBe(
      `{"type":"subscription_event","group_id":"G","tool_call_id":"T","text":"…","associative":false}`,
    );
    expect(callbackJson(RapCallback.parse(JSON.parse(callbacks.T1!)))).toBe(
      `{"type":"tool_result","group_id":"thread_xyz","id":"call_abc123","text":"Deployment completed successfully. Instance i-0abc123 is running.","display_as":[{"type":"text","content":"Deployed instance i-0abc123"}]}`,
    );
    expect(callbackJson(RapCallback.parse(JSON.parse(callbacks.O3!)))).toBe(callbacks.O3);
    expect(callbackJson({ type: "view_update", group_id: "G", view_type: "v", content: { z: 1, a: null } })).toBe(
      `{"type":"view_update","group_id":"G","view_type":"v","content":{"a":null,"z":1}}`,
    );
    expect(callbackJson({ type: "view_update", group_id: "G", view_type: "v", content: null })).toBe(
      `{"type":"view_update","group_id":"G","view_type":"v","content":null}`,
    );
  });

  it("writes every string well-formed: a lone surrogate becomes U+FFFD, pairs stay", () => {
    // serde_json refuses the "\ud83d" escape JSON.stringify writes for a lone surrogate (400, no retry)
    const half = "😀".slice(0, 1);
    const body = callbackJson({ type: "user_choice", group_id: "g", id: "i", prompt: `cut ${half}`, choices: [`a${half}`, "ok 😀"], default: 0, response_url: "u" });
    expect(body).not.toMatch(/\\ud[89a-f]/i);
    expect(JSON.parse(body)).toMatchObject({ prompt: "cut \uFFFD", choices: ["a\uFFFD", "ok 😀"] });
    expect(JSON.parse(callbackJson({ type: "tool_result", group_id: "g", id: "i", text: `${half}x` })).text).toBe("\uFFFDx");
  });

  it.each([
    ["an unknown callback type", { type: "progress", group_id: "g" }],
    ["an unknown content type", { type: "tool_result", group_id: "g", id: "i", content: [{ type: "audio", data: "x" }] }],
    ["media_type instead of mediaType", { type: "tool_result", group_id: "g", id: "i", content: [{ type: "image", data: "x", media_type: "image/png" }] }],
    ["an unknown display segment", { type: "tool_result", group_id: "g", id: "i", display_as: [{ type: "markdown", content: "x" }] }],
    ["associative: null", { type: "subscription_event", group_id: "g", tool_call_id: "t", text: "x", associative: null }],
    ["a fractional default", { type: "user_choice", group_id: "g", id: "i", prompt: "p", choices: [], default: 1.5, response_url: "u" }],
    ["a negative default", { type: "user_choice", group_id: "g", id: "i", prompt: "p", choices: [], default: -1, response_url: "u" }],
    ["a view_update without content", { type: "view_update", group_id: "g", view_type: "v" }],
    ["a subscription_event keyed by id", { type: "subscription_event", group_id: "g", id: "t", text: "x" }],
  ])("rejects %s", (_n, body) => {
    expect(RapCallback.safeParse(body).success).toBe(false);
  });
});

describe("ToolsetManifest", () => {
  it.each(Object.entries(manifests))("accepts %s", (_name, json) => {
    expect(ToolsetManifest.safeParse(JSON.parse(json)).success).toBe(true);
  });

  it("defaults needsMigration to false and always writes it; requires inputSchema but allows null", () => {
    const m = ToolsetManifest.parse(JSON.parse(manifests.M2!));
    expect(m.needsMigration).toBe(false);
    expect(manifestJson(m)).toBe(
      `{"name":"stub-diffs","endpoint":"http://127.0.0.1:PORT/invoke","tools":[{"name":"edit_file","description":"Replace text in a file.",` +
        `"inputSchema":{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"},"displayScript":"\\"Edit \\" + args.path"}],"needsMigration":false}`,
    );
    const tool = { name: "t", description: "d" };
    expect(ToolsetManifest.safeParse({ name: "n", endpoint: "e", tools: [tool] }).success).toBe(false);
    expect(ToolsetManifest.safeParse({ name: "n", endpoint: "e", tools: [{ ...tool, inputSchema: null }] }).success).toBe(true);
    expect(ToolsetManifest.safeParse({ name: "n", endpoint: "e", tools: [], needsMigration: null }).success).toBe(false);
  });
});

describe("runtime request bodies", () => {
  it("parses the reference cancel, close, migrate and choice-response bodies", () => {
    expect(CancelToolCallRequest.parse({ thread_id: "thread_xyz", tool_call_id: "call_abc123" })).toEqual({ thread_id: "thread_xyz", tool_call_id: "call_abc123" });
    expect(CloseThreadRequest.parse({ thread_id: "thread_xyz" }).thread_id).toBe("thread_xyz");
    expect(MigrateRequest.parse({ session_id: "abc-123", destination_url: "" }).destination_url).toBe("");
    expect(UserChoiceResponse.parse({ id: "tooluse_8", selected: 1 }).selected).toBe(1);
    expect(UserChoiceResponse.safeParse({ id: "x", selected: "1" }).success).toBe(false);
    expect(CancelToolCallRequest.safeParse({ thread_id: "t" }).success).toBe(false);
  });

  it("sorts keys recursively without touching array order", () => {
    expect(JSON.stringify(sortKeysDeep({ b: [3, { y: 1, x: 2 }], a: null }))).toBe(`{"a":null,"b":[3,{"x":2,"y":1}]}`);
  });
});

// The proto is what a client's author reads: the limits the server applies to a request's texts
// and numbers must be stated there, in the field comments, with the numbers the server uses.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ARGS_EXCERPT_CHARS, EXCERPT_CHARS, MAX_TASK_CHARS } from "../../context-hook/grpc/server.js";
import { ListCandidatesRequest } from "../../admin/api/contract.js";
import { DEFAULT_TASK_OPTIONS } from "../../context-hook/provider-proxy/task.js";

const repo = resolve(fileURLToPath(import.meta.url), "../../..");

/** The comment lines right above a field declaration in a .proto file. */
function commentOf(proto: string, field: string): string {
  const lines = proto.split("\n");
  const at = lines.findIndex((l) => l.trim() === field);
  expect(at, `${field} not found`).toBeGreaterThan(0);
  const out: string[] = [];
  for (let i = at - 1; i >= 0 && lines[i]!.trim().startsWith("//"); i--) out.unshift(lines[i]!.trim().replace(/^\/\/\s?/, ""));
  return out.join(" ");
}

describe("context_hook.proto", () => {
  const proto = readFileSync(join(repo, "proto", "infinity", "memory", "v1", "context_hook.proto"), "utf8");
  const n = (v: number) => v.toLocaleString("en-US");

  it("BuildPrefixRequest.task says the server reads only its first MAX_TASK_CHARS characters", () => {
    expect(commentOf(proto, "string task = 6;")).toContain(`first ${n(MAX_TASK_CHARS)} characters`);
  });

  it("BuildPrefixRequest.recent says how much of each text the server reads", () => {
    expect(commentOf(proto, "repeated string recent = 7;")).toContain(`first ${n(DEFAULT_TASK_OPTIONS.recentChars)} characters`);
  });

  it("RecordTurn's texts say how much of them the server keeps", () => {
    expect(commentOf(proto, "string args_json = 3;")).toContain(`first ${n(ARGS_EXCERPT_CHARS)} characters`);
    expect(commentOf(proto, "string excerpt = 2;")).toContain(`first ${n(EXCERPT_CHARS)} characters`);
    expect(commentOf(proto, "string final_text = 6;")).toContain(`first ${n(EXCERPT_CHARS)} characters`);
  });
});

describe("admin.proto", () => {
  const proto = readFileSync(join(repo, "proto", "infinity", "memory", "v1", "admin.proto"), "utf8");

  it("ListCandidatesRequest.limit states the range the server accepts and its default", () => {
    const block = proto.slice(proto.indexOf("message ListCandidatesRequest"));
    expect(commentOf(block, "optional int32 limit = 2;")).toBe("1..500, default 100");
    expect(ListCandidatesRequest.safeParse({ limit: 500 }).success).toBe(true);
    expect(ListCandidatesRequest.safeParse({ limit: 501 }).success).toBe(false);
  });
});

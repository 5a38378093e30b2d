// Skill settings' scope keys (core/skills/scope.ts): a project setting is one person's view of a
// path, keyed so no user id or path can forge another's, in text every engine stores.
import { describe, expect, it } from "vitest";
import { keyAt, projectKey, projectOfKey, toggleScopes } from "../../core/skills/scope.js";

describe("skill setting keys", () => {
  const req = { user: "alice", project: "/work/app", session: "s-1", thread: "t-2", ancestors: ["t-1"] };

  it("name each level a request is under, narrowest first, with the project as the person's pair", () => {
    expect(toggleScopes(req)).toEqual([
      { level: "thread", key: "t-2" },
      { level: "thread", key: "t-1" },
      { level: "session", key: "s-1" },
      { level: "project", key: '["alice","/work/app"]' },
      { level: "user", key: "alice" },
    ]);
    expect(keyAt(req, "project")).toBe(projectKey("alice", "/work/app"));
  });

  it("a project key holds no NUL and cannot be forged by a user id or path with separators in it", () => {
    const tricky = projectKey('al"ice', "/work/a,b\u0000c");
    expect(projectKey("alice", "/x")).not.toContain("\u0000");
    expect(projectKey("a", "b/c")).not.toBe(projectKey("a/b", "c"));
    expect(projectOfKey(tricky)).toBe("/work/a,b\u0000c");
  });

  it("shows the project path of a key, also of one written before schema 18", () => {
    expect(projectOfKey(projectKey("alice", "/work/app"))).toBe("/work/app");
    expect(projectOfKey("alice\u0000/work/app")).toBe("/work/app");
    expect(projectOfKey("/work/app")).toBe("/work/app");
    expect(projectOfKey("[not json")).toBe("[not json");
  });
});

// A SQLite database with rows in every table family (memories with versions, tags, sources,
// edges, audit, a forgotten record; skills with versions, files, grants, toggles, trials; the
// learning loop; evolution; traces; RAP journal, outbox, user choices; conversations and state;
// the session index; root contexts; the LLM budget), written through the real services and
// stores, for `infinity-memory migrate` to copy.
import { join } from "node:path";
import { draft } from "../stores/learning-conformance.js";
import { audit, newVersion } from "../stores/skills-conformance.js";
import { assistant, toolCall, toolResult, user } from "../stores/builders.js";
import { modelOrigin, openTestMemory, req } from "../helpers/memory.js";

export interface Populated {
  path: string;
  /** a memory the PostgreSQL copy must find by search */
  searchable: { id: string; word: string };
}

export async function populateSqlite(dir: string): Promise<Populated> {
  const m = openTestMemory(dir, "source.db");
  const b = m.backend;
  const first = await m.service.remember(req(), { content: "The staging cluster deploys through ArgoCD", kind: "project", tags: ["deploy", "ops"] }, modelOrigin("root-1", "tc-1"));
  const id = first.record.id;
  await m.service.update(req(), { id, content: "The staging cluster deploys through ArgoCD and Helm" }, modelOrigin("root-1", "tc-2"));
  const pref = await m.service.remember(req(), { content: "User prefers tabs over spaces", kind: "preference" }, modelOrigin("root-1", "tc-3"));
  const prefId = pref.record.id;
  const gone = await m.service.remember(req({ project: null }), { content: "A secret that will be forgotten", kind: "note" }, modelOrigin("root-2", "tc-4"));
  const goneId = gone.record.id;
  await m.service.forget({ owner: "alice" }, [goneId], { actor: "user", threadId: null, toolCallId: null }, "test");
  for (let i = 0; i < 60; i++) {
    await m.service.remember(req({ session: `s${i % 5}`, thread: `s${i % 5}` }), { content: `Bulk fact number ${i} about module m${i}`, kind: "fact" }, modelOrigin(`s${i % 5}`, `bulk-${i}`));
  }
  await b.toggles.set("memory", "root-1", false, { at: 1, actor: "alice", action: "toggle", targetKind: "toolset", targetId: "memory", detail: {} });

  // skills: two versions, published then rolled forward, grants, toggles, trials
  await b.skills.insertVersion(newVersion("deploy-check", "verify a kubernetes deployment rollout", "h1"), { skillId: "s1", versionId: "v1" }, audit("propose", "deploy-check"));
  await b.skills.insertVersion(newVersion("deploy-check", "verify a kubernetes deployment rollout twice", "h2", { parentId: "v1" }), { skillId: "s1", versionId: "v2" }, audit("propose", "deploy-check"));
  await b.skills.movePointer("s1", { expectedFrom: null, to: "v1", toStatus: "active", fromStatus: "retired", kind: "publish" }, audit("publish", "deploy-check"));
  await b.skills.movePointer("s1", { expectedFrom: "v1", to: "v2", toStatus: "active", fromStatus: "retired", kind: "publish" }, audit("publish", "deploy-check"));
  await b.skills.grant("s1", ["Read", "Bash"], "alice", audit("grant", "deploy-check"));
  await b.skills.setToggle({ skillId: "s1", level: "project", key: "/repo", enabled: false }, false, audit("disable", "deploy-check"));
  await b.skills.recordTrial("v2", { passed: true, note: "ok", threadId: "t", at: 5 }, (p, t) => (p + 1) / (t + 2), audit("feedback", "deploy-check"));

  // learning + evolution
  await b.learning.upsertEpisode(draft("t1", 0, "h"), [{ kind: "outcome", source: "outcome", value: 1, weight: 1, note: null, dedupKey: "o1", at: 1 }], ["outcome"], "e1", 10);
  await b.learning.setScores("e1", 0.7, true, [{ idx: 0, alpha: 0.5, value: 0.25 }], 11);
  await b.learning.addCandidate("e1", prefId, "created", 12);
  await b.learning.recordFeedback({ threadId: "t1", callId: "fb", episodeId: null, rating: 1, note: "great", at: 13 });
  await b.learning.enqueue("conversation", "t2", "t2", 14);
  await b.learning.setCursor("trace", "all", 3);
  await b.learning.event("ingest", "t1", "e1", { steps: 2 }, 15);
  await b.evolution.savePolicy(
    { signature: "read>test", tools: ["read", "test"], keyTerms: ["build"], steps: [], support: 1, meanValue: 0.5, gain: 0.2, rawGain: 0.3, eligible: true, episodeIds: ["e1"], counterIds: [], pitfalls: [], tasks: ["fix"], contentHash: "p" },
    "pol-1",
    16,
  );
  const rep = await b.evolution.addReport({ skillName: "deploy-check", versionId: "v2", baselineVersionId: "v1", policyId: "pol-1", passed: true, report: { margin: 0.1 } as never, createdAt: 17 });
  await b.evolution.addRequest({ id: "q1", kind: "publish", skillName: "deploy-check", versionId: "v2", otherSkill: null, policyId: "pol-1", reportId: rep.id, detail: { x: 1 }, createdAt: 18 });
  await b.evolution.addGoldenTask("deploy-check", "check the rollout", ["Read"], 19);

  // traces, RAP state
  for (let i = 0; i < 5; i++) await b.traces.record({ source: "provider_proxy", dedupKey: `k${i}`, threadId: "t1", rootThreadId: "t1", kind: "model_call", body: { i, text: "é ✓ \"quoted\"" }, at: i });
  await b.journal.record({ toolset: "memory", groupId: "g", callId: "open" }, `{"id":"open"}`, "1:boot", 20);
  await b.journal.record({ toolset: "memory", groupId: "g", callId: "done" }, `{"id":"done"}`, "1:boot", 21);
  await b.journal.complete({ toolset: "memory", groupId: "g", callId: "done" }, "1:boot", { toolset: "memory", groupId: "g", callId: "done", callbackUrl: "http://127.0.0.1:9/cb", body: "{\"ok\":true}" }, 22);
  await b.userChoices.ask({ toolset: "skills", choiceId: "c1", groupId: "g", prompt: "Publish?", choices: ["Yes", "No"] }, 23);
  await b.roots.upsert("root-1", "alice", "/work/proj-a", 24);
  await b.llmBudget.tryTake("2026-11-30", 10);

  // conversations, state, session index
  await b.conversations.ensureRootThread("root-1");
  await b.conversations.appendMessages("root-1", [
    [user("remember that the staging cluster uses ArgoCD"), "m1"],
    [toolCall("tc-1", "memory_remember", { content: "x" }), "m2"],
    [toolResult("tc-1", "saved"), "m3"],
    [assistant("Noted."), "m4"],
  ]);
  await b.state.setMetadata("root-1", { user_id: "alice", n: 1 });
  await b.state.addProcessedMessageIds("root-1", ["m1", "m2"]);
  await b.state.addActiveSubscription("root-1", "tc-9");
  const src = await b.sessionIndex.sourceId("sqlite", join(dir, "conv.db"));
  await b.sessionIndex.append(src, { threadId: "root-1", rootThreadId: "root-1", user: "alice", cwd: "/work/proj-a" }, [
    { ord: 0, messageId: "m1", role: "user", text: "remember that the staging cluster uses ArgoCD" },
    { ord: 3, messageId: "m4", role: "assistant", text: "Noted." },
  ], 4, "fp", 25);
  m.close();
  return { path: join(dir, "source.db"), searchable: { id, word: "ArgoCD" } };
}

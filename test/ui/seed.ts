// Seed data for the review page tests, written through the real services into a temp SQLite
// file before `serve --ui` opens it: learned episodes and a gated candidate skill with its eval
// report and approval request (the chore world of the evolution bench), a skill with two
// published versions (for rollback), memories with versions and a conflict, and a pending memory
// candidate extracted from a user message that is also in the session index.
import type { InfinityMessage } from "../../stores/infinity/messages.js";
import { openChoreWorld, rng, task } from "../../bench/evolution/chore.js";
import { parseSkillMd } from "../../core/skills/skill-md.js";
import type { RequestScope } from "../../core/memory/scope.js";

export interface Seeded {
  db: string;
  /** the learning loop's pending publish request */
  candidate: { skillName: string; requestId: string; versionId: string };
  /** a skill published twice: v2 live, v1 before it */
  rollback: { name: string; v1: string; v2: string };
  /** an active memory to forget */
  forget: { id: string; content: string };
  /** the pending memory candidate */
  pending: { id: string; content: string };
  /** a second pending memory candidate, to reject */
  reject: { id: string; content: string };
  /** a candidate version proposed by a model, without a request */
  bare: { name: string; versionId: string };
  /** a memory with two versions */
  updated: { id: string; lineageId: string };
}

const CHECKLIST_V1 = `---
name: deploy-checklist
description: Steps before deploying the web app to production.
---

# Deploy checklist

1. Run the test suite.
2. Build the release bundle.
3. Deploy with \`fly deploy\`.
`;

const CHECKLIST_V2 = `---
name: deploy-checklist
description: Steps before deploying the web app to production, with a database backup.
---

# Deploy checklist

1. Run the test suite.
2. Take a database backup.
3. Build the release bundle.
4. Deploy with \`fly deploy\` and watch the health checks for five minutes.
`;

const LINT_FIX = `---
name: lint-fix
description: Fix lint errors reported by the CI lint job.
---

# Lint fix

1. Run \`npm run lint -- --fix\`.
2. Commit the result.
`;

export async function seed(dir: string, now = Date.now()): Promise<Seeded> {
  const w = openChoreWorld(dir);
  try {
    // experience from the last few hours, so per-day charts show it
    w.clock.set(now - 6 * 3600_000);
    const r = rng(7);
    for (let i = 0; i < 12; i++) await w.runTask(task(i), r, { skills: false });

    // a conversation where the user states a preference: the learning loop proposes it as pending
    const thread = "thread-pref-1";
    const msgs: InfinityMessage[] = [
      { kind: "user", content: { type: "text", text: "Please remember that I prefer squash merges for release branches." } },
      { kind: "assistant", content: { text: "Noted: squash merges for release branches." } },
      { kind: "user", content: { type: "text", text: "Also remember that I like tabs over spaces in Makefiles." } },
      { kind: "assistant", content: { text: "Noted." } },
    ];
    await w.conv.ensureRootThread(thread);
    await w.conv.appendMessages(thread, msgs.map((m, i) => [m, `${thread}-m${i}`] as const));
    // the same messages in the session index, so the page can show the source text
    const sessions = w.ctx.backend.sessionIndex;
    const src = await sessions.sourceId("sqlite", `${dir}/memory.db`);
    await sessions.append(
      src,
      { threadId: thread, rootThreadId: thread, user: "alice", cwd: "/work/app" },
      [
        { ord: 0, messageId: `${thread}-m0`, role: "user", text: "Please remember that I prefer squash merges for release branches." },
        { ord: 1, messageId: `${thread}-m1`, role: "assistant", text: "Noted: squash merges for release branches." },
        { ord: 2, messageId: `${thread}-m2`, role: "user", text: "Also remember that I like tabs over spaces in Makefiles." },
        { ord: 3, messageId: `${thread}-m3`, role: "assistant", text: "Noted." },
      ],
      4,
      null,
      w.clock.now(),
    );
    w.clock.advance(60_000);
    await w.worker.drain();

    // policy → candidate → replay evaluation → approval request
    const gated = await w.evolution.run(true);
    const made = gated.find((o) => o.passed && o.requestId);
    if (!made) throw new Error(`seed: no gated candidate: ${JSON.stringify(gated)}`);
    const [request] = (await w.evolution.requests()).filter((q) => q.id === made.requestId);
    if (!request?.versionId) throw new Error("seed: the request has no version");

    // a skill with two published versions (rollback goes back to v1)
    const by = { actor: "cli:alice", author: "human" as const, ref: "alice" };
    const p1 = await w.skills.propose(parseSkillMd(CHECKLIST_V1), by);
    await w.skills.publish(await w.skills.preparePublish("deploy-checklist", p1.version.id), "cli:alice");
    w.clock.advance(3600_000);
    const p2 = await w.skills.propose(parseSkillMd(CHECKLIST_V2), by);
    await w.skills.publish(await w.skills.preparePublish("deploy-checklist", p2.version.id), "cli:alice");
    for (const passed of [true, true, false, true]) {
      w.clock.advance(600_000);
      await w.skills.feedback("deploy-checklist", undefined, { passed }, "thread-deploy", "model:thread-deploy");
    }

    // memories
    const req: RequestScope = { user: "alice", project: "/work/app", session: "root", thread: "root", ancestors: [] };
    const user = { actor: "user" as const, threadId: "root", toolCallId: null };
    const remember = async (content: string, extra: { kind?: "fact" | "preference" | "project" | "lesson" | "note"; scope?: "user" | "project" } = {}) => {
      w.clock.advance(60_000);
      return (await w.ctx.service.remember(req, { content, userStated: true, ...extra }, user)).record;
    };
    await remember("Alice prefers concise answers with the code first.", { kind: "preference", scope: "user" });
    await remember("The web app deploys to Fly.io from the main branch.", { kind: "project", scope: "project" });
    const db1 = await remember("The staging database runs PostgreSQL 15.", { kind: "fact", scope: "project" });
    w.clock.advance(60_000);
    const db2 = (await w.ctx.service.update(req, { id: db1.id, content: "The staging database runs PostgreSQL 16 since the October upgrade.", userStated: true }, user)).record;
    await remember("Release notes go in CHANGELOG.md under an Unreleased heading.", { kind: "lesson", scope: "project" });
    const old = await remember("Alice's old laptop was called orca.", { kind: "fact", scope: "user" });

    const proposed = (await w.ctx.service.pending({ owner: "alice" }, 50)).items;
    const pending = proposed.find((m) => m.content.toLowerCase().includes("squash"));
    const toReject = proposed.find((m) => m.content.toLowerCase().includes("tabs"));
    if (!pending || !toReject) throw new Error(`seed: the learning loop proposed ${JSON.stringify(proposed.map((m) => m.content))}`);

    // a candidate a model proposed through skill_propose: no request, no report
    const bare = await w.skills.propose(parseSkillMd(LINT_FIX), { actor: "model:thread-lint", author: "agent", ref: "thread-lint" });

    return {
      db: `${dir}/memory.db`,
      candidate: { skillName: made.skillName, requestId: request.id, versionId: request.versionId },
      rollback: { name: "deploy-checklist", v1: p1.version.id, v2: p2.version.id },
      forget: { id: old.id, content: old.content },
      pending: { id: pending.id, content: pending.content },
      reject: { id: toReject.id, content: toReject.content },
      bare: { name: "lint-fix", versionId: bare.version.id },
      updated: { id: db2.id, lineageId: db2.lineageId },
    };
  } finally {
    w.close();
  }
}

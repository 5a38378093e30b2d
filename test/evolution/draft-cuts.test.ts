// Skill drafts quote tasks and failures cut to a length; a cut between the halves of a surrogate
// pair (an emoji at the cut) must not reach the SKILL.md body or the model's draft prompt, which a
// real OpenAI-compatible adapter sends to an endpoint parsing as strictly as serde_json.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../core/config.js";
import { createLlm } from "../../core/llm/client.js";
import { inducePolicies, type EpisodeRecord } from "../../core/learning/policy.js";
import { llmDraft, templateDraft } from "../../core/learning/skill-draft.js";
import type { ScoredStep, StoredEpisode } from "../../core/learning/types.js";
import { OpenAiLlmBackend } from "../../context-hook/llm/openai-llm.js";
import { decodeUtf8, parseStrictJson } from "../harness/strict-json.js";

const cfg = defaultConfig().evolution;
const EMOJI = "\u{1F680}";
/** a surrogate code unit not paired (the u flag reads pairs as one code point) */
const LONE = /\p{Cs}/u;

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

function step(idx: number, tool: string, outcome: ScoredStep["outcome"], excerpt: string): ScoredStep {
  return { idx, ord: idx, tool, callId: null, argsDigest: tool, argsShape: "{}", outcome, verdict: null, excerpt, latencyMs: null, alpha: 0.6, value: null };
}

function ep(id: string, task: string, steps: ScoredStep[]): EpisodeRecord {
  const episode: StoredEpisode = {
    id, source: "conversation", threadId: id, rootThreadId: id, startOrd: 0, endOrd: 10, state: "done", task, finalExcerpt: null, reward: 1,
    grounded: true, suppressed: false, candidatesDone: true, contentHash: id, createdAt: 0, updatedAt: 0,
  };
  return { episode, steps };
}

// Emoji starting at unit 119 (the template's task quote cuts at 120) and at unit 199 (the draft
// prompt cuts tasks at 200); a failure line with one at unit 159 (pitfalls cut at 160).
const taskOf = (svc: string) => `deploy the ${svc} service ${"a".repeat(96)}${EMOJI}${"b".repeat(78)}${EMOJI} end`;
const good = () => [step(0, "build", "ok", "ok"), step(1, "deploy", "ok", "ok")];
const records = [
  ep("e1", taskOf("web"), good()),
  ep("e2", taskOf("api"), good()),
  ep("e3", taskOf("dbs"), [step(0, "build", "ok", "ok"), step(1, "deploy", "error", `${"E".repeat(159)}${EMOJI} refused`), step(2, "deploy", "ok", "ok")]),
];

describe("skill drafts keep surrogate pairs whole", () => {
  it("the template body and the policy's pitfalls hold no lone surrogate", () => {
    const [p] = inducePolicies(records, cfg.policy);
    expect(taskOf("web").slice(119, 121)).toBe(EMOJI);
    expect(p!.pitfalls.map((f) => LONE.test(f.text))).toEqual([false]);
    const doc = templateDraft(p!, "deploy-service-abc123", cfg);
    expect(doc.body).toContain("## Pitfalls");
    expect(LONE.test(doc.body)).toBe(false);
  });

  it("the LLM draft prompt reaches a strict endpoint", async () => {
    const refused: string[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        try {
          parseStrictJson(decodeUtf8(Buffer.concat(chunks)));
        } catch (e) {
          refused.push((e as Error).message);
          res.writeHead(400, { "content-type": "application/json" }).end('{"error":"invalid JSON"}');
          return;
        }
        const content = JSON.stringify({ description: "Build, then deploy the service.", when_to_use: "Deploying a service.", steps: [{ tool: "build", instruction: "Build it." }, { tool: "deploy", instruction: "Deploy it." }], pitfalls: [] });
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ choices: [{ message: { role: "assistant", content } }] }));
      });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const llm = createLlm(new OpenAiLlmBackend({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, model: "m", env: {} }), { timeoutMs: 5000 });
    const [p] = inducePolicies(records, cfg.policy);
    const r = await llmDraft(llm, p!, "deploy-service-abc123", cfg);
    expect(refused).toEqual([]);
    expect(r.error).toBeNull();
    expect(r.doc?.allowedTools).toEqual(["build", "deploy"]);
  });
});

// The learning service's prompts to a real OpenAI-compatible adapter, received by a loopback
// endpoint that parses bodies as strictly as serde_json: a step excerpt cut between the halves of
// a surrogate pair (an emoji at the cut) must not make the request unreadable.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createLlm } from "../../core/llm/client.js";
import { OpenAiLlmBackend } from "../../context-hook/llm/openai-llm.js";
import { decodeUtf8, parseStrictJson } from "../harness/strict-json.js";
import { tempDir } from "../helpers/tmp.js";
import { msg, openWorld } from "./world.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** An endpoint that answers 400 to what serde_json refuses, like a Rust provider would. */
async function strictEndpoint(answers: Record<string, string>) {
  const refused: string[] = [];
  const served: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let prompt: string;
      try {
        const body = parseStrictJson(decodeUtf8(Buffer.concat(chunks))).value as { messages: { content: string }[] };
        prompt = body.messages.at(-1)!.content;
      } catch (e) {
        refused.push((e as Error).message);
        res.writeHead(400, { "content-type": "application/json" }).end('{"error":"invalid JSON"}');
        return;
      }
      const op = Object.keys(answers).find((k) => prompt.includes(k)) ?? "rubric";
      served.push(op);
      const content = answers[op]!;
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ choices: [{ message: { role: "assistant", content } }] }));
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, refused, served };
}

describe("learning prompts keep surrogate pairs whole", () => {
  it("a step excerpt with an emoji at the 200th unit still reaches the model (rubric and candidates)", async () => {
    const ep = await strictEndpoint({
      // the candidates prompt is the one quoting the user's turn
      "User: ": '{"memories": []}',
      rubric: '{"score": 0.5, "reason": "done"}',
    });
    const llm = createLlm(new OpenAiLlmBackend({ baseUrl: ep.baseUrl, model: "m", env: {} }), { timeoutMs: 5000 });
    const w = openWorld(tempDir("learn-"), { llm });
    // 199 ASCII units, then an emoji (two units): a cut at 200 falls between its halves.
    const result = `${"x".repeat(199)}\u{1F600} done\nexit code: 0`;
    await w.append("thread-s", [msg.user("Run the build"), msg.call("c1", "shell", { cmd: "make" }), msg.result("c1", result), msg.text("Built.")]);
    await w.worker.drain();

    expect(ep.refused).toEqual([]);
    const [episode] = await w.store.episodesOfThread("conversation", "thread-s");
    expect((await w.store.signalsOf(episode!.id)).find((s) => s.kind === "rubric")).toMatchObject({ value: 0.5 });
    expect(await w.store.events({ kind: "rubric_failed" })).toEqual([]);
    expect(await w.store.events({ kind: "candidate_llm_failed" })).toEqual([]);
    expect(ep.served.sort()).toEqual(["User: ", "rubric"]);
  });
});
